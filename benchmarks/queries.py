"""Distance, time of impact and penetration: collisionkit against Coal and python-fcl.

Usage::

    python -m benchmarks.queries            # full run, writes results/queries.md and .json
    python -m benchmarks.queries --quick    # fewer poses and rounds (still writes, marked quick)

Categories (medians over interleaved rounds, same seeded poses for every engine):

* ``distance_call``: one distance query per call (us/call), real mesh pairs at poses
  where the meshes are apart or touching;
* ``distance_batch``: the same poses as one batched call (us/pose; peers loop);
* ``toi_call``: time of impact of a translating mesh pair (us/call); python-fcl's
  continuous collision with its sampling solver at 100 and 1000 samples (its
  conservative-advancement solver reports no hit for mesh pairs in python-fcl 0.7);
  every engine's t is refereed against dense exact sampling of the motion;
* ``toi_call_loose``: ours at a 1e-2 relative tolerance (t accuracy comparable to
  fcl's 100 samples; still never after the first contact);
* ``penetration_call``: penetration depth of convex pairs (us/call) against Coal's EPA
  on ``coal.Convex`` hulls of the same vertices; ``penetration_batch``: ours as one
  batched call (us/pose) against Coal's per-call time (Coal has no batch).

Answers gate ratios (issue #20): every engine's answer at every pose is refereed against
an independent reference (``benchmarks/referee.py``): distances against a brute force over
all triangle pairs (0 exactly where tests/brute.py's exact test finds a meeting pair),
convex depths against a brute force over the separating-axis candidates, times of impact
against the first of 2001 exact samples. An engine whose answers fail gets no ratio, the
verdict is printed beside every ratio, and the run exits 1. Machine: the project's 2-core VM.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from . import peers as P
from .pairs import machine, versions

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def _load(name: str):
    import pybullet_data

    import collisionkit as ck

    if name.startswith("shared:"):
        return ck.load_mesh(HERE.parent.parent / "shared" / "data" / name[7:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ck.load_mesh(Path(pybullet_data.getDataPath()) / name)


def _radius(m) -> float:
    lo, hi = m.bounds
    return float(np.linalg.norm(hi - lo) / 2)


def _poses(a, b, factor: float, n: int, seed: int):
    import collisionkit as ck

    pa = ck.random_poses(n, radius=0.2 * _radius(a), seed=seed)
    pb = ck.random_poses(n, radius=factor * (_radius(a) + _radius(b)), seed=seed + 1000)
    return pa, pb


# Result fields are read only here (the records' field forms may change: one place to adapt).
def _distances(r) -> np.ndarray:
    """(N,) float64 distances of a ``ck.distance`` record (one pose: N = 1)."""
    return np.atleast_1d(np.asarray(r.distance, dtype=np.float64))


def _depths(r) -> np.ndarray:
    """(N,) float64 depths of a ``ck.penetration`` record."""
    return np.atleast_1d(np.asarray(r.depth, dtype=np.float64))


def _toi_t(r) -> float:
    """Time of first contact of a one-motion ``ck.time_of_impact`` record, 1.0 for no hit."""
    return float(np.asarray(r.t).reshape(-1)[0]) if bool(np.asarray(r.colliding).reshape(-1)[0]) else 1.0


def _time(fn: Callable[[], Any], reps: int = 1) -> float:
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


# --------------------------------------------------------------------------- peers


class CoalDistance:
    name = "coal"

    def __init__(self, a, b):
        import coal

        self.coal = coal
        self.ga, self.gb = P.CoalOBBRSS()._model(a), P.CoalOBBRSS()._model(b)
        self.functor = coal.ComputeDistance(self.ga, self.gb)
        self.req = coal.DistanceRequest()
        self.ta, self.tb = coal.Transform3s(), coal.Transform3s()

    def __call__(self, Ta, Tb) -> float:
        ta, tb = self.ta, self.tb
        ta.setRotation(Ta[:3, :3])
        ta.setTranslation(Ta[:3, 3])
        tb.setRotation(Tb[:3, :3])
        tb.setTranslation(Tb[:3, 3])
        res = self.coal.DistanceResult()
        return self.functor(ta, tb, self.req, res)


class FCLDistance:
    name = "fcl"

    def __init__(self, a, b):
        import fcl

        self.fcl = fcl
        self.oa = fcl.CollisionObject(P.FCL()._model(a), fcl.Transform())
        self.ob = fcl.CollisionObject(P.FCL()._model(b), fcl.Transform())
        self.req = fcl.DistanceRequest()

    def __call__(self, Ta, Tb) -> float:
        oa, ob = self.oa, self.ob
        oa.setRotation(Ta[:3, :3])
        oa.setTranslation(Ta[:3, 3])
        ob.setRotation(Tb[:3, :3])
        ob.setTranslation(Tb[:3, 3])
        return self.fcl.distance(oa, ob, self.req, self.fcl.DistanceResult())


# --------------------------------------------------------------------------- categories


def bench_distance(pairs, n, rounds, out):
    for an, bn in pairs:
        _distance_scene(an, bn, n, rounds, out)


def _distance_scene(an, bn, n, rounds, out):
    import collisionkit as ck

    from . import referee as R

    a, b = _load(an), _load(bn)
    pa, pb = _poses(a, b, 0.9, n, seed=1)
    engines = {"coal": CoalDistance(a, b), "fcl": FCLDistance(a, b)}
    # answers (untimed): ours batched and per call, each peer per call
    answers = {
        "collisionkit": _distances(ck.distance(a, b, pa, pb)),
        "collisionkit (per call)": np.concatenate([_distances(ck.distance(a, b, pa[i], pb[i])) for i in range(n)]),
        "collisionkit-t1": _distances(ck.distance(a, b, pa, pb, threads=1)),
    }
    for k, f in engines.items():
        answers[k] = np.array([f(pa[i], pb[i]) for i in range(n)], dtype=np.float64)
    # issue #20: an independent brute-force reference gates every ratio
    ref = np.array([R.brute_distance(a, b, pa[i], pb[i]) for i in range(n)])
    verdicts = {k: R.referee_values(v, ref[:, 0], ref[:, 1]) for k, v in answers.items()}
    verdicts["collisionkit"] = _worst(verdicts.pop("collisionkit"), verdicts.pop("collisionkit (per call)"))
    t_call = {k: [] for k in ["collisionkit", *engines]}
    t_batch = {k: [] for k in ["collisionkit", "collisionkit-t1", *engines]}
    for _ in range(rounds):  # interleaved: every engine once per round
        t_call["collisionkit"].append(_time(lambda: [ck.distance(a, b, pa[i], pb[i]) for i in range(n)]) / n)
        t_batch["collisionkit"].append(_time(lambda: ck.distance(a, b, pa, pb)) / n)
        t_batch["collisionkit-t1"].append(_time(lambda: ck.distance(a, b, pa, pb, threads=1)) / n)
        for k, f in engines.items():
            t = _time(lambda f=f: [f(pa[i], pb[i]) for i in range(n)]) / n
            t_call[k].append(t)
            t_batch[k].append(t)
    scene = f"{Path(an.removeprefix('shared:')).stem}-{Path(bn.removeprefix('shared:')).stem}"
    note = (
        f"reference: {R.DISTANCE_METHOD}; {int((ref[:, 0] == 0).sum())}/{n} poses meet; "
        f"tolerance {R.VALUE_RTOL:g} x scale for every engine"
    )
    for category, times in (("distance_call", t_call), ("distance_batch", t_batch)):
        row = _row(category, scene, n, times, _maxerr(verdicts), a, b, verdicts)
        row["note"] = note
        out.append(row)


def _worst(*vs: dict) -> dict:
    """One verdict for several answers of one engine: the worst status, errors added up."""
    rank = {"exact": 0, "agrees": 0, "explained": 1, "FAIL": 2}
    w = dict(max(vs, key=lambda v: rank[v["status"]]))
    w["max_abs_err"] = max(v.get("max_abs_err", 0.0) for v in vs)
    return w


def _maxerr(verdicts: dict) -> dict:
    return {k: v.get("max_abs_err", 0.0) for k, v in verdicts.items() if not k.startswith("collisionkit-")}


def bench_toi(pairs, n, rounds, out):

    for an, bn in pairs:
        _toi_scene(an, bn, n, rounds, out)


def _toi_scene(an, bn, n, rounds, out):
    """Time of impact, translating pairs. Rows: collisionkit at its default tolerance
    (1e-6 relative: conservative, converged) against python-fcl's sampling solver at
    100 and 1000 samples; then collisionkit at a loose tolerance (1e-2 relative), about
    fcl-100's accuracy in t. Every answer is refereed by dense sampling of the motion
    (2001 exact ``intersects`` tests): t_dense = first colliding sample, so the true
    first contact lies in [ours, t_dense] (ours is certified never later)."""
    import fcl

    import collisionkit as ck
    from collisionkit.query.toi import mesh_radius

    a, b = _load(an), _load(bn)
    rng = np.random.default_rng(4)
    starts, ends = [], []
    for _ in range(n):
        R = ck.rotation(rng.normal(size=3), rng.uniform(0, 3))
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        s = 1.5 * (_radius(a) + _radius(b))
        starts.append(ck.translation(s * d) @ R)
        ends.append(ck.translation(-s * d + rng.normal(scale=0.3 * _radius(b), size=3)) @ R)
    ga, gb = P.FCL()._model(a), P.FCL()._model(b)
    eye = np.eye(4)

    def fcl_engine(samples, solver=fcl.CCDSolverType.CCDC_NAIVE):
        req = fcl.ContinuousCollisionRequest(
            num_max_iterations=samples, ccd_motion_type=fcl.CCDMotionType.CCDM_TRANS, ccd_solver_type=solver,
        )  # fmt: skip

        def one(i):
            o1 = fcl.CollisionObject(ga, fcl.Transform())
            o2 = fcl.CollisionObject(gb, fcl.Transform(starts[i][:3, :3], starts[i][:3, 3]))
            res = fcl.ContinuousCollisionResult()
            fcl.continuousCollide(o1, fcl.Transform(), o2, fcl.Transform(ends[i][:3, :3], ends[i][:3, 3]), req, res)
            return res.time_of_contact if res.is_collide else 1.0

        return one

    loose = 1e-2 * (mesh_radius(a) + mesh_radius(b))

    def ck_engine(tol):
        def one(i):
            return _toi_t(ck.time_of_impact(a, b, eye, eye, starts[i], ends[i], tolerance=tol))

        return one

    engines = {
        "collisionkit": ck_engine(None), "collisionkit-loose": ck_engine(loose),
        "fcl": fcl_engine(100), "fcl-1000": fcl_engine(1000),
    }  # fmt: skip
    ts = {k: np.array([f(i) for i in range(n)]) for k, f in engines.items()}
    ca = np.array([fcl_engine(100, fcl.CCDSolverType.CCDC_CONSERVATIVE_ADVANCEMENT)(i) for i in range(n)])
    # referee: dense sampling of the motion with the exact intersection test
    grid = np.linspace(0.0, 1.0, 2001)
    dense = np.ones(n)
    hit_dense = np.zeros(n, bool)
    for i in range(n):
        Pb = starts[i][None] + grid[:, None, None] * (ends[i] - starts[i])[None]  # translation: exact lerp
        hits = ck.intersects(a, b, eye, np.ascontiguousarray(Pb))
        if hits.any():
            hit_dense[i] = True
            dense[i] = grid[np.argmax(hits)]
    # issue #20: the reference is the referee's first sampled contact, not our own answer;
    # the samples bracketing it are confirmed by the test suite's brute-force oracle (own
    # mapping, own triangle test, exact rationals where unsure: tests/brute.py)
    confirmed = _confirm_brackets(a, b, eye, starts, ends, grid, dense, hit_dense)
    ref = dense

    def quality(k):
        # |t - t_ref| over the poses the referee sees colliding (a near miss within a loose
        # tolerance is a hit for collisionkit-loose, counted apart)
        t = ts[k]
        late = int(np.sum(hit_dense & (t > dense + 1e-12)))
        missed = int(np.sum(hit_dense & (t >= 1.0)))
        dt = float(np.max(np.abs(t - ref)[hit_dense])) if hit_dense.any() else 0.0
        return dt, late, missed

    q = {k: quality(k) for k in ts}
    tol_abs = {"collisionkit": 1e-6 * (mesh_radius(a) + mesh_radius(b)), "collisionkit-loose": loose}
    verdicts = {
        k: _toi_verdict(k, ts[k], dense, hit_dense, grid, a, b, starts, ends, tol_abs.get(k), samples)
        for k, samples in (("collisionkit", 0), ("collisionkit-loose", 0), ("fcl", 100), ("fcl-1000", 1000))
    }
    t = {k: [] for k in engines}
    for _ in range(rounds):
        for k, f in engines.items():
            t[k].append(_time(lambda f=f: [f(i) for i in range(n)]) / n)
    scene = f"{Path(an.removeprefix('shared:')).stem}-{Path(bn.removeprefix('shared:')).stem}"

    def summary(k):
        dt, late, missed = q[k]
        return f"{k}: |t-t_ref| <= {dt:.1e}, after a sampled contact {late}, missed {missed}"

    guarantees = (
        "collisionkit: conservative advancement, t never after the first contact, no tunnelling, stops within "
        "tol (1e-6 rel); fcl CCDC_NAIVE: first colliding sample of N (no guarantee: late by up to 1/N, "
        "misses contacts between samples)"
    )
    ca_note = (
        f"fcl CCDC_CONSERVATIVE_ADVANCEMENT (python-fcl 0.7, BVH meshes): hits {int((ca < 1).sum())}/{n} "
        f"where dense sampling finds {int(hit_dense.sum())}: not timed"
    )
    times = {k: t[k] for k in ("collisionkit", "fcl", "fcl-1000")}
    row = _row("toi_call", scene, n, times, {k: q[k][0] for k in times}, a, b, verdicts)
    row["note"] = (
        f"{guarantees}; fcl = 100 samples, fcl-1000 {statistics.median(t['fcl-1000']) * 1e6:.0f} us; "
        f"t_ref = first of 2001 exact samples ({int(hit_dense.sum())}/{n} hit; brackets confirmed by the "
        f"independent brute-force oracle: {confirmed}); "
        + "; ".join(summary(k) for k in ("collisionkit", "fcl", "fcl-1000"))
        + f"; {ca_note}"
    )
    out.append(row)
    times = {"collisionkit-loose": t["collisionkit-loose"], "fcl": t["fcl"]}
    row = _row("toi_call_loose", scene, n, times, {k: q[k][0] for k in times}, a, b, verdicts)
    row["note"] = (
        "collisionkit at tolerance 1e-2 rel (stops within 1% of r_a + r_b: still never after the first contact, "
        "earlier by up to tol / approach speed) vs fcl CCDC_NAIVE 100 samples; "
        + "; ".join(summary(k) for k in ("collisionkit-loose", "fcl"))
        + f"; hits {int((ts['collisionkit-loose'] < 1).sum())}/{n}, referee {int(hit_dense.sum())} "
        "(a near miss within tol is a hit)"
    )
    out.append(row)


def _toi_verdict(name, t, dense, hit_dense, grid, a, b, starts, ends, tol_abs, samples) -> dict[str, Any]:
    """Referee one engine's times of impact against the dense exact samples (issue #20).

    A motion is right when the engine reports a hit where a sample collides, no time after
    the first colliding sample, and (collisionkit, stated tolerance) no time earlier than
    the sample before it by more than 1e-3. Explained differences, each checked here with
    the independent brute-force oracles (tests/brute.py, benchmarks/referee.brute_distance):

    * collisionkit, a hit where no sample collides: a near miss within its tolerance
      (brute distance at its t <= tolerance);
    * fcl with N samples, late: its answer is the first colliding sample of N (late by up to
      1/N, plus one referee interval); a hit where no referee sample collides, or earlier
      than the referee's: a contact between the referee's samples (brute says its pose collides).
    """
    from tests.brute import brute_colliding

    from .referee import brute_distance

    eye = np.eye(4)
    step = float(grid[1] - grid[0])
    v: dict[str, Any] = {"wrong": 0, "explained": {}, "unexplained": []}

    def at(i, ti):
        return starts[i] + ti * (ends[i] - starts[i])

    def explain(reason):
        v["explained"][reason] = v["explained"].get(reason, 0) + 1

    for i in range(len(t)):
        ti, hit = float(t[i]), bool(t[i] < 1.0)
        if hit_dense[i] and not hit:
            problem = "missed a sampled contact"
        elif hit_dense[i] and ti > dense[i] + 1e-12:
            if samples and ti <= dense[i] + 1.0 / samples + step + 1e-12:
                v["wrong"] += 1
                explain(f"sampling: late by <= 1/{samples}")
                continue
            problem = "after the first sampled contact"
        elif hit and (not hit_dense[i] or ti < dense[i] - step - (1e-3 if not samples else 0.0)):
            if not samples and brute_distance(a, b, eye, at(i, ti))[0] <= tol_abs * (1 + 1e-9):
                v["wrong"] += 1
                explain("near miss within its tolerance (brute distance)")
                continue
            if samples and brute_colliding(a, b, eye, at(i, ti)[None])[0]:
                v["wrong"] += 1
                explain("contact between the referee's samples (brute)")
                continue
            problem = "hit where the samples and the brute force find none" if not hit_dense[i] else "too early"
        else:
            continue
        v["wrong"] += 1
        v["unexplained"].append({"motion": i, "t": ti, "t_ref": float(dense[i]), "problem": problem})
    n_bad = len(v["unexplained"])
    v["status"] = "FAIL" if n_bad else ("explained" if v["wrong"] else "agrees")
    v["rule"] = "never after the first sampled contact" + ("" if samples else ", <= 1e-3 + one interval before it")
    v["unexplained"] = v["unexplained"][:5]
    v["max_abs_err"] = float(np.max(np.abs(t - dense)[hit_dense])) if hit_dense.any() else 0.0
    return v


def _confirm_brackets(a, b, eye, starts, ends, grid, dense, hit_dense) -> str:
    """Check with tests.brute.brute_colliding (independent of collisionkit's kernels) that
    each motion's first sampled contact collides and the sample before it does not (and
    that motions without a sampled contact end apart). Raises on a disagreement."""
    try:
        from tests.brute import brute_colliding
    except ImportError as e:  # pytest missing: say so
        return f"not checked ({e})"
    k = 0
    for i in range(len(starts)):
        d = ends[i] - starts[i]
        if hit_dense[i]:
            j = int(np.argmax(grid >= dense[i]))
            ts_ = [grid[j]] + ([grid[j - 1]] if j > 0 else [])
            want = [True] + ([False] if j > 0 else [])
        else:
            ts_, want = [1.0], [False]
        got = brute_colliding(a, b, eye, np.stack([starts[i] + t * d for t in ts_])).tolist()
        if got != want:
            raise AssertionError(f"time-of-impact referee: motion {i} samples {ts_} brute {got}, dense {want}")
        k += len(ts_)
    return f"{k} samples agree"


def bench_penetration(n, rounds, out):

    import collisionkit as ck

    rng = np.random.default_rng(2)
    pts = rng.normal(size=(60, 3))
    from scipy.spatial import ConvexHull

    c = ConvexHull(pts)
    f = c.simplices.copy()
    flip = (
        np.einsum("ij,ij->i", np.cross(pts[f[:, 1]] - pts[f[:, 0]], pts[f[:, 2]] - pts[f[:, 0]]), c.equations[:, :3])
        < 0
    )
    f[flip] = f[flip][:, ::-1]
    shapes = {
        "box-box": (ck.primitives.box_mesh([1, 1, 1]), ck.primitives.box_mesh([0.5, 1.5, 0.8])),
        "sphere-sphere": (ck.primitives.uv_sphere_mesh(0.5, 10, 20), ck.primitives.uv_sphere_mesh(0.5, 10, 20)),
        "hull60-hull60": (ck.Mesh(pts, f), ck.Mesh(pts, f)),
    }
    for scene, (a, b) in shapes.items():
        _penetration_scene(scene, a, b, n, rounds, out)


def _penetration_scene(scene, a, b, n, rounds, out):
    import coal

    import collisionkit as ck
    from collisionkit.query.penetration import hull

    pa = ck.random_poses(n, 0.1, seed=5)
    pb = ck.random_poses(n, 0.5 * (_radius(a) + _radius(b)), seed=6)

    def cshape(m):
        v = coal.StdVec_Vec3s()
        for p in hull(m).vertices:
            v.append(np.asarray(p, dtype=float))
        return coal.Convex.convexHull(v, False, "")

    sa, sb = cshape(a), cshape(b)
    req = coal.DistanceRequest()
    ta, tb = coal.Transform3s(), coal.Transform3s()

    def coal_one(i):
        ta.setRotation(pa[i, :3, :3])
        ta.setTranslation(pa[i, :3, 3])
        tb.setRotation(pb[i, :3, :3])
        tb.setTranslation(pb[i, :3, 3])
        res = coal.DistanceResult()
        return max(0.0, -coal.distance(sa, ta, sb, tb, req, res))

    from . import referee as R

    ours = np.concatenate([_depths(ck.penetration(a, b, pa[i], pb[i])) for i in range(n)])
    theirs = np.array([coal_one(i) for i in range(n)])
    batch = _depths(ck.penetration(a, b, pa, pb))
    assert np.array_equal(batch, ours)  # the batch runs the per-call kernel's code
    # issue #20: every depth refereed by an independent brute force (convex: SAT candidates)
    ref = np.array([R.convex_depth(a, b, pa[i], pb[i]) for i in range(n)])
    verdicts = {
        "collisionkit": R.referee_values(ours, ref[:, 0], ref[:, 1]),
        "collisionkit-t1": R.referee_values(_depths(ck.penetration(a, b, pa, pb, threads=1)), ref[:, 0], ref[:, 1]),
        "coal": R.referee_values(theirs, ref[:, 0], ref[:, 1], R.DEPTH_TOLERANCE["coal"]),
    }
    agree = _maxerr(verdicts)
    t = {"collisionkit": [], "coal": []}
    t_batch = {"collisionkit": [], "collisionkit-t1": [], "coal": t["coal"]}
    for _ in range(rounds):
        t["collisionkit"].append(_time(lambda: [ck.penetration(a, b, pa[i], pb[i]) for i in range(n)]) / n)
        t["coal"].append(_time(lambda: [coal_one(i) for i in range(n)]) / n)
        t_batch["collisionkit"].append(_time(lambda: ck.penetration(a, b, pa, pb)) / n)
        t_batch["collisionkit-t1"].append(_time(lambda: ck.penetration(a, b, pa, pb, threads=1)) / n)
    for category, times in (("penetration_call", t), ("penetration_batch", t_batch)):
        row = _row(category, scene, n, times, agree, a, b, verdicts)
        row["note"] = f"overlapping poses {int((ref[:, 0] > 0).sum())}/{n}; reference: {R.DEPTH_METHOD}"
        out.append(row)


def _row(category, scene, n, times, agree, a, b, verdicts) -> dict[str, Any]:
    """One table row. issue #20: a ratio only between engines whose answers passed the referee
    (``verdicts``: engine -> referee verdict; an engine without one is unrefereed: no ratio)."""
    from . import referee as R

    med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
    passing = {k for k in med if verdicts.get(k, {}).get("status") in ("exact", "agrees", "explained")}
    peers = {k: v for k, v in med.items() if not k.startswith("collisionkit") and k in passing}
    ours = [v for k, v in med.items() if k.startswith("collisionkit") and k in passing]
    fastest = min(peers, key=peers.get) if peers else None
    return {
        "category": category, "scene": scene, "poses": n, "faces": [a.n_faces, b.n_faces],
        "us": med, "fastest_peer": fastest,
        "speedup_vs_fastest_peer": peers[fastest] / min(ours) if fastest and ours else None,
        "max_rel_diff": agree,
        "verdicts": {k: R.verdict_text(verdicts.get(k)) for k in med},
        "referee": {k: verdicts[k] for k in med if k in verdicts},
        "failed": sorted(k for k in med if k not in passing),
    }  # fmt: skip


def _ratio_text(r) -> str:
    x = r["speedup_vs_fastest_peer"]
    if x is None:
        return "no ratio (answers " + ", ".join(f"{k}: {r['verdicts'][k]}" for k in r["failed"]) + ")"
    return f"{x:.2f}x"


def markdown(report) -> str:
    m = report["machine"]
    lines = [
        "# Queries benchmark: distance, time of impact, penetration",
        "",
        f"Machine: {m['cpu_model']} ({m['cpu_affinity']} cores, 2-core VM), {m['platform']}; "
        f"date {m['date']}; command `{report['command']}`.",
        "",
        _provenance_line(report.get("provenance")),
        "",
        "Times are medians over interleaved rounds (us per call, or per pose for batches).",
        "Speed-up = fastest peer / fastest collisionkit entry (target: >= 2).",
        "",
        "| category | scene | faces | poses | collisionkit | coal | fcl | speed-up | referee | max error | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        us = r["us"]
        ck_ = " / ".join(f"{us[k]:.1f}" for k in us if k.startswith("collisionkit"))
        lines.append(
            f"| {r['category']} | {r['scene']} | {r['faces'][0]}x{r['faces'][1]} | {r['poses']} | {ck_} | "
            f"{us.get('coal', float('nan')):.1f} | {us.get('fcl', float('nan')):.1f} | "
            f"{_ratio_text(r)} | "
            + "; ".join(f"{k}: {v}" for k, v in r.get("verdicts", {}).items())
            + " | "
            + ", ".join(f"{k} {v:.1e}" for k, v in r["max_rel_diff"].items())
            + f" | {r.get('note', '')} |"
        )
    lines += [
        "",
        "collisionkit columns: `distance_batch` and `penetration_batch` list all threads / 1 thread.",
        "Referee (issue #20): every engine's answer at every pose is checked against an independent",
        "reference before a ratio is printed: distances against a brute force over all triangle pairs,",
        "convex depths against a brute force over the separating-axis candidates, times of impact against",
        "the first of 2001 exact samples of the motion. An engine that fails gets no ratio and the run",
        "exits 1. `max error`: largest absolute difference from the reference (distance, depth; t for",
        "time of impact). Tolerances: 1e-9 x scale for every engine; Coal's depths also its documented",
        "GJK/EPA tolerance 1e-6; time of impact: see the notes.",
        "",
    ]
    return "\n".join(lines)


def _provenance_line(pv: dict | None) -> str:
    if not pv:
        return "Provenance: not recorded (a run before issue #20)."
    return (
        f"Provenance: commit {pv['commit']}{' (with uncommitted changes)' if pv['dirty'] else ''}, "
        f"kernel-source hash {pv['kernel_source_hash']}, date {pv['date']}, command `{pv['command']}`."
    )


def chart(report, path: Path) -> None:
    """Bar chart of the speed-up against the fastest peer per row (log scale, 2x target)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    labels = [f"{r['category']}\n{r['scene']}" for r in rows]
    rows = [r for r in rows if r["speedup_vs_fastest_peer"] is not None]  # refereed ratios only
    labels = [f"{r['category']}\n{r['scene']}" for r in rows]
    values = [r["speedup_vs_fastest_peer"] for r in rows]
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) + 1.5))
    colors = ["tab:green" if v >= 2 else ("tab:orange" if v >= 1 else "tab:red") for v in values]
    ax.barh(range(len(rows)), values, color=colors)
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.set_xscale("log")
    ax.axvline(1.0, color="k", lw=0.8)
    ax.axvline(2.0, color="k", lw=0.8, ls="--", label="target 2x")
    ax.invert_yaxis()
    ax.set_xlabel("fastest peer time / collisionkit time (log)")
    ax.set_title(f"collisionkit vs Coal / python-fcl ({report['machine']['date'][:10]}, 2-core VM)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _provenance(argv) -> dict:
    from .pairs import provenance

    return provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.queries")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.queries")
    ap.add_argument("--quick", action="store_true", help="fewer poses and rounds")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument(
        "--only", choices=["distance", "toi", "penetration"], action="append",
        help="run only these categories (repeatable; implies --no-write)",
    )  # fmt: skip
    args = ap.parse_args(argv)
    only = set(args.only or ["distance", "toi", "penetration"])
    n, rounds = (40, 3) if args.quick else (200, 5)
    pairs = [("duck_vhacd.obj", "teddy2_VHACD_CHs.obj"), ("bunny.obj", "bunny.obj")]
    if not args.quick:
        pairs.append(("shared:env.obj", "shared:rob.obj"))
    report = {
        "machine": machine(),
        "versions": versions(),
        "command": "python -m benchmarks.queries" + (" --quick" if args.quick else ""),
        "provenance": _provenance(argv),
        "rows": [],
    }
    t0 = time.perf_counter()
    if "distance" in only:
        bench_distance(pairs, n, rounds, report["rows"])
    if "toi" in only:
        bench_toi(pairs[:2], max(10, n // 5), rounds, report["rows"])
    if "penetration" in only:
        bench_penetration(max(20, n // 2), rounds, report["rows"])
    report["seconds"] = time.perf_counter() - t0
    md = markdown(report)
    print(md)
    if not args.no_write and not args.only:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "queries.md").write_text(md)
        (RESULTS / "queries.json").write_text(json.dumps(report, indent=1, default=str))
        chart(report, RESULTS / "queries.png")
    failed = [(r["category"], r["scene"], k, r["verdicts"][k]) for r in report["rows"] for k in r["failed"]]
    for f in failed:
        print("REFEREE FAIL: " + " ".join(map(str, f)), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
