"""collisionkit.trimesh.CollisionManager against trimesh's own (python-fcl) manager.

    python -m benchmarks.trimesh_manager [--quick] [--repeats R] [--out benchmarks/results/trimesh_manager.md]

The same seeded scenes go into both managers (objects added outside the timed
regions; the first call of each query is a warm-up, also untimed, so the numba
kernels and trees are compiled and built before timing). Each query's answers are
compared and refereed BEFORE a ratio is printed:

* collision names: equal sets, or every pair in which they differ decided by
  ``collisionkit.classify`` (surfaces meeting by the exact triangle test, or one
  closed mesh inside the other) and stated;
* distances of the default manager (``referee_lower``): equal to 1e-6 relative or 1e-8
  absolute, or ours equal to an independent reference (a positive distance: the
  brute-force minimum over all triangle pairs; an overlap of two convex meshes: the
  reference depth; any other overlap of closed meshes: the deepest vertex (else face
  centroid) of either mesh inside the other, by winding number and trimesh's closest point, which is the certified
  lower end of the depth that ``depth="lower"`` answers) and FCL's answer explained: above
  the brute-force minimum, its pair not deeper by that pair's reference (FCL's broad phase
  stops at the first overlapping pair it meets, ours is the deepest), or for the same pair
  its depth below our certified lower end or inside / above the certified bracket
  (``penetration(method="bounds", refine=True)``);
* the opt-in ``depth="bounds"`` / ``"refined"`` rows (``referee_distance``): ours the upper
  end of the certified bracket, FCL's depth placed against it.

A scene whose answers fail the referee prints FAIL and no ratio, and the run exits 1.
Timings are medians of ``--repeats`` runs, wall-clock, on the machine named in the
results file (collisionkit on all cores numba sees; python-fcl is single-threaded).
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

import numba
import numpy as np
import trimesh
from trimesh import collision as tc

import collisionkit as ck
from collisionkit import trimesh as ckt
from collisionkit.query.penetration import is_convex

from . import referee as R
from .pairs import machine, provenance, stamp, versions

HERE = Path(__file__).resolve().parent
#: Distances equal to 1e-6 relative or this absolute (scene units ~1): python-fcl's own pose
#: arithmetic moves its answers by ~1e-8 here (a positive distance FCL reports below the
#: brute-force minimum of the same pose by up to 4e-8 was seen and refereed).
EQUAL_ABS = 1e-8


# -- scenes ------------------------------------------------------------------------------


def shapes() -> dict[str, trimesh.Trimesh]:
    return {
        "cube": trimesh.creation.box([1.0, 0.8, 0.6]),
        "sphere": trimesh.creation.icosphere(2, 0.5),
        "ring": trimesh.creation.annulus(0.35, 0.6, 0.5, sections=32),
        "torus": trimesh.creation.torus(0.5, 0.15, major_sections=32, minor_sections=12),
    }


def _pose(rng, lo, hi) -> np.ndarray:
    T = trimesh.transformations.random_rotation_matrix(rng.random(3))
    T[:3, 3] = rng.uniform(lo, hi, 3)
    return T


def scatter(n: int, density: float, seed: int) -> list[tuple[str, trimesh.Trimesh, np.ndarray]]:
    """n random shapes at random poses in a cube sized for ``density`` objects per unit volume."""
    rng = np.random.default_rng(seed)
    kinds = list(shapes().items())
    side = (n / density) ** (1 / 3)
    out = []
    for k in range(n):
        name, mesh = kinds[k % len(kinds)]
        out.append((f"{name}{k}", mesh, _pose(rng, 0.0, side)))
    return out


def spread(n: int, seed: int) -> list[tuple[str, trimesh.Trimesh, np.ndarray]]:
    """n shapes on a jittered grid, 1.4 apart: none overlap (distance queries compare values)."""
    rng = np.random.default_rng(seed)
    kinds = list(shapes().items())
    m = math.ceil(n ** (1 / 3))
    out = []
    for k in range(n):
        i, j, h = k % m, (k // m) % m, k // (m * m)
        name, mesh = kinds[k % len(kinds)]
        T = _pose(rng, 0.0, 0.1)
        T[:3, 3] += [1.4 * i, 1.4 * j, 1.4 * h]
        out.append((f"{name}{k}", mesh, T))
    return out


def pegboard(n: int) -> list[tuple[str, trimesh.Trimesh, np.ndarray]]:
    """An assembly in contact: a plate, n x n rings sunk 1/64 into it, a peg through each
    ring (through the plate, clear of the ring), a row of n balls overlapping."""
    ring = trimesh.creation.annulus(0.5, 1.0, 1.0, sections=32)
    peg = trimesh.creation.box([0.2, 0.2, 2.0])
    ball = trimesh.creation.icosphere(2, 0.5)
    out = [("plate", trimesh.creation.box([2.5 * n, 2.5 * n + 4, 0.5]), np.eye(4))]
    for i in range(n):
        for j in range(n):
            x, y = 2.5 * (i - (n - 1) / 2), 2.5 * (j - (n - 1) / 2)
            out.append((f"ring{i}_{j}", ring, trimesh.transformations.translation_matrix([x, y, 0.75 - 1 / 64])))
            out.append((f"peg{i}_{j}", peg, trimesh.transformations.translation_matrix([x, y, 0.5])))
    for k in range(n):
        out.append((f"ball{k}", ball, trimesh.transformations.translation_matrix([0.875 * k, 1.25 * n + 1, 0.75 - 1 / 16])))
    return out


def probes(n: int, lo: float, hi: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([_pose(rng, lo, hi) for _ in range(n)])


# -- timing and referee ------------------------------------------------------------------


def timed(fn, repeats: int) -> tuple[float, Any]:
    """(median seconds, answer) over ``repeats`` calls after one untimed warm-up call."""
    ans = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        ans = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), ans


def timed_calls(fn, repeats: int, calls: int) -> tuple[float, Any]:
    """(median seconds a call, answer): ``timed`` over loops of ``calls`` calls, for calls of
    microseconds that one clock reading a call would blur."""

    def loop():
        for _ in range(calls - 1):
            fn()
        return fn()

    t, ans = timed(loop, repeats)
    return t / calls, ans


def timed_short(fn, repeats: int) -> tuple[float, Any]:
    """``timed_calls`` with as many calls a loop as fit in ~5 ms (1 to 200), by the fastest of
    three untimed calls after one (the first builds what later calls keep, the next loads the
    kernels they use): microsecond answers (a kept result) and milliseconds alike."""
    fn()
    once = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        once = min(once, time.perf_counter() - t0)
    return timed_calls(fn, repeats, max(1, min(200, int(5e-3 / max(once, 1e-9)))))


def _mesh_pose(manager: ckt.CollisionManager, name) -> tuple[ck.Mesh, np.ndarray]:
    o = manager._objs[name]
    return o.mesh, o.transform


def _pair(c: ckt.CollisionManager, names, ext: ck.Mesh | None = None, T: np.ndarray | None = None):
    """(mesh_a, pose_a, mesh_b, pose_b, both convex) of a named pair (one name and the probe
    ``ext`` at ``T`` for the single queries)."""
    a, Ta = _mesh_pose(c, names[0])
    b, Tb = _mesh_pose(c, names[1]) if ext is None else (ext, T)
    return a, Ta, b, Tb, is_convex(a) and is_convex(b)


def referee_names(c: ckt.CollisionManager, ours: set, theirs: set, other: ckt.CollisionManager | None = None) -> dict:
    """Every pair in which the answers differ, decided by collisionkit.classify (exact surface
    test; containment by winding number for closed meshes)."""
    out = {"equal": ours == theirs, "differ": len(ours ^ theirs), "explained": 0, "unexplained": []}
    for pair in sorted(ours ^ theirs, key=repr):
        a, Ta = _mesh_pose(c, pair[0])
        b, Tb = _mesh_pose(other if other is not None else c, pair[1])
        label = ck.classify(a, b, Ta, Tb).labels
        truly = label in ("touching", "penetrating", "contained")
        if truly == (pair in ours):
            out["explained"] += 1
            out.setdefault("kinds", {}).setdefault(label, 0)
            out["kinds"][label] += 1
        else:
            out["unexplained"].append((pair, label))
    return out


EXT = "__probe"


def referee_bool(ours: bool, theirs: bool, our_names: set, their_names: set, c, other=None, probe_at=None) -> dict:
    """A boolean answer: equal, or decided by the pairs each manager names (``referee_names``:
    every differing pair by classify) and ours agreeing with our own names."""
    out = {"equal": ours == theirs, "differ": int(ours != theirs), "explained": 0, "unexplained": []}
    if ours != bool(our_names):
        out["unexplained"].append(("boolean differs from the names form", ours, len(our_names)))
    if ours != theirs:
        if probe_at is not None:  # pairs (object, probe)
            ext = ckt.as_mesh(trimesh.creation.icosphere(2, 0.3))
            for name, _ in our_names ^ their_names:
                m, Tm = _mesh_pose(c, name)
                label = ck.classify(m, ext, Tm, probe_at).labels
                if (label in ("touching", "penetrating", "contained")) != ((name, EXT) in our_names):
                    out["unexplained"].append((name, label))
        else:
            r = referee_names(c, our_names, their_names, other)
            out["unexplained"] += r["unexplained"]
        out["explained"] = int(not out["unexplained"])
    return out


def referee_distance(ours: float, theirs: float, our_pair, their_pair, same_pair: bool = False, refine: bool = True) -> dict:
    """Equal to 1e-6 relative or 1e-8 absolute, or refereed (module notes).

    ``our_pair`` / ``their_pair``: (mesh_a, pose_a, mesh_b, pose_b, convex) of the pair each
    manager names. A positive distance is checked against the brute-force minimum over all
    triangle pairs (``benchmarks.referee.brute_distance``), an overlap of two convex meshes
    against the reference depth (``benchmarks.referee.convex_depth``), an overlap with a
    non-convex mesh against collisionkit's certified bracket (``penetration(method="bounds",
    refine=True)``: the lower end a vertex inside by exact ray parity, the upper end a
    translation the exact test confirms separating; not independent of collisionkit, but
    each end is a checked certificate).
    """
    if math.isclose(ours, theirs, rel_tol=1e-6, abs_tol=EQUAL_ABS):
        return {"equal": True, "explained": 0, "unexplained": []}

    def reference(pair) -> float | None:
        a, Ta, b, Tb, convex = pair
        if ck.distance(a, b, Ta, Tb).distance > 0 and not ck.classify(a, b, Ta, Tb).labels == "contained":
            return R.brute_distance(a, b, Ta, Tb)[0]
        return -R.convex_depth(a, b, Ta, Tb)[0] if convex else None

    mine = reference(our_pair)
    if mine is not None and not math.isclose(ours, mine, rel_tol=1e-9, abs_tol=1e-12):
        return {"equal": False, "explained": 0, "unexplained": [(ours, theirs, "ours is not the reference", mine)]}
    bracket = None
    if mine is None:  # an overlap with a non-convex mesh: the certified bracket of the pair
        a, Ta, b, Tb, _ = our_pair
        p = ck.penetration(a, b, Ta, Tb, method="bounds", refine=refine)
        if not math.isclose(-ours, float(p.depth_upper), rel_tol=1e-9, abs_tol=1e-12):
            return {"equal": False, "explained": 0, "unexplained": [(ours, theirs, "ours is not the bracket's upper end")]}
        bracket = (float(p.depth_lower), float(p.depth_upper))
    if ours < theirs:
        if (theirs <= 0 or ours < 0) and same_pair:
            if bracket is not None and -theirs < bracket[0]:
                why = "FCL's depth of the same pair below its certified lower bound"
            elif bracket is not None:
                why = "FCL's depth of the same pair inside its certified bracket (ours: the bracket's upper end)"
            else:
                why = "FCL's EPA depth of the same pair below the reference depth (ours equals it)"
        elif theirs <= 0 or ours < 0:
            why = "FCL: the first overlapping pair it met (ours: the deepest)"
        else:
            why = "FCL's distance above the brute-force minimum (ours equals it)"
        return {"equal": False, "explained": 1, "why": why, "gap": theirs - ours, "unexplained": []}
    if bracket is not None and same_pair and -theirs > bracket[1]:
        return {"equal": False, "explained": 1, "why": "FCL's depth of the same pair above its certified upper bound",
                "gap": ours - theirs, "unexplained": []}  # fmt: skip
    theirs_ref = reference(their_pair)
    if mine is not None and theirs_ref is not None and theirs_ref >= ours - 1e-9 * max(1.0, abs(ours)):
        return {"equal": False, "explained": 1, "why": "FCL's value below the reference minimum (its own rounding; "
                "ours equals the reference)", "gap": ours - theirs, "unexplained": []}  # fmt: skip
    return {"equal": False, "explained": 0, "unexplained": [(ours, theirs)]}


def _winding(points: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """(P,) generalised winding numbers of ``points`` (P, 3) about the closed surface ``tris``
    (F, 3, 3): about 1 inside, 0 outside (the solid angles' sum over 4 pi)."""
    out = np.zeros(len(points))
    for s in range(0, len(points), 256):
        p = points[s : s + 256, None, None, :]
        a, b, c = (tris[None, :, k, :] - p[:, :, 0, :] for k in range(3))
        la, lb, lc = (np.linalg.norm(x, axis=-1) for x in (a, b, c))
        num = np.einsum("pfk,pfk->pf", a, np.cross(b, c))
        den = la * lb * lc + np.einsum("pfk,pfk->pf", a, b) * lc + np.einsum("pfk,pfk->pf", a, c) * lb
        den += np.einsum("pfk,pfk->pf", b, c) * la
        out[s : s + 256] = 2.0 * np.arctan2(num, den).sum(axis=1) / (4.0 * math.pi)
    return out


def deepest_vertex(mesh_a: ck.Mesh, Ta: np.ndarray, mesh_b: ck.Mesh, Tb: np.ndarray, centroids: bool | None = None) -> float:
    """Reference of the depth's certified lower end (``depth="lower"``): the largest distance
    to the other mesh's surface of a vertex inside it, over both meshes; when no vertex is
    inside (or with ``centroids=True``), of a vertex or face centroid.

    Independent of collisionkit: inside by the generalised winding number (numpy), the
    distance by trimesh's closest point on every triangle (brute force, float64).
    """
    if centroids is None:
        # (collisionkit's lower end is 0 below its rounding allowance, 2**-40 of the coordinates)
        v = deepest_vertex(mesh_a, Ta, mesh_b, Tb, False)
        return v if v > 1e-11 else deepest_vertex(mesh_a, Ta, mesh_b, Tb, True)
    best = 0.0
    for M, TM, P, TP in ((mesh_a, Ta, mesh_b, Tb), (mesh_b, Tb, mesh_a, Ta)):
        v = np.asarray(P.vertices)[np.unique(np.asarray(P.faces))]
        if centroids:
            v = np.concatenate([v, np.asarray(P.triangles).mean(axis=1)])
        w = v @ TP[:3, :3].T + TP[:3, 3]
        local = (w - TM[:3, 3]) @ TM[:3, :3]  # into M's frame
        tris = np.asarray(M.triangles)
        inside = local[_winding(local, tris) > 0.5]
        for q in inside:
            c = trimesh.triangles.closest_point(tris, np.repeat(q[None], len(tris), axis=0))
            best = max(best, float(np.sqrt(((c - q) ** 2).sum(axis=1).min())))
    return best


def referee_lower(ours: float, theirs: float, our_pair, their_pair, same_pair: bool = False) -> dict:
    """The referee of the default manager (``depth="lower"``; module notes).

    Ours is checked against an independent reference: a positive distance against the
    brute-force minimum over all triangle pairs, an overlap of two convex meshes against the
    reference depth, any other overlap against the deepest vertex, else centroid (``deepest_vertex``: the
    certified lower end of the depth). FCL's answer is then explained: a positive distance
    by the brute-force minimum; on an overlap, for the same pair, its depth below our certified
    lower end or inside / above the certified bracket (``penetration(method="bounds",
    refine=True)``); for another pair, that pair's own reference is not deeper than ours (ours
    is the deepest, FCL's broad phase stops at the first overlapping pair it meets).
    """
    if math.isclose(ours, theirs, rel_tol=1e-6, abs_tol=EQUAL_ABS):
        return {"equal": True, "explained": 0, "unexplained": []}

    def reference(pair) -> float:
        a, Ta, b, Tb, convex = pair
        if ck.distance(a, b, Ta, Tb).distance > 0 and not ck.classify(a, b, Ta, Tb).labels == "contained":
            return R.brute_distance(a, b, Ta, Tb)[0]
        if convex:
            return -R.convex_depth(a, b, Ta, Tb)[0]
        closed = all(ckt._closed(m) for m in (a, b))
        return -deepest_vertex(a, Ta, b, Tb) if closed else 0.0

    def fail(why: str) -> dict:
        return {"equal": False, "explained": 0, "unexplained": [(ours, theirs, why)]}

    mine = reference(our_pair)
    if not math.isclose(ours, mine, rel_tol=1e-9, abs_tol=1e-9):
        return fail(f"ours is not the reference {mine!r}")
    theirs_ref = mine if same_pair else reference(their_pair)
    if ours > 0:  # no overlap anywhere: FCL's pair is at least as far by the reference
        if theirs > ours:
            why = "FCL's distance above the brute-force minimum (ours equals it)"
        elif theirs_ref >= ours - 1e-9 * max(1.0, abs(ours)):
            why = "FCL's value below the reference of its pair (ours equals the reference minimum)"
        else:
            return fail("FCL's pair is nearer by the reference")
        return {"equal": False, "explained": 1, "why": why, "gap": abs(theirs - ours), "unexplained": []}
    if theirs > 0:  # ours overlaps: the exact oracle must find the surfaces meeting, or one inside
        a, Ta, b, Tb, _ = our_pair
        if R.brute_distance(a, b, Ta, Tb)[0] != 0.0 and ck.classify(a, b, Ta, Tb).labels != "contained":
            return fail("ours overlaps, the exact oracle finds no contact")
        why = "FCL: a positive distance where the surfaces meet (exact oracle)"
    elif same_pair and ours < 0 and theirs > ours:
        why = "FCL's depth of the same pair below its certified lower bound (ours: the lower bound)"
    elif same_pair and ours <= 0:
        a, Ta, b, Tb, _ = our_pair
        upper = float(ck.penetration(a, b, Ta, Tb, method="bounds", refine=True).depth_upper)
        if -theirs <= upper * (1 + 1e-9) + 1e-12:
            why = "FCL's depth of the same pair inside its certified bracket (ours: the bracket's lower end)"
        else:
            why = "FCL's depth of the same pair above its certified upper bound"
    elif theirs_ref >= ours - 1e-9 * max(1.0, abs(ours)):
        why = "FCL: the first overlapping pair it met (ours: the deepest)"
        if theirs < ours:
            why = "FCL: another pair, its depth above that pair's reference (ours: the deepest by the reference)"
    else:
        return fail(f"FCL's pair is deeper by the reference {theirs_ref!r}")
    return {"equal": False, "explained": 1, "why": why, "gap": abs(theirs - ours), "unexplained": []}


def build(parts, manager_cls):
    m = manager_cls()
    for name, mesh, T in parts:
        m.add_object(name, mesh, T)
    return m


def run_scene(title: str, parts, queries: list[str], repeats: int, probe_poses: np.ndarray | None = None) -> list[dict]:
    t0 = time.perf_counter()
    f = build(parts, tc.CollisionManager)
    t_fcl_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    c = build(parts, ckt.CollisionManager)
    t_ck_build = time.perf_counter() - t0
    tris = sum(len(mesh.faces) for _, mesh, _ in parts)
    probe = trimesh.creation.icosphere(2, 0.3)
    rows = []
    n0, _, T0 = parts[0]

    def moved(m, query, every: bool = False):
        # NOTE: each timed call first sets one object's transform (to the same pose; both
        # managers take it as a move: FCL updates its tree, the World re-tests that object's
        # pairs), or with ``every`` each object's (the World then recomputes everything)
        names = [name for name, _, _ in parts] if every else [n0]
        poses = [T if m is f else c._objs[name].transform for name, _, T in parts] if every else [T0 if m is f else c._objs[n0].transform]

        def run():
            for name, T in zip(names, poses, strict=True):
                m.set_transform(name, T)
            return query()

        return run

    for q in queries:
        if q in ("in_collision_other", "min_distance_other"):
            # the scene's even objects in one manager, its odd ones in another (built untimed)
            fa, fb = build(parts[0::2], tc.CollisionManager), build(parts[1::2], tc.CollisionManager)
            ca, cb = build(parts[0::2], ckt.CollisionManager), build(parts[1::2], ckt.CollisionManager)
            # one object of the first manager moved before each call, as the internal queries
            call = {
                m: (lambda m=m, o=o, q=q, T=T: (m.set_transform(n0, T), getattr(m, q)(o, return_names=True))[1])
                for m, o, T in ((fa, fb, T0), (ca, cb, ca._objs[n0].transform))
            }  # fmt: skip
            tf, fres = timed(call[fa], repeats)
            tk, kres = timed(call[ca], repeats)
            if q == "in_collision_other":
                ref = referee_names(ca, kres[1], fres[1], other=cb)
                answer = f"{len(kres[1])} pairs across (FCL {len(fres[1])})"
            else:
                (kd, knn), (fd, fnn) = kres, fres

                def across(names, ca=ca, cb=cb):
                    a, Ta = _mesh_pose(ca, names[0])
                    b, Tb = _mesh_pose(cb, names[1])
                    return a, Ta, b, Tb, is_convex(a) and is_convex(b)

                ref = referee_lower(kd, fd, across(knn), across(fnn), knn == fnn)
                answer = f"{kd:.6g} {knn} (FCL {fd:.6g} {fnn})"
        elif q in ("in_collision_internal", "in_collision_internal, every object moved"):
            every = q.endswith("moved")
            tf, (_, fn) = timed(moved(f, lambda: f.in_collision_internal(return_names=True), every), repeats)
            tk, (_, kn) = timed(moved(c, lambda: c.in_collision_internal(return_names=True), every), repeats)
            ref = referee_names(c, kn, fn)
            answer = f"{len(kn)} pairs (FCL {len(fn)})"
        elif q in ("in_collision_internal bool", "in_collision_internal bool, every object moved"):
            # the default call form: a boolean, no names
            every = q.endswith("moved")
            calls = 1 if every else 200
            tf, fb = timed_calls(moved(f, f.in_collision_internal, every), repeats, calls)
            tk, kb = timed_calls(moved(c, c.in_collision_internal, every), repeats, calls)
            ref = referee_bool(kb, fb, c.in_collision_internal(return_names=True)[1], f.in_collision_internal(return_names=True)[1], c)
            answer = f"{kb} (FCL {fb})"
        elif q == "in_collision_other bool":
            fa, fb_ = build(parts[0::2], tc.CollisionManager), build(parts[1::2], tc.CollisionManager)
            ca, cb = build(parts[0::2], ckt.CollisionManager), build(parts[1::2], ckt.CollisionManager)
            Tk = ca._objs[n0].transform
            tf, fb = timed_calls(lambda: (fa.set_transform(n0, T0), fa.in_collision_other(fb_))[1], repeats, 200)  # noqa: B023
            tk, kb = timed_calls(lambda: (ca.set_transform(n0, Tk), ca.in_collision_other(cb))[1], repeats, 200)  # noqa: B023
            ref = referee_bool(kb, fb, ca.in_collision_other(cb, return_names=True)[1], fa.in_collision_other(fb_, return_names=True)[1], ca, cb)
            answer = f"{kb} (FCL {fb})"
        elif q == "min_distance_internal":
            tf, (fd, fnn) = timed_short(moved(f, lambda: f.min_distance_internal(return_names=True)), repeats)
            tk, (kd, knn) = timed_short(moved(c, lambda: c.min_distance_internal(return_names=True)), repeats)
            ref = referee_lower(kd, fd, _pair(c, knn), _pair(c, fnn), set(knn) == set(fnn))
            answer = f"{kd:.6g} {knn} (FCL {fd:.6g} {fnn})"
        elif q == "in_collision_single bool":
            tf, fb = timed(lambda: [f.in_collision_single(probe, T) for T in probe_poses], repeats)
            tk, kb = timed(lambda: [c.in_collision_single(probe, T) for T in probe_poses], repeats)
            ref = {"equal": kb == fb, "differ": 0, "explained": 0, "unexplained": []}
            for T, a, b in zip(probe_poses, kb, fb, strict=True):
                if a != b:  # decided by the names forms, each pair by classify
                    names = (c.in_collision_single(probe, T, return_names=True)[1], f.in_collision_single(probe, T, return_names=True)[1])
                    r = referee_bool(a, b, {(x, EXT) for x in names[0]}, {(x, EXT) for x in names[1]}, c, probe_at=T)
                    ref["differ"] += 1
                    ref["explained"] += not r["unexplained"]
                    ref["unexplained"] += r["unexplained"]
            answer = f"{len(probe_poses)} poses, {sum(kb)} colliding (FCL {sum(fb)})"
        elif q in ("in_collision_single", "in_collision_many"):
            tf, fh = timed(lambda: [f.in_collision_single(probe, T, return_names=True)[1] for T in probe_poses], repeats)
            if q == "in_collision_single":
                tk, kh = timed(lambda: [c.in_collision_single(probe, T, return_names=True)[1] for T in probe_poses], repeats)
            else:
                tk, (_, kh) = timed(lambda: c.in_collision_many(probe, probe_poses, return_names=True), repeats)
            ref = {"equal": True, "differ": 0, "explained": 0, "unexplained": []}
            ext = ckt.as_mesh(probe)
            for T, a, b in zip(probe_poses, kh, fh, strict=True):
                for name in a ^ b:
                    m, Tm = _mesh_pose(c, name)
                    label = ck.classify(m, ext, Tm, T).labels
                    ref["differ"] += 1
                    ref["equal"] = False
                    if (label in ("touching", "penetrating", "contained")) == (name in a):
                        ref["explained"] += 1
                    else:
                        ref["unexplained"].append((name, label))
            answer = f"{len(probe_poses)} poses, {sum(map(bool, kh))} colliding (FCL {sum(map(bool, fh))})"
        elif q.startswith("min_distance_single"):
            mode = q.partition("depth=")[2] or "lower"
            k = c if mode == "lower" else build(parts, lambda: ckt.CollisionManager(depth=mode))  # noqa: B023
            tf, fres = timed(lambda: [f.min_distance_single(probe, T, return_name=True) for T in probe_poses], repeats)
            tk, kres = timed(lambda: [k.min_distance_single(probe, T, return_name=True) for T in probe_poses], repeats)  # noqa: B023
            kdist, fdist = [d for d, _ in kres], [d for d, _ in fres]
            ref = {"equal": True, "explained": 0, "unexplained": [], "whys": {}}
            ext = ckt.as_mesh(probe)
            for T, (a, na), (b, nb) in zip(probe_poses, kres, fres, strict=True):
                ours, theirs = _pair(c, (na,), ext, T), _pair(c, (nb,), ext, T)
                if mode == "lower":
                    r = referee_lower(a, b, ours, theirs, na == nb)
                else:
                    r = referee_distance(a, b, ours, theirs, na == nb, mode == "refined")
                ref["equal"] &= r["equal"]
                ref["explained"] += r["explained"]
                ref["unexplained"] += r["unexplained"]
                if "why" in r:
                    n, gap = ref["whys"].get(r["why"], (0, 0.0))
                    ref["whys"][r["why"]] = (n + 1, max(gap, r["gap"]))
            over = sum(d < 0 for d in kdist)
            answer = f"{len(probe_poses)} poses ({over} overlapping), min {min(kdist):.6g} (FCL {min(fdist):.6g})"
        else:
            raise ValueError(q)
        ok = not ref["unexplained"]
        rows.append({
            "scene": title, "objects": len(parts), "triangles": tris, "query": q, "fcl_s": tf, "ck_s": tk,
            "ratio": (tf / tk) if ok else None, "answer": answer, "referee": ref, "ok": ok,
            "build_fcl_s": t_fcl_build, "build_ck_s": t_ck_build, "opt_in": "depth=" in q,
            "overlap_first": q.startswith("min_distance") and q.endswith(("internal", "other")) and title.startswith("scatter"),
        })  # fmt: skip
        status = f"{tf / tk:6.2f}x" if ok else "FAIL"
        print(f"{title:>16} {q:>22}: trimesh+fcl {tf * 1e3:9.2f} ms  collisionkit {tk * 1e3:9.2f} ms  {status}  {answer}", flush=True)
    return rows


def _referee_text(ref: dict) -> str:
    if ref["unexplained"]:
        return f"FAIL: {ref['unexplained'][:3]}"
    if ref["equal"]:
        return "equal"
    if "kinds" in ref:
        kinds = ", ".join(f"{v} {k}" for k, v in sorted(ref["kinds"].items()))
        return f"{ref['explained']} pairs differ, all refereed ({kinds}: exact classify)"
    if "why" in ref:
        return f"differs by {ref['gap']:.1e}, refereed: {ref['why']}"
    if ref.get("whys"):
        parts = "; ".join(f"{n}: {why}, up to {gap:.1e}" for why, (n, gap) in sorted(ref["whys"].items()))
        return f"{ref['explained']} of the poses differ, all refereed ({parts})"
    return f"{ref['explained']} differ, all refereed"


def _table(rows: list[dict], ratios: bool = True) -> list[str]:
    """Markdown rows; ``ratios=False`` for rows whose answers differ in kind from FCL's (the
    opt-in upper ends: no speed-up is printed for work of another kind, only the times)."""
    lines = [
        "| scene | objects | triangles | query | trimesh + fcl | collisionkit | speed-up | answers | referee |",
        "|---|---:|---:|---|---:|---:|---:|---|---|",
    ]
    for r in rows:
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "FAIL"
        if not ratios and r["ratio"] is not None:
            ratio = "none (another answer)"
        lines.append(
            f"| {r['scene']} | {r['objects']} | {r['triangles']} | `{r['query']}` | {r['fcl_s'] * 1e3:.2f} ms | "
            f"{r['ck_s'] * 1e3:.2f} ms | {ratio} | {r['answer']} | {_referee_text(r['referee'])} |"
        )
    return lines


def _opt_in_cost(rows: list[dict]) -> str:
    """One sentence on the opt-in rows' times against FCL's (they answer more, so the
    comparison is stated, not printed as a speed-up)."""
    slower = [r for r in rows if r["ck_s"] > r["fcl_s"]]
    if not rows:
        return ""
    if len(slower) == len(rows):
        return " In this run every opt-in row took longer than FCL's default answer."
    return f" In this run {len(slower)} of {len(rows)} opt-in rows took longer than FCL's default answer."


def _json_safe(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set)):
        return [_json_safe(v) for v in x]
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer, int)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return float(x)
    return x if x is None or isinstance(x, str) else repr(x)


