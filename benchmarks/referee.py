"""An independent referee for the benchmarks' answers (issue #20: answers gate ratios).

Nothing here calls collisionkit's kernels. For a scene's poses it decides triangle pairs
EXACTLY in the world frame: each mesh's float64 vertices are transformed by its float64
pose matrix in rational arithmetic (``fractions.Fraction``: the true image of the stored
vertices under the given matrices, no rounding), and each pair is decided by
``tests.oracles.tri_tri_rational`` (an LP feasibility test over Fractions, written from
scratch for the test suite). That is slow (milliseconds a pair), so per scene it referees
every pair on which the engines DISAGREE plus a seeded random sample of the pairs all of
them report (``sample`` per scene), and says so in the results.

An engine's answer that differs from the exact one is *explained* only by a stated,
checked reason:

* ``pose rounding`` (collisionkit): collisionkit is exact on b's vertices as mapped into
  a's frame in float64 (ARCHITECTURE.md, "Exactness"), not on the world-frame image; the
  difference is explained when the pair's exact verdict on those mapped coordinates
  (``tests.oracles.map_points``, own numpy code) is the one collisionkit gave.
* ``tolerance``: an engine that documents a distance tolerance (Coal: GJK tolerance 1e-6
  on the distance, absolute) may report disjoint pairs closer than it; checked with a
  float64 triangle distance (this file) against the tolerance plus a rounding slack.

Anything else is unexplained: the scene reports no ratio for that engine and the run exits
non-zero.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import Any

import numpy as np
from tests.oracles import map_points, tri_tri_rational

#: Documented distance tolerances (absolute, scene units) that explain reported-but-disjoint
#: pairs. Coal: ``CollisionRequest`` GJK tolerance 1e-6 with security_margin 0 (Coal's docs).
TOLERANCE = {"coal-obbrss": 1e-6, "coal-obb": 1e-6}
#: Engines whose triangle test reports exactly coplanar, disjoint triangles as intersecting
#: (python-fcl 0.7: seen on the hard scenes' gear caps, which share the planes z = +-w/2;
#: benchmarks/hard_cases.py). Explained only when the pair is coplanar in exact arithmetic.
COPLANAR_FALSE_POSITIVES = {"fcl"}
METHOD = "exact rationals, world frame, tests.oracles.tri_tri_rational"

#: float64 slack on top of any tolerance, relative to the scene's coordinate scale
ROUNDING = 1e-12


def _exact_vertices(vertices: np.ndarray, T: np.ndarray, idx) -> dict[int, tuple[Fraction, ...]]:
    F = [[Fraction(float(x)) for x in row] for row in np.asarray(T)[:3]]
    out = {}
    for i in idx:
        p = [Fraction(float(c)) for c in vertices[i]]
        out[i] = tuple(F[r][0] * p[0] + F[r][1] * p[1] + F[r][2] * p[2] + F[r][3] for r in range(3))
    return out


def exact_world(mesh_a, mesh_b, Ta, Tb, pairs) -> list[bool]:
    """Exact verdicts of (face_a, face_b) pairs with both meshes at their world poses."""
    fa, fb = np.asarray(mesh_a.faces), np.asarray(mesh_b.faces)
    va = _exact_vertices(np.asarray(mesh_a.vertices), Ta, {int(v) for i, _ in pairs for v in fa[i]})
    vb = _exact_vertices(np.asarray(mesh_b.vertices), Tb, {int(v) for _, j in pairs for v in fb[j]})
    return [tri_tri_rational([va[int(v)] for v in fa[i]], [vb[int(v)] for v in fb[j]]) for i, j in pairs]


def exact_in_a_frame(mesh_a, mesh_b, Ta, Tb, pairs) -> list[bool]:
    """Exact verdicts on a's stored vertices and b's vertices mapped into a's frame in
    float64 (collisionkit's documented coordinates)."""
    ta = np.asarray(mesh_a.vertices)[np.asarray(mesh_a.faces)]
    tb = map_points(Ta, Tb, np.asarray(mesh_b.vertices)[np.asarray(mesh_b.faces)])
    return [tri_tri_rational(ta[i].tolist(), tb[j].tolist()) for i, j in pairs]


def coplanar_world(mesh_a, mesh_b, Ta, Tb, pair) -> bool:
    """Are the pair's two triangles in one plane, exactly (world frame, rationals)?"""
    i, j = pair
    fa, fb = np.asarray(mesh_a.faces)[i], np.asarray(mesh_b.faces)[j]
    va = _exact_vertices(np.asarray(mesh_a.vertices), Ta, [int(v) for v in fa])
    vb = _exact_vertices(np.asarray(mesh_b.vertices), Tb, [int(v) for v in fb])
    p0, p1, p2 = (va[int(v)] for v in fa)
    u = [p1[k] - p0[k] for k in range(3)]
    w = [p2[k] - p0[k] for k in range(3)]
    n = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
    if n == (0, 0, 0):
        return False
    return all(sum(n[k] * (vb[int(v)][k] - p0[k]) for k in range(3)) == 0 for v in fb)


# --- float64 triangle distance (Ericson, Real-Time Collision Detection, 5.1.5 and 5.1.9) ---


def _closest_on_triangle(p, a, b, c):
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = ab @ ap, ac @ ap
    if d1 <= 0 and d2 <= 0:
        return a
    bp = p - b
    d3, d4 = ab @ bp, ac @ bp
    if d3 >= 0 and d4 <= d3:
        return b
    vc = d1 * d4 - d3 * d2
    if vc <= 0 and d1 >= 0 and d3 <= 0:
        return a + ab * (d1 / (d1 - d3))
    cp = p - c
    d5, d6 = ab @ cp, ac @ cp
    if d6 >= 0 and d5 <= d6:
        return c
    vb = d5 * d2 - d1 * d6
    if vb <= 0 and d2 >= 0 and d6 <= 0:
        return a + ac * (d2 / (d2 - d6))
    va = d3 * d6 - d5 * d4
    if va <= 0 and (d4 - d3) >= 0 and (d5 - d6) >= 0:
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)))
    den = va + vb + vc
    if den == 0:  # degenerate triangle: nearest of its edges
        return min((_closest_on_segment(p, u, v) for u, v in ((a, b), (b, c), (c, a))), key=lambda q: (q - p) @ (q - p))
    return a + ab * (vb / den) + ac * (vc / den)


