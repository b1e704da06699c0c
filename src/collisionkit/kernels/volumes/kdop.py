"""k-DOPs (discrete oriented polytopes, Klosowski et al. 1998; seed 001 2.2.3).

A k-DOP is the intersection of k/2 slabs min_j <= n_j . x <= max_j over fixed
normals shared by every node, so two k-DOPs in the same frame overlap iff every
pair of intervals overlaps (k/2 interval tests, seed 001 "Schnitte von k-Dops").

Normals (integer, not normalised: projections and the interval test need no
unit length, and integer normals make every 3x3 determinant below exact):

* kdop6: the axes (an AABB);
* kdop14: + the 4 cube diagonals (1, +-1, +-1);
* kdop18: + the 6 edge diagonals (1, +-1, 0), (1, 0, +-1), (0, 1, +-1);
* kdop26: all 13.

Node row (constants.BV_WIDTH): m = k/2 minima, m maxima, a point count c, then
KDOP_POINTS[k] = 2k - 4 point slots (3 floats each).

Rotations (seed 001 "Dynamisches Szenario"): the normals are fixed, so a k-DOP
of b does not survive b's rotation into a's frame; it is recomputed from points
whose convex hull contains the node's geometry. The seed uses the k-DOP's own
vertices ("Benutze die Eckpunkte des originalen k-DOPs"); here each node keeps
whichever is fewer: the distinct vertices of its triangles (leaves and small
nodes: exact hull superset, so the recomputed k-DOP is the tightest possible)
or the vertices of its k-DOP (at most 2k - 4 by Euler's formula V <= 2F - 4).
Memory: (k + 1 + 3 (2k - 4)) floats a node = 8 + 3 * 8 * 3 ... i.e. 33 (k=6),
87 (14), 115 (18), 171 (26) float64s = 264 / 696 / 920 / 1368 bytes a node,
against 48 for an AABB and 120 for an OBB.

Recomputing costs c * (k/2) dot products (n_j' = R^T n_j once per normal,
then n_j . (R p + t) = n_j' . p + n_j . t); a pure translation (R == I
exactly) only shifts the intervals and costs no update. Intervals are tested
one normal at a time, so a separating normal ends the recompute early.

Conservativeness: the vertices of a node's k-DOP are computed for slabs
widened by a relative 2**-36 (far above the ~1e-15 error of the 3x3 solves,
so the hull of the computed vertices contains the true k-DOP; the support
function argument: moving each vertex by eps shrinks the hull by at most eps),
and the overlap test widens every interval by slack * |n_j|_1.
"""

from __future__ import annotations

import numpy as np

from ..core.jit import njit, njit_internal

#: The 13 normals: 0-2 axes, 3-6 cube diagonals, 7-12 edge diagonals.
NORMALS = np.array(
    [
        [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0],
        [1.0, 1.0, 1.0], [1.0, -1.0, 1.0], [1.0, 1.0, -1.0], [1.0, -1.0, -1.0],
        [1.0, 1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 0.0, 1.0], [1.0, 0.0, -1.0], [0.0, 1.0, 1.0], [0.0, 1.0, -1.0],
    ]
)  # fmt: skip
#: Which of the 13 normals each k uses, in row order (axes first: columns 0-2
#: of every row are the node's AABB minima and maxima start at column m).
_SETS = np.array(
    [
        [0, 1, 2, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1],
        [0, 1, 2, 3, 4, 5, 6, -1, -1, -1, -1, -1, -1],
        [0, 1, 2, 7, 8, 9, 10, 11, 12, -1, -1, -1, -1],
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    ]
)  # fmt: skip
#: Widening of the slabs before their vertices are computed (relative to the node size).
_WIDEN = 2.0**-36


@njit_internal(nogil=True)
def kdop_k(kind):
    """k of a k-DOP volume code (3 -> 6, 4 -> 14, 5 -> 18, 6 -> 26)."""
    return 6 if kind == 3 else (14 if kind == 4 else (18 if kind == 5 else 26))


@njit_internal(nogil=True)
def _set_row(k):
    """Row of _SETS for k (6, 14, 18, 26 -> 0, 1, 2, 3)."""
    return 0 if k == 6 else (1 if k == 14 else (2 if k == 18 else 3))


@njit(cache=True, nogil=True)
def kdop_width(k):
    return k + 1 + 3 * (2 * k - 4)


