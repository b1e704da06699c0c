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
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from ..bvh import pair_trees
from ..geometry.mesh import Mesh
from ..geometry.pose import PoseLike, as_poses, broadcast_poses
from ..kernels.proximity.toi import MOTION_LINEAR, MOTION_SCREW, MR_WIDTH, TOI_CAP, TOI_HIT, motion_row, toi_solve
from ..kernels.traverse.descent import validate_poses
from . import scaling
from .batch import run_chunks, thread_count
from .driver import PREPARE, ask, pose_error
from .pose_form import record
from .registry import Request
from .results import TimeOfImpact
from .shapes import Shape, mesh_surfaces, register_mesh_query
from .spec import THREADS, Option, Spec, define, nonnegative_length, one_of, positive_int

#: Default cap on the conservative-advancement steps of ``time_of_impact``.
TOI_MAX_ITERATIONS = 10_000
_tolerance_check = nonnegative_length("tolerance")

TIME_OF_IMPACT = define(Spec(
    "time_of_impact",
    {
        "motion": Option("linear", one_of("motion", ("linear", "screw")), "linear or screw"),
        "tolerance": Option(None, lambda t: None if t is None else _tolerance_check(t), "contact distance"),
        "max_iterations": Option(TOI_MAX_ITERATIONS, positive_int("max_iterations"), "cap on advancement steps"),
        "threads": THREADS,
    },
    result=TimeOfImpact, poses=("start_a", "end_a", "start_b", "end_b"),
))  # fmt: skip

_EYE = np.eye(4)
MOTIONS = {"linear": MOTION_LINEAR, "screw": MOTION_SCREW}
#: Default contact tolerance, relative to the sum of the two meshes' radii.
TOI_REL_TOLERANCE = 1e-6
#: Relative mode of the smallest-step search (kernels.proximity.toi.min_step): 1 finds the
#: smallest step. NOTE: 0.7, 0.5, 0.3 measured 1.6x, 2x, 2.7x slower on the
#: benchmark scenes (fewer node pairs per step, more steps).
TOI_SHRINK = 1.0


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
    a: Shape,
    b: Shape,
    start_a: PoseLike = None,
    end_a: PoseLike = None,
    start_b: PoseLike = None,
    end_b: PoseLike = None,
    *,
    motion: Literal["linear", "screw"] = "linear",
    tolerance: float | None = None,
    max_iterations: int = TOI_MAX_ITERATIONS,
    threads: int | None = None,
) -> TimeOfImpact:
    """First time in [0, 1] at which mesh a moving from ``start_a`` to ``end_a``
    comes into contact with mesh b moving from ``start_b`` to ``end_b``.

    Parameters
    ----------
    a, b : Mesh or convex shape
        A convex shape moves as its surface ``.mesh`` (``query/shapes.py``; a smooth
        primitive against another convex shape raises ``UnsupportedQueryError``).
    start_a, end_a, start_b, end_b : array_like (4, 4) or (N, 4, 4), or None
        World-from-object rigid poses at t = 0 and t = 1 (None = identity). A
        batch answers N motions at once; (4, 4) poses broadcast against it.
    motion : {"linear", "screw"}
        How poses are interpolated (module notes).
    tolerance : float, optional
        Contact distance, an absolute length in the shapes' own units (the one
        meaning of ``tolerance`` in collisionkit, README "Tolerance"): the
        advancement stops (a hit) when the meshes are within it; no hit
        certifies they stay more than tolerance / 2 apart over the whole
        motion. Default (None): 1e-6 * (r_a + r_b), r = largest vertex
        distance from the mesh's origin, i.e. an absolute length chosen from
        the meshes' size.
    max_iterations : int
        Cap on advancement steps (``converged`` is False when it stops them;
        ``t`` is then still before any contact and ``colliding`` is True).
    threads : int, optional
        Threads for a batch (default: all cores); 1 runs the serial path.

    Returns
    -------
    TimeOfImpact
        Scalars (and (4, 4) poses) when all four poses are single (4, 4) poses;
        (N,) arrays (and (N, 4, 4) poses) as soon as one is a batch.
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
    >>> r.colliding, round(r.t, 6)
    (True, 0.333333)
    """
    TIME_OF_IMPACT.options["motion"].validated(motion)
    TIME_OF_IMPACT.options["max_iterations"].validated(max_iterations)
    TIME_OF_IMPACT.options["tolerance"].validated(tolerance)
    # PERF: one motion of two meshes (or a convex shape's surface and a mesh), default
    # threads: straight to the kernel, as the registered handler would (_toi_meshes ->
    # toi_one), without the request record (about 15 us a call, 10-15% of a motion on the
    # benchmark scenes)
    surfaces = mesh_surfaces(a, b) if threads is None else None
    if surfaces is not None:
        P = _single_motion(start_a, end_a, start_b, end_b)
        if P is not None:
            ma, mb = surfaces
            return toi_one(ma, mb, P, _tolerance(ma, mb, tolerance), MOTIONS[motion], max_iterations)
    # convex shapes: their surface (query/shapes.py)
    return ask(
        TIME_OF_IMPACT, a, b, start_a, end_a, start_b, end_b,
        motion=motion, tolerance=tolerance, max_iterations=max_iterations, threads=threads,
    )  # fmt: skip


