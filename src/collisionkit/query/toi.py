"""Time of impact of two moving meshes: ``collisionkit.time_of_impact``.

Conservative advancement over the BVHs (``kernels.proximity.toi``): never reports a
time after the first contact of the motion, never steps over a thin wall.
Each node pair of the two trees advances by its own directional motion bound
(C2A, Tang et al. 2009) and the step is the smallest over all triangle pairs.
Motions (per object, from its start pose to its end pose over t in [0, 1]):

* ``"linear"``: the object's origin moves on a straight line at constant
  speed while its orientation turns at a constant rate about a fixed axis
  (through the origin of the object): R(t) = R0 Rot(k, t theta);
* ``"screw"``: the constant-twist rigid motion T(t) = T0 exp(t log(T0^-1 T1))
  (a rotation about a fixed line combined with a slide along it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..bvh import tree_for
from ..geometry.pose import as_poses
from ..kernels.proximity.toi import MOTION_LINEAR, MOTION_SCREW, MR_WIDTH, TOI_CAP, TOI_HIT, motion_row, toi_solve
from . import scaling
from .engine import pose_error
from .results import TimeOfImpact
from .shapes import as_meshes

_EYE = np.eye(4)
MOTIONS = {"linear": MOTION_LINEAR, "screw": MOTION_SCREW}
#: Default contact tolerance, relative to the sum of the two meshes' radii.
TOI_REL_TOLERANCE = 1e-6
#: Relative mode of the smallest-step search (kernels.proximity.toi.min_step): 1 finds the
#: smallest step. NOTE: 0.7, 0.5, 0.3 measured 1.6x, 2x, 2.7x slower on the
#: benchmark scenes (fewer node pairs per step, more steps).
TOI_SHRINK = 1.0
#: Default cap on conservative-advancement steps.
TOI_MAX_ITERATIONS = 10_000


def _one_pose(pose: Any, name: str) -> np.ndarray:
    if pose is None:
        return _EYE
    stack, batched = as_poses(pose, name)
    if batched:
        raise ValueError(f"{name} must be one (4, 4) pose")
    return stack[0]


def motion_parameters(T0: np.ndarray, T1: np.ndarray, motion: int) -> tuple[np.ndarray, float, np.ndarray]:
    """(axis k (3,), angle theta, linear part u (3,)) of the motion from T0 to T1 (``kernels.proximity.toi.pose_at``)."""
    row = np.empty(MR_WIDTH)
    T0 = np.ascontiguousarray(T0, dtype=np.float64).reshape(4, 4)
    T1 = np.ascontiguousarray(T1, dtype=np.float64).reshape(4, 4)
    motion_row(T0, T1, np.int64(motion), row)
    return row[0:3].copy(), float(row[3]), row[4:7].copy()


def mesh_radius(mesh) -> float:
    """Largest distance of a vertex from the mesh's origin (cached).

    Computed on coordinates scaled by a power of two (exact) so that the
    squares neither overflow nor underflow at any scale.
    """

    def build() -> float:
        v = np.asarray(mesh.triangles).reshape(-1, 3)
        big = float(np.abs(v).max()) if v.size else 0.0
        e = math.frexp(big)[1] if big > 0.0 else 0
        return math.ldexp(float(np.sqrt((np.ldexp(v, -e) ** 2).sum(1)).max()), e)

    return mesh.cached(("origin-radius",), build)


def time_of_impact(
    a: Any,
    b: Any,
    start_a: Any,
    end_a: Any,
    start_b: Any,
    end_b: Any,
    *,
    motion: str = "linear",
    tolerance: float | None = None,
    max_iterations: int = TOI_MAX_ITERATIONS,
) -> TimeOfImpact:
    """First time in [0, 1] at which mesh a moving from ``start_a`` to ``end_a``
    comes into contact with mesh b moving from ``start_b`` to ``end_b``.

    Parameters
    ----------
    a, b : Mesh or convex shape
        A convex shape moves as its surface ``.mesh`` (``query/shapes.py``; a smooth
        primitive against another convex shape raises ``UnsupportedQueryError``).
    start_a, end_a, start_b, end_b : array_like (4, 4) or None
        World-from-object rigid poses at t = 0 and t = 1 (None = identity).
    motion : {"linear", "screw"}
        How poses are interpolated (module notes).
    tolerance : float, optional
        Contact distance: the advancement stops (a hit) when the meshes are
        within it; no hit certifies they stay more than tolerance / 2 apart
        over the whole motion. Default 1e-6 * (r_a + r_b), r = largest vertex
        distance from the mesh's origin.
    max_iterations : int
        Cap on advancement steps (``converged`` is False when it stops them;
        ``t`` is then still before any contact and ``hit`` is True).

    Returns
    -------
    TimeOfImpact
        ``t`` never exceeds the true first-contact time of the motion; at
        ``t`` the meshes are within ``tolerance`` (``distance``, exact), and
        ``face_a``, ``face_b`` are the closest (first contacting) pair.
        Without a hit, ``t`` = 1, the poses are the end poses and ``distance``
        is ``inf`` (not measured: ``distance`` answers that).

    Examples
    --------
    >>> import collisionkit as ck
    >>> box = ck.primitives.box_mesh([1, 1, 1])
    >>> r = ck.time_of_impact(box, box, None, None, ck.translation([3, 0, 0]), ck.translation([-3, 0, 0]))
    >>> r.hit, round(r.t, 6)
    (True, 0.333333)
    """
    a, b = as_meshes("time_of_impact", a, b)  # convex shapes: their surface (query/shapes.py)
    if motion not in MOTIONS:
        raise ValueError(f"motion must be 'linear' or 'screw', got {motion!r}")
    if isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)) or max_iterations < 1:
        raise ValueError(f"max_iterations must be a positive int, got {max_iterations!r}")
    code = MOTIONS[motion]
    P = np.empty((4, 4, 4))
    for i, (p, name) in enumerate(((start_a, "start_a"), (end_a, "end_a"), (start_b, "start_b"), (end_b, "end_b"))):
        if type(p) is np.ndarray and p.shape == (4, 4) and p.dtype == np.float64:
            P[i] = p  # PERF: the common case skips as_poses
        else:
            P[i] = _one_pose(p, name)
    if tolerance is None:
        tol = TOI_REL_TOLERANCE * (mesh_radius(a) + mesh_radius(b))
    else:
        tol = float(tolerance)
        if not (tol >= 0.0 and math.isfinite(tol)):
            raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance!r}")
    bv = a.options.bv
    ta = a._trees.get(bv) or tree_for(a, bv)
    tb = b._trees.get(bv) or tree_for(b, bv)
    if not np.isfinite(P).all():  # before prescaling: the kernel names the bad pose
        m, x, y = 0, ta.arrays, tb.arrays
    else:  # lengths times 2**-m so that every scale runs in the kernel's band (query/scaling.py)
        m, x, y, (P,) = scaling.prescale_pair("time_of_impact", a, ta, b, tb, P)
    out = np.empty((1, 12))
    stats = np.zeros((1, 2), np.int64)
    res = np.empty(34)
    res[:5] = (
        math.ldexp(tol, -m),
        TOI_SHRINK,
        min(int(max_iterations), 1 << 60),
        x.scale[0] + y.scale[0],
        ta.options.bv_code,
    )
    status = toi_solve(x.topo, x.bv, x.tris, x.meta, y.topo, y.bv, y.tris, y.meta, P, np.int64(code), out, stats, res)
    if status < 0:
        i, e = divmod(-status - 1, 16)
        raise pose_error(("start_a", "end_a", "start_b", "end_b")[i], 0, e, False)
    if m:
        res[2:34] = scaling.scaled_poses(res[2:34].reshape(2, 4, 4), -m).ravel()
    hit = status in (TOI_HIT, TOI_CAP)
    ja, jb = int(out[0, 7]), int(out[0, 8])
    fa = int(x.face_ids[ja]) if hit and ja >= 0 else -1
    fb = int(y.face_ids[jb]) if hit and jb >= 0 else -1
    d = math.ldexp(math.sqrt(out[0, 0]), m) if math.isfinite(out[0, 0]) else math.inf  # out: squared, prescaled
    Ta, Tb = res[2:18].reshape(4, 4).copy(), res[18:34].reshape(4, 4).copy()
    return TimeOfImpact(bool(hit), float(res[0]), Ta, Tb, fa, fb, d, int(res[1]), status != TOI_CAP)


__all__ = ["MOTIONS", "motion_parameters", "time_of_impact"]