@njit(cache=True, nogil=True)
def kdop_vertices(lo, hi, k, out):
    """Vertices of the k-DOP {x : lo_j <= n_j . x <= hi_j} (lo, hi: (m,) arrays over
    this k's normals) widened by _WIDEN of its size, into out (rows); returns their
    count, or -1 when more than 2k - 4 came out (the caller then stores the box corners)."""
    m = k // 2
    row = _set_row(k)
    size = 0.0
    for j in range(m):
        size = max(size, abs(lo[j]), abs(hi[j]))
    w = _WIDEN * size + 1e-300
    cap = out.shape[0]
    tol = 0.25 * w
    dedup = 1e-3 * w
    count = 0
    for a in range(m):
        na = NORMALS[_SETS[row, a]]
        for b in range(a + 1, m):
            nb = NORMALS[_SETS[row, b]]
            for c in range(b + 1, m):
                nc = NORMALS[_SETS[row, c]]
                det = (
                    na[0] * (nb[1] * nc[2] - nb[2] * nc[1])
                    - na[1] * (nb[0] * nc[2] - nb[2] * nc[0])
                    + na[2] * (nb[0] * nc[1] - nb[1] * nc[0])
                )
                if det == 0.0:  # integer normals: exact
                    continue
                for side in range(8):
                    da = hi[a] + w if side & 1 else lo[a] - w
                    db = hi[b] + w if side & 2 else lo[b] - w
                    dc = hi[c] + w if side & 4 else lo[c] - w
                    # Cramer: x = (da (nb x nc) + db (nc x na) + dc (na x nb)) / det
                    x0 = (
                        da * (nb[1] * nc[2] - nb[2] * nc[1])
                        + db * (nc[1] * na[2] - nc[2] * na[1])
                        + dc * (na[1] * nb[2] - na[2] * nb[1])
                    ) / det
                    x1 = (
                        da * (nb[2] * nc[0] - nb[0] * nc[2])
                        + db * (nc[2] * na[0] - nc[0] * na[2])
                        + dc * (na[2] * nb[0] - na[0] * nb[2])
                    ) / det
                    x2 = (
                        da * (nb[0] * nc[1] - nb[1] * nc[0])
                        + db * (nc[0] * na[1] - nc[1] * na[0])
                        + dc * (na[0] * nb[1] - na[1] * nb[0])
                    ) / det
                    inside = True
                    for j in range(m):
                        nj = NORMALS[_SETS[row, j]]
                        p = nj[0] * x0 + nj[1] * x1 + nj[2] * x2
                        if p < lo[j] - w - tol or p > hi[j] + w + tol:
                            inside = False
                            break
                    if not inside:
                        continue
                    dup = False
                    for q in range(count):
                        if (
                            abs(out[q, 0] - x0) <= dedup
                            and abs(out[q, 1] - x1) <= dedup
                            and abs(out[q, 2] - x2) <= dedup
                        ):
                            dup = True
                            break
                    if dup:
                        continue
                    if count == cap:
                        return -1
                    out[count, 0] = x0
                    out[count, 1] = x1
                    out[count, 2] = x2
                    count += 1
    return count


@njit_internal(nogil=True)
def fit_kdop(tris, idx, s, e, k, out, lo, hi, verts):
    """k-DOP of triangles idx[s:e] into the row ``out`` (see the module doc).

    ``lo``, ``hi`` (>= 13) and ``verts`` (>= 2k - 4 rows) are scratch.
    """
    m = k // 2
    row = _set_row(k)
    cap = 2 * k - 4
    for j in range(m):
        lo[j] = np.inf
        hi[j] = -np.inf
    for q in range(s, e):
        i = idx[q]
        for v in range(3):
            x = tris[i, v, 0]
            y = tris[i, v, 1]
            z = tris[i, v, 2]
            for j in range(m):
                nj = NORMALS[_SETS[row, j]]
                p = nj[0] * x + nj[1] * y + nj[2] * z
                lo[j] = min(lo[j], p)
                hi[j] = max(hi[j], p)
    for j in range(m):
        out[j] = lo[j]
        out[m + j] = hi[j]
    # Points: the distinct triangle vertices while they fit, else the k-DOP's vertices.
    count = 0
    fits = True
    for q in range(s, e):
        i = idx[q]
        for v in range(3):
            x = tris[i, v, 0]
            y = tris[i, v, 1]
            z = tris[i, v, 2]
            dup = False
            for r in range(count):
                if verts[r, 0] == x and verts[r, 1] == y and verts[r, 2] == z:
                    dup = True
                    break
            if dup:
                continue
            if count == cap:
                fits = False
                break
            verts[count, 0] = x
            verts[count, 1] = y
            verts[count, 2] = z
            count += 1
        if not fits:
            break
    if not fits:
        count = kdop_vertices(lo, hi, k, verts)
        if count < 0:
            # More vertices than a k-DOP can have (numerical duplicates): the
            # corners of its (widened) box contain it.
            size = 0.0
            for j in range(3):
                size = max(size, abs(lo[j]), abs(hi[j]))
            w = _WIDEN * size + 1e-300
            count = 8
            for c in range(8):
                verts[c, 0] = hi[0] + w if c & 1 else lo[0] - w
                verts[c, 1] = hi[1] + w if c & 2 else lo[1] - w
                verts[c, 2] = hi[2] + w if c & 4 else lo[2] - w
    out[k] = count
    for r in range(count):
        out[k + 1 + 3 * r] = verts[r, 0]
        out[k + 2 + 3 * r] = verts[r, 1]
        out[k + 3 + 3 * r] = verts[r, 2]
    for r in range(count, cap):
        out[k + 1 + 3 * r] = 0.0
        out[k + 2 + 3 * r] = 0.0
        out[k + 3 + 3 * r] = 0.0