_POSE_NAMES = ("start_a", "end_a", "start_b", "end_b")


def _request(a: Any, b: Any, poses: tuple, options: Mapping[str, Any], query: str = "time_of_impact") -> Request:
    """The validated, broadcast motions (poses: start_a, end_a, start_b, end_b): a's
    start/end poses share one index, b's the other (``check_motion`` takes them too)."""
    nthreads = thread_count(options["threads"])
    single = [p for p in poses if type(p) is np.ndarray and p.shape == (4, 4) and p.dtype == np.float64]
    if len(single) == 4:  # PERF: the common case skips as_poses
        stacks = [p[None] for p in poses]
        batched = False
    else:
        parsed = [as_poses(_EYE if p is None else p, name) for p, name in zip(poses, _POSE_NAMES, strict=True)]
        stacks = [s for s, _ in parsed]
        batched = any(bt for _, bt in parsed)
    sides = []
    for k, side in ((0, "a"), (2, "b")):
        start, end = stacks[k], stacks[k + 1]
        if start.shape[0] != end.shape[0] and 1 not in (start.shape[0], end.shape[0]):
            raise ValueError(
                f"pose batches do not broadcast: start_{side} has {start.shape[0]} poses, end_{side} has {end.shape[0]}"
            )
        m = 0 if 0 in (start.shape[0], end.shape[0]) else max(start.shape[0], end.shape[0])  # N = 0: empty
        sides.append((_broadcast(start, m), _broadcast(end, m)))
    (sa, ea), (sb, eb) = sides
    try:
        n, ia, ib = broadcast_poses(sa, sb)
    except ValueError:
        raise ValueError(f"pose batches do not broadcast: a moves {sa.shape[0]} times, b {sb.shape[0]} times") from None
    for (pa, pb), (name_a, name_b) in (((sa, sb), ("start_a", "start_b")), ((ea, eb), ("end_a", "end_b"))):
        side, index, code = validate_poses(pa, pb)
        if side >= 0:
            raise pose_error(name_a if side == 0 else name_b, int(index), int(code), batched)
    return Request(a, b, sa, sb, ia, ib, n, batched, 0, -1, None, nthreads, query, options, ea, eb)


def _motion_error(status: int, index: int, batched: bool) -> Exception:
    """The error for ``toi_solve``'s negative status: -1 - (16 * which pose + pose code)."""
    i, e = divmod(-status - 1, 16)
    return pose_error(_POSE_NAMES[i], index, e, batched)


def _broadcast(stack: np.ndarray, m: int) -> np.ndarray:
    return stack if stack.shape[0] == m else np.ascontiguousarray(np.broadcast_to(stack, (m, 4, 4)))


