"""Seed 002's experiment: 31 randomly moving objects, > 80,000 triangles, 1000 steps.

Run from the repository root::

    python -m benchmarks.seed002            # 1000 steps (a few minutes)
    python -m benchmarks.seed002 --quick    # 100 steps

Every step moves the 31 objects (random linear and angular velocities, bouncing
off the walls of a cube), finds the object pairs whose world AABBs (the root
boxes, |R| h in numpy) overlap, and answers "do they collide?" for each pair with
every method, on the same pairs:

* BCDA: every triangle pair by the exact test, stop at the first hit (seed 002's
  "base collision detection algorithm"). It would take hours, so it is timed on
  a seeded uniform sample of the (step, pair) queries and extrapolated: total =
  mean time of the sample x number of queries (with the sample's standard error).
* AABB (seed: I-COLLIDE-like): strategy ``BFS(volumes="aabb")`` on the same
  balanced saabb trees, boxes only.
* SPHERE: ``BFS(volumes="sphere")``, spheres only (the other helper's "sphere"
  volume kind was not on main when this ran: a sphere-only mode of the same
  traversal over the same trees isolates the volume).
* SCDA: ``BFS(parallel=False)``, the hybrid S-AABB test, one thread.
* PCDA: ``BFS(parallel=True)``, every level with enough node pairs in parallel.
* This library's default (``strategy="descent"``: depth-first, SAH AABB trees), and
  Coal (OBBRSS) and python-fcl through ``benchmarks/peers.py``.

Table 2 runs the parallel variant of each (BCDA: a prange over a's triangles
with a stop flag). Speed-up S(p) = t_s / t_p and efficiency E = S / p of PCDA for
p = 1 .. cores (t_s: PCDA with one thread, i.e. SCDA). A second table times
the all-pairs query (``contacts``), where nothing stops early.

Results: benchmarks/results/seed002.md, .json, seed002-speedup.png,
seed002-methods.png.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import time
import warnings
from dataclasses import dataclass

import numba
import numpy as np
from numba import njit, prange

import collisionkit as ck
from collisionkit.kernels.core.linalg import map_triangle, relative_pose
from collisionkit.kernels.triangle.tri_tri import tri_tri_intersect_tuples
from collisionkit.query.strategies.bfs import saabb_tree, tri_spheres

from .peers import FCL, CoalOBBRSS

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
#: the run's date (issue #20: a hard-coded date stamped every rerun with the first run's day)
DATE = time.strftime("%Y-%m-%d")

#: 31 objects (pybullet_data paths), 83,806 triangles.
OBJECTS = (
    ["soccerball.obj"] * 4
    + ["duck.obj"] * 3
    + ["bunny.obj"] * 2
    + [f"kuka_iiwa/meshes/link_{i}.stl" for i in range(8)]
    + ["teddy2_VHACD_CHs.obj"] * 2
    + ["sphere_smooth.obj"] * 2
    + ["objects/mug.obj"] * 2
    + ["franka_panda/meshes/collision/link6.obj"] * 2
    + ["l_finger.stl"] * 2
    + ["l_finger_tip.stl"]
    + [f"franka_panda/meshes/collision/link{i}.obj" for i in (1, 2, 3)]
)

#: Seed 002, Table 1 and Table 2 (SGI, four R10000 processors, 32 threads, 2008).
SEED_TABLE1 = {"BCDA": (3.19, 5109), "AABB": (4.05, 4231), "SPHERE": (4.05, 3265), "SCDA": (7.05, 185), "PCDA": (17.70, 74)}
SEED_TABLE2 = {"BCDA": (5109, 2335), "AABB": (4231, 1666), "SPHERE": (3265, 1336), "S-AABB": (185, 74)}
SEED_SPEEDUP = (2.697, 0.674)


# --------------------------------------------------------------------------- BCDA


@njit(cache=True, nogil=True)
def _mapped(tris_b, Ta, Tb):
    R, t = relative_pose(Ta, Tb)
    out = np.empty((tris_b.shape[0], 9))
    for j in range(tris_b.shape[0]):
        B = map_triangle(
            R, t,
            tris_b[j, 0, 0], tris_b[j, 0, 1], tris_b[j, 0, 2],
            tris_b[j, 1, 0], tris_b[j, 1, 1], tris_b[j, 1, 2],
            tris_b[j, 2, 0], tris_b[j, 2, 1], tris_b[j, 2, 2],
        )
        for k in range(9):
            out[j, k] = B[k]
    return out


@njit(cache=True, nogil=True)
def _brute_rows(tris_a, mb, i0, i1, stop):
    """Any intersecting pair among a's triangles i0..i1 and all of b's (stop[0] polled)."""
    code = np.int64(0)  # Guigue-Devillers, exact
    for i in range(i0, i1):
        if stop[0] != 0:
            return False
        A = (
            tris_a[i, 0, 0], tris_a[i, 0, 1], tris_a[i, 0, 2],
            tris_a[i, 1, 0], tris_a[i, 1, 1], tris_a[i, 1, 2],
            tris_a[i, 2, 0], tris_a[i, 2, 1], tris_a[i, 2, 2],
        )
        for j in range(mb.shape[0]):
            B = (mb[j, 0], mb[j, 1], mb[j, 2], mb[j, 3], mb[j, 4], mb[j, 5], mb[j, 6], mb[j, 7], mb[j, 8])
            if tri_tri_intersect_tuples(A, B, code):
                stop[0] = 1
                return True
    return False


@njit(cache=True, nogil=True)
def brute_any(tris_a, tris_b, Ta, Tb):
    """BCDA, one thread: every triangle pair, exact test, first hit stops."""
    mb = _mapped(tris_b, Ta, Tb)
    stop = np.zeros(1, np.int64)
    return _brute_rows(tris_a, mb, 0, tris_a.shape[0], stop)


@njit(cache=True, nogil=True, parallel=True)
def brute_any_parallel(tris_a, tris_b, Ta, Tb, nchunks):
    """BCDA over threads: chunks of a's triangles, a shared stop flag."""
    mb = _mapped(tris_b, Ta, Tb)
    # np.empty + loops: numba may privatise an np.zeros array into the prange (kernels/traverse/bfs.py)
    stop = np.empty(1, np.int64)
    stop[0] = 0
    hits = np.empty(nchunks, np.int64)  # per-chunk answers: the stop flag only cancels work
    for c in range(nchunks):
        hits[c] = 0
    n = tris_a.shape[0]
    for c in prange(nchunks):
        if _brute_rows(tris_a, mb, (c * n) // nchunks, ((c + 1) * n) // nchunks, stop):
            hits[c] = 1
    return hits.sum() > 0


# --------------------------------------------------------------------------- scene


@dataclass
class Obj:
    name: str
    mesh: ck.Mesh  # default options (aabb, sah)
    hybrid: ck.Mesh  # saabb, balanced split (seed 002's tree)
    tris: np.ndarray  # (F, 3, 3) writable, for BCDA
    lo: np.ndarray
    hi: np.ndarray


def load_objects() -> list[Obj]:
    import pybullet_data
    import trimesh

    root = pybullet_data.getDataPath()
    out = []
    for name in OBJECTS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tm = trimesh.load(os.path.join(root, name), process=False, force="mesh")
        v = np.asarray(tm.vertices, dtype=np.float64)
        f = np.asarray(tm.faces, dtype=np.int64)
        used = v[np.unique(f)]
        lo, hi = used.min(axis=0), used.max(axis=0)
        v = (v - 0.5 * (lo + hi)) / np.linalg.norm(hi - lo)  # common size: bbox diagonal 1, centred
        m = ck.Mesh(v, f, name=os.path.basename(name))
        out.append(
            Obj(name, m, m.with_options(bv="saabb", split="balanced"), np.array(m.triangles, copy=True), *m.bounds)
        )
    return out


def _rot(axis: np.ndarray, angle: float) -> np.ndarray:
    return ck.rotation(axis, angle)[:3, :3]


def simulate(n_obj: int, steps: int, seed: int, box: float, speed: float, spin: float) -> np.ndarray:
    """(steps, n_obj, 4, 4) poses: constant random velocities, reflection at the walls."""
    rng = np.random.default_rng(seed)
    pos = rng.uniform(0.5, box - 0.5, size=(n_obj, 3))
    vel = rng.normal(size=(n_obj, 3))
    vel *= speed / np.linalg.norm(vel, axis=1, keepdims=True)
    axes = rng.normal(size=(n_obj, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    rot = np.stack([_rot(rng.normal(size=3), rng.uniform(0, np.pi)) for _ in range(n_obj)])
    poses = np.zeros((steps, n_obj, 4, 4))
    step_rot = np.stack([_rot(axes[i], spin) for i in range(n_obj)])
    for s in range(steps):
        poses[s, :, :3, :3] = rot
        poses[s, :, :3, 3] = pos
        poses[s, :, 3, 3] = 1.0
        pos = pos + vel
        for d in range(3):
            low = pos[:, d] < 0.5
            high = pos[:, d] > box - 0.5
            vel[low | high, d] *= -1
            pos[low, d] = 1.0 - pos[low, d]
            pos[high, d] = 2 * (box - 0.5) - pos[high, d]
        rot = np.einsum("nij,njk->nik", rot, step_rot)
        # re-orthonormalise (the rigidity check allows 1e-6 of drift)
        u, _, vt = np.linalg.svd(rot)
        rot = u @ vt
    return poses


def overlapping_pairs(objs: list[Obj], poses: np.ndarray) -> list[tuple[int, int]]:
    """All-pairs world AABB overlap of the root boxes (a simple broad phase)."""
    c = np.stack([0.5 * (o.lo + o.hi) for o in objs])
    h = np.stack([0.5 * (o.hi - o.lo) for o in objs])
    R = poses[:, :3, :3]
    wc = np.einsum("nij,nj->ni", R, c) + poses[:, :3, 3]
    wh = np.einsum("nij,nj->ni", np.abs(R), h)
    lo, hi = wc - wh, wc + wh
    ov = np.all((lo[:, None, :] <= hi[None, :, :]) & (lo[None, :, :] <= hi[:, None, :]), axis=2)
    i, j = np.nonzero(np.triu(ov, 1))
    return list(zip(i.tolist(), j.tolist(), strict=True))


# --------------------------------------------------------------------------- run


def _machine() -> str:
    cores = os.cpu_count()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    except OSError:
        model = platform.processor() or "?"
    return f"2-core VM ({model}, {cores} logical cores), Linux, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100 steps, smaller BCDA sample")
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--bcda-samples", type=int, default=None)
    ap.add_argument("--no-peers", action="store_true")
    args = ap.parse_args(argv)
    steps = args.steps or (100 if args.quick else 1000)
    n_bcda = args.bcda_samples or (6 if args.quick else 24)
    cores = numba.config.NUMBA_NUM_THREADS
    os.makedirs(RESULTS, exist_ok=True)

    t0 = time.perf_counter()
    objs = load_objects()
    n_tris = sum(o.mesh.n_faces for o in objs)
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    for o in objs:  # trees, untimed in the queries
        ck.bvh.tree_for(o.mesh, "aabb")
        tri_spheres(o.hybrid, saabb_tree(o.hybrid))
    t_build = time.perf_counter() - t0
    poses = simulate(len(objs), steps, args.seed, box=4.0, speed=0.02, spin=0.03)
    step_pairs = [overlapping_pairs(objs, poses[s]) for s in range(steps)]
    queries = [(s, i, j) for s in range(steps) for (i, j) in step_pairs[s]]
    print(f"{len(objs)} objects, {n_tris} triangles, {steps} steps, {len(queries)} pair queries "
          f"({len(queries) / steps:.1f} per step); load {t_load:.1f}s, trees {t_build:.1f}s")

    serial = {
        "AABB": ck.BFS(parallel=False, volumes="aabb"),
        "SPHERE": ck.BFS(parallel=False, volumes="sphere"),
        "S-AABB": ck.BFS(parallel=False),
    }
    parallel = {k: ck.BFS(parallel=True, volumes=v.volumes) for k, v in serial.items()}

    def run_bool(strategy, threads=None, hybrid=True, sample=None):
        out = np.zeros(len(queries), bool)
        q = queries if sample is None else [queries[k] for k in sample]
        start = time.perf_counter()
        for k, (s, i, j) in enumerate(q):
            a = objs[i].hybrid if hybrid else objs[i].mesh
            b = objs[j].hybrid if hybrid else objs[j].mesh
            out[k] = ck.intersects(a, b, poses[s, i], poses[s, j], strategy=strategy, threads=threads)
        return time.perf_counter() - start, out

    # warm-up (JIT from cache, first calls)
    warm = queries[: min(20, len(queries))]
    for strat in [*serial.values(), *parallel.values()]:
        for s, i, j in warm:
            ck.intersects(objs[i].hybrid, objs[j].hybrid, poses[s, i], poses[s, j], strategy=strat)
            ck.contacts(objs[i].hybrid, objs[j].hybrid, poses[s, i], poses[s, j], strategy=strat)
    for s, i, j in warm:
        ck.intersects(objs[i].mesh, objs[j].mesh, poses[s, i], poses[s, j])
        ck.contacts(objs[i].mesh, objs[j].mesh, poses[s, i], poses[s, j])

    times: dict[str, float] = {}
    answers: dict[str, np.ndarray] = {}
    times["default"], answers["default"] = run_bool("descent", hybrid=False)
    for k in serial:
        times[k], answers[k] = run_bool(serial[k], threads=1)
        times[k + " P"], answers[k + " P"] = run_bool(parallel[k])
        print(f"  {k}: serial {times[k]:.2f}s, parallel {times[k + ' P']:.2f}s")
    ref = answers["default"]
    colliding = int(ref.sum())
    for k, v in answers.items():
        assert np.array_equal(v, ref), f"{k} disagrees with the default strategy"

    # speed-up of PCDA, p = 1 .. cores
    speed = {}
    for p in range(1, cores + 1):
        t, v = run_bool(ck.BFS(parallel=True), threads=p)
        assert np.array_equal(v, ref)
        speed[p] = t
    # all pairs (contacts): default, SCDA, PCDA
    def run_all(strategy, threads=None, hybrid=True):
        start = time.perf_counter()
        h = hashlib.sha256()
        total = 0
        for s, i, j in queries:
            a = objs[i].hybrid if hybrid else objs[i].mesh
            b = objs[j].hybrid if hybrid else objs[j].mesh
            c = ck.contacts(a, b, poses[s, i], poses[s, j], strategy=strategy, threads=threads)
            h.update(c.face_a.tobytes())
            h.update(c.face_b.tobytes())
            total += len(c)
        return time.perf_counter() - start, h.hexdigest()[:10], total

    allp = {
        "default": run_all("descent", hybrid=False),
        "SCDA": run_all(serial["S-AABB"], threads=1),
        "PCDA": run_all(parallel["S-AABB"]),
    }
    for p in range(2, cores + 1):
        allp[f"PCDA p={p}"] = run_all(parallel["S-AABB"], threads=p)
    assert len({v[1] for v in allp.values()}) == 1, "all-pairs results differ"
    print("  all pairs:", {k: round(v[0], 3) for k, v in allp.items()})

    # cost-model counters on every 10th step
    counters = {}
    sub = [k for k, (s, _, _) in enumerate(queries) if s % 10 == 0]
    for name, strat, hyb in [("default", "descent", False), ("AABB", serial["AABB"], True),
                             ("SPHERE", serial["SPHERE"], True), ("S-AABB", serial["S-AABB"], True)]:
        bv = tri = pairs = 0
        for k in sub:
            s, i, j = queries[k]
            a = objs[i].hybrid if hyb else objs[i].mesh
            b = objs[j].hybrid if hyb else objs[j].mesh
            st = ck.query_stats(a, b, poses[s, i], poses[s, j], strategy=strat, threads=1)
            bv += st.bv_tests
            tri += st.tri_tests
            pairs += st.node_pairs
        counters[name] = {"bv_tests": bv, "tri_tests": tri, "node_pairs": pairs, "queries": len(sub)}

    # BCDA on a uniform sample of the queries
    rng = np.random.default_rng(args.seed + 1)
    sample = np.sort(rng.choice(len(queries), size=min(n_bcda, len(queries)), replace=False))
    bt = {"serial": [], "parallel": []}
    brute_any(objs[0].tris[:2], objs[1].tris[:2], poses[0, 0], poses[0, 1])  # compile
    brute_any_parallel(objs[0].tris[:2], objs[1].tris[:2], poses[0, 0], poses[0, 1], np.int64(4 * cores))
    for k in sample:
        s, i, j = queries[k]
        for how in ("serial", "parallel"):
            start = time.perf_counter()
            if how == "serial":
                hit = brute_any(objs[i].tris, objs[j].tris, poses[s, i], poses[s, j])
            else:
                hit = brute_any_parallel(objs[i].tris, objs[j].tris, poses[s, i], poses[s, j], np.int64(4 * cores))
            bt[how].append(time.perf_counter() - start)
            assert bool(hit) == bool(ref[k]), "BCDA disagrees"
    for how, key in (("serial", "BCDA"), ("parallel", "BCDA P")):
        arr = np.array(bt[how])
        times[key] = float(arr.mean() * len(queries))
        times[key + " se"] = float(arr.std(ddof=1) / np.sqrt(len(arr)) * len(queries)) if len(arr) > 1 else float("nan")

    peers = {}
    if not args.no_peers:
        for cls in (CoalOBBRSS, FCL):
            if not cls.available():
                continue
            engines = {}
            out = np.zeros(len(queries), bool)
            for _s, i, j in queries:  # build per pair, untimed
                if (i, j) not in engines:
                    e = cls()
                    e.setup(objs[i].mesh, objs[j].mesh)
                    engines[(i, j)] = e
            start = time.perf_counter()
            for k, (s, i, j) in enumerate(queries):
                out[k] = engines[(i, j)].intersects_one(poses[s, i], poses[s, j])
            t = time.perf_counter() - start
            peers[cls.name] = {"time": t, "disagree": int((out != ref).sum()), "version": cls.version()}
            print(f"  {cls.name}: {t:.2f}s, {peers[cls.name]['disagree']} answers differ")

    result = {
        "date": DATE, "machine": _machine(), "threading_layer": ck.threading_layer(), "cores": cores,
        "objects": len(objs), "triangles": n_tris, "steps": steps, "queries": len(queries), "colliding": colliding,
        "build_s": t_build, "times": times, "speedup_t": speed, "all_pairs": allp, "counters": counters,
        "bcda_sample": len(sample), "peers": peers, "quick": bool(args.quick),
        "load_average": os.getloadavg(),
        "provenance": _provenance(argv),
    }
    write(result)
    return result


def _provenance(argv) -> dict:
    import sys

    from .pairs import provenance

    return provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.seed002")


def _scale(t: float, steps: int) -> float:
    return t * 1000.0 / steps


def write(r: dict) -> None:
    steps = r["steps"]
    t = r["times"]
    f1000 = lambda x: _scale(x, steps)  # noqa: E731
    fps = lambda x: steps / x if x > 0 else float("inf")  # noqa: E731
    lines = [
        f"# Seed 002 experiment: 31 moving objects, {r['triangles']:,} triangles ({r.get('date', DATE)})",
        "",
        f"Machine: {r['machine']}; numba threading layer {r['threading_layer']}, {r['cores']} threads; "
        f"load average at end {r['load_average'][0]:.2f} (the VM's 2 cores are shared with other jobs).",
        f"Command: `python -m benchmarks.seed002{' --quick' if r['quick'] else ''}`. {r['steps']} steps, "
        f"{r['queries']:,} object-pair queries (root AABBs overlap), {r['colliding']:,} colliding. "
        "Totals are for the steps run; the 1000-step column scales them to 1000 steps.",
        f"BCDA is extrapolated from {r['bcda_sample']} queries drawn uniformly at random from all of them "
        "(total = mean x queries, +- one standard error).",
        "",
        "## Table 1: boolean query, all overlapping pairs per step",
        "",
        "| method | what | frame rate (steps/s) | total for 1000 steps (s) | seed 002 (2008): f/s | seed: s |",
        "|---|---|---|---|---|---|",
    ]
    rows = [
        ("BCDA", "BCDA", "all triangle pairs, exact test (extrapolated)"),
        ("AABB", "AABB", "BFS, boxes only (I-COLLIDE-like)"),
        ("SPHERE", "SPHERE", "BFS, spheres only"),
        ("SCDA", "S-AABB", "BFS, hybrid S-AABB, 1 thread"),
        ("PCDA", "S-AABB P", f"BFS, hybrid S-AABB, parallel frontier, {r['cores']} threads"),
    ]
    for label, key, what in rows:
        sf, ss = SEED_TABLE1[label]
        extra = f" +- {f1000(t[key + ' se']):.0f}" if key == "BCDA" else ""
        lines.append(f"| {label} | {what} | {fps(t[key]):.2f} | {f1000(t[key]):.2f}{extra} | {sf} | {ss} |")
    lines.append(f"| default | strategy \"descent\": depth-first, SAH AABB tree | {fps(t['default']):.2f} | "
                 f"{f1000(t['default']):.2f} | - | - |")
    for name, p in r["peers"].items():
        lines.append(f"| {name} | {name} {p['version']} (OBBRSS), same pairs; {p['disagree']} answers differ | "
                     f"{fps(p['time']):.2f} | {f1000(p['time']):.2f} | - | - |")
    lines += [
        "",
        "## Table 2: serial (NP) and parallel (P), total for 1000 steps (s)",
        "",
        "| method | NP | P | NP/P | seed NP | seed P | seed NP/P |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, key in (("BCDA", "BCDA"), ("AABB", "AABB"), ("SPHERE", "SPHERE"), ("S-AABB", "S-AABB")):
        np_, p_ = f1000(t[key]), f1000(t[key + " P"])
        snp, sp = SEED_TABLE2[label]
        lines.append(f"| {label} | {np_:.2f} | {p_:.2f} | {np_ / p_:.2f} | {snp} | {sp} | {snp / sp:.2f} |")
    lines += [
        "",
        "## Speed-up and efficiency of PCDA (boolean), p threads",
        "",
        "| p | total for 1000 steps (s) | S(p) = t_s / t_p | E = S / p |",
        "|---|---|---|---|",
    ]
    ts = r["speedup_t"][1]
    for p, tp in r["speedup_t"].items():
        lines.append(f"| {p} | {f1000(tp):.2f} | {ts / tp:.3f} | {ts / tp / p:.3f} |")
    lines.append(f"| seed 002 (32 threads, 4 CPUs) | - | {SEED_SPEEDUP[0]} | {SEED_SPEEDUP[1]} |")
    lines += [
        "",
        "## All intersecting triangle pairs (contacts), total for 1000 steps (s)",
        "",
        "| method | total (s) | pairs found | result hash |",
        "|---|---|---|---|",
    ]
    for k, (tt, hsh, n) in r["all_pairs"].items():
        lines.append(f"| {k} | {f1000(tt):.2f} | {n:,} | {hsh} |")
    lines += [
        "",
        f"## Cost-model counters (boolean query, every 10th step, {next(iter(r['counters'].values()))['queries']} queries)",
        "",
        "| method | volume tests n_v | node pairs | exact triangle tests n_p |",
        "|---|---|---|---|",
    ]
    for k, c in r["counters"].items():
        lines.append(f"| {k} | {c['bv_tests']:,} | {c['node_pairs']:,} | {c['tri_tests']:,} |")
    lines.append("")
    from .pairs import stamp

    text = stamp("\n".join(lines), r["provenance"])
    with open(os.path.join(RESULTS, "seed002.md"), "w") as f:
        f.write(text)
    with open(os.path.join(RESULTS, "seed002.json"), "w") as f:
        json.dump(r, f, indent=1, default=str)
    _plots(r)
    print("\n".join(lines))


def _plots(r: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ps = sorted(r["speedup_t"])
    ts = r["speedup_t"][1]
    S = [ts / r["speedup_t"][p] for p in ps]
    E = [s / p for s, p in zip(S, ps, strict=True)]
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.6))
    ax[0].plot(ps, S, "o-", label="measured (PCDA)")
    ax[0].plot(ps, ps, "--", color="grey", label="linear")
    ax[0].set_xlabel("threads p")
    ax[0].set_ylabel("speed-up S(p) = t_s / t_p")
    ax[0].set_xticks(ps)
    ax[0].legend()
    ax[1].plot(ps, E, "o-")
    ax[1].set_ylim(0, 1.1)
    ax[1].set_xticks(ps)
    ax[1].set_xlabel("threads p")
    ax[1].set_ylabel("efficiency E = S / p")
    fig.suptitle(f"Seed 002 experiment, {r['machine'].split(' (')[0]}, {r.get('date', DATE)}")
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "seed002-speedup.png"), dpi=110)
    plt.close(fig)

    t = r["times"]
    labels = ["BCDA", "AABB", "SPHERE", "S-AABB", "default"] + list(r["peers"])
    ser = [t["BCDA"], t["AABB"], t["SPHERE"], t["S-AABB"], t["default"]] + [p["time"] for p in r["peers"].values()]
    par = [t["BCDA P"], t["AABB P"], t["SPHERE P"], t["S-AABB P"], np.nan] + [np.nan] * len(r["peers"])
    x = np.arange(len(labels))
    fig, ax = plt.subplots(figsize=(9, 3.8))
    ax.bar(x - 0.2, [_scale(v, r["steps"]) for v in ser], 0.4, label="serial")
    ax.bar(x + 0.2, [_scale(v, r["steps"]) for v in par], 0.4, label="parallel")
    ax.set_yscale("log")
    ax.set_xticks(x, labels)
    ax.set_ylabel("seconds for 1000 steps (log)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "seed002-methods.png"), dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
