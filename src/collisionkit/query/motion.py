"""Certified motion check of two rigid shapes: ``collisionkit.check_motion`` (issue 30 item 4).

A motion (each shape from its start pose to its end pose over t in [0, 1], ``"linear"``
or ``"screw"`` as in ``time_of_impact``) is **free** only when every pose of it keeps the
shapes more than ``margin`` apart (at ``margin=0``: never intersecting). Otherwise the
answer is the certified free part [0, t_free] and, when one is found, a **witness**: a time
whose poses are at most ``margin`` apart, measured exactly (the distance kernel: 0 exactly
when the exact triangle test finds an intersection). Never "free" unless certified, never
"collides" without a measured witness; what neither decides (the shapes pass within
rounding of the margin) is ``undecided``.

Method, per motion:

1. **Conservative advancement** (``kernels.proximity.toi.toi_solve``, the time-of-impact
   kernel) from t = s, aiming at distance ``margin + band / 4`` and stopping when a triangle
   pair is within ``margin + band`` (``band``: 1e-6 of the two shapes' radii, as
   ``time_of_impact``'s default tolerance). Every step keeps all triangle pairs farther
   than its aim, so reaching t = 1 certifies [s, 1]; a stop at t_h certifies [s, t_h] and
   gives the exact distance there (in (margin, margin + band] unless the shapes collide at
   t_h itself, which happens only at t_h = s: the start poses).
2. **Bisection past a stop** (Schwarzer, Saha & Latombe 2005, as ``Robot.check_motion``):
   the distance d(t) changes at most at rate ``L = |V_a - V_b| + theta_a r_a + theta_b r_b``
   (the relative speed of any two points: the motions' linear parts, turn angles and each
   shape's largest distance from its rotation centre; ``kernels.proximity.toi``'s module
   notes), so a sub-interval [t0, t1] whose end distances satisfy
   ``d0 + d1 > L (t1 - t0) + 2 margin`` holds no pose within the margin (if some t* were,
   d0 <= margin + L (t* - t0) and d1 <= margin + L (t1 - t*)). Sub-intervals that this does
   not certify are halved, depth first from t_h, so the certified part stays a prefix; a
   measured point at most ``margin`` apart is a witness. Once the certified prefix ends at a
   point more than ``margin + 2 band`` apart (the shapes have left the graze), step 1 runs
   again from there.

Limits of the search (not of the answers' validity): 64 advancement runs, 2**14 bisection
segments and depth 40 per motion; once a witness is known the prefix is refined only to
2**-10 of the motion. Measured distances lose a relative 2**-40 of the pair's extent before
they certify anything (the rounding of the poses, the mapping and the distance arithmetic
stays far below it).

Shapes: two meshes run on their triangles; a convex shape runs as its surface ``.mesh``
(the tessellation for smooth primitives, as in ``time_of_impact``; a smooth primitive
against another convex shape is refused, ``query/shapes.py``). A convex shape is a solid in
``intersects`` and ``distance``: the start poses are asked of those questions' handlers
first, so a shape inside the other's solid at t = 0 is a witness at t = 0; while the
surfaces stay apart, nothing can enter or leave a solid, so the surfaces' answer is the
solids' for the rest of the motion.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from ..bvh import pair_trees
from ..convex.shapes import ConvexShape
from ..geometry.mesh import Mesh
from ..geometry.pose import PoseLike
from ..kernels.core.scaling import OUT_OF_BAND
from ..kernels.proximity import distance as kd
from ..kernels.proximity.toi import MR_WIDTH, TOI_CAP, TOI_HIT, motion_row, pose_at, toi_solve
from . import registry, scaling
from .batch import run_chunks
from .driver import PREPARE, ask, request
from .pose_form import record
from .registry import Request
from .results import RigidMotionCheck
from .shapes import SMOOTH, UNSUPPORTED, Shape, _surface
from .spec import SPECS, THREADS, Option, Spec, define, nonnegative_length, one_of
from .toi import MOTIONS, TOI_MAX_ITERATIONS, TOI_REL_TOLERANCE, TOI_SHRINK, _motion_error, _request, mesh_radius

CHECK_MOTION = define(Spec(
    "check_motion",
    {
        "motion": Option("linear", one_of("motion", ("linear", "screw")), "linear or screw"),
        "margin": Option(0.0, nonnegative_length("margin"), "poses at most this far apart collide"),
        "threads": THREADS,
    },
    result=RigidMotionCheck, poses=("start_b", "end_b", "start_a", "end_a"), lazy=False,
))  # fmt: skip

#: advancement runs per motion at most (each past a graze the bisection left)
MAX_RUNS = 64
#: bisection segments per motion at most
MAX_SEGMENTS = 1 << 14
#: bisection segments per stop of the advancement before it runs again with a narrower band
BISECT_SEGMENTS = 64
#: sub-intervals shorter than 2**-MAX_DEPTH of the motion are not halved
MAX_DEPTH = 40
#: with a witness known, the prefix is refined down to this fraction of the motion
WITNESS_GAP = 2.0**-10
#: EXACT: relative allowance (of the pair's extent) subtracted from measured distances
DISTANCE_SLACK = 2.0**-40


def check_motion(
    a: Shape,
    b: Shape,
    start_a: PoseLike = None,
    end_a: PoseLike = None,
    start_b: PoseLike = None,
    end_b: PoseLike = None,
    *,
    motion: Literal["linear", "screw"] = "linear",
    margin: float = 0.0,
    threads: int | None = None,
) -> RigidMotionCheck:
    """Whether shape b moving from ``start_b`` to ``end_b`` (and a from ``start_a`` to
    ``end_a``) stays more than ``margin`` from a at every pose of the motion, certified.

    Parameters
    ----------
    a, b : Mesh or convex shape
        A convex shape is a solid (as in ``intersects``); its motion runs on its surface
        ``.mesh`` (module notes). A smooth primitive against another convex shape raises
        ``UnsupportedQueryError``.
    start_a, end_a, start_b, end_b : array_like (4, 4) or (N, 4, 4), or None
        World-from-object rigid poses at t = 0 and t = 1 (None = identity: a stays put by
        default). A batch answers N motions; (4, 4) poses broadcast against it.
    motion : {"linear", "screw"}
        How poses are interpolated (``time_of_impact``'s motions).
    margin : float
        A pose collides when the shapes are at most this far apart (>= 0, world units);
        0: when they intersect.
    threads : int, optional
        Threads for a batch (default: all cores); 1 runs the serial path.

    Returns
    -------
    RigidMotionCheck
        ``free``, ``t_free`` (certified prefix), ``t_witness`` with the poses and the exact
        distance there, ``undecided``, ``iterations``; scalars for four single poses,
        (N,) arrays as soon as one pose is a batch.

    Examples
    --------
    >>> import collisionkit as ck
    >>> box = ck.primitives.box_mesh([1, 1, 1])
    >>> r = ck.check_motion(box, box, start_b=ck.translation([3, 0, 0]), end_b=ck.translation([-3, 0, 0]))
    >>> r.free, round(r.t_free, 3), bool(r.t_free <= r.t_witness)
    (False, 0.333, True)
    >>> ck.check_motion(box, box, ck.translation([3, 0, 0]), ck.translation([3, 5, 0])).free
    True
    """
    return ask(CHECK_MOTION, a, b, start_a, end_a, start_b, end_b, motion=motion, margin=margin, threads=threads)


def _prepare(a: Any, b: Any, poses: tuple, options: Any) -> Request:
    return _request(a, b, poses, options, "check_motion")


class _Motion:
    """One motion of two trees (prescaled lengths): its poses at t, distances, the rate bound."""

    def __init__(self, x: Any, y: Any, bv_code: int, P: np.ndarray, code: int, radii: tuple[float, float]) -> None:
        self.x, self.y, self.bv_code, self.P, self.code = x, y, bv_code, P, code
        self.mra = np.empty(MR_WIDTH)
        self.mrb = np.empty(MR_WIDTH)
        motion_row(P[0], P[1], np.int64(code), self.mra)
        motion_row(P[2], P[3], np.int64(code), self.mrb)
        self.scale = float(x.scale[0] + y.scale[0])
        self.radii = radii
        self.out = np.empty((1, 12))
        self.stats = np.zeros((1, kd.N_DSTATS), np.int64)
        self._rate = -1.0

    def poses(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """World poses of a and b at t (the kernel's ``pose_at``, as the advancement computes them)."""
        Ta = np.empty((4, 4))
        Tb = np.empty((4, 4))
        ra, rb = self.mra, self.mrb
        pose_at(self.P[0], ra[0:3], float(ra[3]), ra[4:7], np.int64(self.code), float(t), Ta)
        pose_at(self.P[2], rb[0:3], float(rb[3]), rb[4:7], np.int64(self.code), float(t), Tb)
        return Ta, Tb

    def distance(self, t: float, upper: float = math.inf) -> float:
        """The exact distance at t (inf when not below ``upper``; NaN when the poses leave
        the kernel's band of scales: the caller gives up on the motion)."""
        Ta, Tb = self.poses(t)
        x, y = self.x, self.y
        r = kd.distance_one(
            x.topo, x.bv, x.tris, x.face_ids, x.meta, Ta, y.topo, y.bv, y.tris, y.face_ids, y.meta, Tb,
            self.scale, np.int64(self.bv_code), scaling.squared(upper), self.out, self.stats,
        )  # fmt: skip
        if r == OUT_OF_BAND or r < 0:
            return math.nan
        return float(self.out[0, 0])

    def rate(self) -> float:
        """L: a bound on |d'(t)| (module notes), rounded up."""
        if self._rate < 0.0:
            ra, rb = self.mra, self.mrb
            w = ra[10:13] - rb[10:13]  # world axial velocities V
            speed = float(np.sqrt(w @ w))
            # each shape's largest distance from its rotation centre: |p| + |c| + widening
            reach_a = self.radii[0] + float(np.sqrt(ra[7:10] @ ra[7:10])) + float(ra[13])
            reach_b = self.radii[1] + float(np.sqrt(rb[7:10] @ rb[7:10])) + float(rb[13])
            self._rate = (speed + float(ra[3]) * reach_a + float(rb[3]) * reach_b) * (1.0 + 2.0**-20)
        return self._rate


def _advance(mo: _Motion, s: float, margin: float, band: float) -> tuple[int, float, float, int]:
    """Conservative advancement from s (module notes, step 1): (status, t, distance at t, steps)."""
    x, y = mo.x, mo.y
    res = np.empty(34)
    res[0] = margin + band
    res[1] = TOI_SHRINK
    res[2] = TOI_MAX_ITERATIONS
    res[3] = mo.scale
    res[4] = mo.bv_code
    res[5] = margin + 0.25 * band
    res[6] = s
    out = np.empty((1, 12))
    stats = np.zeros((1, 2), np.int64)
    status = toi_solve(
        x.topo, x.bv, x.tris, x.meta, y.topo, y.bv, y.tris, y.meta, mo.P, np.int64(mo.code), out, stats, res
    )
    if status < 0:
        raise _motion_error(int(status), 0, False)
    d2 = float(out[0, 0])
    d = math.sqrt(d2) if math.isfinite(d2) else math.inf
    return int(status), float(res[0]), d, int(res[1])


def _bisect(
    mo: _Motion, t0: float, d0: float, margin: float, band: float, slack: float, budget: int
) -> tuple[str, float, float, int]:
    """Bisection from t0 (distance d0 > margin, certified up to t0) towards 1 (step 2):
    (what, t_free, t, segments) with what "free" (certified to 1), "witness" (at t),
    "restart" (certified to t, where the shapes are more than margin + 2 band apart),
    "undecided" (a limit reached)."""
    L = mo.rate()
    cap = L * (1.0 - t0) + 2.0 * margin + 4.0 * slack + band  # a larger distance certifies anything
    dist = {t0: d0}

    def at(t: float) -> float:
        d = dist.get(t)
        if d is None:
            d = dist[t] = mo.distance(t, cap)
        return d

    stack = [(t0, 1.0, 0)]
    frontier = t0
    prefix = True
    t_hit = math.inf
    segments = 0
    while stack:
        ta, tb, depth = stack.pop()
        if ta >= t_hit:
            continue
        if segments >= budget:
            break
        segments += 1
        da, db = at(ta), at(tb)
        if math.isnan(da) or math.isnan(db):
            return "undecided", frontier, math.nan, segments
        if da <= margin:
            t_hit = min(t_hit, ta)
            prefix = False
            continue
        if db <= margin:
            t_hit = min(t_hit, tb)
        elif (da - slack) + (db - slack) > L * (tb - ta) + 2.0 * margin:
            if prefix and ta == frontier:
                frontier = tb
                if t_hit == math.inf and tb < 1.0 and db - slack > margin + 2.0 * band:
                    return "restart", frontier, tb, segments
            continue
        if depth >= MAX_DEPTH or (t_hit < math.inf and tb - ta <= WITNESS_GAP):
            prefix = prefix and ta != frontier
            continue
        mid = 0.5 * (ta + tb)
        stack.append((mid, tb, depth + 1))
        stack.append((ta, mid, depth + 1))
    if t_hit < math.inf:
        return "witness", frontier, t_hit, segments
    if prefix and frontier == 1.0:
        return "free", 1.0, math.nan, segments
    return "undecided", frontier, math.nan, segments


def _solve(mo: _Motion, margin: float, band: float, slack: float) -> tuple[bool, float, float, bool, int]:
    """One motion: (free, t_free, t_witness (NaN: none), undecided, iterations)."""
    s = 0.0
    work = 0
    segments = 0
    for _ in range(MAX_RUNS):
        status, t, d, steps = _advance(mo, s, margin, band)
        work += steps
        if status == TOI_CAP:
            return False, t, math.nan, True, work
        if status != TOI_HIT:
            return True, 1.0, math.nan, False, work
        if d <= margin:  # EXACT: the measured distance (0 exactly when the triangles meet)
            return False, t, t, False, work
        budget = min(BISECT_SEGMENTS, MAX_SEGMENTS - segments)
        what, t_free, t_w, used = _bisect(mo, t, d, margin, band, slack, budget)
        segments += used
        work += used
        if what == "free":
            return True, 1.0, math.nan, False, work
        if what == "witness":
            return False, t_free, t_w, False, work
        if what == "restart":
            s = t_w
            continue
        # a graze: no witness near, no certified way past it at this band. The advancement
        # again from the certified frontier with a band below the distance there (the
        # directional bounds pass a surface sliding by at a constant gap; the plain rate
        # bound of the bisection does not)
        d_f = mo.distance(t_free)
        if math.isnan(d_f) or segments >= MAX_SEGMENTS:
            return False, t_free, math.nan, True, work
        band = min(0.5 * band, 0.5 * (d_f - margin))
        if not band > 4.0 * slack:
            return False, t_free, math.nan, True, work  # within rounding of the margin
        s = t_free
    return False, s, math.nan, True, work


def _check_meshes(req: Request) -> RigidMotionCheck:
    """The mesh-mesh handler: every motion of the request (convex shapes: their surfaces)."""
    a, b, n = req.a, req.b, req.n
    margin = float(req.options["margin"])
    code = MOTIONS[req.options["motion"]]
    sa, ea, sb, eb, ia, ib = req.pa, req.pa_end, req.pb, req.pb_end, req.ia, req.ib
    if ea is None or eb is None:
        raise ValueError("check_motion: a request without end poses (pa_end, pb_end)")
    ta, tb = pair_trees(a, b)
    ra, rb = mesh_radius(a), mesh_radius(b)
    band = TOI_REL_TOLERANCE * (ra + rb)
    free = np.zeros(n, np.bool_)
    t_free = np.zeros(n)
    t_wit = np.full(n, np.nan)
    undecided = np.zeros(n, np.bool_)
    iterations = np.zeros(n, np.int64)
    Pa = np.full((n, 4, 4), np.nan)
    Pb = np.full((n, 4, 4), np.nan)
    dist = np.full(n, np.nan)
    size = float(ta.arrays.scale[0] + tb.arrays.scale[0])

    def solve(lo: int, hi: int) -> None:
        for k in range(lo, hi):
            P = np.empty((4, 4, 4))
            P[0], P[1], P[2], P[3] = sa[ia[k]], ea[ia[k]], sb[ib[k]], eb[ib[k]]
            reach = float(np.abs(P[:, :3, 3]).max())
            # lengths times 2**-m so that every scale runs in the kernels' band (query/scaling.py)
            m = scaling.shift_for(max(reach, size))
            x, y = ta.arrays, tb.arrays
            if m:
                scaling.check_range("check_motion", (float(x.scale[0]), float(y.scale[0])), m)
                x, y = scaling.scaled_tree(a, ta, m), scaling.scaled_tree(b, tb, m)
                P = scaling.scaled_poses(P, m)
            mo = _Motion(x, y, ta.bv_code, P, code, (math.ldexp(ra, -m), math.ldexp(rb, -m)))
            slack = DISTANCE_SLACK * (mo.scale + math.ldexp(reach, -m))
            f, tf, tw, und, it = _solve(mo, math.ldexp(margin, -m), math.ldexp(band, -m), slack)
            free[k], t_free[k], t_wit[k], undecided[k], iterations[k] = f, tf, tw, und, it
            if not math.isnan(tw):
                d = mo.distance(tw)
                Ta, Tb = mo.poses(tw)
                Pa[k], Pb[k] = scaling.scaled_poses(np.stack([Ta, Tb]), -m) if m else (Ta, Tb)
                dist[k] = math.ldexp(d, m)

    run_chunks(n, req.threads, solve)
    return record(
        RigidMotionCheck, req.batched, free=free, t_free=t_free, t_witness=t_wit, pose_a=Pa, pose_b=Pb,
        distance=dist, undecided=undecided, iterations=iterations,
    )  # fmt: skip


def _check_shapes(req: Request) -> RigidMotionCheck:
    """A pair with a convex shape: the start poses asked as solids (``intersects`` at margin
    0, ``distance`` above it, through their registered handlers), then the surfaces' motion
    (module notes); a start within the margin is a witness at t = 0."""
    margin = float(req.options["margin"])
    question = "intersects" if margin == 0.0 else "distance"
    options = SPECS[question].defaults()
    options["threads"] = req.options["threads"]
    if question == "distance":
        options["upper_bound"] = math.nextafter(margin, math.inf)
    Ta = req.pa[req.ia]
    Tb = req.pb[req.ib]
    # NOTE: the other question's handler through the registry (never its public function)
    handler = registry.checked(question, req.a, req.b, options)
    got = handler(request(SPECS[question], req.a, req.b, (Ta, Tb), options))
    # intersects' handler answers the engine's rows (``rows.BatchResult``: counts > 0 hit)
    d0 = np.where(got.counts > 0, 0.0, np.inf) if question == "intersects" else np.asarray(got.distance, np.float64)
    d0 = np.atleast_1d(d0)
    rec = _check_meshes(
        req._replace(a=_surface(req.a, "a", "check_motion"), b=_surface(req.b, "b", "check_motion"), batched=True)
    )
    start = d0 <= margin
    if not start.any():
        return rec if req.batched else _single(rec)
    cols = {f: np.array(getattr(rec, f)) for f in RigidMotionCheck.PER_POSE}
    cols["free"][start] = False
    cols["undecided"][start] = False
    cols["t_free"][start] = 0.0
    cols["t_witness"][start] = 0.0
    cols["pose_a"][start] = Ta[start]
    cols["pose_b"][start] = Tb[start]
    cols["distance"][start] = d0[start]
    return record(RigidMotionCheck, req.batched, **cols)


def _single(rec: RigidMotionCheck) -> RigidMotionCheck:
    """A batch record of one motion in the single-motion form."""
    return record(RigidMotionCheck, False, **{f: np.array(getattr(rec, f)) for f in RigidMotionCheck.PER_POSE})


for _smooth in SMOOTH:
    registry.refuse("check_motion", _smooth, ConvexShape, UNSUPPORTED[("check_motion", "smooth-convex")])
    registry.refuse("check_motion", ConvexShape, _smooth, UNSUPPORTED[("check_motion", "smooth-convex")])
_EVERY = tuple(CHECK_MOTION.options)
registry.register("check_motion", Mesh, Mesh, _check_meshes, honours=_EVERY)
for _ta, _tb in ((ConvexShape, ConvexShape), (ConvexShape, Mesh), (Mesh, ConvexShape)):
    registry.register("check_motion", _ta, _tb, _check_shapes, honours=_EVERY)
PREPARE["check_motion"] = _prepare

__all__ = ["CHECK_MOTION", "check_motion"]
