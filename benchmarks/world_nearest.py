"""``World.nearest_pair`` against python-fcl's DynamicAABBTreeCollisionManager distance.

    python -m benchmarks.world_nearest [--quick] [--sizes 10000,30000,100000] [--repeats R]

Issue 31 item 6: the nearest pair of many objects by a broad phase that prunes by box
distance, at most 3x FCL's manager on 10k-100k objects (before: 8,000 separated boxes
took 9.8 s, against trimesh + FCL's 0.02 s; 100k did not finish in 600 s).

Scenes (seeded): n unit cubes (12-triangle meshes) at random rotations,

* ``separated``: on a jittered lattice of spacing 3 (gaps of about 0.5 to 2);
* ``clustered``: in balls of about 200 objects scattered through a large empty
  cube, on a jittered lattice of spacing 2 inside each ball (gaps from about 0.2).

Both engines get the same meshes and poses: collisionkit a ``World`` (box meshes,
``nearest_pair()``), FCL one ``BVHModel`` per object (so the reported geometry names the
object) in a ``DynamicAABBTreeCollisionManager``, ``distance`` with
``defaultDistanceCallback``. Building (adding objects, FCL's ``setup``) is outside the
timed region; the first call of each engine is an untimed warm-up (numba kernels
compiled). collisionkit's time includes building its query tree (it keeps none between
calls); FCL's tree is built in ``setup``.

Referee, before any ratio: the pairs whose sphere centres are within the answer plus the
two bounding-sphere radii (scipy's cKDTree, no collisionkit code) are all measured with
one batched ``collisionkit.distance`` call; collisionkit's answer must equal their minimum
and be achieved by its pair, FCL's must be within 1e-9 relative of it (with its pair's
distance equal to it, when the pairs differ, i.e. a tie).

The ``before`` column (the all-pairs block scan ``world.nearest.nearest(same=True)``, the
search ``nearest_pair`` used before this benchmark) is one untimed-warm run on the
smallest size only.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import fcl
import numba
import numpy as np
from scipy.spatial import cKDTree

import collisionkit as ck
from collisionkit.world.nearest import nearest, pair_measure

from .pairs import machine, provenance, stamp, versions

HERE = Path(__file__).resolve().parent
REL = 1e-9


def scene(kind: str, n: int, seed: int) -> np.ndarray:
    """(n, 4, 4) poses of unit cubes (module notes)."""
    rng = np.random.default_rng(seed)
    if kind == "separated":
        side = int(math.ceil(n ** (1 / 3)))
        cells = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)[:n] * 3.0
        centres = cells + rng.uniform(-0.25, 0.25, cells.shape)
    elif kind == "clustered":
        per, radius, spacing = 200, 7.0, 2.0
        k = max(1, n // per)
        box = 20.0 * radius * k ** (1 / 3)
        centres_c = rng.uniform(0, box, (k, 3))
        r = int(math.ceil(radius / spacing))
        offs = np.stack(np.meshgrid(*[np.arange(-r, r + 1)] * 3, indexing="ij"), -1).reshape(-1, 3)
        offs = offs[np.linalg.norm(offs * spacing, axis=1) <= radius]
        # cells of one global lattice near any cluster centre (shared cells counted once)
        cells = np.unique((np.round(centres_c / spacing).astype(np.int64)[:, None] + offs[None]).reshape(-1, 3), axis=0)
        while cells.shape[0] < n:  # too few: one more cluster
            c = np.round(rng.uniform(0, box, 3) / spacing).astype(np.int64)
            cells = np.unique(np.concatenate([cells, c + offs]), axis=0)
        cells = cells[rng.permutation(cells.shape[0])[:n]]
        centres = cells * spacing + rng.uniform(-0.03, 0.03, (n, 3))
    else:
        raise ValueError(kind)
    poses = ck.random_poses(n, radius=1.0, seed=seed + 1)
    poses[:, :3, 3] = centres
    return poses


def fcl_manager(mesh: ck.Mesh, poses: np.ndarray):
    v, f = np.asarray(mesh.vertices, np.float64), np.asarray(mesh.faces, np.int32)
    objs, index = [], {}
    for k in range(poses.shape[0]):
        g = fcl.BVHModel()
        g.beginModel(v.shape[0], f.shape[0])
        g.addSubModel(v, f)
        g.endModel()
        index[id(g)] = k
        objs.append(fcl.CollisionObject(g, fcl.Transform(poses[k, :3, :3], poses[k, :3, 3])))
    m = fcl.DynamicAABBTreeCollisionManager()
    m.registerObjects(objs)
    m.setup()
    return m, objs, index


def fcl_nearest(m, index) -> tuple[float, tuple[int, int]]:
    data = fcl.DistanceData()
    m.distance(data, fcl.defaultDistanceCallback)
    r = data.result
    i, j = index[id(r.o1)], index[id(r.o2)]
    return float(r.min_distance), (min(i, j), max(i, j))


def referee(mesh: ck.Mesh, poses: np.ndarray, d: float, pair: tuple[int, int]) -> tuple[float, dict[tuple[int, int], float]]:
    """The least distance over every pair that could be below ``d`` (centres within
    ``d`` + 2 radii), and those pairs' distances."""
    v = np.asarray(mesh.vertices)
    c_local = (v.min(axis=0) + v.max(axis=0)) / 2
    r = float(np.linalg.norm(v - c_local, axis=1).max())
    centres = np.einsum("nij,j->ni", poses[:, :3, :3], c_local) + poses[:, :3, 3]
    near = cKDTree(centres).query_pairs(d * (1 + 1e-9) + 2 * r + 1e-9, output_type="ndarray")
    near = np.unique(np.concatenate([near, np.array([pair], np.int64)]), axis=0)
    got = ck.distance(mesh, mesh, poses[near[:, 0]], poses[near[:, 1]]).distance
    return float(got.min()), {(int(a), int(b)): float(x) for (a, b), x in zip(near, got, strict=True)}


