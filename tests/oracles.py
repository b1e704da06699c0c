"""Exact reference oracles used by the whole test suite.

Pure Python, independent of the numba kernels: every float64 input is
converted exactly with ``Fraction(float)`` and every decision is made in
rational arithmetic, so these functions define the right answer for the
kernels' tests. They are slow (milliseconds per call): use them on test-sized
inputs only.

* :func:`orient2d_rational`, :func:`orient3d_rational` -- exact signs of the
  orientation determinants, same conventions as
  ``collisionkit.kernels.core.predicates``.
* :func:`tri_tri_rational` -- do two closed triangles (possibly degenerate)
  share a point? Coordinates may be floats or Fractions (exact world coordinates).
* :func:`map_points` -- b's vertices in a's frame with the arithmetic ARCHITECTURE.md
  states for the library (own numpy code; shared with ``benchmarks/referee.py``).

(A brute-force mesh-mesh oracle will be added here later; keep this module
importable as ``from tests.oracles import ...``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from itertools import combinations

import numpy as np

Point = Sequence[float]


def _frac(p: Point) -> tuple[Fraction, ...]:
    return tuple(c if isinstance(c, Fraction) else Fraction(float(c)) for c in p)


def _sign(x: Fraction) -> int:
    return (x > 0) - (x < 0)


def orient2d_rational(a: Point, b: Point, c: Point) -> int:
    """Exact sign of (b - a) x (c - a) for 2-D points: +1 counter-clockwise."""
    ax, ay = _frac(a)
    bx, by = _frac(b)
    cx, cy = _frac(c)
    return _sign((bx - ax) * (cy - ay) - (by - ay) * (cx - ax))


def orient3d_rational(a: Point, b: Point, c: Point, d: Point) -> int:
    """Exact sign of ((b - a) x (c - a)) . (d - a) for 3-D points."""
    A, B, C, D = _frac(a), _frac(b), _frac(c), _frac(d)
    u = [B[i] - A[i] for i in range(3)]
    v = [C[i] - A[i] for i in range(3)]
    w = [D[i] - A[i] for i in range(3)]
    n = (
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
    )
    return _sign(n[0] * w[0] + n[1] * w[1] + n[2] * w[2])


def _solve_columns(rows: list[list[Fraction]], cols: tuple[int, ...], rhs: list[Fraction]):
    """Unique solution of A[:, cols] x = rhs, or None.

    None when the chosen columns are linearly dependent or the system is
    inconsistent. Gaussian elimination over Fractions, exact.
    """
    k = len(cols)
    m = [[row[c] for c in cols] + [r] for row, r in zip(rows, rhs, strict=True)]
    n_rows = len(m)
    for c in range(k):
        piv = next((r for r in range(c, n_rows) if m[r][c] != 0), None)
        if piv is None:
            return None  # column c depends on the previous ones
        m[c], m[piv] = m[piv], m[c]
        inv = 1 / m[c][c]
        m[c] = [v * inv for v in m[c]]
        for r in range(n_rows):
            if r != c and m[r][c] != 0:
                f = m[r][c]
                m[r] = [v - f * w for v, w in zip(m[r], m[c], strict=True)]
    if any(m[r][k] != 0 for r in range(k, n_rows)):
        return None  # inconsistent
    return [m[r][k] for r in range(k)]


def tri_tri_rational(t1: Sequence[Point], t2: Sequence[Point]) -> bool:
    """Exact: do the closed triangles t1 and t2 (3 x 3 each) share a point?

    The triangles (degenerate ones included: they are the segment or point
    their vertices span) meet iff there are lambda, mu in the 2-simplex with
    sum_i lambda_i P_i = sum_j mu_j Q_j: the LP feasibility problem

        sum_i lambda_i P_i - sum_j mu_j Q_j = 0   (3 rows)
        sum_i lambda_i = 1,  sum_j mu_j = 1       (2 rows)
        lambda, mu >= 0                           (6 unknowns).

    A feasible LP has a basic feasible solution, whose support columns are
    linearly independent; so the problem is feasible iff for some set S of
    linearly independent columns (|S| <= 5) the unique solution of
    A_S x = b exists and is >= 0. All 62 column sets are tried, exactly.
    """
    P = [_frac(p) for p in t1]
    Q = [_frac(q) for q in t2]
    # exact pre-filter: disjoint bounding boxes
    for k in range(3):
        if max(p[k] for p in P) < min(q[k] for q in Q) or max(q[k] for q in Q) < min(p[k] for p in P):
            return False
    one, zero = Fraction(1), Fraction(0)
    rows = [[p[k] for p in P] + [-q[k] for q in Q] for k in range(3)]
    rows.append([one, one, one, zero, zero, zero])
    rows.append([zero, zero, zero, one, one, one])
    rhs = [zero, zero, zero, one, one]
    for size in range(2, 6):
        for cols in combinations(range(6), size):
            # both simplex rows need a lambda and a mu in the support
            if cols[0] > 2 or cols[-1] < 3:
                continue
            x = _solve_columns(rows, cols, rhs)
            if x is not None and all(v >= 0 for v in x):
                return True
    return False


def map_points(Ta, Tb, pts: np.ndarray) -> np.ndarray:
    """(..., 3) points of b mapped into a's frame: ``R_a^T R_b p + R_a^T (t_b - t_a)``.

    Own arithmetic (numpy elementwise: one rounding per product and per sum, no FMA), in
    the order ARCHITECTURE.md states: ``R[i, j] = A[0,i] B[0,j] + A[1,i] B[1,j] + A[2,i] B[2,j]``,
    ``t[i] = A[0,i] dx + A[1,i] dy + A[2,i] dz``, ``p'_i = R[i,0] x + R[i,1] y + R[i,2] z + t[i]``.
    """
    A = np.asarray(Ta, dtype=np.float64)
    B = np.asarray(Tb, dtype=np.float64)
    d = [B[k, 3] - A[k, 3] for k in range(3)]
    R = [[A[0, i] * B[0, j] + A[1, i] * B[1, j] + A[2, i] * B[2, j] for j in range(3)] for i in range(3)]
    t = [A[0, i] * d[0] + A[1, i] * d[1] + A[2, i] * d[2] for i in range(3)]
    p = np.asarray(pts, dtype=np.float64)
    x, y, z = p[..., 0], p[..., 1], p[..., 2]
    out = np.empty(p.shape)
    for i in range(3):
        out[..., i] = R[i][0] * x + R[i][1] * y + R[i][2] * z + t[i]
    return out
