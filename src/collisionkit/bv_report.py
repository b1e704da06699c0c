"""``collisionkit bv-report``: which bounding volume and split rule for my meshes?

For every volume kind x split rule (``constants.BV_KINDS`` x ``SPLIT_RULES``,
plus the bottom-up and incremental builds per kind) on a pair of meshes:
build time, memory, tree shape, tightness (tau at the root, mean rho over the
levels, seed 004), per-query counts (N_v, N_p, N_u, seed 001) and times of the
boolean and all-pairs queries at random poses (b rotated: "dynamic"; b only
translated: "static"), and the cost model T = N_v C_v + N_p C_p + N_u C_u
with unit costs measured per kind. Prints a table, optionally writes JSON,
markdown and a PNG chart.

Poses: b's centre uniform in a ball about a's centre whose radius is bisected
(on the default tree) until about half the poses collide; static poses keep
b's orientation (identity rotation) and use the same translations.

Timings are single-threaded (``threads=1``), best of ``repeats`` runs, in
microseconds per pose.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .bvh import bvh_of, choose_volume, pair_volume
from .bvh.quality import UnitCosts, tree_quality, unit_costs
from .bvh.tree import build_tree
from .constants import BUILDS, BV_KINDS, SPLIT_RULES
from .geometry.mesh import Mesh
from .geometry.transforms import random_poses
from .io import load_mesh
from .options import BuildOptions
from .query.pair import contacts, intersects, query_stats
from .query.spec import Mode


@dataclass
class Row:
    bv: str
    split: str
    build: str
    build_ms: float
    memory_kb: float
    nodes: int
    depth: int
    tau_root: float
    rho_mean: float
    # per pose, dynamic (rotated) poses
    bool_us: float
    bool_nv: float
    bool_np: float
    bool_nu: float
    pairs_us: float
    pairs_nv: float
    pairs_np: float
    pairs_nu: float
    model_bool_us: float
    model_pairs_us: float
    # static (translated only) poses
    static_bool_us: float
    static_pairs_us: float
    static_pairs_nu: float


def _radius(mesh: Mesh) -> tuple[np.ndarray, float]:
    lo, hi = mesh.bounds
    return 0.5 * (lo + hi), float(np.linalg.norm(hi - lo) / 2)


def make_poses(a: Mesh, b: Mesh, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, float]:
    """(dynamic poses, static poses, radius factor) for b, a at the identity; see the module doc.

    b's centre lands at c + f * r * u, u uniform in the unit ball: c = a's centre
    and r = r_a + r_b when the meshes are of similar size; when a is much larger
    (r_a > 4 r_b, a building and a robot) c is a random point of a's surface
    (area-weighted) and r = r_b, so b meets a's geometry rather than the empty
    space inside a's bounding ball. f is bisected until about half the poses collide.
    """
    ca, ra = _radius(a)
    cb, rb = _radius(b)
    rot = random_poses(n, radius=1.0, seed=seed)
    unit = random_poses(n, radius=1.0, seed=seed + 1)[:, :3, 3]  # translations in the unit ball
    if ra > 4 * rb:
        rng = np.random.default_rng(seed + 2)
        tri = a.triangles
        area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
        pick = rng.choice(len(tri), n, p=area / area.sum())
        w = rng.dirichlet(np.ones(3), n)
        centres = np.einsum("nv,nvd->nd", w, tri[pick])
        reach = rb
    else:
        centres = np.repeat(ca[None], n, axis=0)
        reach = ra + rb

    def poses(f: float, rotate: bool) -> np.ndarray:
        P = np.repeat(np.eye(4)[None], n, axis=0)
        if rotate:
            P[:, :3, :3] = rot[:, :3, :3]
        P[:, :3, 3] = centres + f * reach * unit - np.einsum("nij,j->ni", P[:, :3, :3], cb)
        return P

    lo, hi = 0.0, 1.5 if reach == ra + rb else 4.0
    probe = min(n, 64)
    for _ in range(12):
        mid = 0.5 * (lo + hi)
        frac = float(np.mean(intersects(a, b, None, poses(mid, True)[:probe], threads=1)))
        if frac > 0.5:
            lo = mid
        else:
            hi = mid
    f = 0.5 * (lo + hi)
    return poses(f, True), poses(f, False), f


def all_unit_costs(trees: dict, rounds: int = 3) -> dict[str, UnitCosts]:
    """Unit costs per volume kind, measured in interleaved rounds (kind after kind,
    ``rounds`` times) keeping each component's minimum: on a shared machine the
    least disturbed run is the closest to the true cost."""
    best: dict[str, list[float]] = {}
    for r in range(rounds):
        for kind, tree in trees.items():
            c = unit_costs(tree, seed=r)
            old = best.get(kind, [np.inf, np.inf, np.inf])
            best[kind] = [min(old[0], c.c_v), min(old[1], c.c_p), min(old[2], c.c_u)]
    return {k: UnitCosts(*v) for k, v in best.items()}


def _best(fn, repeats: int) -> float:
    fn()
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def evaluate(
    a: Mesh,
    b: Mesh,
    n_poses: int = 200,
    kinds: list[str] | None = None,
    splits: list[str] | None = None,
    builds: list[str] | None = None,
    repeats: int = 3,
    quality_nodes: int = 8,
    seed: int = 0,
    progress: Any = None,
) -> dict:
    """Run the report (see the module doc); returns a JSON-able dict with rows and unit costs."""
    kinds = kinds or list(BV_KINDS)
    splits = splits or list(SPLIT_RULES)
    builds = builds or list(BUILDS)
    dyn, static, factor = make_poses(a, b, n_poses, seed)
    colliding = float(np.mean(intersects(a, b, None, dyn, threads=1)))
    costs = all_unit_costs({bv: build_tree(a.triangles, BuildOptions(bv=bv)) for bv in kinds})
    rows: list[Row] = []
    combos = [(bv, sp, "topdown") for bv in kinds for sp in splits]
    combos += [(bv, "sah", bd) for bv in kinds for bd in builds if bd != "topdown"]
    for bv, split, build in combos:
        opts = BuildOptions(bv=bv, split=split, build=build)
        build_tree(a.triangles[:8], opts)  # compile (or load) the build kernels outside the timing
        # fresh trees (timed), then meshes that use them
        t0 = time.perf_counter()
        tree_a = build_tree(a.triangles, opts)
        build_s = time.perf_counter() - t0
        ma = Mesh(a.vertices, a.faces, options=opts)
        mb = Mesh(b.vertices, b.faces, options=opts)

        def keep(tree_a: Any = tree_a) -> Any:
            return tree_a

        ma.cached(("bvh", opts), keep)
        tree_b = bvh_of(mb)
        q = tree_quality(tree_a, max_nodes_per_level=quality_nodes, seed=seed)
        c = costs[bv]

        def counts(poses: np.ndarray, mode: Mode, ma: Mesh = ma, mb: Mesh = mb) -> tuple[float, float, float]:
            st = query_stats(ma, mb, None, poses, mode=mode, threads=1)
            return float(np.mean(st.bv_tests)), float(np.mean(st.tri_tests)), float(np.mean(st.bv_updates))

        bool_t = _best(lambda ma=ma, mb=mb: intersects(ma, mb, None, dyn, threads=1), repeats) / n_poses
        pairs_t = _best(lambda ma=ma, mb=mb: contacts(ma, mb, None, dyn, threads=1), repeats) / n_poses
        sbool_t = _best(lambda ma=ma, mb=mb: intersects(ma, mb, None, static, threads=1), repeats) / n_poses
        spairs_t = _best(lambda ma=ma, mb=mb: contacts(ma, mb, None, static, threads=1), repeats) / n_poses
        bnv, bnp, bnu = counts(dyn, "any")
        pnv, pnp, pnu = counts(dyn, "all")
        snu = counts(static, "all")[2]
        row = Row(
            bv, split, build, build_s * 1e3, (tree_a.nbytes + tree_b.nbytes) / 1024, tree_a.n_nodes, tree_a.depth,
            q.tau_root, q.rho_mean,
            bool_t * 1e6, bnv, bnp, bnu, pairs_t * 1e6, pnv, pnp, pnu,
            float(c.model(bnv, bnp, bnu)) * 1e6, float(c.model(pnv, pnp, pnu)) * 1e6,
            sbool_t * 1e6, spairs_t * 1e6, snu,
        )  # fmt: skip
        rows.append(row)
        if progress is not None:
            progress(row)
    return {
        "a": {"name": a.name, "faces": a.n_faces},
        "b": {"name": b.name, "faces": b.n_faces},
        "poses": n_poses,
        "radius_factor": factor,
        "colliding_fraction": colliding,
        "unit_costs_ns": {k: {"c_v": v.c_v * 1e9, "c_p": v.c_p * 1e9, "c_u": v.c_u * 1e9} for k, v in costs.items()},
        "rows": [asdict(r) for r in rows],
        # what the default, bv="auto", picks for these meshes and why (bvh/auto.py)
        "auto": {
            "a": choose_volume(a)._asdict(),
            "b": choose_volume(b)._asdict(),
            "pair": pair_volume(a.with_options(bv="auto"), b.with_options(bv="auto")),
        },
    }


HEADER = (
    "| bv | split | build | build ms | mem KB | nodes | depth | tau root | rho mean | bool us | N_v | N_p | N_u "
    "| model us | pairs us | N_v | N_p | N_u | model us | static bool us | static pairs us |"
)


def to_markdown(rep: dict) -> str:
    lines = [
        f"a = {rep['a']['name']} ({rep['a']['faces']:,} triangles), b = {rep['b']['name']} ({rep['b']['faces']:,}); "
        f"{rep['poses']} poses, {100 * rep['colliding_fraction']:.0f}% colliding (dynamic); threads = 1.",
        "",
        "Unit costs (ns): "
        + "; ".join(
            f"{k}: c_v {v['c_v']:.1f}, c_u {v['c_u']:.1f}, c_p {v['c_p']:.1f}" for k, v in rep["unit_costs_ns"].items()
        ),
        "",
        HEADER,
        "|" + "---|" * (HEADER.count("|") - 1),
    ]
    for r in rep["rows"]:
        lines.append(
            f"| {r['bv']} | {r['split']} | {r['build']} | {r['build_ms']:.1f} | {r['memory_kb']:.0f} | {r['nodes']} | "
            f"{r['depth']} | {r['tau_root']:.3g} | {r['rho_mean']:.3f} | {r['bool_us']:.1f} | {r['bool_nv']:.0f} | "
            f"{r['bool_np']:.0f} | {r['bool_nu']:.0f} | {r['model_bool_us']:.1f} | {r['pairs_us']:.1f} | "
            f"{r['pairs_nv']:.0f} | {r['pairs_np']:.0f} | {r['pairs_nu']:.0f} | {r['model_pairs_us']:.1f} | "
            f"{r['static_bool_us']:.1f} | {r['static_pairs_us']:.1f} |"
        )
    auto = rep.get("auto")
    if auto:
        lines += [
            "",
            f"Default bv=\"auto\": a -> {auto['a']['bv']} (leaf thickness ratio {auto['a']['leaf_thickness_ratio']:.2f}), "
            f"b -> {auto['b']['bv']} ({auto['b']['leaf_thickness_ratio']:.2f}); OBB from a ratio of "
            f"{auto['a']['threshold']:g}; the pair runs as {auto['pair']} trees.",
        ]
    best = min(rep["rows"], key=lambda r: r["pairs_us"])
    bestb = min(rep["rows"], key=lambda r: r["bool_us"])
    lines += [
        "",
        f"Fastest all-pairs (dynamic): {best['bv']} / {best['split']} / {best['build']} ({best['pairs_us']:.1f} us/pose); "
        f"fastest boolean: {bestb['bv']} / {bestb['split']} / {bestb['build']} ({bestb['bool_us']:.1f} us/pose).",
    ]
    return "\n".join(lines)


def chart(rep: dict, path: str | Path) -> None:
    """PNG: per volume kind, all-pairs and boolean time per pose for each split rule / build,
    dynamic and static, and mean rho."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = rep["rows"]
    kinds = list(dict.fromkeys(r["bv"] for r in rows))
    variants = list(dict.fromkeys(r["split"] if r["build"] == "topdown" else r["build"] for r in rows))

    def value(bv: str, var: str, key: str) -> float:
        for r in rows:
            label = r["split"] if r["build"] == "topdown" else r["build"]
            if r["bv"] == bv and label == var:
                return r[key]
        return np.nan

    panels = [
        ("pairs_us", "all pairs, rotated b (us/pose)"),
        ("bool_us", "boolean, rotated b (us/pose)"),
        ("static_pairs_us", "all pairs, translated b only (us/pose)"),
        ("rho_mean", "mean compression ratio rho = tau / d"),
    ]
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(8, 1.2 * len(kinds) * max(1, len(variants)) / 4), 13))
    x = np.arange(len(kinds))
    w = 0.8 / max(1, len(variants))
    for ax, (key, title) in zip(axes, panels, strict=True):
        for j, var in enumerate(variants):
            ax.bar(x + (j - (len(variants) - 1) / 2) * w, [value(k, var, key) for k in kinds], w, label=var)
        ax.set_xticks(x, kinds)
        ax.set_title(title, fontsize=10)
        if key != "rho_mean":
            ax.set_yscale("log")
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(ncol=min(len(variants), 5), fontsize=8)
    fig.suptitle(
        f"{rep['a']['name']} ({rep['a']['faces']:,} tris) vs {rep['b']['name']} ({rep['b']['faces']:,}), "
        f"{rep['poses']} poses, {100 * rep['colliding_fraction']:.0f}% colliding",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _positive(text: str) -> int:
    """argparse type: an int >= 1."""
    import argparse

    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text[:40]!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {v}")
    return v


def main(argv: list[str] | None = None) -> int:
    """``collisionkit bv-report``: exit 0 on success, 2 on any bad option or file
    (one line on stderr; options are checked before any mesh is read)."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # type: ignore[override]
            self.exit(2, f"{self.prog}: error: {message} (see --help)\n")

    p = Parser(prog="collisionkit bv-report", description=__doc__.splitlines()[0])
    p.add_argument("mesh")
    p.add_argument("mesh2", nargs="?", help="second mesh (default: the first against itself)")
    p.add_argument("--poses", type=_positive, default=200, help="random poses (default 200)")
    p.add_argument("--kinds", default=None, help="comma-separated volume kinds (default all)")
    p.add_argument("--splits", default=None, help="comma-separated split rules (default all)")
    p.add_argument("--builds", default=None, help="comma-separated builds (default all)")
    p.add_argument("--repeats", type=_positive, default=3)
    p.add_argument("--png", default="bv-report.png", help="chart file (default bv-report.png; '' for none)")
    p.add_argument("--json", default=None, help="also write the report as JSON here")
    p.add_argument("--md", default=None, help="also write the table as markdown here")
    args = p.parse_args(argv)
    from .errors import CollisionKitError

    try:
        for option, names, known in (("--kinds", args.kinds, BV_KINDS), ("--splits", args.splits, SPLIT_RULES),
                                     ("--builds", args.builds, BUILDS)):  # fmt: skip
            for name in (names or "").split(","):
                if name.strip() and name.strip() not in known:
                    raise ValueError(f"{option}: unknown name {name.strip()[:40]!r} (choose from {', '.join(known)})")
        if args.png and Path(args.png).suffix.lower() != ".png":
            raise ValueError(f"--png must name a .png file (or '' for none), got {args.png[:80]!r}")
        for option, out in (("--png", args.png), ("--json", args.json), ("--md", args.md)):
            if out and not Path(out).resolve().parent.is_dir():
                raise ValueError(f"{option}: folder of {out[:80]!r} does not exist")
        a = load_mesh(args.mesh)
        b = load_mesh(args.mesh2) if args.mesh2 else a
    except (CollisionKitError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    a.name = a.name or Path(args.mesh).name
    b.name = b.name or Path(args.mesh2 or args.mesh).name

    def split_list(s: str | None) -> list[str] | None:
        return [x.strip() for x in s.split(",") if x.strip()] if s else None

    print(HEADER)

    def progress(r: Row) -> None:
        print(
            f"| {r.bv} | {r.split} | {r.build} | {r.build_ms:.1f} | {r.memory_kb:.0f} | {r.nodes} | {r.depth} | "
            f"{r.tau_root:.3g} | {r.rho_mean:.3f} | {r.bool_us:.1f} | {r.bool_nv:.0f} | {r.bool_np:.0f} | {r.bool_nu:.0f} | "
            f"{r.model_bool_us:.1f} | {r.pairs_us:.1f} | {r.pairs_nv:.0f} | {r.pairs_np:.0f} | {r.pairs_nu:.0f} | "
            f"{r.model_pairs_us:.1f} | {r.static_bool_us:.1f} | {r.static_pairs_us:.1f} |",
            flush=True,
        )

    rep = evaluate(
        a, b, args.poses, split_list(args.kinds), split_list(args.splits), split_list(args.builds),
        repeats=args.repeats, progress=progress,
    )  # fmt: skip
    print()
    print(to_markdown(rep).split("\n\n")[-1])
    if args.json:
        Path(args.json).write_text(json.dumps(rep, indent=1) + "\n")
    if args.md:
        Path(args.md).write_text(to_markdown(rep) + "\n")
    if args.png:
        chart(rep, args.png)
        print(f"chart: {args.png}")
    return 0