def _closest_on_segment(p, a, b):
    d = b - a
    dd = d @ d
    t = 0.0 if dd == 0 else min(1.0, max(0.0, ((p - a) @ d) / dd))
    return a + d * t


def _segment_segment(p1, q1, p2, q2) -> float:
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = d1 @ d1, d2 @ d2, d2 @ r
    if a == 0 and e == 0:
        return float(np.linalg.norm(r))
    if a == 0:
        s, t = 0.0, min(1.0, max(0.0, f / e))
    else:
        c = d1 @ r
        if e == 0:
            s, t = min(1.0, max(0.0, -c / a)), 0.0
        else:
            b = d1 @ d2
            den = a * e - b * b
            s = min(1.0, max(0.0, (b * f - c * e) / den)) if den != 0 else 0.0
            t = (b * s + f) / e
            if t < 0:
                s, t = min(1.0, max(0.0, -c / a)), 0.0
            elif t > 1:
                s, t = min(1.0, max(0.0, (b - c) / a)), 1.0
    return float(np.linalg.norm((p1 + d1 * s) - (p2 + d2 * t)))


def triangle_distance(P: np.ndarray, Q: np.ndarray) -> float:
    """float64 distance between two triangles that do NOT intersect (vertex-face and
    edge-edge candidates: one of them realises the distance of disjoint triangles)."""
    best = math.inf
    for X, Y in ((P, Q), (Q, P)):
        for k in range(3):
            q = _closest_on_triangle(X[k], Y[0], Y[1], Y[2])
            best = min(best, float(np.linalg.norm(q - X[k])))
    for i in range(3):
        for j in range(3):
            best = min(best, _segment_segment(P[i], P[(i + 1) % 3], Q[j], Q[(j + 1) % 3]))
    return best