def run(kind: str, n: int, repeats: int, before: bool) -> dict[str, Any]:
    mesh = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    poses = scene(kind, n, seed=n + (7 if kind == "clustered" else 0))
    t = time.perf_counter()
    w = ck.World()
    for k in range(n):
        w.add(f"o{k}", mesh, poses[k])
    build_ck = time.perf_counter() - t
    t = time.perf_counter()
    m, _objs, index = fcl_manager(mesh, poses)
    build_fcl = time.perf_counter() - t
    p = w.nearest_pair()  # warm-up (compiles on a fresh cache)
    fd, fpair = fcl_nearest(m, index)
    pair = (p.object_a, p.object_b)
    ref, near = referee(mesh, poses, p.distance, pair)
    ok_ck = p.distance == ref and near.get(pair) == p.distance
    ok_fcl = abs(fd - ref) <= REL * max(ref, 1e-300) and (fpair == pair or abs(near.get(fpair, math.inf) - ref) <= REL * ref)
    row: dict[str, Any] = {
        "scene": kind, "objects": n, "distance": p.distance, "pair": list(pair), "fcl_distance": fd, "fcl_pair": list(fpair),
        "referee_min": ref, "referee_pairs": len(near), "ok": bool(ok_ck and ok_fcl),
        "measured": p.measured, "candidates": p.candidates, "build_ck_s": build_ck, "build_fcl_s": build_fcl,
    }  # fmt: skip
    if not row["ok"]:
        print(f"FAIL {kind} {n}: ck {p.distance!r} {pair}, fcl {fd!r} {fpair}, referee {ref!r}", flush=True)
        row.update(ck_s=None, fcl_s=None, ratio=None)
        return row
    ck_t, fcl_t = [], []
    for _ in range(repeats):  # interleaved rounds
        t = time.perf_counter()
        q = w.nearest_pair()
        ck_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        d2, _ = fcl_nearest(m, index)
        fcl_t.append(time.perf_counter() - t)
        assert q.distance == p.distance and d2 == fd
    row.update(ck_s=statistics.median(ck_t), fcl_s=statistics.median(fcl_t), ck_rounds=ck_t, fcl_rounds=fcl_t)
    row["ratio"] = row["ck_s"] / row["fcl_s"]
    if before:
        order = w._order
        lo, hi = w._lo[order], w._hi[order]
        cen, rad = w._spheres()
        shapes = [w._shapes[s] for s in order.tolist()]
        measure = pair_measure(shapes, w._poses[order], shapes, w._poses[order])
        t = time.perf_counter()
        old = nearest(lo, hi, lo, hi, measure, same=True, allowed=w._allowed, spheres_a=(cen, rad), spheres_b=(cen, rad))
        row["before_s"] = time.perf_counter() - t
        assert old[0] == p.distance and (old[1], old[2]) == pair
    print(
        f"{kind:>9} {n:>7}: collisionkit {row['ck_s'] * 1e3:8.1f} ms, fcl {row['fcl_s'] * 1e3:8.1f} ms, "
        f"ratio {row['ratio']:.2f}x (ck/fcl)" + (f", before {row['before_s']:.1f} s" if before else ""),
        flush=True,
    )
    return row


