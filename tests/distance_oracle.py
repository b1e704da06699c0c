"""Brute-force distance oracle in numpy: the minimum over ALL triangle pairs.

Independent of ``kernels.triangle.tri_distance`` in method: segment-segment distances
enumerate candidates (the unconstrained optimum when it lies inside both
segments, and the four endpoint-to-segment distances) instead of Ericson's
clamping; point-triangle distances take the interior projection when inside
and the three edge distances otherwise. Intersecting pairs (the library's
exact test via ``tests.brute.brute_pairs``) give 0. b's triangles enter a's
frame exactly as the library maps them (``tests.brute.mapped_triangles``).
"""

from __future__ import annotations

import numpy as np
from tests.brute import brute_pairs, mapped_triangles


def _point_seg(p, a, b):
    """(..., 3) points p to segments [a, b]: squared distances."""
    d = b - a
    dd = np.einsum("...i,...i->...", d, d)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.einsum("...i,...i->...", p - a, d) / dd
    s = np.where(dd > 0, np.clip(s, 0.0, 1.0), 0.0)
    q = a + s[..., None] * d
    return np.einsum("...i,...i->...", p - q, p - q)


def _seg_seg(p, q, r, s):
    cands = [_point_seg(p, r, s), _point_seg(q, r, s), _point_seg(r, p, q), _point_seg(s, p, q)]
    d1 = q - p
    d2 = s - r
    w = p - r
    a = np.einsum("...i,...i->...", d1, d1)
    b = np.einsum("...i,...i->...", d1, d2)
    c = np.einsum("...i,...i->...", d1, w)
    e = np.einsum("...i,...i->...", d2, d2)
    f = np.einsum("...i,...i->...", d2, w)
    den = a * e - b * b
    ok = den > 1e-12 * np.maximum(a * e, 1e-300)
    with np.errstate(invalid="ignore", divide="ignore"):
        sp = (b * f - c * e) / den
        tp = (a * f - b * c) / den
    inside = ok & (sp >= 0) & (sp <= 1) & (tp >= 0) & (tp <= 1)
    x = p + np.where(inside, sp, 0)[..., None] * d1
    y = r + np.where(inside, tp, 0)[..., None] * d2
    dint = np.einsum("...i,...i->...", x - y, x - y)
    cands.append(np.where(inside, dint, np.inf))
    return np.min(cands, axis=0)


def _point_tri(p, A):
    """p (..., 3) to triangles A (..., 3, 3): squared distances."""
    a, b, c = A[..., 0, :], A[..., 1, :], A[..., 2, :]
    n = np.cross(b - a, c - a)
    nn = np.einsum("...i,...i->...", n, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        k = np.einsum("...i,...i->...", p - a, n) / nn
    f = p - k[..., None] * n
    s0 = np.einsum("...i,...i->...", np.cross(b - a, f - a), n)
    s1 = np.einsum("...i,...i->...", np.cross(c - b, f - b), n)
    s2 = np.einsum("...i,...i->...", np.cross(a - c, f - c), n)
    inside = (nn > 0) & (s0 >= 0) & (s1 >= 0) & (s2 >= 0)
    dface = np.where(inside, k * k * nn, np.inf)
    return np.minimum.reduce([dface, _point_seg(p, a, b), _point_seg(p, b, c), _point_seg(p, c, a)])


def tri_pair_distance2(A, B):
    """Squared distances between triangles A (M, 3, 3) and B (M, 3, 3), pairwise rows,
    assuming they do not intersect."""
    best = np.full(A.shape[0], np.inf)
    for i in range(3):
        best = np.minimum(best, _point_tri(A[:, i], B))
        best = np.minimum(best, _point_tri(B[:, i], A))
        for j in range(3):
            best = np.minimum(best, _seg_seg(A[:, i], A[:, (i + 1) % 3], B[:, j], B[:, (j + 1) % 3]))
    return best


def brute_distance(a, b, pose_a=None, pose_b=None) -> tuple[float, int, int]:
    """(distance, face_a, face_b) for ONE pose pair by brute force over all pairs."""
    if len(brute_pairs(a, b, pose_a, pose_b)):
        return 0.0, -1, -1
    A = np.asarray(a.triangles)
    B = mapped_triangles(b, pose_a, pose_b)
    fa, fb = A.shape[0], B.shape[0]
    best, arg = np.inf, (-1, -1)
    chunk = max(1, 200_000 // fb)
    for s in range(0, fa, chunk):
        ia = np.repeat(np.arange(s, min(fa, s + chunk)), fb)
        ib = np.tile(np.arange(fb), min(fa, s + chunk) - s)
        d2 = tri_pair_distance2(A[ia], B[ib])
        k = int(np.argmin(d2))
        if d2[k] < best:
            best, arg = float(d2[k]), (int(ia[k]), int(ib[k]))
    return float(np.sqrt(best)), arg[0], arg[1]