def world_triangles(mesh, T, faces) -> np.ndarray:
    tri = np.asarray(mesh.vertices)[np.asarray(mesh.faces)[list(faces)]]
    T = np.asarray(T)
    return tri @ T[:3, :3].T + T[:3, 3]


# --- the referee ------------------------------------------------------------------------


def referee_pairs(
    mesh_a, mesh_b, Pa, Pb, pairsets: dict[str, list[set]], sample: int = 100, seed: int = 0
) -> dict[str, Any]:
    """Referee every engine's per-pose pair sets.

    pairsets : engine name -> list (one set of (face_a, face_b) per pose).
    Returns {"refereed": {...counts}, "truth": per-pose set of exact pairs among those
    refereed and agreed, "engines": {name: verdict}} where a verdict is
    {"status": "exact" | "explained" | "FAIL", "wrong": n, "explained": {reason: n},
    "unexplained": [examples]}.
    """
    names = list(pairsets)
    n = len(next(iter(pairsets.values()))) if names else 0
    scale = max(float(np.abs(np.asarray(mesh_a.vertices)).max()), float(np.abs(np.asarray(mesh_b.vertices)).max()))
    scale += max(float(np.abs(np.asarray(Pa)[..., :3, 3]).max()), float(np.abs(np.asarray(Pb)[..., :3, 3]).max()))
    disputed, agreed = [], []
    for p in range(n):
        sets = [pairsets[e][p] for e in names]
        union, inter = set().union(*sets), set.intersection(*sets) if sets else set()
        disputed += [(p, q) for q in sorted(union - inter)]
        agreed += [(p, q) for q in sorted(inter)]
    rng = random.Random(seed)
    sampled = rng.sample(agreed, min(sample, len(agreed)))
    verdict: dict[tuple[int, tuple[int, int]], bool] = {}
    todo = disputed + sampled
    by_pose: dict[int, list] = {}
    for p, q in todo:
        by_pose.setdefault(p, []).append(q)
    for p, qs in by_pose.items():
        for q, v in zip(qs, exact_world(mesh_a, mesh_b, Pa[p], Pb[p], qs), strict=True):
            verdict[(p, q)] = v
    out: dict[str, Any] = {
        "refereed": {"disputed": len(disputed), "agreed": len(agreed), "agreed_sampled": len(sampled)},
        "engines": {},
    }
    wrong_agreed = [(p, q) for p, q in sampled if not verdict[(p, q)]]
    for e in names:
        tol = TOLERANCE.get(e.split(" ")[0], 0.0)
        v = {"wrong": 0, "explained": {}, "unexplained": []}
        wrongs = [(p, q, True) for p, q in wrong_agreed]  # all engines reported these
        for p, q in disputed:
            has = q in pairsets[e][p]
            if has != verdict[(p, q)]:
                wrongs.append((p, q, has))
        for p, q, reported in wrongs:
            v["wrong"] += 1
            reason = None
            if e.startswith("collisionkit"):
                mine = exact_in_a_frame(mesh_a, mesh_b, Pa[p], Pb[p], [q])[0]
                if mine == reported:
                    reason = "pose rounding (exact in a's frame)"
            if reason is None and reported and e.split(" ")[0] in COPLANAR_FALSE_POSITIVES:
                if coplanar_world(mesh_a, mesh_b, Pa[p], Pb[p], q):
                    reason = "coplanar disjoint pair reported"
            if reason is None and reported:  # a reported pair that is disjoint: how far apart?
                d = triangle_distance(
                    world_triangles(mesh_a, Pa[p], [q[0]])[0], world_triangles(mesh_b, Pb[p], [q[1]])[0]
                )
                if d <= tol + ROUNDING * scale:
                    reason = f"tolerance {tol:g}" if tol else "rounding"
            if reason is None:
                v["unexplained"].append({"pose": p, "pair": list(q), "reported": reported})
            else:
                v["explained"][reason] = v["explained"].get(reason, 0) + 1
        v["explained_poses"] = sorted({p for p, q, _ in wrongs} - {u["pose"] for u in v["unexplained"]})
        v["status"] = "FAIL" if v["unexplained"] else ("explained" if v["wrong"] else "exact")
        v["unexplained"] = v["unexplained"][:5]
        out["engines"][e] = v
    truth = [set() for _ in range(n)]
    for (p, q), ok in verdict.items():
        if ok:
            truth[p].add(q)
    for p, q in agreed:
        if (p, q) not in verdict:
            truth[p].add(q)  # agreed by every engine, not sampled
    out["truth_colliding"] = [bool(t) for t in truth]
    return out