@njit_internal(nogil=True)
def kdop_size(bv, i, m):
    """Half the sum of the three axis extents (the descent's "larger node" measure)."""
    return 0.5 * ((bv[i, m] - bv[i, 0]) + (bv[i, m + 1] - bv[i, 1]) + (bv[i, m + 2] - bv[i, 2]))


@njit_internal(nogil=True)
def overlap_kdop_kdop(k, R, t, bv_a, ia, bv_b, ib, slack):
    """Do a's k-DOP and b's k-DOP (b's node moved by R, t into a's frame) overlap?

    Returns (hit, updated): updated = 1 when b's k-DOP had to be recomputed
    from its points (a rotation), 0 for a pure translation (intervals shift).
    Conservative: each interval is widened by slack * |n_j|_1 on both sides.
    """
    m = k // 2
    row = _set_row(k)
    translation_only = (
        R[0] == 1.0 and R[4] == 1.0 and R[8] == 1.0
        and R[1] == 0.0 and R[2] == 0.0 and R[3] == 0.0 and R[5] == 0.0 and R[6] == 0.0 and R[7] == 0.0
    )  # fmt: skip
    count = np.int64(bv_b[ib, k])
    for j in range(m):
        nrow = _SETS[row, j]
        n0 = NORMALS[nrow, 0]
        n1 = NORMALS[nrow, 1]
        n2 = NORMALS[nrow, 2]
        shift = n0 * t[0] + n1 * t[1] + n2 * t[2]
        pad = slack * (abs(n0) + abs(n1) + abs(n2))
        if translation_only:
            blo = bv_b[ib, j] + shift
            bhi = bv_b[ib, m + j] + shift
        else:
            # n . (R p + t) = (R^T n) . p + n . t
            r0 = R[0] * n0 + R[3] * n1 + R[6] * n2
            r1 = R[1] * n0 + R[4] * n1 + R[7] * n2
            r2 = R[2] * n0 + R[5] * n1 + R[8] * n2
            blo = np.inf
            bhi = -np.inf
            for q in range(count):
                c = k + 1 + 3 * q
                p = r0 * bv_b[ib, c] + r1 * bv_b[ib, c + 1] + r2 * bv_b[ib, c + 2]
                blo = min(blo, p)
                bhi = max(bhi, p)
            blo += shift
            bhi += shift
        if blo > bv_a[ia, m + j] + pad or bhi < bv_a[ia, j] - pad:
            return False, 0 if translation_only else 1
    return True, 0 if translation_only else 1


@njit(cache=True, nogil=True)
def transform_kdop(k, R, t, row_in, out):
    """b's k-DOP moved by (R, t): its intervals recomputed from its points (out: (k,) minima then maxima)."""
    m = k // 2
    setr = _set_row(k)
    count = np.int64(row_in[k])
    for j in range(m):
        n = NORMALS[_SETS[setr, j]]
        lo = np.inf
        hi = -np.inf
        for q in range(count):
            c = k + 1 + 3 * q
            x = R[0] * row_in[c] + R[1] * row_in[c + 1] + R[2] * row_in[c + 2] + t[0]
            y = R[3] * row_in[c] + R[4] * row_in[c + 1] + R[5] * row_in[c + 2] + t[1]
            z = R[6] * row_in[c] + R[7] * row_in[c + 1] + R[8] * row_in[c + 2] + t[2]
            p = n[0] * x + n[1] * y + n[2] * z
            lo = min(lo, p)
            hi = max(hi, p)
        out[j] = lo
        out[m + j] = hi


@njit(cache=True, nogil=True)
def merge_kdops(k, a, b, out):
    """Intervals of the smallest k-DOP containing k-DOPs a and b (rows of minima then maxima)."""
    m = k // 2
    for j in range(m):
        out[j] = min(a[j], b[j])
        out[m + j] = max(a[m + j], b[m + j])