def _toi_meshes(req: Request) -> TimeOfImpact:
    """The mesh-mesh handler (convex shapes arrive as their surfaces): every motion of the request.

    One kernel call per motion; a batch runs its motions in chunks on ``req.threads``
    threads (``batch.run_chunks``; the kernel releases the GIL).
    """
    a, b, opts, n = req.a, req.b, req.options, req.n
    code, max_iterations = MOTIONS[opts["motion"]], opts["max_iterations"]
    tol = _tolerance(a, b, opts["tolerance"])
    sa, ea, sb, eb, ia, ib = req.pa, req.pa_end, req.pb, req.pb_end, req.ia, req.ib
    if ea is None or eb is None:
        raise ValueError("time_of_impact: a request without end poses (pa_end, pb_end)")
    if n == 1 and not req.batched:
        P = np.empty((4, 4, 4))
        P[0], P[1], P[2], P[3] = sa[0], ea[0], sb[0], eb[0]
        return toi_one(a, b, P, tol, code, max_iterations)
    ta, tb = pair_trees(a, b)
    out = np.empty((n, 12))
    stats = np.zeros((n, 2), np.int64)
    res = np.empty((n, 34))
    res[:, :7] = (tol, TOI_SHRINK, min(int(max_iterations), 1 << 60), 0.0, ta.options.bv_code, 0.5 * tol, 0.0)
    status = np.empty(n, np.int64)
    # lengths times 2**-m so that every scale runs in the kernel's band (query/scaling.py);
    # the poses were validated (finite) in _request
    size = float(ta.arrays.scale[0] + tb.arrays.scale[0])
    reach = np.maximum.reduce([scaling.translation_extent(p)[i] for p, i in ((sa, ia), (ea, ia), (sb, ib), (eb, ib))])
    shifts = scaling.extent_shifts(np.maximum(reach, size))
    task_m = np.zeros(n, np.int64)
    for m, tasks in scaling.groups(shifts, n):
        if m:
            scaling.check_range("time_of_impact", (float(ta.arrays.scale[0]), float(tb.arrays.scale[0])), m)
            x, y = scaling.scaled_tree(a, ta, m), scaling.scaled_tree(b, tb, m)
        else:
            x, y = ta.arrays, tb.arrays
        todo = np.arange(n) if tasks is None else tasks
        task_m[todo] = m
        res[todo, 0] = np.ldexp(tol, -m)
        res[todo, 3] = x.scale[0] + y.scale[0]
        res[todo, 5] = 0.5 * res[todo, 0]

        def solve(lo: int, hi: int, x=x, y=y, m=m, todo=todo) -> None:
            P = np.empty((4, 4, 4))
            for k in todo[lo:hi]:
                P[0], P[1], P[2], P[3] = sa[ia[k]], ea[ia[k]], sb[ib[k]], eb[ib[k]]
                Pm = scaling.scaled_poses(P, m) if m else P
                status[k] = toi_solve(
                    x.topo, x.bv, x.tris, x.meta, y.topo, y.bv, y.tris, y.meta, Pm, np.int64(code),
                    out[k : k + 1], stats[k : k + 1], res[k],
                )  # fmt: skip
                if m:
                    res[k, 2:34] = scaling.scaled_poses(res[k, 2:34].reshape(2, 4, 4), -m).ravel()

        run_chunks(todo.shape[0], req.threads, solve)
    bad = np.flatnonzero(status < 0)
    if bad.size:  # poses were validated up front; kept as the kernel's own guard
        raise _motion_error(int(status[bad[0]]), int(bad[0]), req.batched)
    face_a, face_b = ta.arrays.face_ids, tb.arrays.face_ids
    hit = (status == TOI_HIT) | (status == TOI_CAP)
    ja, jb = out[:, 7].astype(np.int64), out[:, 8].astype(np.int64)
    fa = np.where(hit & (ja >= 0), face_a[np.maximum(ja, 0)], -1).astype(np.int64)
    fb = np.where(hit & (jb >= 0), face_b[np.maximum(jb, 0)], -1).astype(np.int64)
    with np.errstate(invalid="ignore"):  # out[:, 0]: the squared distance, prescaled
        d = np.where(np.isfinite(out[:, 0]), np.ldexp(np.sqrt(out[:, 0]), task_m), math.inf)
    Ta, Tb = res[:, 2:18].reshape(n, 4, 4).copy(), res[:, 18:34].reshape(n, 4, 4).copy()
    return record(
        TimeOfImpact, req.batched, colliding=hit, t=res[:, 0].copy(), pose_a=Ta, pose_b=Tb, face_a=fa, face_b=fb,
        distance=d, iterations=res[:, 1].astype(np.int64), converged=status != TOI_CAP,
    )  # fmt: skip


