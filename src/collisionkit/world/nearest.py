"""Broad-phase nearest pair: the closest pair of objects, pruned by box distances.

Two world boxes (and two bounding spheres: ``sphere_bounds``, the tighter of
each pair of bounds is used) bound the distance of whatever they hold from both
sides:

* lower bound: the distance between the boxes (0 when they overlap), since every
  point of an object lies in its box;
* upper bound: ``|c_i - c_j| + r_i + r_j`` (centres and half diagonals), the
  distance of two points of the boxes that are certainly no closer than the two
  nearest points of the objects (each object has a point in its box, and every
  point of a box is within ``r`` of its centre).

The search (``nearest``) takes the smallest upper bound U over all allowed pairs,
keeps only the pairs whose lower bound is at most U (the answer's pair is among
them), and measures them exactly in increasing lower-bound order, in batches
(pairs of the same two shapes in one batched ``collisionkit.distance`` call), each
with the best distance so far as the query's ``upper_bound``; it stops when the
next lower bound is not below the best distance. ``nearest`` scans the pairs in
blocks of rows (O(n_a n_b) box arithmetic in NumPy, bounded memory): the search of
one object against the rest, with a filter callable, or of few pairs; two sets
without filters from ``TREE_MIN_PAIRS`` pairs on go to the tree below, joined.

The pairs of one set (``nearest_self``, ``World.nearest_pair()``) skip the scan: a
box tree (``kernels.broadphase.nearest``) yields the candidates in O(n log n) plus
their number, each object's query pruned by the least upper bound met so far and by
the exact distance of one seed pair measured first (any allowed pair's distance
bounds the answer, and the pairs with lower bounds up to it are a prefix of the
sorted candidates, so the answer is the scan's); memory is linear in the candidates,
which are sorted lazily (``measure_in_order``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..kernels.broadphase import nearest as kn

_I64 = np.int64
#: Box pairs evaluated per NumPy block (bounds the scratch memory: ~100 bytes a pair).
BLOCK_ROWS = 1 << 18


@dataclass(frozen=True, eq=False)
class NearestPair:
    """The closest pair of objects and where they are closest (world frame).

    Attributes
    ----------
    distance : float
        Minimum distance over the pairs searched: 0.0 exactly when some pair
        intersects (``collisionkit.distance``'s exact test); ``inf`` when no pair
        was searched (fewer than two objects, or every pair filtered out), or no
        pair is closer than the ``upper_bound`` asked for.
    object_a, object_b : int
        Insertion-order indices of the pair, object_a < object_b (-1 when
        ``distance`` is inf), as the columns of ``Pairs``.
    names : tuple of str or None
        Their names (None when ``distance`` is inf).
    point_a, point_b : (3,) float64
        Closest points on object_a and on object_b (NaN when inf).
    face_a, face_b : int
        Faces holding them (-1 when inf or not a mesh).
    measured : int
        Pairs measured exactly (the rest were pruned by their box lower bound);
        ``nearest_pair()`` without a name counts its seed pair among them.
    candidates : int
        Pairs whose box lower bound did not exceed the smallest box upper bound
        (``nearest_pair()`` without a name: nor the seed pair's distance).
    """

    distance: float
    object_a: int
    object_b: int
    names: tuple[str, str] | None
    point_a: NDArray[np.float64]
    point_b: NDArray[np.float64]
    face_a: int
    face_b: int
    measured: int
    candidates: int

    def __post_init__(self) -> None:
        self.point_a.flags.writeable = False
        self.point_b.flags.writeable = False


#: Relative slack of the sphere bounds: far above the rounding of a few float64
#: operations on the centres and radii (and of the kernels' own mapping, ~1e-16).
SPHERE_RTOL = 1e-12


def local_sphere(shape: Any, bounds: NDArray[np.float64]) -> NDArray[np.float64]:
    """(4,) bounding sphere (centre, radius) of a shape in its own frame: the centre of
    its local box; the radius the farthest vertex of a mesh (cached per geometry), or
    the box's half diagonal for other shapes. The radius is rounded up by SPHERE_RTOL."""
    c = (bounds[0] + bounds[1]) * 0.5
    vertices = getattr(shape, "vertices", None)
    if vertices is not None and hasattr(shape, "cached"):

        def build() -> float:
            v = np.asarray(vertices, dtype=np.float64)
            return float(np.sqrt(((v - c) ** 2).sum(axis=1)).max()) if v.shape[0] else 0.0

        r = float(shape.cached(("bounding-sphere", tuple(c.tolist())), build))
    else:
        r = float(np.linalg.norm(bounds[1] - bounds[0])) * 0.5
    return np.array([c[0], c[1], c[2], r * (1.0 + SPHERE_RTOL)])


def sphere_bounds(ca, ra, cb, rb) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lower and upper bounds of the distance between whatever two spheres hold (row k of
    a with row k of b): ``|ca - cb| -/+ (ra + rb)``, widened by SPHERE_RTOL of the
    magnitudes involved (so rounding cannot make the lower bound too large)."""
    d = ca - cb
    dist = np.sqrt(np.einsum("ij,ij->i", d, d))
    slack = SPHERE_RTOL * (np.abs(ca).max(axis=1) + np.abs(cb).max(axis=1) + ra + rb + dist)
    return dist - ra - rb - slack, dist + ra + rb + slack


def box_bounds(lo_a, hi_a, lo_b, hi_b) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lower and upper bounds of the distance between whatever the boxes hold.

    Parameters
    ----------
    lo_a, hi_a, lo_b, hi_b : (M, 3) float64
        Box corners, row k of a paired with row k of b.

    Returns
    -------
    lower, upper : (M,) float64
    """
    gap = np.maximum(np.maximum(lo_a - hi_b, lo_b - hi_a), 0.0)
    lower = np.sqrt(np.einsum("ij,ij->i", gap, gap))
    ca, cb = (lo_a + hi_a) * 0.5, (lo_b + hi_b) * 0.5
    d = ca - cb
    ra = np.sqrt(np.einsum("ij,ij->i", hi_a - lo_a, hi_a - lo_a)) * 0.5
    rb = np.sqrt(np.einsum("ij,ij->i", hi_b - lo_b, hi_b - lo_b)) * 0.5
    # NOTE: rounding: 1 + 1e-12 covers the few float64 operations above, so U stays an upper bound
    upper = (np.sqrt(np.einsum("ij,ij->i", d, d)) + ra + rb) * (1.0 + 1e-12)
    # and the lower bound rounds down by as much (never above the true box distance)
    return lower * (1.0 - 1e-12), upper


Measure = Callable[[NDArray[np.int64], NDArray[np.int64], float], tuple]

#: Pairs measured in the first batch; each later batch doubles, up to ``MAX_BATCH``.
#: PERF: 1 first: one probe against a manager usually ends after a pair or two
#: (benchmarks/trimesh_manager.py: 8 first cost 1.9x on 50 probes of a 60-object grid).
FIRST_BATCH = 1
MAX_BATCH = 256
#: Least number of candidates sorted at once (``measure_in_order`` sorts lazily).
SORT_CHUNK = 1024


def pair_measure(shapes_a: Sequence[Any], poses_a: NDArray[np.float64], shapes_b: Sequence[Any],
                 poses_b: NDArray[np.float64]) -> Measure:  # fmt: skip
    """A batched ``measure`` for ``nearest``: pair k is (shapes_a[ii[k]] at poses_a[ii[k]],
    shapes_b[jj[k]] at poses_b[jj[k]]); pairs of the same two shapes go into one batched
    ``collisionkit.distance`` call (one compiled call for all their poses)."""
    from ..query.distance import distance

    def measure(ii: NDArray[np.int64], jj: NDArray[np.int64], upper: float):
        k = ii.shape[0]
        d = np.empty(k)
        pa, pb = np.empty((k, 3)), np.empty((k, 3))
        fa, fb = np.empty(k, _I64), np.empty(k, _I64)
        groups: dict[tuple[int, int], list[int]] = {}
        for row, (i, j) in enumerate(zip(ii.tolist(), jj.tolist(), strict=True)):
            groups.setdefault((id(shapes_a[i]), id(shapes_b[j])), []).append(row)
        for rows in groups.values():
            r = np.array(rows, dtype=_I64)
            a, b = shapes_a[int(ii[r[0]])], shapes_b[int(jj[r[0]])]
            if len(rows) == 1:  # PERF: one pose pair takes distance's per-call path (same row)
                res = distance(a, b, poses_a[ii[r[0]]], poses_b[jj[r[0]]], upper_bound=upper)
            else:
                res = distance(a, b, np.ascontiguousarray(poses_a[ii[r]]), np.ascontiguousarray(poses_b[jj[r]]), upper_bound=upper)
            d[r] = res.distance
            pa[r], pb[r] = res.point_a, res.point_b
            fa[r], fb[r] = res.face_a, res.face_b
        return d, pa, pb, fa, fb

    return measure


def nearest(
    lo_a: NDArray[np.float64],
    hi_a: NDArray[np.float64],
    lo_b: NDArray[np.float64],
    hi_b: NDArray[np.float64],
    measure: Measure,
    *,
    same: bool,
    allowed: Callable[[NDArray[np.int64], NDArray[np.int64]], NDArray[np.bool_]] | None = None,
    upper_bound: float = math.inf,
    spheres_a: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
    spheres_b: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
) -> tuple[float, int, int, NDArray, NDArray, int, int, int, int]:
    """The pair (i of a, j of b) at the least exact distance, pruned by box bounds.

    Parameters
    ----------
    lo_a, hi_a : (n_a, 3) float64
        World boxes of the first set; ``lo_b, hi_b`` of the second (the same
        arrays when ``same``: then only pairs i < j are searched).
    measure : callable (ii, jj, upper) -> (distance, point_a, point_b, face_a, face_b)
        Exact distances of pairs (ii[k], jj[k]) as (k,), (k, 3), (k, 3), (k,), (k,)
        arrays, ``inf`` where not below ``upper`` (``pair_measure``).
    allowed : callable (ii, jj) -> (k,) bool, optional
        Which candidate pairs may be reported (filters).
    upper_bound : float
        Only distances below it are searched for.
    spheres_a, spheres_b : ((n, 3), (n,)) float64, optional
        World bounding spheres (centres, radii) of each set: the bounds are then the
        tighter of the boxes' and the spheres' (``sphere_bounds``).

    Returns
    -------
    tuple
        (distance, i, j, point_a, point_b, face_a, face_b, measured, candidates);
        i = j = -1 and distance inf when no pair is below ``upper_bound``.

    Pairs are measured in batches in increasing lower-bound order (1, then doubling
    to 256 a batch, each with the best distance so far as its ``upper``); a batch
    holds only pairs whose lower bound is below the best so far. The minimum is the
    brute-force one: a pair left out has a lower bound not below it. Among pairs at
    the same least distance, the first in (lower bound, i, j) order is reported.

    Without ``allowed``, with both sets' spheres and at least ``TREE_MIN_PAIRS`` pairs
    of two sets of more than one object, the pairs come from ``nearest_self``'s box
    tree over both sets joined (filters letting only pairs across them through)
    instead of the block scan.
    """
    n_a, n_b = lo_a.shape[0], lo_b.shape[0]
    if allowed is None and spheres_a is not None and spheres_b is not None and n_a * n_b >= TREE_MIN_PAIRS and (
        same or min(n_a, n_b) > 1
    ):
        return _nearest_by_tree(lo_a, hi_a, lo_b, hi_b, measure, same, upper_bound, spheres_a, spheres_b)
    nan3 = np.full(3, np.nan)
    # PERF: rows of a against all of b by broadcasting (no gathered copies), one pass: a
    # block keeps its pairs whose lower bound is not above the smallest upper bound so far
    # (which only falls), and a last filter applies the final one
    cen_a, cen_b = (lo_a + hi_a) * 0.5, (lo_b + hi_b) * 0.5
    rad_a = np.sqrt(np.einsum("ij,ij->i", hi_a - lo_a, hi_a - lo_a)) * 0.5
    rad_b = np.sqrt(np.einsum("ij,ij->i", hi_b - lo_b, hi_b - lo_b)) * 0.5
    rows = max(1, BLOCK_ROWS // max(n_b, 1))
    cap = float(upper_bound)
    kept_i, kept_j, kept_l = [], [], []
    for i0 in range(0, n_a, rows):
        i1 = min(n_a, i0 + rows)
        gap = np.maximum(np.maximum(lo_a[i0:i1, None] - hi_b[None], lo_b[None] - hi_a[i0:i1, None]), 0.0)
        lower = np.sqrt(np.einsum("ijk,ijk->ij", gap, gap)) * (1.0 - 1e-12)
        d = cen_a[i0:i1, None] - cen_b[None]
        dist = np.sqrt(np.einsum("ijk,ijk->ij", d, d))
        upper = (dist + rad_a[i0:i1, None] + rad_b[None]) * (1.0 + 1e-12)
        if spheres_a is not None and spheres_b is not None:
            d = spheres_a[0][i0:i1, None] - spheres_b[0][None]
            dist = np.sqrt(np.einsum("ijk,ijk->ij", d, d))
            ra, rb = spheres_a[1][i0:i1, None], spheres_b[1][None]
            slack = SPHERE_RTOL * (np.abs(spheres_a[0][i0:i1]).max(axis=1)[:, None] + np.abs(spheres_b[0]).max(axis=1)[None] + ra + rb + dist)
            lower = np.maximum(lower, dist - ra - rb - slack)
            upper = np.minimum(upper, dist + ra + rb + slack)
        if same:
            lower[np.tril_indices(i1 - i0, i0, n_b)] = np.inf  # only pairs i < j
        ii, jj = np.nonzero(lower < cap)
        ii += i0
        if allowed is not None and ii.size:
            ok = allowed(ii, jj)
            ii, jj = ii[ok], jj[ok]
        if not ii.size:
            continue
        cap = min(cap, float(upper[ii - i0, jj].min()))
        low = lower[ii - i0, jj]
        keep = low <= cap
        kept_i.append(ii[keep])
        kept_j.append(jj[keep])
        kept_l.append(low[keep])
    if not kept_i:
        return math.inf, -1, -1, nan3, nan3.copy(), -1, -1, 0, 0
    ci, cj, cl = np.concatenate(kept_i), np.concatenate(kept_j), np.concatenate(kept_l)
    keep = cl <= cap
    return measure_in_order(ci[keep], cj[keep], cl[keep], measure, upper_bound)


#: Pairs from which ``nearest`` (no filter) searches with the box tree, not the block scan.
#: NOTE: below it the scan's few NumPy passes cost less than the tree's kernel calls.
TREE_MIN_PAIRS = 1 << 16


def _nearest_by_tree(lo_a, hi_a, lo_b, hi_b, measure: Measure, same: bool, upper_bound: float, spheres_a, spheres_b):
    """``nearest`` without filters by ``nearest_self``: one set as is; two sets joined
    (a's objects first), with groups and masks that let only the pairs across through."""
    if same:
        n = lo_a.shape[0]
        return nearest_self(lo_a, hi_a, measure, spheres=spheres_a, slots=np.arange(n, dtype=_I64), group=np.ones(n, _I64),
                            mask=np.full(n, -1, _I64), excluded=np.empty(0, _I64), upper_bound=upper_bound)  # fmt: skip
    n_a, n_b = lo_a.shape[0], lo_b.shape[0]
    n = n_a + n_b
    group = np.where(np.arange(n) < n_a, 1, 2).astype(_I64)

    def across(ii: NDArray[np.int64], jj: NDArray[np.int64], upper: float):
        return measure(ii, jj - n_a, upper)  # i < j: i of a, j of b

    res = nearest_self(np.concatenate([lo_a, lo_b]), np.concatenate([hi_a, hi_b]), across,
                       spheres=(np.concatenate([spheres_a[0], spheres_b[0]]), np.concatenate([spheres_a[1], spheres_b[1]])),
                       slots=np.arange(n, dtype=_I64), group=group, mask=3 - group, excluded=np.empty(0, _I64),
                       upper_bound=upper_bound)  # fmt: skip
    d, i, j = res[0], res[1], res[2]
    return (d, i, j - n_a if j >= 0 else -1) + tuple(res[3:])


def nearest_self(
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
    measure: Measure,
    *,
    spheres: tuple[NDArray[np.float64], NDArray[np.float64]],
    slots: NDArray[np.int64],
    group: NDArray[np.int64],
    mask: NDArray[np.int64],
    excluded: NDArray[np.int64],
    upper_bound: float = math.inf,
) -> tuple[float, int, int, NDArray, NDArray, int, int, int, int]:
    """``nearest`` over the pairs i < j of one set, without the all-pairs scan.

    Same answer as ``nearest(lo, hi, lo, hi, measure, same=True, ...)`` with the
    filters below as ``allowed``; the candidates come from a box tree pruned by the
    least upper bound met so far (``kernels.broadphase.nearest``: O(n log n) plus the
    candidates, memory linear in them), then are measured as ``nearest`` does.

    Parameters
    ----------
    lo, hi : (n, 3) float64
        World boxes, insertion order.
    measure : callable
        As for ``nearest``.
    spheres : ((n, 3), (n,)) float64
        World bounding spheres (centres, radii).
    slots : (n,) int64
        Slot of each object; ``group``, ``mask`` (cap,) int64 per slot and
        ``excluded`` the sorted excluded slot-pair keys (``world.filters``): a pair is
        allowed as in ``World.colliding_pairs``.
    upper_bound : float
        Only distances below it are searched for.

    Returns
    -------
    tuple
        As ``nearest``.
    """
    n = lo.shape[0]
    if n < 2:
        return measure_in_order(np.empty(0, _I64), np.empty(0, _I64), np.empty(0), measure, upper_bound)
    tree = kn.nearest_tree(
        np.ascontiguousarray(lo, dtype=np.float64), np.ascontiguousarray(hi, dtype=np.float64),
        np.ascontiguousarray(spheres[0], dtype=np.float64), np.ascontiguousarray(spheres[1], dtype=np.float64),
        np.ascontiguousarray(slots, dtype=_I64), group, mask,
    )  # fmt: skip
    limit = float(upper_bound)
    # PERF: one exact distance first (the leaf pair of least upper bound) makes the
    # tree's pruning radius that distance instead of the loose box/sphere upper bound
    # (100k separated boxes: 745k candidates -> 440, 3x less tree work). Any allowed
    # pair's distance bounds the answer, and the candidates below any such bound are a
    # prefix of the full sorted candidate list, so the answer is unchanged.
    i0, j0, low0, _ = kn.seed_pair(tree, group, mask, excluded)
    if i0 < 0 or not low0 < limit:
        ci, cj, cl, _, _ = kn.nearest_candidates(tree, group, mask, excluded, limit, math.inf, 0, n)
        return measure_in_order(ci, cj, cl, measure, upper_bound)
    seed = measure(np.array([i0], _I64), np.array([j0], _I64), limit)
    d0 = float(seed[0][0])
    reused = False

    def measure_again(ii: NDArray[np.int64], jj: NDArray[np.int64], upper: float):
        # the seed pair's distance is known: below ``upper`` it is the answer the query
        # gives, else inf (the query's answer at or above its upper_bound)
        nonlocal reused
        hit = np.flatnonzero((ii == i0) & (jj == j0))
        if not hit.size:
            return measure(ii, jj, upper)
        reused = True
        rest = np.flatnonzero((ii != i0) | (jj != j0))
        k = ii.shape[0]
        d, pa, pb = np.full(k, math.inf), np.full((k, 3), np.nan), np.full((k, 3), np.nan)
        fa, fb = np.full(k, -1, _I64), np.full(k, -1, _I64)
        if rest.size:
            d[rest], pa[rest], pb[rest], fa[rest], fb[rest] = measure(ii[rest], jj[rest], upper)
        if d0 < upper:
            r = int(hit[0])
            d[r], pa[r], pb[r], fa[r], fb[r] = d0, seed[1][0], seed[2][0], seed[3][0], seed[4][0]
        return d, pa, pb, fa, fb

    if d0 == 0.0:
        res = first_touching(tree, group, mask, excluded, limit, measure_again)
    else:
        ci, cj, cl, _, _ = kn.nearest_candidates(tree, group, mask, excluded, limit, d0, 0, n)
        res = measure_in_order(ci, cj, cl, measure_again, upper_bound)
    return res[:7] + (res[7] + (0 if reused else 1), res[8])


#: Candidate pairs a chunk of ``first_touching`` may hold before its objects stop doubling.
TOUCHING_CHUNK_PAIRS = 1 << 20


def first_touching(tree: tuple, group, mask, excluded, limit: float, measure: Measure) -> tuple:
    """The search's answer when some allowed pair is known to touch (distance 0).

    The candidates are then the pairs whose lower bound is 0, and the answer is the
    first of them in (i, j) order that measures 0 (what ``measure_in_order`` reports
    on them). A pile of n overlapping objects has ~n^2 / 2 such pairs, so they are
    made and measured a few objects i at a time (chunks doubling while they hold
    under ``TOUCHING_CHUNK_PAIRS`` pairs): memory linear in a chunk's pairs.
    """
    n = tree[0].shape[0]
    measured = candidates = 0
    start, step = 0, 1
    while start < n:
        stop = min(n, start + step)
        ci, cj, _, _, _ = kn.nearest_candidates(tree, group, mask, excluded, limit, 0.0, start, stop)
        candidates += int(ci.shape[0])
        order = np.lexsort((cj, ci))
        ci, cj = ci[order], cj[order]
        pos, size = 0, FIRST_BATCH
        while pos < ci.shape[0]:
            end = min(ci.shape[0], pos + size)
            d, pa, pb, fa, fb = measure(ci[pos:end], cj[pos:end], limit)
            measured += end - pos
            hit = np.flatnonzero(d == 0.0)
            if hit.size:
                k = int(hit[0])
                i, j = int(ci[pos + k]), int(cj[pos + k])
                return 0.0, i, j, np.array(pa[k], np.float64), np.array(pb[k], np.float64), int(fa[k]), int(fb[k]), measured, candidates
            pos, size = end, min(2 * size, MAX_BATCH)
        start = stop
        if ci.shape[0] < TOUCHING_CHUNK_PAIRS // 2:
            step *= 2
    raise AssertionError("a pair measured 0 but no candidate pair touches")  # pragma: no cover - see nearest_self


def measure_in_order(
    ci: NDArray[np.int64], cj: NDArray[np.int64], cl: NDArray[np.float64], measure: Measure, upper_bound: float
) -> tuple[float, int, int, NDArray, NDArray, int, int, int, int]:
    """Measure candidate pairs (ci[k], cj[k]) with lower bounds cl[k] exactly, in
    increasing (lower bound, i, j) order, in batches (``nearest`` describes them),
    stopping when the next lower bound is not below the best distance so far.

    Returns ``nearest``'s tuple (``candidates`` is ``ci.shape[0]``).
    """
    nan3 = np.full(3, np.nan)
    total = ci.shape[0]
    if total == 0:
        return math.inf, -1, -1, nan3, nan3.copy(), -1, -1, 0, 0
    # PERF: the search usually ends within the first few pairs, so the candidates are
    # sorted lazily: a prefix of the (lower bound, i, j) order, extended in chunks of
    # at least doubling size, each chunk every remaining pair with a lower bound up
    # to a partition value (ties stay in one chunk, so the prefix is the full sort's)
    rest = (ci, cj, cl)
    pre_i, pre_j, pre_l = np.empty(0, _I64), np.empty(0, _I64), np.empty(0)

    def extend(need: int) -> None:
        nonlocal rest, pre_i, pre_j, pre_l
        while pre_i.shape[0] < need and rest[0].shape[0]:
            ri, rj, rl = rest
            m = max(need - pre_i.shape[0], 2 * pre_i.shape[0], SORT_CHUNK)
            if m >= rl.shape[0]:
                sel = np.ones(rl.shape[0], np.bool_)
            else:
                sel = rl <= np.partition(rl, m - 1)[m - 1]
            ci_, cj_, cl_ = ri[sel], rj[sel], rl[sel]
            order = np.lexsort((cj_, ci_, cl_))  # deterministic: ties by (i, j)
            pre_i = np.concatenate((pre_i, ci_[order]))
            pre_j = np.concatenate((pre_j, cj_[order]))
            pre_l = np.concatenate((pre_l, cl_[order]))
            rest = (ri[~sel], rj[~sel], rl[~sel])

    best = math.inf
    found = (-1, -1, nan3, nan3.copy(), -1, -1)
    measured, pos, size = 0, 0, FIRST_BATCH
    limit = float(upper_bound)
    while pos < total and best > 0.0:
        stop = min(total, pos + size)
        extend(stop)
        take = np.flatnonzero(pre_l[pos:stop] < min(best, limit)) + pos
        if take.size == 0:
            break  # sorted: every later lower bound is at least as large
        d, pa, pb, fa, fb = measure(pre_i[take], pre_j[take], min(best, limit))
        measured += int(take.size)
        k = int(np.argmin(d))  # the first least value: lower-bound order among ties
        if d[k] < best:
            best = float(d[k])
            found = (int(pre_i[take[k]]), int(pre_j[take[k]]), pa[k], pb[k], int(fa[k]), int(fb[k]))
        pos, size = stop, min(2 * size, MAX_BATCH)
    i, j, pa, pb, fa, fb = found
    return best, i, j, np.array(pa, np.float64), np.array(pb, np.float64), fa, fb, measured, int(total)