def boxes_apart(mesh_a, mesh_b, Ta, Tb) -> bool:
    """Proven disjoint: the meshes' world-frame bounding boxes (float64, widened by a
    rounding slack) do not overlap. Referees boolean-only scenes (B far away)."""
    wa = np.asarray(mesh_a.vertices) @ np.asarray(Ta)[:3, :3].T + np.asarray(Ta)[:3, 3]
    wb = np.asarray(mesh_b.vertices) @ np.asarray(Tb)[:3, :3].T + np.asarray(Tb)[:3, 3]
    slack = 1e-9 * (1.0 + max(float(np.abs(wa).max()), float(np.abs(wb).max())))
    return bool(np.any(wa.max(0) + slack < wb.min(0)) or np.any(wb.max(0) + slack < wa.min(0)))


def verdict_text(v: dict[str, Any] | None) -> str:
    """Short verdict printed beside a ratio."""
    if not v or v["status"] == "unrefereed":
        return "unrefereed"
    if v["status"] == "exact":
        return "exact"
    if v["status"] == "agrees":
        return "agrees (" + v.get("rule", f"<= {VALUE_RTOL:g} x scale") + ")"
    if v["status"] == "explained":
        return "ok: " + ", ".join(f"{k} x{n}" for k, n in v["explained"].items())
    return f"FAIL ({len(v['unexplained'])}+ unexplained)"


# --- distance, penetration and time-of-impact references (benchmarks.queries) ------------

#: Distances and depths agree with the reference when |value - reference| <= the engine's
#: documented tolerance + VALUE_RTOL x scale (scale: the largest coordinate magnitude of the
#: pose, a's frame). Every engine here computes float64 triangle distances (or supports), so
#: their rounding is ~1e-15 x scale; 1e-9 leaves room for the reference's own closed forms.
VALUE_RTOL = 1e-9
#: Coal's GJK/EPA tolerance (``DistanceRequest``, default 1e-6, absolute): convex penetration.
DEPTH_TOLERANCE = {"coal": 1e-6}
DISTANCE_METHOD = (
    "exhaustive over all triangle pairs in a's frame (tests.brute's own mapping): 0 exactly when "
    "tests.brute.brute_colliding (certified float filter + exact rationals) finds a meeting pair, else the "
    "min of tests.distance_oracle's closed-form triangle distances, every pair evaluated or proved farther "
    "by its bounding-box gap"
)
DEPTH_METHOD = (
    "convex penetration depth by brute force over the separating-axis candidates (both hulls' face "
    "normals and every edge-edge cross product, both signs), float64, world frame"
)