def _tolerance(a: Mesh, b: Mesh, tolerance: float | None) -> float:
    """The contact tolerance: as given (validated by the caller), else relative to the radii."""
    if tolerance is None:
        return TOI_REL_TOLERANCE * (mesh_radius(a) + mesh_radius(b))
    return float(tolerance)


def _single_motion(*poses: Any) -> np.ndarray | None:
    """The four poses stacked (4, 4, 4) when each is None or a (4, 4) float64 array, else None
    (the caller parses them: batches, lists, other dtypes and bad shapes)."""
    P = np.empty((4, 4, 4))
    for i, p in enumerate(poses):
        if p is None:
            P[i] = _EYE
        elif type(p) is np.ndarray and p.shape == (4, 4) and p.dtype == np.float64:
            P[i] = p
        else:
            return None
    return P


def toi_one(a: Mesh, b: Mesh, P: np.ndarray, tol: float, code: int, max_iterations: int) -> TimeOfImpact:
    """One motion, poses P = (start a, end a, start b, end b): the kernel call of the batch
    path for that motion, with the same prescaling, without the batch's arrays and threads.

    The kernel checks the poses itself (rigid, finite; the batch path checks them up
    front, with the same error). PERF: the batch path's wrapper cost about 120 us a call
    more than the kernel's own 100-200 us.
    """
    ta, tb = pair_trees(a, b)
    x, y = ta.arrays, tb.arrays
    size = float(x.scale[0] + y.scale[0])
    reach = float(np.abs(P[:, :3, 3]).max())
    m = scaling.shift_for(max(reach, size)) if math.isfinite(reach) else 0  # not finite: the kernel refuses it
    if m:
        scaling.check_range("time_of_impact", (float(x.scale[0]), float(y.scale[0])), m)
        x, y = scaling.scaled_tree(a, ta, m), scaling.scaled_tree(b, tb, m)
        P = scaling.scaled_poses(P, m)
    out = np.empty((1, 12))
    stats = np.zeros((1, 2), np.int64)
    res = np.empty(34)
    res[0] = math.ldexp(tol, -m)
    res[1] = TOI_SHRINK
    res[2] = min(int(max_iterations), 1 << 60)
    res[3] = x.scale[0] + y.scale[0]
    res[4] = ta.options.bv_code
    res[5] = 0.5 * res[0]  # aims at tol / 2 (kernels.proximity.toi: the hit band's middle)
    res[6] = 0.0
    status = toi_solve(x.topo, x.bv, x.tris, x.meta, y.topo, y.bv, y.tris, y.meta, P, np.int64(code), out, stats, res)
    if status < 0:
        raise _motion_error(int(status), 0, False)
    if m:
        res[2:34] = scaling.scaled_poses(res[2:34].reshape(2, 4, 4), -m).ravel()
    hit = status == TOI_HIT or status == TOI_CAP
    ja, jb = int(out[0, 7]), int(out[0, 8])
    fa = int(ta.arrays.face_ids[ja]) if hit and ja >= 0 else -1
    fb = int(tb.arrays.face_ids[jb]) if hit and jb >= 0 else -1
    d2 = float(out[0, 0])
    d = (math.ldexp(math.sqrt(d2), m) if d2 >= 0.0 else math.nan) if math.isfinite(d2) else math.inf
    Ta, Tb = res[2:18].reshape(4, 4).copy(), res[18:34].reshape(4, 4).copy()
    Ta.flags.writeable = Tb.flags.writeable = False
    # the frozen dataclass's __init__ costs a few us: the single-pose record built by hand,
    # every field set (tests/test_api_shapes.py checks the forms)
    r = _new(TimeOfImpact)
    r.__dict__.update(
        colliding=bool(hit), t=float(res[0]), pose_a=Ta, pose_b=Tb, face_a=fa, face_b=fb, distance=d,
        iterations=int(res[1]), converged=bool(status != TOI_CAP),
    )  # fmt: skip
    return r


_new = object.__new__


register_mesh_query("time_of_impact", _toi_meshes)
PREPARE["time_of_impact"] = _request

__all__ = ["MOTIONS", "TIME_OF_IMPACT", "TOI_MAX_ITERATIONS", "motion_parameters", "time_of_impact", "toi_one"]
