"""The largest box inside a convex polyhedron (seed 003, section 4).

For P = {v : A v <= b}, the axis-aligned box [l, u] lies in P iff every
corner does, i.e. iff A+ u - A- l <= b with A+ = max(A, 0), A- = max(-A, 0)
(the worst corner of each row picks u where the row is positive and l where
it is negative). The seed maximises the volume prod(u - l) with KNITRO; taking
the logarithm makes the objective concave and the problem convex:

    maximise  sum_i log(u_i - l_i)   subject to   A+ u - A- l <= b.

We solve it with a small dedicated barrier (interior-point) method: six
unknowns, damped Newton steps on t * (-sum log(u - l)) - sum log(b - A+ u + A- l),
t multiplied by 50 until the duality gap m / t is below 1e-12 of the scale
(Boyd & Vandenberghe 2004, 11.3). It starts from a cube inside the Chebyshev
ball (one ``scipy.optimize.linprog`` call). At the optimum m / t bounds the
gap of the log-volume, so the volume is within a relative 1e-12 of the best.

The *oriented* version solves the same problem in the polyhedron's principal
frame (eigenvectors of the covariance of its triangle vertices, seed
section 5), which is the frame of the double hierarchy's nodes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InvalidMeshError


class OrientedBox(NamedTuple):
    """A box: ``centre`` (3,), ``axes`` (3, 3) rows = unit axes (a rotation), ``half_extents`` (3,).

    A point x is in the box iff |axes @ (x - centre)| <= half_extents.
    """

    centre: NDArray[np.float64]
    axes: NDArray[np.float64]
    half_extents: NDArray[np.float64]

    @property
    def volume(self) -> float:
        return float(np.prod(2.0 * self.half_extents))

    def corners(self) -> NDArray[np.float64]:
        """(8, 3) corners."""
        s = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)
        return self.centre + (s * self.half_extents) @ self.axes


def largest_box(
    A: ArrayLike, b: ArrayLike, *, rel_gap: float = 1e-12
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The axis-aligned box [lo, hi] of largest volume inside {v : A v <= b}.

    Parameters
    ----------
    A : (m, 3), b : (m,)
        A bounded polyhedron with an interior.

    Returns
    -------
    (lo, hi) : two (3,) float64 arrays.

    Raises
    ------
    InvalidMeshError
        The polyhedron is empty, flat or unbounded.
    """
    from scipy.optimize import linprog

    A = np.asarray(A, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if A.ndim != 2 or A.shape[1] != 3 or b.shape != (A.shape[0],):
        raise ValueError(f"A must be (m, 3) and b (m,), got {A.shape} and {b.shape}")
    norms = np.linalg.norm(A, axis=1)
    # Chebyshev centre: max r s.t. A x + r |A_i| <= b
    res = linprog(
        c=[0, 0, 0, -1.0], A_ub=np.column_stack([A, norms]), b_ub=b,
        bounds=[(None, None)] * 3 + [(0, None)], method="highs",
    )  # fmt: skip
    if res.status != 0 or res.x[3] <= 0:
        raise InvalidMeshError("the polyhedron has no interior (or is unbounded)")
    x0, r = res.x[:3], res.x[3]
    h = 0.5 * r / np.sqrt(3.0)
    z = np.concatenate([x0 + h, x0 - h])  # (u, l)
    Ap = np.maximum(A, 0.0)
    Am = np.maximum(-A, 0.0)
    C = np.hstack([Ap, -Am])  # C z <= b
    D = np.hstack([np.eye(3), -np.eye(3)])  # widths w = D z
    m = A.shape[0]
    t = 1.0
    scale = max(np.abs(b).max(), 1.0)
    stalled = False
    best = z.copy()
    for _outer in range(60):
        prev_dec = np.inf
        for _newton in range(100):
            w = D @ z
            s = b - C @ z
            gw = -1.0 / w
            gs = 1.0 / s
            grad = t * (D.T @ gw) + C.T @ gs
            H = t * (D.T * (1.0 / w**2)) @ D + (C.T * gs**2) @ C
            try:
                step = -np.linalg.solve(H, grad)
            except np.linalg.LinAlgError:
                stalled = True
                break
            dec = -grad @ step
            if not np.isfinite(dec):
                stalled = True
                break
            if dec / 2.0 <= 1e-11 or (dec < 1e-6 and dec >= prev_dec):
                break  # centred, or round-off stopped the decrease
            prev_dec = dec
            # Damped Newton (the barrier is self-concordant: the step
            # 1 / (1 + lambda) stays feasible and decreases it, Nesterov &
            # Nemirovski); pure Newton steps once lambda is small. No function
            # values compared, so round-off at large t cannot stall it.
            lam = np.sqrt(max(dec, 0.0))
            alpha = 1.0 / (1.0 + lam) if lam > 0.25 else 1.0
            while alpha > 1e-20:
                zn = z + alpha * step
                if ((D @ zn) > 0).all() and ((b - C @ zn) > 0).all():
                    break
                alpha *= 0.5
            z = z + alpha * step
        if stalled:
            z = best  # the last centred point: round-off ended the path here
            break
        best = z.copy()
        if m / t < rel_gap * min(1.0, 1.0 / scale):
            break
        t *= 50.0
    hi, lo = z[:3].copy(), z[3:].copy()
    return lo, hi


def principal_frame(triangles: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(mean, axes) of the triangle vertices (seed 003, section 5): axes rows are the
    covariance eigenvectors, largest eigenvalue first, right-handed."""
    v = np.asarray(triangles, dtype=np.float64).reshape(-1, 3)
    mu = v.mean(axis=0)
    d = v - mu
    C = d.T @ d / v.shape[0]
    w, vec = np.linalg.eigh(C)
    axes = vec[:, ::-1].T.copy()
    axes[2] = np.cross(axes[0], axes[1])
    return mu, axes


def inscribed_box(shape) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The largest axis-aligned box (shape frame) inside a convex shape's half-spaces: (lo, hi)."""
    A, b = shape.halfspaces
    return largest_box(A, b)


def inscribed_box_oriented(shape, axes: ArrayLike | None = None) -> OrientedBox:
    """The largest box aligned with ``axes`` (default: the shape's principal frame)
    inside the convex shape's half-spaces."""
    A, b = shape.halfspaces
    if axes is None:
        _, axes = principal_frame(shape.mesh.triangles)
    return largest_box_in_frame(A, b, np.asarray(axes, dtype=np.float64))


def largest_box_in_frame(A: ArrayLike, b: ArrayLike, axes: NDArray[np.float64]) -> OrientedBox:
    """Largest box with the given axes (rows) inside {v : A v <= b}: with x = axes^T y,
    the problem in y is the axis-aligned one for A axes^T."""
    A = np.asarray(A, dtype=np.float64)
    lo, hi = largest_box(A @ axes.T, np.asarray(b, dtype=np.float64))
    centre_y = (lo + hi) / 2.0
    return OrientedBox(axes.T @ centre_y, axes.copy(), (hi - lo) / 2.0)