def brute_distance(mesh_a, mesh_b, Ta, Tb) -> tuple[float, float]:
    """(reference distance, scale) of ONE pose pair: the minimum over ALL triangle pairs.

    Exhaustive by proof: the gap between two triangles' bounding boxes is a lower bound of
    their distance; the 2,048 pairs with the smallest gaps give an upper bound, then every
    pair whose gap is not above it is evaluated; every other pair is farther.
    """
    from tests.brute import brute_colliding, mapped_triangles
    from tests.distance_oracle import tri_pair_distance2

    A = np.asarray(mesh_a.vertices)[np.asarray(mesh_a.faces)]
    B = mapped_triangles(mesh_b, Ta, Tb)
    scale = max(float(np.abs(A).max()), float(np.abs(B).max()))
    if brute_colliding(mesh_a, mesh_b, Ta, Tb)[0]:
        return 0.0, scale
    lo_a, hi_a, lo_b, hi_b = A.min(1), A.max(1), B.min(1), B.max(1)
    gap = np.maximum(0.0, np.maximum(lo_b[None] - hi_a[:, None], lo_a[:, None] - hi_b[None]))
    lb = np.sqrt(np.einsum("ijk,ijk->ij", gap, gap)).ravel()
    fb = B.shape[0]

    def closest(idx) -> float:
        best = math.inf
        for s in range(0, idx.size, 8192):
            i = idx[s : s + 8192]
            best = min(best, float(np.sqrt(tri_pair_distance2(A[i // fb], B[i % fb]).min())))
        return best

    k = min(2048, lb.size)
    best = closest(np.argpartition(lb, k - 1)[:k])  # an upper bound from the nearest boxes
    # every pair whose box gap is not above that bound (a bound's own rounding: 1e-12
    # relative is far above it); every other pair is farther than the best
    return min(best, closest(np.flatnonzero(lb * (1.0 - 1e-12) <= best))), scale


def _axes_and_points(mesh, T):
    v = np.asarray(mesh.vertices) @ np.asarray(T)[:3, :3].T + np.asarray(T)[:3, 3]
    f = np.asarray(mesh.faces)
    n = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    e = np.concatenate([v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 1]], v[f[:, 0]] - v[f[:, 2]]])
    return v, n, e


def convex_depth(mesh_a, mesh_b, Ta, Tb) -> tuple[float, float]:
    """(reference penetration depth, scale) of two CONVEX closed meshes at their world poses.

    The translational penetration depth of convex polytopes is the smallest overlap
    ``max(A.n) - min(B.n)`` over unit directions n, attained at a facet normal of the
    Minkowski difference: a face normal of A or of B, or the cross product of an edge of
    each. Every candidate (both signs) is evaluated; any direction's overlap bounds the depth
    from above, so extra candidates cannot lower the minimum below the truth. 0 when some
    candidate separates (the polytopes are disjoint or touch).
    """
    va, na, ea = _axes_and_points(mesh_a, Ta)
    vb, nb, eb = _axes_and_points(mesh_b, Tb)
    scale = max(float(np.abs(va).max()), float(np.abs(vb).max()))
    best = math.inf

    def consider(axes):
        nonlocal best
        norm = np.linalg.norm(axes, axis=1)
        axes = axes[norm > 1e-12 * max(1.0, float(norm.max(initial=0.0)))]
        axes = axes / np.linalg.norm(axes, axis=1)[:, None]
        for s in range(0, axes.shape[0], 20_000):
            u = np.concatenate([axes[s : s + 20_000], -axes[s : s + 20_000]])
            ov = (u @ va.T).max(1) - (u @ vb.T).min(1)
            best = min(best, float(ov.min()))

    consider(np.concatenate([na, nb]))
    for i in range(0, ea.shape[0], 64):
        consider(np.cross(ea[i : i + 64, None, :], eb[None, :, :]).reshape(-1, 3))
    return max(0.0, best), scale


def referee_values(got: np.ndarray, ref: np.ndarray, scale: np.ndarray, tolerance: float = 0.0) -> dict[str, Any]:
    """Verdict on one engine's per-pose values (distances or depths) against the reference.

    Exact zeros: where the reference is 0 (the meshes meet, decided exactly) the engine must
    report <= its tolerance; elsewhere |got - ref| <= tolerance + VALUE_RTOL x scale.
    ``explained``: differences beyond VALUE_RTOL x scale covered by the documented tolerance.
    """
    got, ref, scale = (np.asarray(x, dtype=np.float64) for x in (got, ref, scale))
    slack = VALUE_RTOL * scale
    err = np.abs(got - ref)
    bad = ~(err <= tolerance + slack)  # NaN counts as bad
    tol_used = (err > slack) & ~bad
    v: dict[str, Any] = {"wrong": int(bad.sum() + tol_used.sum()), "explained": {}, "unexplained": []}
    if tol_used.any():
        v["explained"][f"tolerance {tolerance:g}"] = int(tol_used.sum())
    for p in np.flatnonzero(bad)[:5]:
        v["unexplained"].append({"pose": int(p), "got": float(got[p]), "reference": float(ref[p])})
    v["max_abs_err"] = float(err.max()) if err.size else 0.0
    v["status"] = "FAIL" if bad.any() else ("explained" if tol_used.any() else "agrees")
    if bad.any():
        v["unexplained_count"] = int(bad.sum())
    return v