def write(rows: list[dict], out: Path, argv: list[str], repeats: int) -> None:
    mc = machine()
    v = versions()
    lines = [
        "# World.nearest_pair vs python-fcl's DynamicAABBTreeCollisionManager distance",
        "",
        f"Machine: {mc['cpu_model']}, {mc['cpu_affinity']} cores usable, {mc['memory_gib']} GiB, {mc['platform']}, "
        f"Python {mc['python']}; load average at start {', '.join(f'{x:.2f}' for x in mc['loadavg_start'])}.",
        f"Versions: {', '.join(f'{k} {val}' for k, val in sorted(v.items()))}, python-fcl {getattr(fcl, '__version__', '?')}. "
        f"collisionkit threads: {numba.get_num_threads()} (the search is single-threaded; python-fcl: 1).",
        f"Timing: median of {repeats} interleaved rounds after one untimed warm-up call each; objects added and "
        "FCL's manager set up outside the timed region (collisionkit builds its query tree inside every call).",
        "Referee (benchmarks/world_nearest.py notes): every pair whose centres are within the answer plus two "
        "bounding radii (scipy cKDTree) measured; collisionkit must equal their minimum, FCL be within 1e-9 relative.",
        "Ratio: collisionkit time / FCL time (issue 31's target: at most 3).",
        "",
        "| scene | objects | collisionkit | python-fcl | ratio (ck/fcl) | distance | pair | candidates | measured | referee | before (all-pairs scan) |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---|---:|",
    ]
    for r in rows:
        if r["ratio"] is None:
            lines.append(f"| {r['scene']} | {r['objects']} | - | - | FAIL | {r['distance']!r} | {tuple(r['pair'])} | "
                         f"{r['candidates']} | {r['measured']} | FAIL (fcl {r['fcl_distance']!r}) | - |")  # fmt: skip
            continue
        before = f"{r['before_s']:.2f} s" if "before_s" in r else "-"
        lines.append(
            f"| {r['scene']} | {r['objects']} | {r['ck_s'] * 1e3:.1f} ms | {r['fcl_s'] * 1e3:.1f} ms | {r['ratio']:.2f}x | "
            f"{r['distance']:.12g} | {tuple(r['pair'])} | {r['candidates']} | {r['measured']} | "
            f"ok ({r['referee_pairs']} pairs; fcl {abs(r['fcl_distance'] - r['referee_min']) / r['referee_min']:.1e} rel) | {before} |"
        )
    lines += ["", "Building (not timed above):", ""]
    for r in rows:
        lines.append(f"* {r['scene']} {r['objects']}: World.add {r['build_ck_s']:.2f} s, FCL BVHModels + manager setup {r['build_fcl_s']:.2f} s")
    lines += ["", "* Timings on a shared 2-core VM with other jobs running: single ratios carry up to 2x noise."]
    out.write_text(stamp("\n".join(lines) + "\n", provenance(argv, "benchmarks.world_nearest")), encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps({"machine": mc, "versions": v, "repeats": repeats, "rows": rows}, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(prog="python -m benchmarks.world_nearest", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2,000 and 5,000 objects, 3 rounds (a smoke run)")
    ap.add_argument("--sizes", default=None, help="comma-separated object counts (default 10000,30000,100000)")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--no-before", action="store_true", help="skip the all-pairs scan on the smallest size")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "world_nearest.md")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in (args.sizes or ("2000,5000" if args.quick else "10000,30000,100000")).split(",")]
    repeats = args.repeats or (3 if args.quick else 5)
    rows = []
    for kind in ("separated", "clustered"):
        for n in sizes:
            rows.append(run(kind, n, repeats, before=not args.no_before and n == min(sizes)))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write(rows, args.out, argv, repeats)
        print(f"wrote {args.out}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
