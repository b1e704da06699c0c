"""Seed 003's experiment: outer and inner boxes on four convex polyhedra, against GJK,
our mesh BVH, Coal, python-fcl and pybullet.

Usage::

    python -m benchmarks.seed003            # 100,000 poses per pair and space (~15 min on 2 cores)
    python -m benchmarks.seed003 --quick    # 5,000 poses, smaller per-call samples (~2 min)

Shapes (seed table 1): cube (side 1), regular octahedron and regular dodecahedron
(circumradius 0.75), enneagonal prism (9 sides, circumradius 0.5, height 1). Pairs:
cube-cube, cube-enneagonal, enneagonal-enneagonal, dodecahedron-octahedron. Poses: a
and b both uniformly rotated, b translated uniformly inside a ball (the seed's
"circular space") whose radius is calibrated (bisection on 20,000 GJK answers) to a
25% and a 75% collision probability.

Table 2 analogue: per pose, the double hierarchy reports what decided it (inner
boxes, face tests, containment, or rejection); the time of each class is the
serial batched kernel's time over the poses of that class, divided by their count.

Table 3 analogue: mean microseconds per colliding / non-colliding pose for each
engine, per call (a Python loop over a sample of poses; ours both through the public
``collisionkit.intersects`` and through the per-call kernel entry) and batched (one
call for all poses: ours only; the peers have no batch call, so their batched column
is their per-call loop). Every engine's answers are compared with GJK's (exact for
polyhedra); each disagreement is refereed by the exact solid test.

Writes benchmarks/results/seed003.md and .json (not under --quick unless --write).
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

import numba
import numpy as np

import collisionkit as ck
from collisionkit.convex.double_hierarchy import hierarchy_of
from collisionkit.kernels.core.layout import N_STATS
from collisionkit.kernels.proximity import gjk as kg
from collisionkit.kernels.traverse import double_box as kd

RESULTS = Path(__file__).resolve().parent / "results"
PHI = (1.0 + 5.0**0.5) / 2.0
PAIRS = [("cube", "cube"), ("cube", "enneagonal"), ("enneagonal", "enneagonal"), ("dodecahedron", "octahedron")]
SEED_TABLE2 = {  # seed 003, table 2: I_CI, t_CI, I_CP, t_CP (us) at 25% and at 75%
    ("cube", "cube"): ((28046, 5.8, 0, 0.0), (76521, 4.9, 0, 0.0)),
    ("cube", "enneagonal"): ((24749, 5.69, 654, 375.28), (73816, 3.86, 1246, 379.59)),
    ("enneagonal", "enneagonal"): ((15812, 38.56, 9259, 121.38), (54138, 27.86, 20740, 111.17)),
    ("dodecahedron", "octahedron"): ((16401, 0.66, 8503, 46.29), (57783, 0.65, 17171, 49.01)),
}
SEED_TABLE3 = {  # seed 003, table 3 "Propuesto" row and the best peer (QuickCD / RAPID), us: (coll, non-coll)
    ("dodecahedron", "octahedron"): {"25%": (8.86, 22.77), "75%": (5.93, 61.50)},
    ("cube", "enneagonal"): {"25%": (5.61, 2.39), "75%": (4.80, 8.48)},
}


def shapes() -> dict[str, ck.Convex]:
    cube = ck.Convex.from_points(
        [[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)], name="cube"
    )
    octa = ck.Convex.from_points(np.vstack([np.eye(3), -np.eye(3)]) * 0.75, name="octahedron")
    p = [[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    for s1 in (-1, 1):
        for s2 in (-1, 1):
            p += [[0, s1 / PHI, s2 * PHI], [s1 / PHI, s2 * PHI, 0], [s1 * PHI, 0, s2 / PHI]]
    dode = ck.Convex.from_points(np.array(p, dtype=np.float64) * (0.75 / np.sqrt(3.0)), name="dodecahedron")
    a = 2 * np.pi * np.arange(9) / 9
    ring = np.stack([0.5 * np.cos(a), 0.5 * np.sin(a)], axis=1)
    enn = ck.Convex.from_points(
        np.vstack([np.column_stack([ring, np.full(9, -0.5)]), np.column_stack([ring, np.full(9, 0.5)])]),
        name="enneagonal",
    )
    return {"cube": cube, "octahedron": octa, "dodecahedron": dode, "enneagonal": enn}


def poses(n: int, radius: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    pa = ck.random_poses(n, radius=0.0, seed=seed)
    pb = ck.random_poses(n, radius=radius, seed=seed + 7919)
    return np.ascontiguousarray(pa), np.ascontiguousarray(pb)


def calibrate(a, b, target: float, seed: int) -> float:
    lo, hi = 0.0, 4.0
    for _ in range(18):
        mid = (lo + hi) / 2
        pa, pb = poses(20000, mid, seed)
        rate = ck.intersects(a, b, pa, pb).mean()
        if rate > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _request(a, b, pa, pb, threads):
    from collisionkit.query import driver

    return driver.prepare(a, b, pa, pb, 0, -1, "descent", threads)


def time_call(f, repeat=3) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


# --- our engines -----------------------------------------------------------------------------


def db_kernel_args(a, b, pa, pb, ia, ib, depth=4):
    ha, hb = hierarchy_of(a, depth), hierarchy_of(b, depth)
    n = ia.shape[0]
    return (
        ha.topo, ha.outer, ha.inner, ha.tri_ids, a._tris, a.scale, pa,
        hb.topo, hb.outer, hb.inner, hb.tri_ids, b._tris, b.scale, pb,
        ia, ib, np.int64(0), np.int64(2 * (ha.depth + hb.depth) + 2), np.zeros(n, np.int64),
        np.zeros((n, N_STATS), np.int64),
    )  # fmt: skip


def batch_double(a, b, pa, pb, idx, nchunks) -> tuple[float, np.ndarray]:
    args = list(db_kernel_args(a, b, pa, pb, idx, idx))
    driver = kd.double_box_serial if nchunks == 1 else kd.double_box_parallel
    t = time_call(lambda: driver(*args, np.int64(nchunks)))
    return t, args[18]


def batch_gjk(a, b, pa, pb, idx, parallel) -> float:
    n = idx.shape[0]
    hit, dist, pts, st = np.zeros(n, np.bool_), np.zeros(n), np.zeros((n, 6)), np.zeros((n, 4), np.int64)
    args = (*a.kernel_args()[:4], a.scale, pa, *b.kernel_args()[:4], b.scale, pb, idx, idx, False, hit, dist, pts, st)
    if parallel:
        return time_call(lambda: kg.gjk_batch_parallel(*args, np.int64(min(n, 8))))
    return time_call(lambda: kg.gjk_batch_serial(*args, np.int64(1)))


def batch_mesh(a, b, pa, pb, idx, threads) -> float:
    ma, mb = a.mesh, b.mesh
    PA, PB = np.ascontiguousarray(pa[idx]), np.ascontiguousarray(pb[idx])
    return time_call(lambda: ck.intersects(ma, mb, PA, PB, threads=threads))


# --- peers ------------------------------------------------------------------------------------


class CoalPeer:
    name = "Coal (GJK)"

    def __init__(self, a, b):
        import coal

        self.coal = coal

        def conv(s):
            v = coal.StdVec_Vec3s()
            for p in np.asarray(s.vertices):
                v.append(p)
            return coal.Convex.convexHull(v, True, "Qt")

        self.ga, self.gb = conv(a), conv(b)
        self.ta, self.tb = coal.Transform3s(), coal.Transform3s()
        self.req, self.res = coal.CollisionRequest(), coal.CollisionResult()
        self.functor = coal.ComputeCollision(self.ga, self.gb)

    def __call__(self, Ta, Tb) -> bool:
        self.ta.setRotation(Ta[:3, :3])
        self.ta.setTranslation(Ta[:3, 3])
        self.tb.setRotation(Tb[:3, :3])
        self.tb.setTranslation(Tb[:3, 3])
        self.res.clear()
        return self.functor(self.ta, self.tb, self.req, self.res) > 0


class FclPeer:
    name = "python-fcl (GJK)"

    def __init__(self, a, b):
        import fcl

        self.fcl = fcl

        def conv(s):
            f = np.asarray(s.faces)
            return fcl.Convex(
                np.asarray(s.vertices, dtype=np.float64), len(f), np.column_stack([np.full(len(f), 3), f]).ravel()
            )

        self.oa = fcl.CollisionObject(conv(a), fcl.Transform())
        self.ob = fcl.CollisionObject(conv(b), fcl.Transform())
        self.req = fcl.CollisionRequest()

    def __call__(self, Ta, Tb) -> bool:
        fcl = self.fcl
        self.oa.setTransform(fcl.Transform(Ta[:3, :3], Ta[:3, 3]))
        self.ob.setTransform(fcl.Transform(Tb[:3, :3], Tb[:3, 3]))
        return fcl.collide(self.oa, self.ob, self.req, fcl.CollisionResult()) > 0


class BulletPeer:
    name = "pybullet (convex hull)"

    def __init__(self, a, b):
        import pybullet as p

        self.p = p
        self.cid = p.connect(p.DIRECT)

        def body(s):
            shape = p.createCollisionShape(
                p.GEOM_MESH, vertices=np.asarray(s.vertices).tolist(), physicsClientId=self.cid
            )
            return p.createMultiBody(0, shape, physicsClientId=self.cid)

        self.ba, self.bb = body(a), body(b)

    @staticmethod
    def _quat(R):
        from scipy.spatial.transform import Rotation

        return Rotation.from_matrix(R).as_quat()

    def prepare(self, P):
        return [(T[:3, 3].tolist(), self._quat(T[:3, :3]).tolist()) for T in P]

    def __call__(self, qa, qb) -> bool:
        p = self.p
        p.resetBasePositionAndOrientation(self.ba, qa[0], qa[1], physicsClientId=self.cid)
        p.resetBasePositionAndOrientation(self.bb, qb[0], qb[1], physicsClientId=self.cid)
        return len(p.getClosestPoints(self.ba, self.bb, 0.0, physicsClientId=self.cid)) > 0

    def close(self):
        self.p.disconnect(self.cid)


def per_call(f, A, B, idx) -> tuple[float, np.ndarray]:
    t0 = time.perf_counter()
    out = np.fromiter((f(A[k], B[k]) for k in idx), dtype=bool, count=len(idx))
    return (time.perf_counter() - t0) / max(len(idx), 1) * 1e6, out


# --- the run ---------------------------------------------------------------------------------


def run_config(a, b, na, nb, target, pi, seed, n, sample, threads) -> dict:
    """Tables 2 and 3 for one pair and one space size."""
    rad = calibrate(a, b, target, seed + 100 * pi)
    pa, pb = poses(n, rad, seed + 100 * pi + int(target * 100))
    idx = np.arange(n, dtype=np.int64)
    truth = ck.intersects(a, b, pa, pb)  # GJK, exact for polyhedra
    # table 2: what decided each pose, time per class (serial batched kernel)
    _, decided = batch_double(a, b, pa, pb, idx, 1)
    assert np.array_equal(decided != kd.DECIDED_REJECT, truth), "double hierarchy != GJK"
    cls = {}
    for name, code in (
        ("inner", kd.DECIDED_INNER),
        ("faces", kd.DECIDED_FACES),
        ("contained", kd.DECIDED_CONTAINED),
        ("reject", kd.DECIDED_REJECT),
    ):
        sel = np.flatnonzero(decided == code).astype(np.int64)
        t = batch_double(a, b, pa, pb, sel, 1)[0] / max(sel.size, 1) * 1e6 if sel.size else 0.0
        cls[name] = {"count": int(sel.size), "us": t}
    row = {"pair": f"{na}-{nb}", "target": target, "radius": rad, "rate": float(truth.mean()), "table2": cls}
    # table 3
    coll = np.flatnonzero(truth).astype(np.int64)
    free = np.flatnonzero(~truth).astype(np.int64)
    rng = np.random.default_rng(seed)
    sc = np.sort(rng.choice(coll, min(sample, coll.size), replace=False)) if coll.size else coll
    sf = np.sort(rng.choice(free, min(sample, free.size), replace=False)) if free.size else free
    eng: dict = {}

    def batched(fn):
        return [fn(sel) / max(sel.size, 1) * 1e6 if sel.size else 0.0 for sel in (coll, free)]

    eng["double hierarchy"] = {
        "batched_serial": batched(lambda sel: batch_double(a, b, pa, pb, sel, 1)[0]),
        "batched_parallel": batched(lambda sel: batch_double(a, b, pa, pb, sel, 4 * threads)[0]),
    }
    eng["GJK"] = {
        "batched_serial": batched(lambda sel: batch_gjk(a, b, pa, pb, sel, False)),
        "batched_parallel": batched(lambda sel: batch_gjk(a, b, pa, pb, sel, True)),
    }
    eng["mesh BVH"] = {
        "batched_serial": batched(lambda sel: batch_mesh(a, b, pa, pb, sel, 1)),
        "batched_parallel": batched(lambda sel: batch_mesh(a, b, pa, pb, sel, None)),
    }
    # per call: public API and kernel entries
    ka, kb = a.kernel_args(), b.kernel_args()
    ha, hb = hierarchy_of(a, 4), hierarchy_of(b, 4)
    ss = np.int64(2 * (ha.depth + hb.depth) + 2)
    st0 = np.zeros(4, np.int64)
    st1 = np.zeros((1, N_STATS), np.int64)

    def dbl_one(Ta, Tb):
        return (
            kd.double_box_one(
                ha.topo,
                ha.outer,
                ha.inner,
                ha.tri_ids,
                a._tris,
                a.scale,
                Ta,
                hb.topo,
                hb.outer,
                hb.inner,
                hb.tri_ids,
                b._tris,
                b.scale,
                Tb,
                np.int64(0),
                ss,
                st1,
            )
            > 0
        )

    def gjk_one(Ta, Tb):
        return kg.gjk_intersect_one(
            ka[0], ka[1], ka[2], ka[3], a.scale, Ta, kb[0], kb[1], kb[2], kb[3], b.scale, Tb, st0
        )

    ma, mb = a.mesh, b.mesh
    ck.intersects(ma, mb, pa[0], pb[0])  # build (and cache) the meshes' trees before timing
    calls = {
        ("double hierarchy", "per_call_kernel"): dbl_one,
        ("double hierarchy", "per_call_api"): lambda Ta, Tb: ck.intersects(a, b, Ta, Tb, strategy="double-box"),
        ("GJK", "per_call_kernel"): gjk_one,
        ("GJK", "per_call_api"): lambda Ta, Tb: ck.intersects(a, b, Ta, Tb),
        ("mesh BVH", "per_call_api"): lambda Ta, Tb: ck.intersects(ma, mb, Ta, Tb),
    }
    for (e, col), f in calls.items():
        tc, _ = per_call(f, pa, pb, sc)
        tf, _ = per_call(f, pa, pb, sf)
        eng[e][col] = [tc, tf]
    # peers, refereed
    peers = []
    for cls_ in (CoalPeer, FclPeer, BulletPeer):
        try:
            peers.append(cls_(a, b))
        except Exception as exc:  # noqa: BLE001 - absent engine
            print(f"  {cls_.name}: unavailable ({exc})")
    for peer in peers:
        if isinstance(peer, BulletPeer):
            A, B = peer.prepare(pa[np.concatenate([sc, sf])]), peer.prepare(pb[np.concatenate([sc, sf])])
            ia_ = np.arange(len(sc) + len(sf))
            tc, oc = per_call(peer, A, B, ia_[: len(sc)])
            tf, of = per_call(peer, A, B, ia_[len(sc) :])
            peer.close()
        else:
            tc, oc = per_call(peer, pa, pb, sc)
            tf, of = per_call(peer, pa, pb, sf)
        wrong_c = sc[~oc]
        wrong_f = sf[of]
        refereed = []
        for k in np.concatenate([wrong_c, wrong_f])[:50]:
            exact = kg.exact_convex_pair(a._tris, b._tris, pa[k], pb[k])
            gd = float(ck.query.convex.gjk_distance(a, b, pa[k], pb[k])[0])
            refereed.append({"pose": int(k), "ours": bool(truth[k]), "exact": bool(exact), "gjk_distance": gd})
        eng[peer.name] = {
            "per_call_api": [tc, tf],
            "missed": int(wrong_c.size),
            "extra": int(wrong_f.size),
            "refereed": refereed,
        }
    row["table3"] = eng
    print(
        f"{na}-{nb} {int(target * 100)}%: radius {rad:.4f}, rate {truth.mean():.3f}, "
        f"inner {cls['inner']['count']} ({cls['inner']['us']:.2f} us), faces {cls['faces']['count']} "
        f"({cls['faces']['us']:.2f} us), contained {cls['contained']['count']}",
        flush=True,
    )
    return row


def run(n: int, sample: int, seed: int) -> dict:
    S = shapes()
    for s in S.values():
        t0 = time.perf_counter()
        hierarchy_of(s, 4)
        s._build_s = time.perf_counter() - t0
    # warm every kernel once
    a = S["cube"]
    pa, pb = poses(64, 1.0, 0)
    idx = np.arange(64, dtype=np.int64)
    batch_double(a, a, pa, pb, idx, 1)
    batch_double(a, a, pa, pb, idx, 4)
    batch_gjk(a, a, pa, pb, idx, False)
    batch_gjk(a, a, pa, pb, idx, True)
    ck.intersects(a, a, pa[0], pb[0])
    ck.intersects(a, a, pa[0], pb[0], strategy="double-box")
    out: dict = {"n": n, "sample": sample, "pairs": []}
    threads = numba.get_num_threads()
    for pi, (na, nb) in enumerate(PAIRS):
        a, b = S[na], S[nb]
        for target in (0.25, 0.75):
            out["pairs"].append(run_config(a, b, na, nb, target, pi, seed, n, sample, threads))
    out["build_s"] = {k: getattr(s, "_build_s", 0.0) for k, s in S.items()}
    return out


def write(res: dict, quick: bool) -> None:
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "seed003.json").write_text(json.dumps(res, indent=1))
    L = [
        "# Seed 003: outer and inner boxes (results)",
        "",
        f"Machine: {res['machine']}; date {res['date']}; command `{res['command']}`.",
        f"Poses per pair and space: {res['n']:,}; per-call columns timed on up to {res['sample']:,} colliding "
        "and {0:,} non-colliding poses each (Python loop).".format(res["sample"]),
        "",
        "## Table 2 analogue: who decided the collisions (double hierarchy, depth 4)",
        "",
        "Counts of colliding poses decided by inner boxes (I_CI), by face tests (I_CP) and by the",
        "containment test (the seed has no such case); t = mean us per pose of that class (serial",
        "batched kernel). The seed's figures (another machine: 2.8 GHz Xeon, 2008, C++) in brackets.",
        "",
        "| pair | space | rate | I_CI (seed) | t_CI us (seed) | I_CP (seed) | t_CP us (seed) | contained | t_reject us |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in res["pairs"]:
        key = tuple(row["pair"].split("-"))
        s = SEED_TABLE2[key][0 if row["target"] == 0.25 else 1]
        c = row["table2"]
        scale = 100000 / res["n"]
        L.append(
            f"| {row['pair']} | {int(row['target'] * 100)}% | {row['rate']:.3f} | {c['inner']['count']} ({s[0] / scale:.0f}) | "
            f"{c['inner']['us']:.3f} ({s[1]}) | {c['faces']['count']} ({s[2] / scale:.0f}) | {c['faces']['us']:.3f} ({s[3]}) | "
            f"{c['contained']['count']} | {c['reject']['us']:.3f} |"
        )
    if res["n"] != 100000:
        L.append("")
        L.append(f"(seed counts scaled from 100,000 to {res['n']:,} poses)")
    L += ["", "## Table 3 analogue: mean us per colliding / non-colliding pose", ""]
    for row in res["pairs"]:
        L.append(f"### {row['pair']}, {int(row['target'] * 100)}% space (collision rate {row['rate']:.3f})")
        L.append("")
        L.append(
            "| engine | per call, API | per call, kernel | batched serial | batched parallel | wrong (missed / extra) |"
        )
        L.append("|---|---|---|---|---|---|")
        for e, d in row["table3"].items():

            def f(col, d=d):
                v = d.get(col)
                return f"{v[0]:.3f} / {v[1]:.3f}" if v else "-"

            if "missed" in d:
                wrong = f"{d['missed']} / {d['extra']}"
            elif e == "mesh BVH":
                wrong = "surfaces only (no containment)"
            else:
                wrong = "0 / 0 (exact, = GJK)"
            L.append(
                f"| {e} | {f('per_call_api')} | {f('per_call_kernel')} | {f('batched_serial')} | {f('batched_parallel')} | {wrong} |"
            )
        key = tuple(row["pair"].split("-"))
        if key in SEED_TABLE3:
            sc = SEED_TABLE3[key]["25%" if row["target"] == 0.25 else "75%"]
            L.append(f"| seed's proposed detector (2008 Xeon) | {sc[0]} / {sc[1]} | | | | |")
        L.append("")
    from .pairs import stamp

    (RESULTS / "seed003.md").write_text(stamp("\n".join(L) + "\n", res["provenance"]))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5,000 poses, 300 per-call samples")
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--sample", type=int, default=None)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    n = args.n or (5000 if args.quick else 100000)
    sample = args.sample or (300 if args.quick else 3000)
    t0 = time.perf_counter()
    res = run(n, sample, args.seed)
    res["machine"] = (
        f"{platform.node()} ({os.cpu_count()} cores, {platform.processor() or platform.machine()}), shared 2-core VM"
    )
    res["date"] = _dt.date.today().isoformat()
    res["command"] = (
        "python -m benchmarks.seed003" + (" --quick" if args.quick else "") + (f" --n {args.n}" if args.n else "")
    )
    from .pairs import provenance

    res["provenance"] = provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.seed003")
    res["wall_s"] = time.perf_counter() - t0
    if not args.no_write:
        write(res, args.quick)
    print(f"done in {res['wall_s']:.0f} s")


if __name__ == "__main__":
    main()