def write(rows: list[dict], out: Path, argv: list[str], repeats: int, mc: dict) -> dict:
    """Write ``out`` (markdown) and the same run as JSON beside it (``out`` with .json)."""
    v = versions()
    pv = provenance(argv, "benchmarks.trimesh_manager")
    main_rows = [r for r in rows if not r["opt_in"] and not r["overlap_first"]]
    lines = [
        "# collisionkit.trimesh.CollisionManager vs trimesh.collision.CollisionManager (python-fcl)",
        "",
        f"Machine: {mc['cpu_model']}, {mc['cpu_affinity']} cores usable, {mc['memory_gib']} GiB, {mc['platform']}, "
        f"Python {mc['python']}; load average at start {', '.join(f'{x:.2f}' for x in mc['loadavg_start'])}.",
        f"Versions: {', '.join(f'{k} {val}' for k, val in sorted(v.items()))}. "
        f"collisionkit threads: {numba.get_num_threads()} "
        "(python-fcl: 1).",
        f"Timing: median of {repeats} runs after one untimed warm-up call; objects added outside the timed region.",
        "Referee: answers compared before any ratio (module notes of benchmarks/trimesh_manager.py); "
        "a differing collision pair is decided by collisionkit.classify (exact triangle test, winding-number containment); "
        "a depth by an independent reference (module notes).",
        "",
        "## The drop-in (default `CollisionManager()`)",
        "",
        *_table(main_rows),
        "",
        "## Overlapping scenes: `min_distance_internal` / `min_distance_other` (the default manager)",
        "",
        "FCL's manager stops at the first overlapping pair its broad phase meets and answers that pair's depth; "
        "collisionkit finds every colliding pair and answers the deepest (box-bound pruned; each pair's certified "
        "depth kept until one of its objects moves). On a scene where hundreds of pairs overlap that is more work "
        "by design: where FCL's first pair comes in microseconds, even one certified depth (40-580 us a pair of "
        "these meshes) is slower.",
        "",
        *_table([r for r in rows if r["overlap_first"]]),
        "",
        "## Opt-in certified upper ends (`CollisionManager(depth=...)`, not the default)",
        "",
        "These rows answer what FCL does not compute: the upper end of a certified bracket of the depth, a "
        "translation that separates the pair, searched per overlapping pair. FCL's column is the time of its "
        "own, uncertified depth (the default rows' answer form), so no speed-up is printed; the times are "
        "there to show what the opt-in costs." + _opt_in_cost([r for r in rows if r["opt_in"]]),
        "",
        *_table([r for r in rows if r["opt_in"]], ratios=False),
    ]
    lines += [
        "",
        "Notes:",
        "",
        "* `bool` rows: the default call form (no names, no data), which both managers answer at the first colliding "
        "pair they meet; calls of microseconds are timed in loops of 200 (`min_distance_internal`: loops of as "
        "many calls as fit in ~5 ms, 1 to 200).",
        "* The internal and `_other` queries are timed after one `set_transform` (to the same pose) of the "
        "scene's first object in each call, which both managers take as a move: FCL updates its tree and "
        "recomputes the query; collisionkit keeps what holds for pairs without a moved object (the World's "
        "candidate and colliding pairs, each pair's depth and containment by pair of objects) and measures the "
        "moved object's pairs again (a pair found colliding whose objects did not move answers a boolean at "
        "once; `min_distance_internal` keeps its deepest pair while it does not move and measures the moved "
        "object's pairs whose depth bound reaches it). The `every object moved` rows set every object's transform in each timed call (both managers), "
        "so everything is recomputed.",
        "* `min_distance_*` with overlaps (default, `depth=\"lower\"`): collisionkit returns minus the deepest pair's depth: "
        "exact for two convex meshes, else the certified lower end of its bracket (the deepest vertex of either mesh "
        "inside the other, the face centroids too when no vertex is: `depth_lower` of `penetration(method=\"bounds\")`), refereed against an independent brute "
        "force (winding number, trimesh's closest point on every triangle). FCL returns the first overlapping pair its "
        "broad phase meets, with an EPA depth for two convex meshes, an uncertified depth for a BVH and a convex mesh "
        "and 0 for two BVHs; where it names the same pair, its depth is checked against the certified bracket "
        "(`penetration(method=\"bounds\", refine=True)`).",
        "* The opt-in rows answer the upper end of the certified bracket (a translation that separates), refined or "
        "not: `CollisionManager(depth=\"refined\")` / `depth=\"bounds\"`; they search translations per pair and "
        "take longer than FCL's (different) answer; no speed-up is printed for them.",
        "* Distances (no overlap) that differ: each is checked against the brute-force minimum over all triangle pairs "
        "(`benchmarks/referee.brute_distance`), which ours equals (1e-9 relative); FCL's GJK on two `fcl.Convex` "
        "stops above it, and FCL's pose arithmetic moves some answers by ~1e-8.",
        "* Timings on a shared 2-core VM with other jobs running: single-scene ratios carry up to 2x noise.",
    ]
    lines += ["", "Building the managers (add_object for every object; not timed above):", ""]
    seen = set()
    for r in rows:
        if r["scene"] in seen:
            continue
        seen.add(r["scene"])
        lines.append(f"* {r['scene']}: trimesh + fcl {r['build_fcl_s'] * 1e3:.1f} ms, collisionkit {r['build_ck_s'] * 1e3:.1f} ms "
                     "(collisionkit builds each tree on its first query; that is in the warm-up call)")  # fmt: skip
    out.write_text(stamp("\n".join(lines) + "\n", pv), encoding="utf-8")
    report = {
        "provenance": pv, "machine": mc, "versions": v, "repeats": repeats, "threads": numba.get_num_threads(),
        "rows": _json_safe(rows),
        # every default-manager row, the overlapping min_distance_* ones (FCL: its first overlap) included
        "min_ratio": min((r["ratio"] for r in rows if not r["opt_in"] and r["ratio"] is not None), default=None),
        "all_refereed": all(r["ok"] for r in rows),
    }  # fmt: skip
    out.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return report


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(prog="python -m benchmarks.trimesh_manager", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small scenes, 3 repeats (a smoke run)")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "trimesh_manager.md")
    args = ap.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 7)
    n = 60 if args.quick else 400
    mc = machine()
    rows = []
    rows += run_scene(
        f"scatter-{n}", scatter(n, 0.35, seed=1),
        ["in_collision_internal bool", "in_collision_internal", "in_collision_other bool", "in_collision_other",
         "in_collision_internal bool, every object moved", "in_collision_internal, every object moved",
         "min_distance_internal", "min_distance_other"], repeats,
    )  # fmt: skip
    rows += run_scene(
        f"spread-{n}", spread(n, seed=2),
        ["in_collision_internal bool", "in_collision_internal", "min_distance_internal", "in_collision_other bool",
         "in_collision_other", "min_distance_other"], repeats,
    )  # fmt: skip
    side = (n / 0.35) ** (1 / 3)
    poses = probes(50 if args.quick else 200, 0.0, side, seed=3)
    rows += run_scene(
        f"scatter-{n} probe", scatter(n, 0.35, seed=1),
        ["in_collision_single bool", "in_collision_single", "in_collision_many", "min_distance_single",
         "min_distance_single depth=bounds", "min_distance_single depth=refined"], repeats, poses,
    )  # fmt: skip
    grid = spread(n, seed=2)
    top = max(T[2, 3] for _, _, T in grid)
    above = probes(50 if args.quick else 200, 0.0, 1.4 * math.ceil(n ** (1 / 3)), seed=4)
    above[:, 2, 3] = top + 1.2 + 2.0 * np.random.default_rng(5).random(above.shape[0])
    rows += run_scene(f"spread-{n} probe", grid, ["min_distance_single"], repeats, above)
    k = 4 if args.quick else 8
    rows += run_scene(f"pegboard-{k}x{k}", pegboard(k), ["in_collision_internal", "min_distance_internal"], repeats)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        report = write(rows, args.out, argv, repeats, mc)
        print(f"wrote {args.out} and {args.out.with_suffix('.json')}; slowest default row {report['min_ratio']:.2f}x")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
