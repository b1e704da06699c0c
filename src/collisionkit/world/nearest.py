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
them), and measures them exactly in increasing lower-bound order, each with the
best distance so far as the measuring query's ``upper_bound``; it stops when the
next lower bound is not below the best distance. Pairs are scanned in blocks of
rows, so memory stays bounded for many objects (O(n^2) box arithmetic in NumPy,
O(k) exact queries for the k pairs that survive).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

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


def nearest(
    lo_a: NDArray[np.float64],
    hi_a: NDArray[np.float64],
    lo_b: NDArray[np.float64],
    hi_b: NDArray[np.float64],
    measure: Callable[[int, int, float], tuple[float, NDArray, NDArray, int, int]],
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
    measure : callable (i, j, upper) -> (distance, point_a, point_b, face_a, face_b)
        Exact distance of a pair, ``inf`` when not below ``upper``.
    allowed : callable (ii, jj) -> (k,) bool, optional
        Which candidate pairs may be reported (filters).
    upper_bound : float
        Only distances below it are searched for.

    Returns
    -------
    tuple
        (distance, i, j, point_a, point_b, face_a, face_b, measured, candidates);
        i = j = -1 and distance inf when no pair is below ``upper_bound``.
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
    best = math.inf
    found = (-1, -1, nan3, nan3.copy(), -1, -1)
    measured = 0
    for k in order.tolist():
        lb = float(cl[k])
        if lb >= best or lb >= upper_bound:
            break
        i, j = int(ci[k]), int(cj[k])
        d, pa, pb, fa, fb = measure(i, j, min(best, upper_bound))
        measured += 1
        if d < best:
            best = d
            found = (i, j, pa, pb, fa, fb)
            if best == 0.0:
                break
    i, j, pa, pb, fa, fb = found
    return best, i, j, np.asarray(pa, np.float64), np.asarray(pb, np.float64), fa, fb, measured, int(ci.shape[0])
