"""Penetration depth of closed non-convex meshes, bracketed: ``method="bounds"``.

The penetration depth of two overlapping solids A and B is the length of the
shortest translation of B after which the interiors no longer overlap. For
non-convex solids no practical exact method is known (the Minkowski sum of
two non-convex meshes has O(n^2) to O(n^6) faces), so this method returns a
certified bracket ``depth_lower <= true depth <= depth_upper``:

* **Lower bound: the deepest vertex.** If a point p of B lies inside A at
  distance d from A's surface, every translation shorter than d keeps p
  inside A, so the depth is at least d. ``depth_lower`` is the largest such d
  over the vertices of B inside A and the vertices of A inside B (with
  ``refine=True`` also the triangles' centroids), less a rounding allowance
  of 2**-40 of the coordinates. Inside is decided exactly by ray parity with
  orientation predicates (``kernels.proximity.penetration_bounds``) on the
  coordinates ``intersects`` uses; the distance is the float64 point-to-
  surface distance over an AABB tree, with the one-sided-Hausdorff early
  exit (a point stops as soon as it cannot be the deepest).
* **Upper bound: a translation that really separates.** For candidate
  directions u (``directions`` Fibonacci sphere points, the world and both
  meshes' axes, and the two deepest-vertex escape directions) the length s
  along u is bracketed between a length that overlaps (the lower bound, then
  tested ones) and one that separates (beyond both meshes' supports along
  u), scanned coarsely and then bisected, all directions at once as one
  batched ``intersects`` call per step, to a relative width ``RTOL``
  (``REFINE_RTOL`` with ``refine=True``). A length counts as separating only
  when ``intersects`` (exact) says the surfaces do not meet AND no connected
  piece of either mesh lies inside the other (one vertex per piece, ray
  parity, exact); anything undecided counts as overlapping. Directions whose
  overlapping length already reaches the best separating length found are
  dropped. ``depth_upper`` is the smallest separating length found and
  ``direction`` its unit vector (world, a towards b): b's pose with
  ``depth_upper * direction`` added to its translation is disjoint from a,
  as ``intersects`` and the containment test decide it. With ``refine=True``
  four times the directions are tried, then rounds of directions in
  shrinking cones around the best one.

``depth`` is ``depth_upper`` (a translation you can apply); ``error_bound``
is ``depth_upper - depth_lower``, a true bound on ``depth``'s distance from
the true depth (up to the lower bound's rounding allowance). The gap comes
from both sides: the deepest vertex ignores how the rest of B is placed
(for a small B wholly inside a large A it can be far below the depth), and
the best direction may lie between the sampled ones.

Cost: the lower bound is one parallel pass over the vertices (those outside
the other mesh's bounding sphere are skipped at once); the upper bound about
``directions`` * 20 ``intersects`` poses, most of them early hits or clear
misses.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..bvh.cache import tree_for
from ..errors import InvalidMeshError
from ..geometry.mesh import Mesh
from ..kernels.proximity import penetration_bounds as kb
from . import batch, scaling
from .classify import CONTAINED, PENETRATING, overlap_codes
from .containment import piece_points
from .pair import hits
from .pose_form import record
from .results import Penetration

#: Relative width to which each direction's separating length is bisected.
RTOL = 2.0**-8
#: The same with ``refine=True``.
REFINE_RTOL = 2.0**-30
#: Coarse samples per direction before bisecting.
SCAN_STEPS = 4
#: Rounds of local search around the best direction (and with ``refine=True``).
LOCAL_ROUNDS = 3
REFINE_ROUNDS = 10
#: Directions per local-search round (and with ``refine=True``).
LOCAL_CONE = 8
REFINE_CONE = 12
#: The lower bound's rounding allowance, relative to the coordinates involved.
LOWER_RTOL = 2.0**-40


class _Solid(NamedTuple):
    topo: np.ndarray
    bv: np.ndarray
    tris: np.ndarray
    scale: float
    stack: int
    points: np.ndarray  # (P, 3) referenced vertices, merged by coordinates
    centroids: np.ndarray  # (F, 3) face centroids
    pieces: np.ndarray  # (Q, 3) one vertex per connected piece
    centre: tuple[float, float, float]
    radius: float
    support: np.ndarray  # (H, 3) convex hull vertices (supports along any direction)
    closed: bool  # every edge (vertices merged by coordinates) has an even number of faces


def solid(mesh: Mesh) -> _Solid:
    """What the bounds method needs of a mesh, cached per geometry."""

    def build() -> _Solid:
        tree = tree_for(mesh, "aabb")
        arr = tree.arrays
        tris = np.asarray(mesh.triangles)
        used = np.unique(np.asarray(mesh.faces))
        pts, inv = np.unique(np.asarray(mesh.vertices)[used], axis=0, return_inverse=True)
        remap = np.zeros(mesh.n_vertices, np.int64)
        remap[used] = inv.reshape(-1)
        f = remap[np.asarray(mesh.faces)]
        e = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
        _, counts = np.unique(e, axis=0, return_counts=True)
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        centre = (lo + hi) / 2.0
        # the radius's squares and qhull on the points scaled by a power of two (exact):
        # the same numbers at every scale, so the searches scale bit for bit (no squares
        # underflowing near 1e-300)
        x = scaling.exponent_of(scaling.mesh_scale(mesh))
        unit = np.ldexp(pts, -x)
        radius = math.ldexp(float(np.sqrt(((unit - np.ldexp(centre, -x)) ** 2).sum(axis=1)).max()), x)
        try:
            from scipy.spatial import ConvexHull

            support = pts[ConvexHull(unit).vertices]
        except Exception:  # noqa: BLE001 - qhull refuses flat input: every vertex supports
            support = pts
        return _Solid(
            arr.topo, arr.bv, arr.tris, float(arr.scale[0]), kb.stack_size(tree.depth, tree.fanout),
            np.ascontiguousarray(pts), np.ascontiguousarray(tris.mean(axis=1)),
            np.ascontiguousarray(piece_points(mesh)), (float(centre[0]), float(centre[1]), float(centre[2])),
            radius * (1.0 + 1e-12), np.ascontiguousarray(support), bool(np.all(counts % 2 == 0)),
        )  # fmt: skip

    return mesh.cached(("penetration-bounds-solid",), build)


def _deepest(M: _Solid, P: _Solid, Ta, Tb, m_is_a: bool, refine: bool, cut2: float, threads: int):
    """(d2, point index, closest point on M (M's frame), points used) of the
    other mesh's points inside M; d2 <= cut2 and index -1 when none beats cut2."""
    pts = np.concatenate([P.points, P.centroids]) if refine else P.points
    p = batch.plan(len(pts), threads)
    stacks = np.zeros((p.nchunks, M.stack), np.int64)
    codes = np.zeros(len(pts), np.int8)
    out = np.zeros((p.nchunks, 5))
    batch.launch_prange(
        p, kb.deepest_inside,
        M.topo, M.bv, M.tris, Ta, Tb, m_is_a, pts, M.centre, M.radius, M.scale, cut2, stacks, codes, out,
        np.int64(p.nchunks),
    )  # fmt: skip
    row = out[int(np.argmax(out[:, 0]))]
    return float(row[0]), int(row[1]), row[2:5].copy(), pts


def lower_bound(a: Mesh, b: Mesh, Ta, Tb, *, refine: bool = False, threads: int = 1):
    """(depth_lower, escape direction (world, a -> b) or None) for one pose pair.

    The deepest vertex of b inside a and of a inside b (module notes); 0.0 and
    None when no vertex is found strictly inside.
    """
    A, B = solid(a), solid(b)
    Ta = np.ascontiguousarray(Ta, dtype=np.float64)
    Tb = np.ascontiguousarray(Tb, dtype=np.float64)
    Rab = Ta[:3, :3].T @ Tb[:3, :3]
    tab = Ta[:3, :3].T @ (Tb[:3, 3] - Ta[:3, 3])
    # b's points in a: escape by moving b from the point towards a's closest surface point
    d2, i, c, pts = _deepest(A, B, Ta, Tb, True, refine, 0.0, threads)
    best, esc = d2, None
    if i >= 0:
        esc = c - (Rab @ pts[i] + tab)
    # a's points in b: b moves away from the point, past b's closest surface point
    d2, i, c, pts = _deepest(B, A, Ta, Tb, False, refine, best, threads)
    if i >= 0:
        best, esc = d2, pts[i] - (Rab @ c + tab)
    if esc is None or best <= 0.0:
        return 0.0, None
    size = A.scale + B.scale + float(np.abs(tab).sum())
    lower = max(math.sqrt(best) - LOWER_RTOL * size, 0.0)
    n = float(np.linalg.norm(esc))
    return lower, (Ta[:3, :3] @ esc / n if n > 0 else None)


def separated(a: Mesh, b: Mesh, Ta, Tbs, threads: int, solids: bool = True) -> np.ndarray:
    """(N,) bool: b at each pose of ``Tbs`` (N, 4, 4) is disjoint from a at ``Ta``.

    True only when ``intersects`` is False and (``solids``) no piece of either mesh is
    (or may be) inside the other; without ``solids`` (open meshes, which enclose no
    volume) the surfaces alone decide.
    """
    n = len(Tbs)
    if n == 0:
        return np.zeros(0, bool)
    hit = hits(a, b, Ta, Tbs, threads)
    sep = ~hit
    idx = np.flatnonzero(sep)
    if len(idx) and solids:
        A, B = solid(a), solid(b)
        # np.repeat: a new writable array (a broadcast view of one pose is read-only, and
        # a read-only argument compiles the kernel a second time)
        TA = np.repeat(np.asarray(Ta, dtype=np.float64)[None], len(idx), axis=0)
        TB = np.ascontiguousarray(Tbs[idx])
        for M, P, m_is_a in ((A, B, True), (B, A, False)):
            p = batch.plan(len(idx), threads)
            out = np.zeros(len(idx), np.int8)
            batch.launch_prange(
                p, kb.contained_any,
                M.topo, M.bv, M.tris, TA, TB, m_is_a, P.pieces, M.centre, M.radius, M.scale,
                np.zeros((p.nchunks, M.stack), np.int64), out, np.int64(p.nchunks),
            )  # fmt: skip
            sep[idx[out != 0]] = False
    return sep


def _moved(Tb: np.ndarray, s: np.ndarray, U: np.ndarray) -> np.ndarray:
    """(K, 4, 4): b's pose with s[k] * U[k] added to its translation (the
    operation a caller repeats to apply the answer)."""
    T = np.repeat(Tb[None], len(s), axis=0)
    T[:, :3, 3] = Tb[:3, 3] + s[:, None] * U
    return T


def separating_search(a, b, Ta, Tb, U, lower, rtol, best, threads, solids: bool = True):
    """Bracket each direction's separating length; (best length, its row of U, overlapping length below it).

    Also the sampled method's search (``query.penetration``), from ``lower`` 0; ``solids``
    as ``separated``.
    """
    A, B = solid(a), solid(b)
    K = len(U)
    # beyond both supports along u the meshes are apart (checked, then doubled if rounding
    # disagrees); the 1% margin keeps these checks far from contact, where they are cheap
    sa = (A.support @ Ta[:3, :3].T + Ta[:3, 3]) @ U.T
    sb = (B.support @ Tb[:3, :3].T + Tb[:3, 3]) @ U.T
    size = A.radius + B.radius + float(np.abs(Ta[:3, 3]).max() + np.abs(Tb[:3, 3]).max())
    hi = sa.max(axis=0) - sb.min(axis=0) + 0.01 * (A.radius + B.radius)
    hi = np.maximum(hi, lower + 1e-9 * size)
    for _ in range(64):
        ok = separated(a, b, Ta, _moved(Tb, hi, U), threads, solids)
        if ok.all():
            break
        hi[~ok] *= 2.0
    else:  # pragma: no cover - a direction that never separates would be a bug
        raise RuntimeError("no separating translation found along the candidate directions")
    lo = np.full(K, float(lower))
    # coarse scan: the first separating sample brackets the first transition
    frac = np.arange(1, SCAN_STEPS) / SCAN_STEPS
    S = lo[:, None] + (hi - lo)[:, None] * frac[None]
    sep = separated(a, b, Ta, _moved(Tb, S.ravel(), np.repeat(U, len(frac), axis=0)), threads, solids)
    sep = sep.reshape(S.shape)
    for k in range(K):
        j = np.flatnonzero(sep[k])
        if len(j):
            hi[k] = S[k, j[0]]
            if j[0] > 0:
                lo[k] = S[k, j[0] - 1]
        elif len(frac):
            lo[k] = S[k, -1]
    floor = 2.0**-40 * size
    while True:
        best = min(best, float(hi.min()))
        live = np.flatnonzero((lo < best) & (hi - lo > np.maximum(rtol * hi, floor)))
        if len(live) == 0:
            break
        mid = 0.5 * (lo[live] + hi[live])
        sep = separated(a, b, Ta, _moved(Tb, mid, U[live]), threads, solids)
        hi[live[sep]] = mid[sep]
        lo[live[~sep]] = mid[~sep]
    k = int(np.argmin(hi))
    return float(hi[k]), U[k], float(lo[k])


def fibonacci_sphere(n: int) -> np.ndarray:
    """(n, 3) unit directions spread over the sphere (a Fibonacci lattice): the candidate
    directions of the bounds and the sampled methods."""
    i = np.arange(n) + 0.5
    z = 1 - 2 * i / n
    r = np.sqrt(1 - z * z)
    phi = math.pi * (1 + 5**0.5) * i
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


#: The 26 directions from a cube's centre to its face centres, edge midpoints and corners.
_CUBE = np.array(
    [(x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1) if (x, y, z) != (0, 0, 0)], float
)


def _cone(u: np.ndarray, angle: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """n unit directions within ``angle`` of u (random, seeded)."""
    e = np.eye(3)[int(np.argmin(np.abs(u)))]
    x = np.cross(u, e)
    x /= np.linalg.norm(x)
    y = np.cross(u, x)
    th = angle * np.sqrt(rng.random(n))
    ph = 2 * math.pi * rng.random(n)
    V = np.cos(th)[:, None] * u + np.sin(th)[:, None] * (np.cos(ph)[:, None] * x + np.sin(ph)[:, None] * y)
    return V / np.linalg.norm(V, axis=1, keepdims=True)


def upper_bound(a, b, Ta, Tb, lower: float, extra, *, directions: int, refine: bool, threads: int):
    """(depth_upper, unit direction (world, a -> b)) for one overlapping pose pair."""
    n = directions * (4 if refine else 1)
    # parts are often built on their axes: the 26 cube directions of the world and both frames
    frames = [np.eye(3), Ta[:3, :3], Tb[:3, :3]]
    fib = [fibonacci_sphere(n)] + ([fibonacci_sphere(directions)] if refine else [])  # refine tries a superset
    U = np.concatenate(fib + [_CUBE @ R.T for R in frames] + [np.asarray(e)[None] for e in extra if e is not None])
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    U = U[np.sort(np.unique(U.round(12), axis=0, return_index=True)[1])]
    rtol = REFINE_RTOL if refine else RTOL
    best, u, _ = separating_search(a, b, Ta, Tb, U, lower, rtol, math.inf, threads)
    # local search: cones around the best direction, halved when they bring nothing
    rng = np.random.default_rng(0)
    angle = math.sqrt(4 * math.pi / n)
    for _ in range(REFINE_ROUNDS if refine else LOCAL_ROUNDS):
        V = _cone(u, angle, REFINE_CONE if refine else LOCAL_CONE, rng)
        s, v, _ = separating_search(a, b, Ta, Tb, V, lower, rtol, best, threads)
        if s < best:
            best, u = s, v
        else:
            angle /= 2.0
    return best, u


def bounds(a: Mesh, b: Mesh, Ta, Tb, *, directions: int = 64, refine: bool = False, threads: int = 1):
    """(depth_lower, depth_upper, direction) for one pose pair that overlaps.

    The caller has established that the interiors overlap (or that the lower
    bound is positive); see the module notes for what each value means.
    """
    Ta = np.ascontiguousarray(Ta, dtype=np.float64)
    Tb = np.ascontiguousarray(Tb, dtype=np.float64)
    lower, esc = lower_bound(a, b, Ta, Tb, refine=refine, threads=threads)
    upper, u = upper_bound(a, b, Ta, Tb, lower, [esc], directions=directions, refine=refine, threads=threads)
    return lower, upper, u


def usable(a: Mesh, b: Mesh) -> bool:
    """Both meshes closed (every edge, vertices merged by coordinates, has an even number of faces)."""
    return solid(a).closed and solid(b).closed


def penetration_bounds(a: Mesh, b: Mesh, req, directions: int, refine: bool) -> Penetration:
    """``penetration(..., method="bounds")`` over a prepared batch ``req`` (``driver.prepare``)."""
    for mesh, name in ((a, "a"), (b, "b")):
        if not solid(mesh).closed:
            raise InvalidMeshError(
                f"penetration method 'bounds' needs closed meshes: {name} has edges on an odd number of faces"
            )
    n = req.n
    lower, upper = np.zeros(n), np.zeros(n)
    direction = np.full((n, 3), np.nan)
    methods = np.full(n, "none", dtype=object)
    for k in range(n):
        Ta = np.ascontiguousarray(req.pa[req.ia[k]])
        Tb = np.ascontiguousarray(req.pb[req.ib[k]])
        lo, esc = lower_bound(a, b, Ta, Tb, refine=refine, threads=req.threads)
        # a vertex strictly inside proves overlap; otherwise the exact classification decides
        if lo == 0.0 and overlap_codes(a, b, Ta, Tb, req.threads) not in (PENETRATING, CONTAINED):
            continue
        up, u = upper_bound(a, b, Ta, Tb, lo, [esc], directions=directions, refine=refine, threads=req.threads)
        lower[k], upper[k], direction[k], methods[k] = lo, up, u, "bounds"
    exact = methods == "none"
    err = upper - lower
    return record(
        Penetration, req.batched, depth=upper, direction=direction, exact=exact, error_bound=err,
        method=methods.astype(str), depth_lower=lower, depth_upper=upper,
    )  # fmt: skip


__all__ = [
    "bounds", "fibonacci_sphere", "lower_bound", "penetration_bounds", "separated", "separating_search", "solid",
    "upper_bound", "usable",
]
