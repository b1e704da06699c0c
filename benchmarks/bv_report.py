"""Every bounding volume x split rule (and build) on the issue's real scenes, and the
fastest combination per scene against Coal.

Usage::

    python -m benchmarks.bv_report                  # bunny, kuka-shelf, monastery-kuka; writes results/
    python -m benchmarks.bv_report --quick          # bunny only, 40 poses, three kinds x three splits, no files
    python -m benchmarks.bv_report --scenes bunny --poses 300

Scenes (a at the identity, b at random poses, about half colliding; see
``collisionkit.bv_report.make_poses``):

* ``bunny``: pybullet bunny.obj (902 tris) against itself;
* ``kuka-shelf``: the KUKA iiwa arm (its 8 collision meshes at the zero
  configuration, from model.urdf via yourdfpy: 14,758 tris) against the kiva
  shelf pod_lowres.stl (10,184 tris);
* ``monastery-kuka``: samurai_monastry.obj (124,789 tris) against the KUKA arm.

For each scene the report of ``collisionkit bv-report`` (build, memory, tau,
rho, counts, times, cost model) is written to ``results/bv_report-<scene>.md``
/ ``.json`` / ``.png``; then the fastest all-pairs and boolean combinations are
timed against Coal (OBBRSS and OBB trees, the peers' adapters of
benchmarks/peers.py) on the same poses, single-threaded, with each engine's
answers compared to collisionkit's; ``results/bv_report.md`` collects it all.
Machine: the shared 2-core VM; timings are best of ``--repeats``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
SCENES = ["bunny", "kuka-shelf", "monastery-kuka"]


def _pb(*parts: str) -> str:
    import pybullet_data

    return os.path.join(pybullet_data.getDataPath(), *parts)


def kuka_arm():
    """The KUKA iiwa arm at the zero configuration as one collisionkit Mesh."""
    import warnings

    import yourdfpy

    import collisionkit as ck

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        urdf = yourdfpy.URDF.load(
            _pb("kuka_iiwa", "model.urdf"), build_collision_scene_graph=True, load_collision_meshes=True
        )
        scene = urdf.collision_scene
        verts, faces, off = [], [], 0
        for node in scene.graph.nodes_geometry:
            T, geom = scene.graph[node]
            g = scene.geometry[geom]
            v = np.asarray(g.vertices) @ T[:3, :3].T + T[:3, 3]
            verts.append(v)
            faces.append(np.asarray(g.faces) + off)
            off += len(v)
    return ck.Mesh(np.vstack(verts), np.vstack(faces), name="kuka-iiwa-arm")


def scene_meshes(name: str):
    import warnings

    import collisionkit as ck

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "bunny":
            a = ck.load_mesh(_pb("bunny.obj"))
            a.name = "bunny.obj"
            return a, a
        if name == "kuka-shelf":
            shelf = ck.load_mesh(_pb("kiva_shelf", "meshes", "pod_lowres.stl"))
            shelf.name = "kiva pod_lowres.stl"
            return shelf, kuka_arm()
        if name == "monastery-kuka":
            path = _pb("samurai_monastry.obj")
            if not os.path.isfile(path):
                raise FileNotFoundError(path)
            mon = ck.load_mesh(path)
            mon.name = "samurai_monastry.obj"
            return mon, kuka_arm()
    raise KeyError(name)


def against_coal(a, b, poses: np.ndarray, combos: dict, repeats: int) -> list[dict]:
    """Time collisionkit combos and Coal on the same poses (single thread), check answers."""
    import collisionkit as ck

    from . import peers as P

    rows = []
    n = len(poses)
    eye = np.eye(4)
    ref_bool = None
    ref_pairs = None
    for label, opts in combos.items():
        ma = ck.Mesh(a.vertices, a.faces, options=opts)
        mb = ck.Mesh(b.vertices, b.faces, options=opts)
        ck.intersects(ma, mb, None, poses[:2], threads=1)  # build, compile
        tb = _best(lambda ma=ma, mb=mb: ck.intersects(ma, mb, None, poses, threads=1), repeats) / n
        tp = _best(lambda ma=ma, mb=mb: ck.contacts(ma, mb, None, poses, threads=1), repeats) / n
        hit = ck.intersects(ma, mb, None, poses, threads=1)
        c = ck.contacts(ma, mb, None, poses, threads=1)
        pairs = [
            set(zip(c.face_a[c.pose_index == k].tolist(), c.face_b[c.pose_index == k].tolist(), strict=True))
            for k in range(n)
        ]
        if ref_bool is None:
            ref_bool, ref_pairs = hit, pairs
        rows.append(
            {
                "engine": f"collisionkit {label}",
                "bool_us": tb * 1e6,
                "pairs_us": tp * 1e6,
                "bool_agree": int(np.count_nonzero(hit == ref_bool)),
                "pairs_agree": sum(p == q for p, q in zip(pairs, ref_pairs, strict=True)),
            }
        )
    for cls in (P.CoalOBBRSS, P.CoalOBB):
        if not cls.available():
            continue
        eng = cls()
        eng.setup(a, b)
        Pa = np.repeat(eye[None], n, axis=0)
        tb = _best(lambda eng=eng, Pa=Pa: eng.intersects_batch(Pa, poses), repeats) / n
        tp = _best(lambda eng=eng, Pa=Pa: eng.all_pairs_batch(Pa, poses), repeats) / n
        hit = eng.intersects_batch(Pa, poses)
        pairs = [eng.pairs_from_raw(r) for r in eng.all_pairs_batch(Pa, poses)]
        rows.append(
            {
                "engine": f"{cls.name} {cls.version()}",
                "bool_us": tb * 1e6,
                "pairs_us": tp * 1e6,
                "bool_agree": int(np.count_nonzero(hit == ref_bool)),
                "pairs_agree": sum(p == q for p, q in zip(pairs, ref_pairs, strict=True)),
            }
        )
    return rows


def _best(fn, repeats: int) -> float:
    fn()
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    import collisionkit as ck
    from collisionkit import bv_report as R

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--scenes", default=None, help=f"comma-separated, from {SCENES}")
    p.add_argument("--poses", type=int, default=None)
    p.add_argument("--repeats", type=int, default=None)
    p.add_argument("--kinds", default=None)
    p.add_argument("--splits", default=None)
    p.add_argument("--out", type=Path, default=None, help="results folder (default benchmarks/results; quick: none)")
    args = p.parse_args(argv)
    scenes = args.scenes.split(",") if args.scenes else (["bunny"] if args.quick else SCENES)
    kinds = args.kinds.split(",") if args.kinds else (["aabb", "obb", "kdop18"] if args.quick else None)
    splits = args.splits.split(",") if args.splits else (["sah", "median", "minsum"] if args.quick else None)
    repeats = args.repeats or (2 if args.quick else 5)
    out = args.out if args.out is not None else (None if args.quick else RESULTS)
    default_poses = {"bunny": 200, "kuka-shelf": 100, "monastery-kuka": 50}
    from .pairs import provenance, provenance_line

    pv = provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.bv_report")
    summary = [
        "# Bounding volumes x split rules on real scenes, and the fastest against Coal",
        "",
        provenance_line(pv),
        "",
        f"Machine: shared {os.cpu_count()}-core VM ({platform.machine()}), date {_dt.date.today().isoformat()}; "
        f"single-threaded timings, best of {repeats}. Command: `python -m benchmarks.bv_report"
        + (" --quick" if args.quick else "")
        + "`.",
        "",
    ]
    report_all = {}
    for name in scenes:
        try:
            a, b = scene_meshes(name)
        except FileNotFoundError as exc:
            print(f"skipping {name}: {exc} is missing")
            continue
        n = args.poses or (40 if args.quick else default_poses.get(name, 100))
        t0 = time.perf_counter()
        print(f"== {name}: {a.name} ({a.n_faces} tris) vs {b.name} ({b.n_faces}), {n} poses", flush=True)
        print(R.HEADER, flush=True)
        rep = R.evaluate(a, b, n, kinds, splits, None, repeats=repeats, progress=lambda r: print(
            f"| {r.bv} | {r.split} | {r.build} | {r.build_ms:.1f} | {r.memory_kb:.0f} | {r.nodes} | {r.depth} | "
            f"{r.tau_root:.3g} | {r.rho_mean:.3f} | {r.bool_us:.1f} | {r.bool_nv:.0f} | {r.bool_np:.0f} | "
            f"{r.bool_nu:.0f} | {r.model_bool_us:.1f} | {r.pairs_us:.1f} | {r.pairs_nv:.0f} | {r.pairs_np:.0f} | "
            f"{r.pairs_nu:.0f} | {r.model_pairs_us:.1f} | {r.static_bool_us:.1f} | {r.static_pairs_us:.1f} |", flush=True))  # fmt: skip
        rows = rep["rows"]
        fast_pairs = min(rows, key=lambda r: r["pairs_us"])
        fast_bool = min(rows, key=lambda r: r["bool_us"])
        combos = {"default (aabb/sah)": ck.BuildOptions()}
        for r in (fast_pairs, fast_bool):
            label = f"{r['bv']}/{r['split']}/{r['build']}"
            combos.setdefault(label, ck.BuildOptions(bv=r["bv"], split=r["split"], build=r["build"]))
        dyn, _, _ = R.make_poses(a, b, n, 0)
        peers = against_coal(a, b, dyn, combos, repeats)
        rep["coal"] = peers
        rep["seconds"] = time.perf_counter() - t0
        report_all[name] = rep
        md = R.to_markdown(rep)
        rep["provenance"] = pv
        lines = [
            f"## {name}",
            "",
            provenance_line(pv),
            "",
            md,
            "",
            "Against Coal (same poses, one thread; agree = poses whose answer equals collisionkit default's):",
            "",
        ]
        lines += [
            "| engine | boolean us/pose | all pairs us/pose | bool agree | pairs agree |",
            "|---|---|---|---|---|",
        ]
        for pr in peers:
            lines.append(
                f"| {pr['engine']} | {pr['bool_us']:.1f} | {pr['pairs_us']:.1f} | {pr['bool_agree']}/{n} | {pr['pairs_agree']}/{n} |"
            )
        text = "\n".join(lines)
        print(text, flush=True)
        summary += [text, ""]
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            (out / f"bv_report-{name}.md").write_text(text + "\n")
            (out / f"bv_report-{name}.json").write_text(json.dumps(rep, indent=1) + "\n")
            R.chart(rep, out / f"bv_report-{name}.png")
    if out is not None:
        (out / "bv_report.md").write_text("\n".join(summary) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
