"""Broad-phase nearest pair: the closest pair of objects, pruned by box distances.

Two world boxes bound the distance of whatever they hold from both sides:

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
next lower bound is not below the best distance. Pairs are scanned in blocks of
rows, so memory stays bounded for many objects (O(n^2) box arithmetic in NumPy,
O(k) exact queries for the k pairs that survive).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

_I64 = np.int64
#: Box-pair rows evaluated per NumPy block (bounds the scratch memory: ~40 bytes a row).
BLOCK_ROWS = 1 << 21


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
    index : tuple of int
        (i, j), i < j, insertion-order indices of the pair (``(-1, -1)`` when
        ``distance`` is inf).
    names : tuple of str or None
        Their names (None when ``distance`` is inf).
    point_a, point_b : (3,) float64
        Closest points on object i and on object j (NaN when inf).
    face_a, face_b : int
        Faces holding them (-1 when inf or not a mesh).
    measured : int
        Pairs measured exactly (the rest were pruned by their box lower bound).
    candidates : int
        Pairs whose box lower bound did not exceed the smallest box upper bound.
    """

    distance: float
    index: tuple[int, int]
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


def _blocks(n_a: int, n_b: int, same: bool):
    """Row blocks (i, j) of all pairs: i < j when ``same``, else the full n_a x n_b grid."""
    if n_a == 0 or n_b == 0:
        return
    rows = max(1, BLOCK_ROWS // max(n_b, 1))
    for i0 in range(0, n_a, rows):
        i1 = min(n_a, i0 + rows)
        ii = np.repeat(np.arange(i0, i1, dtype=_I64), n_b)
        jj = np.tile(np.arange(n_b, dtype=_I64), i1 - i0)
        if same:
            keep = jj > ii
            ii, jj = ii[keep], jj[keep]
        if ii.size:
            yield ii, jj


Measure = Callable[[NDArray[np.int64], NDArray[np.int64], float], tuple]

#: Pairs measured in the first batch; each later batch doubles, up to ``MAX_BATCH``.
#: PERF: 1 first: one probe against a manager usually ends after a pair or two
#: (benchmarks/trimesh_manager.py: 8 first cost 1.9x on 50 probes of a 60-object grid).
FIRST_BATCH = 1
MAX_BATCH = 256


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
        for r, (i, j) in enumerate(zip(ii.tolist(), jj.tolist(), strict=True)):
            groups.setdefault((id(shapes_a[i]), id(shapes_b[j])), []).append(r)
        for rows in groups.values():
            r = np.array(rows, dtype=_I64)
            a, b = shapes_a[int(ii[r[0]])], shapes_b[int(jj[r[0]])]
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
    """
    n_a, n_b = lo_a.shape[0], lo_b.shape[0]
    # pass 1: the smallest upper bound over the allowed pairs
    cap = float(upper_bound)
    for ii, jj in _blocks(n_a, n_b, same):
        lower, upper = box_bounds(lo_a[ii], hi_a[ii], lo_b[jj], hi_b[jj])
        near = lower < cap
        if allowed is not None and near.any():
            near[near] = allowed(ii[near], jj[near])
        if near.any():
            cap = min(cap, float(upper[near].min()))
    # pass 2: the pairs whose lower bound does not exceed it, in increasing lower-bound order
    kept_i, kept_j, kept_l = [], [], []
    for ii, jj in _blocks(n_a, n_b, same):
        lower, _ = box_bounds(lo_a[ii], hi_a[ii], lo_b[jj], hi_b[jj])
        near = lower <= cap
        if allowed is not None and near.any():
            near[near] = allowed(ii[near], jj[near])
        kept_i.append(ii[near])
        kept_j.append(jj[near])
        kept_l.append(lower[near])
    nan3 = np.full(3, np.nan)
    if not kept_i:
        return math.inf, -1, -1, nan3, nan3.copy(), -1, -1, 0, 0
    ci, cj, cl = np.concatenate(kept_i), np.concatenate(kept_j), np.concatenate(kept_l)
    order = np.lexsort((cj, ci, cl))  # deterministic: ties by (i, j)
    ci, cj, cl = ci[order], cj[order], cl[order]
    best = math.inf
    found = (-1, -1, nan3, nan3.copy(), -1, -1)
    measured, pos, size = 0, 0, FIRST_BATCH
    limit = float(upper_bound)
    while pos < ci.shape[0] and best > 0.0:
        stop = min(ci.shape[0], pos + size)
        take = np.flatnonzero(cl[pos:stop] < min(best, limit)) + pos
        if take.size == 0:
            break  # sorted: every later lower bound is at least as large
        d, pa, pb, fa, fb = measure(ci[take], cj[take], min(best, limit))
        measured += int(take.size)
        k = int(np.argmin(d))  # the first least value: lower-bound order among ties
        if d[k] < best:
            best = float(d[k])
            found = (int(ci[take[k]]), int(cj[take[k]]), pa[k], pb[k], int(fa[k]), int(fb[k]))
        pos, size = stop, min(2 * size, MAX_BATCH)
    i, j, pa, pb, fa, fb = found
    return best, i, j, np.array(pa, np.float64), np.array(pb, np.float64), fa, fb, measured, int(ci.shape[0])
