"""Time of impact by conservative advancement over the BVHs (Mirtich 1996,
"Impulse-based dynamic simulation of rigid body systems", ch. 2; Zhang, Lee,
Kim 2006, "Interactive continuous collision detection for non-convex
polyhedra"; Tang, Kim, Manocha 2009, "C2A: controlled conservative
advancement for continuous collision detection of polygonal models").

Each object moves as T(t) = T0 * M(t), t in [0, 1], with M(0) = I:

* linear (MOTION_LINEAR): the origin moves on a straight line, the
  orientation turns at constant rate about a fixed body axis:
  R(t) = R0 Rot(k, t theta), x(t) = x0 + t (x1 - x0);
* screw (MOTION_SCREW): the constant body twist, M(t) = exp(t xi) with
  exp(xi) = T0^-1 T1 (rotation about a fixed line plus a slide along it).

Directional motion bound. In both motions the world velocity of a material
point is V + theta K x (x - c): a constant world vector V (linear: x1 - x0;
screw: the slide (k.u) R0 k), the constant world axis K = R0 k and a
rotation centre c fixed in the body (linear: the origin; screw: a point of
the screw axis, k x u / theta). Projected on a FIXED world unit direction n,
a point therefore moves at most at n.V + theta |n x K| rho, rho its distance
from c. For two sets separated along n by a gap g (min n.q over b minus
max n.p over a, n from a to b) the gap, and so the distance, cannot shrink
faster than

    rate(n) = n.(V_a - V_b) + theta_a |n x K_a| r_a + theta_b |n x K_b| r_b

(r = the set's largest distance from its centre), and nothing in the two
sets can come within ``g - rate * s`` of each other before s more time.
n.(V_a - V_b) is signed: pairs moving apart along n get no bound at all.

Per-pair advancement (C2A). Every node pair of the two trees gets its own
step from its own boxes and radii: along each face axis of either box, and
along the closest-point direction of the two boxes in either box's frame
(AABB trees; OBB trees use the box distance over the plain speed bound
|V_a - V_b| + theta_a r_a + theta_b r_b); triangle pairs along their
closest-point direction, the gap measured on the vertices. A node pair's
step never exceeds any of its triangle pairs' (its gap is smaller, its
radii larger), so a branch-and-bound descent finds the smallest step over
all triangle pairs, pruning every node pair whose step is already larger
than the best found (and all pairs that cannot meet before t = 1). Since
every step is safe for the pairs it covers and every triangle pair is
covered, the minimum is safe for the meshes: advancing by it never passes
a contact (never a later time, never tunnelling).

Stopping. Gaps are reduced by ``tol / 2`` before dividing (the advancement
aims at distance tol / 2, never at contact, so each step is at least
tol / (2 mu) and rounding cannot carry it past a contact); a node pair whose
distance bound is at most ``tol`` is never pruned, so the descent finds
every triangle pair within ``tol``: the loop stops with a hit as soon as
one is (the exact distance query then gives the closest pair), and with no
hit when the smallest step reaches t = 1 (the meshes stay more than tol / 2
apart over the whole motion). Box gaps are reduced by the volume slack
(bvh_distance) and steps shortened by 1e-9 relative.
"""

from __future__ import annotations

import math

import numpy as np

from ...constants import BV_OBB
from ..core.jit import njit, njit_borrowing, njit_internal
from ..core.linalg import pose_error, relative_pose, triangle_box
from ..core.tri_rows import leaf_pair, mapped_box_row, pop_pair, tri_row
from ..triangle.tri_distance import tri_tri_closest
from ..triangle.tri_tri import tri_tri_guigue_tuples
from ..volumes.access import node_extent, node_size
from .distance import _stack_rows, centre_offset, distance_task, node_lower_bound2, tri_edges

MOTION_LINEAR = 0
MOTION_SCREW = 1

TOI_NO_HIT = 0
TOI_HIT = 1
TOI_CAP = 2  # iteration cap reached: t is still a safe lower bound

_U = 2.0**-53
#: screw motions turning less than this are handled as rotations about the origin
#: (k x u / theta would blow up; the radius is widened by |u| instead)
_SCREW_MIN_ANGLE = 1e-9
#: columns of the per-object motion row (motion_row)
_MR_K = 0  # body rotation axis k (3)
_MR_THETA = 3
_MR_U = 4  # linear part u (3)
_MR_C = 7  # rotation centre c, body frame (3)
_MR_V = 10  # world axial velocity V (3)
_MR_WIDEN = 13  # added to every radius
_MR_KW = 14  # world axis K = R0 k (3)
MR_WIDTH = 17


#: per-iteration context (_fill_context): two blocks of 15, in a's frame and in
#: b's frame: w = V_a - V_b (3), K_a (3), K_b (3), theta_a |e_i x K_a| (3),
#: theta_b |e_i x K_b| (3); then theta_a, theta_b, |V_a - V_b|
_CX_B = 15
_CX_THA = 30
_CX_THB = 31
_CX_SPEED = 32
_CX_WIDTH = 33


@njit(cache=True, nogil=True)
def pose_at(T0, k, theta, u, motion, t, out):
    """Write T(t) = T0 * M(t) into ``out`` (4, 4) (see the module notes).

    k: unit body rotation axis (3,), theta: total angle, u: (3,) linear part
    (world displacement x1 - x0 for linear, body twist linear part for screw).
    """
    phi = t * theta
    c = math.cos(phi)
    s = math.sin(phi)
    kx = k[0]
    ky = k[1]
    kz = k[2]
    # Rot(k, phi) = I + s K + (1 - c) K^2
    K = ((0.0, -kz, ky), (kz, 0.0, -kx), (-ky, kx, 0.0))
    M = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            k2 = K[i][0] * K[0][j] + K[i][1] * K[1][j] + K[i][2] * K[2][j]
            M[i, j] = (1.0 if i == j else 0.0) + s * K[i][j] + (1.0 - c) * k2
    for i in range(3):
        for j in range(3):
            out[i, j] = T0[i, 0] * M[0, j] + T0[i, 1] * M[1, j] + T0[i, 2] * M[2, j]
    if motion == MOTION_LINEAR:
        for i in range(3):
            out[i, 3] = T0[i, 3] + t * u[i]
    else:
        # translation of exp(t xi) in body frame: (t I + (1 - c)/theta K + (phi - s)/theta K^2) u
        if theta > 1e-12:
            a1 = (1.0 - c) / theta
            a2 = (phi - s) / theta
        else:
            a1 = 0.5 * t * phi
            a2 = t * phi * phi / 6.0
        g = np.empty(3)
        for i in range(3):
            acc = t * u[i]
            for j in range(3):
                k2 = K[i][0] * K[0][j] + K[i][1] * K[1][j] + K[i][2] * K[2][j]
                acc += (a1 * K[i][j] + a2 * k2) * u[j]
            g[i] = acc
        for i in range(3):
            out[i, 3] = T0[i, 0] * g[0] + T0[i, 1] * g[1] + T0[i, 2] * g[2] + T0[i, 3]
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit_internal(nogil=True)
def _rotvec(M00, M01, M02, M10, M11, M12, M20, M21, M22):
    """Unit axis and angle in [0, pi] of a rotation matrix (through the unit
    quaternion, largest-component branch, so it stays accurate near pi)."""
    tr = M00 + M11 + M22
    if tr >= M00 and tr >= M11 and tr >= M22:
        w = 0.5 * math.sqrt(max(0.0, 1.0 + tr))
        f = 0.25 / w
        x = (M21 - M12) * f
        y = (M02 - M20) * f
        z = (M10 - M01) * f
    elif M00 >= M11 and M00 >= M22:
        x = 0.5 * math.sqrt(max(0.0, 1.0 + M00 - M11 - M22))
        f = 0.25 / x
        w = (M21 - M12) * f
        y = (M01 + M10) * f
        z = (M02 + M20) * f
    elif M11 >= M22:
        y = 0.5 * math.sqrt(max(0.0, 1.0 - M00 + M11 - M22))
        f = 0.25 / y
        w = (M02 - M20) * f
        x = (M01 + M10) * f
        z = (M12 + M21) * f
    else:
        z = 0.5 * math.sqrt(max(0.0, 1.0 - M00 - M11 + M22))
        f = 0.25 / z
        w = (M10 - M01) * f
        x = (M02 + M20) * f
        y = (M12 + M21) * f
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    s = math.sqrt(x * x + y * y + z * z)
    if not s > 0.0:
        return 1.0, 0.0, 0.0, 0.0
    return x / s, y / s, z / s, 2.0 * math.atan2(s, w)


@njit(cache=True, nogil=True)
def motion_row(T0, T1, motion, row):
    """Fill ``row`` (MR_WIDTH,) with the motion from T0 to T1 (module notes):
    k, theta, u (what pose_at takes), the rotation centre c, the world axial
    velocity V, the radius widening and the world axis K."""
    # M = R0^T R1; p = R0^T (x1 - x0)
    M = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            M[i, j] = T0[0, i] * T1[0, j] + T0[1, i] * T1[1, j] + T0[2, i] * T1[2, j]
    kx, ky, kz, theta = _rotvec(M[0, 0], M[0, 1], M[0, 2], M[1, 0], M[1, 1], M[1, 2], M[2, 0], M[2, 1], M[2, 2])
    dx = T1[0, 3] - T0[0, 3]
    dy = T1[1, 3] - T0[1, 3]
    dz = T1[2, 3] - T0[2, 3]
    row[_MR_K] = kx
    row[_MR_K + 1] = ky
    row[_MR_K + 2] = kz
    row[_MR_THETA] = theta
    for i in range(3):
        row[_MR_KW + i] = T0[i, 0] * kx + T0[i, 1] * ky + T0[i, 2] * kz
    row[_MR_WIDEN] = 0.0
    for i in range(3):
        row[_MR_C + i] = 0.0
    if motion == MOTION_LINEAR:
        row[_MR_U] = dx
        row[_MR_U + 1] = dy
        row[_MR_U + 2] = dz
        row[_MR_V] = dx
        row[_MR_V + 1] = dy
        row[_MR_V + 2] = dz
        return
    px = T0[0, 0] * dx + T0[1, 0] * dy + T0[2, 0] * dz
    py = T0[0, 1] * dx + T0[1, 1] * dy + T0[2, 1] * dz
    pz = T0[0, 2] * dx + T0[1, 2] * dy + T0[2, 2] * dz
    # u = V^-1 p with V = I + (1 - c)/theta K + (theta - s)/theta K^2 (pose_at at t = 1):
    # V^-1 = I - theta/2 K + beta K^2, beta = 1 - theta s / (2 (1 - c))
    if theta > 1e-4:
        beta = 1.0 - theta * math.sin(theta) / (2.0 * (1.0 - math.cos(theta)))
    else:
        beta = theta * theta / 12.0 + theta**4 / 720.0
    # K p = k x p, K^2 p = k x (k x p)
    cx = ky * pz - kz * py
    cy = kz * px - kx * pz
    cz = kx * py - ky * px
    ccx = ky * cz - kz * cy
    ccy = kz * cx - kx * cz
    ccz = kx * cy - ky * cx
    h = 0.5 * theta
    ux = px - h * cx + beta * ccx
    uy = py - h * cy + beta * ccy
    uz = pz - h * cz + beta * ccz
    row[_MR_U] = ux
    row[_MR_U + 1] = uy
    row[_MR_U + 2] = uz
    if theta > _SCREW_MIN_ANGLE:
        # velocity theta k x (x - c) + (k.u) k in T0's frame, c = k x u / theta
        row[_MR_C] = (ky * uz - kz * uy) / theta
        row[_MR_C + 1] = (kz * ux - kx * uz) / theta
        row[_MR_C + 2] = (kx * uy - ky * ux) / theta
        ku = kx * ux + ky * uy + kz * uz
        for i in range(3):
            row[_MR_V + i] = ku * row[_MR_KW + i]
    else:
        # velocity theta k x x + u: centre the origin, V = R0 u; the origin itself
        # moves by at most |u|, so radii about it grow by |u|
        for i in range(3):
            row[_MR_V + i] = T0[i, 0] * ux + T0[i, 1] * uy + T0[i, 2] * uz
        row[_MR_WIDEN] = math.sqrt(ux * ux + uy * uy + uz * uz)


# forceinline: a few lines, per node pair (issue 16: time of impact 1.6-3x slower with its
# per-node-pair helpers as calls). The steps read the motion's context as tuples of scalars
# (``_block``), not the ``ctx`` array: as LLVM copies taking the array they ran 17-20% slower
# per motion (its refcount operations stay), so they were numba's copies, typed and lowered
# again inside min_step (7.4 of a first time_of_impact's 35.7 CPU s). As LLVM copies on
# tuples they are typed once: min_step 3.2 CPU s, and time of impact 8-16% faster per
# motion (issue 32, 2026-12-07, benchmarks/results/compile_times.md).
@njit_internal(nogil=True, forceinline=True)
def _gap_step(g, rate, tgt):
    """Time for a gap g to shrink to tgt at the given rate (inf when it cannot)."""
    s = g - tgt
    if s <= 0.0:
        return 0.0
    if rate <= 0.0:
        return math.inf
    return s / rate


# forceinline: per node pair (see _gap_step).
@njit_internal(nogil=True, forceinline=True)
def _dir_rate(blk, th, nx, ny, nz, ra, rb):
    """rate(n) of the module notes for a unit n given in the frame of context block blk."""
    rate = nx * blk[0] + ny * blk[1] + nz * blk[2]
    if th[0] > 0.0:
        c = nx * blk[3] + ny * blk[4] + nz * blk[5]
        rate += th[0] * ra * math.sqrt(max(0.0, 1.0 - c * c))
    if th[1] > 0.0:
        c = nx * blk[6] + ny * blk[7] + nz * blk[8]
        rate += th[1] * rb * math.sqrt(max(0.0, 1.0 - c * c))
    return rate


# forceinline: per node pair (see _gap_step).
@njit_internal(nogil=True, forceinline=True)
def _frame_step(blk, th, g0, g1, g2, s0, s1, s2, ra, rb, tgt):
    """Step of two sets whose gaps along the three axes of one frame (context block blk)
    are g (b on the side s = +-1 of a): the best of each axis and of the
    closest-point direction of the two boxes (gaps <= 0: no separation there).
    Returns (step, squared distance bound |g+|^2)."""
    step = 0.0
    la = 0.0
    npos = 0
    if g0 > 0.0:
        la += g0 * g0
        npos += 1
        step = max(step, _gap_step(g0, s0 * blk[0] + blk[9] * ra + blk[12] * rb, tgt))
    else:
        g0 = 0.0
    if g1 > 0.0:
        la += g1 * g1
        npos += 1
        step = max(step, _gap_step(g1, s1 * blk[1] + blk[10] * ra + blk[13] * rb, tgt))
    else:
        g1 = 0.0
    if g2 > 0.0:
        la += g2 * g2
        npos += 1
        step = max(step, _gap_step(g2, s2 * blk[2] + blk[11] * ra + blk[14] * rb, tgt))
    else:
        g2 = 0.0
    if npos > 1:
        d = math.sqrt(la)
        f = 1.0 / d
        rate = _dir_rate(blk, th, s0 * g0 * f, s1 * g1 * f, s2 * g2 * f, ra, rb)
        step = max(step, _gap_step(d, rate, tgt))
    return step, la


# forceinline: per node pair, 1 site (see _gap_step).
@njit_internal(nogil=True, forceinline=True)
def _box_step(T0, T1, T2, R, AbsR, ha0, ha1, ha2, hb0, hb1, hb2, slack, blk_a, blk_b, th, ra, rb, tgt, cut, tol2):
    """Step and squared distance bound of box A (axis-aligned in a's frame, half
    extents ha, centre at the origin) and box B (centre T, axes the columns of R,
    half extents hb): the face axes of both boxes (bvh_distance.box_lower_bound2).
    Stops after a's axes when they already prune the pair (step >= cut)."""
    g0 = abs(T0) - ha0 - (hb0 * AbsR[0] + hb1 * AbsR[1] + hb2 * AbsR[2]) - slack
    g1 = abs(T1) - ha1 - (hb0 * AbsR[3] + hb1 * AbsR[4] + hb2 * AbsR[5]) - slack
    g2 = abs(T2) - ha2 - (hb0 * AbsR[6] + hb1 * AbsR[7] + hb2 * AbsR[8]) - slack
    sa, la = _frame_step(
        blk_a, th, g0, g1, g2, 1.0 if T0 >= 0.0 else -1.0, 1.0 if T1 >= 0.0 else -1.0, 1.0 if T2 >= 0.0 else -1.0,
        ra, rb, tgt,
    )  # fmt: skip
    if sa >= cut and la > tol2:
        return sa, la  # already pruned: b's axes cannot change that
    q0 = T0 * R[0] + T1 * R[3] + T2 * R[6]
    q1 = T0 * R[1] + T1 * R[4] + T2 * R[7]
    q2 = T0 * R[2] + T1 * R[5] + T2 * R[8]
    h0 = abs(q0) - (ha0 * AbsR[0] + ha1 * AbsR[3] + ha2 * AbsR[6]) - hb0 - slack
    h1 = abs(q1) - (ha0 * AbsR[1] + ha1 * AbsR[4] + ha2 * AbsR[7]) - hb1 - slack
    h2 = abs(q2) - (ha0 * AbsR[2] + ha1 * AbsR[5] + ha2 * AbsR[8]) - hb2 - slack
    sb, lb = _frame_step(
        blk_b, th, h0, h1, h2, 1.0 if q0 >= 0.0 else -1.0, 1.0 if q1 >= 0.0 else -1.0, 1.0 if q2 >= 0.0 else -1.0,
        ra, rb, tgt,
    )  # fmt: skip
    return max(sa, sb), max(la, lb)


# forceinline: per triangle pair, 2 sites (see _gap_step).
@njit_internal(nogil=True, forceinline=True)
def _normal_step(T, P, orient, blk, th, ra, rb, tgt, slack):
    """(step, gap) of triangles T and P (a's frame) along T's unit normal,
    oriented towards P; (0, 0) when P straddles T's plane. orient = 1 when T is
    a's triangle, -1 when it is b's (the rate wants n from a to b)."""
    ux, uy, uz, vx, vy, vz, nx, ny, nz = tri_edges(T)
    nn = math.sqrt(nx * nx + ny * ny + nz * nz)
    if not nn > 0.0:
        return 0.0, 0.0
    f = 1.0 / nn
    nx *= f
    ny *= f
    nz *= f
    h = nx * T[0] + ny * T[1] + nz * T[2]
    s0 = nx * P[0] + ny * P[1] + nz * P[2] - h
    s1 = nx * P[3] + ny * P[4] + nz * P[5] - h
    s2 = nx * P[6] + ny * P[7] + nz * P[8] - h
    lo = min(s0, min(s1, s2))
    hi = max(s0, max(s1, s2))
    # T's own vertices lie within rounding of its plane: the slack covers both
    if lo > 0.0:
        g = lo - slack
        sign = 1.0
    elif hi < 0.0:
        g = -hi - slack
        sign = -1.0
    else:
        return 0.0, 0.0
    if g <= 0.0:
        return 0.0, 0.0
    sign *= orient
    return _gap_step(g, _dir_rate(blk, th, sign * nx, sign * ny, sign * nz, ra, rb), tgt), g


# forceinline: per node pair (see _gap_step); borrowing (kernels/core/jit.py): it reads the
# tree's array without refcount operations.
@njit_borrowing(nogil=True, forceinline=True)
def _node_radius(kind, bv, i, centre):
    """Largest distance of a point of node i from the rotation centre (widened); ``centre``:
    the centre and the widening, ``_centre_of``."""
    cx, cy, cz, hx, hy, hz = node_extent(kind, bv, i)
    dx = cx - centre[0]
    dy = cy - centre[1]
    dz = cz - centre[2]
    return math.sqrt(dx * dx + dy * dy + dz * dz) + math.sqrt(hx * hx + hy * hy + hz * hz) + centre[3]


# forceinline: one site, min_step's child loop (issue 16: as a call, time of impact ran 10-12%
# slower, CPU time per query). Borrowing, as an LLVM copy typed once: as numba's copy (typed
# again inside min_step) time of impact ran 3-5% slower per motion and min_step took
# 2.9 against 2.6 CPU s to compile (issue 32, 2026-12-07).
@njit_borrowing(nogil=True, forceinline=True)
def _pair_step(kind, R, AbsR, t, bv_a, ia, bv_b, ib, slack, blk_a, blk_b, th, speed, ca, cb, tgt, cut, tol2):
    """(step, squared distance bound) of node pair (ia, ib); every kind but OBB is read
    as its enclosing box (``kernels/volumes/access.py``)."""
    is_obb = kind == BV_OBB
    ra = 0.0
    rb = 0.0
    if th[0] > 0.0 or is_obb:
        ra = _node_radius(kind, bv_a, ia, ca)
    if th[1] > 0.0 or is_obb:
        rb = _node_radius(kind, bv_b, ib, cb)
    if is_obb:
        lb2 = node_lower_bound2(kind, R, AbsR, t, bv_a, ia, bv_b, ib, slack)
        rate = speed + th[0] * ra + th[1] * rb
        return _gap_step(math.sqrt(lb2), rate, tgt), lb2
    ea = node_extent(kind, bv_a, ia)
    eb = node_extent(kind, bv_b, ib)
    T0, T1, T2 = centre_offset(R, t, ea, eb)
    return _box_step(
        T0, T1, T2, R, AbsR, ea[3], ea[4], ea[5], eb[3], eb[4], eb[5],
        slack, blk_a, blk_b, th, ra, rb, tgt, cut, tol2,
    )  # fmt: skip


@njit_internal(nogil=True, forceinline=True)
def _block(ctx, o):
    """Context block o (15 values) as a tuple: the inlined steps read scalars, not the array
    (an array argument keeps its refcount operations through LLVM's inlining)."""
    return (
        ctx[o], ctx[o + 1], ctx[o + 2], ctx[o + 3], ctx[o + 4], ctx[o + 5], ctx[o + 6], ctx[o + 7],
        ctx[o + 8], ctx[o + 9], ctx[o + 10], ctx[o + 11], ctx[o + 12], ctx[o + 13], ctx[o + 14],
    )  # fmt: skip


@njit_internal(nogil=True, forceinline=True)
def _centre_of(mr):
    """The rotation centre and radius widening of a motion row, (cx, cy, cz, widen)."""
    return mr[_MR_C], mr[_MR_C + 1], mr[_MR_C + 2], mr[_MR_WIDEN]


@njit_internal(nogil=True)
def _fill_context(Ta, R, mra, mrb, ctx):
    """Per-iteration motion terms in a's frame (block 0) and b's frame (block _CX_B)."""
    Va0 = mra[_MR_V] - mrb[_MR_V]
    Va1 = mra[_MR_V + 1] - mrb[_MR_V + 1]
    Va2 = mra[_MR_V + 2] - mrb[_MR_V + 2]
    for i in range(3):
        ctx[i] = Ta[0, i] * Va0 + Ta[1, i] * Va1 + Ta[2, i] * Va2
        ctx[3 + i] = Ta[0, i] * mra[_MR_KW] + Ta[1, i] * mra[_MR_KW + 1] + Ta[2, i] * mra[_MR_KW + 2]
        ctx[6 + i] = Ta[0, i] * mrb[_MR_KW] + Ta[1, i] * mrb[_MR_KW + 1] + Ta[2, i] * mrb[_MR_KW + 2]
    for j in range(3):
        for v in range(3):
            ctx[_CX_B + 3 * v + j] = R[j] * ctx[3 * v] + R[3 + j] * ctx[3 * v + 1] + R[6 + j] * ctx[3 * v + 2]
    tha = mra[_MR_THETA]
    thb = mrb[_MR_THETA]
    for o in (0, _CX_B):
        for i in range(3):
            c = ctx[o + 3 + i]
            ctx[o + 9 + i] = tha * math.sqrt(max(0.0, 1.0 - c * c))
            c = ctx[o + 6 + i]
            ctx[o + 12 + i] = thb * math.sqrt(max(0.0, 1.0 - c * c))
    ctx[_CX_THA] = tha
    ctx[_CX_THB] = thb
    ctx[_CX_SPEED] = math.sqrt(Va0 * Va0 + Va1 * Va1 + Va2 * Va2)


# LENGTH (~200 lines): the safe-step search over node pairs keeps the smallest step, the
# cut, the seeds and the stack in locals; the per-node-pair step is one inlined call site
# (_pair_step, issue 16) and the triangle-pair step a call, as in distance_task.
@njit(cache=True, nogil=True)
def min_step(
    topo_a, bv_a, tris_a, topo_b, bv_b, tris_b, R, t, slack, kind, ctx, mra, mrb,
    tgt, tol2, cap, shrink, seed_a, seed_b, stack, steps, lb2s, found, stats,
):  # fmt: skip
    """Smallest safe step over all triangle pairs (module notes), at most ``cap``.

    Prunes node pairs whose step is at least shrink * best (relative mode: the
    step returned is at least shrink times the smallest one) unless their
    distance bound is within tol. Returns the step, or -1.0 when a triangle pair
    within tol (squared: tol2) was found: then found = (leaf-order triangles
    ja, jb). Otherwise found = (leaf node pair of the best step), for seeding.
    ``seed_a``, ``seed_b``: a leaf node pair visited first (-1: none).
    """
    AbsR = (abs(R[0]), abs(R[1]), abs(R[2]), abs(R[3]), abs(R[4]), abs(R[5]), abs(R[6]), abs(R[7]), abs(R[8]))
    best = cap
    cut = cap * shrink
    lower = math.inf
    n_pairs = np.int64(0)
    n_tri = np.int64(0)
    blk_a = _block(ctx, np.int64(0))
    blk_b = _block(ctx, np.int64(_CX_B))
    th = (ctx[_CX_THA], ctx[_CX_THB])
    rot_a = th[0] > 0.0
    rot_b = th[1] > 0.0
    speed = ctx[_CX_SPEED]
    ca = _centre_of(mra)
    cb = _centre_of(mrb)
    found[0] = -1
    found[1] = -1
    # The root pair enters as the only child of a virtual first node pair, so the
    # node-pair step below has one (inlined) site. Pushing the root only when not
    # pruned by cap * shrink gives what the old unconditional push gave: cut only
    # shrinks, so a root pruned here was pruned when popped, with the same lower.
    ia = np.int64(0)
    ib = np.int64(0)
    split_a = True
    c0 = np.int64(0)
    cnt = np.int64(1)
    top = np.int64(0)
    virtual = True
    seed_pending = seed_a >= 0
    while virtual or top > 0:
        if virtual:
            virtual = False
        else:
            top, ia, ib = pop_pair(stack, top)
            if steps[top] >= cut and lb2s[top] > tol2:
                lower = min(lower, steps[top])
                continue
            n_pairs += 1
            leaf_a, leaf_b, fa0, fa1, fb0, fb1 = leaf_pair(topo_a, ia, np.int64(0), topo_b, ib, np.int64(0))
            if leaf_a and leaf_b:
                ra = _node_radius(kind, bv_a, ia, ca) if rot_a else 0.0
                rb = _node_radius(kind, bv_b, ib, cb) if rot_b else 0.0
                for jb in range(fb0, fb1):
                    B, blx, bhx, bly, bhy, blz, bhz = mapped_box_row(R, t, tris_b, jb)
                    for ja in range(fa0, fa1):
                        A = tri_row(tris_a, ja)
                        alx, ahx, aly, ahy, alz, ahz = triangle_box(A)
                        if ahx < blx or alx > bhx or ahy < bly or aly > bhy or ahz < blz or alz > bhz:
                            # disjoint coordinate boxes: their gaps bound the pair's step
                            gx = blx - ahx if blx > ahx else alx - bhx
                            gy = bly - ahy if bly > ahy else aly - bhy
                            gz = blz - ahz if blz > ahz else alz - bhz
                            sbox, lbox = _frame_step(
                                blk_a, th, gx - slack, gy - slack, gz - slack,
                                1.0 if blx > ahx else -1.0, 1.0 if bly > ahy else -1.0, 1.0 if blz > ahz else -1.0,
                                ra, rb, tgt,
                            )  # fmt: skip
                            if sbox >= cut and lbox > tol2:
                                lower = min(lower, sbox)
                                continue
                        elif tri_tri_guigue_tuples(A, B):
                            n_tri += 1
                            found[0] = ja
                            found[1] = jb
                            stats[0, 0] += n_pairs
                            stats[0, 1] += n_tri
                            return -1.0
                        # cheaper than the closest points: the gaps along both triangles' normals
                        sn, gn = _normal_step(A, B, 1.0, blk_a, th, ra, rb, tgt, slack)
                        if sn >= cut and gn * gn > tol2:
                            lower = min(lower, sn)
                            continue
                        sn, gn = _normal_step(B, A, -1.0, blk_a, th, ra, rb, tgt, slack)
                        if sn >= cut and gn * gn > tol2:
                            lower = min(lower, sn)
                            continue
                        n_tri += 1
                        d2, x1, y1, z1, x2, y2, z2 = tri_tri_closest(A, B)
                        if d2 <= tol2:
                            found[0] = ja
                            found[1] = jb
                            stats[0, 0] += n_pairs
                            stats[0, 1] += n_tri
                            return -1.0
                        f = 1.0 / math.sqrt(d2)
                        nx = (x2 - x1) * f
                        ny = (y2 - y1) * f
                        nz = (z2 - z1) * f
                        # the gap along n measured on the vertices: a bound for any n
                        gap = (
                            min(nx * B[0] + ny * B[1] + nz * B[2],
                                min(nx * B[3] + ny * B[4] + nz * B[5], nx * B[6] + ny * B[7] + nz * B[8]))
                            - max(nx * A[0] + ny * A[1] + nz * A[2],
                                  max(nx * A[3] + ny * A[4] + nz * A[5], nx * A[6] + ny * A[7] + nz * A[8]))
                            - slack
                        )  # fmt: skip
                        st = _gap_step(gap, _dir_rate(blk_a, th, nx, ny, nz, ra, rb), tgt)
                        if st < best:
                            best = st
                            cut = best * shrink
                            found[0] = ia
                            found[1] = ib
                continue
            if leaf_b or (
                not leaf_a
                and node_size(kind, bv_a, ia) >= node_size(kind, bv_b, ib)
            ):
                split_a = True  # a's children against ib
                c0 = np.int64(topo_a[ia, 0])  # int64 like ia, ib
                cnt = np.int64(topo_a[ia, 1])
            else:
                split_a = False  # ia against b's children
                c0 = np.int64(topo_b[ib, 0])
                cnt = np.int64(topo_b[ib, 1])
        # last child first; two children: both steps, then the smaller pushed last (popped
        # first); more: pushed last to first. The steps do not depend on the order.
        s1 = 0.0
        l1 = 0.0
        c = c0 + cnt - 1
        while c >= c0:
            na = c if split_a else ia
            nb = ib if split_a else c
            sc, lc = _pair_step(kind, R, AbsR, t, bv_a, na, bv_b, nb, slack, blk_a, blk_b, th, speed, ca, cb, tgt, cut, tol2)
            if cnt != 2:
                if sc >= cut and lc > tol2:
                    lower = min(lower, sc)
                else:
                    stack[top, 0] = na
                    stack[top, 1] = nb
                    steps[top] = sc
                    lb2s[top] = lc
                    top += 1
            elif c > c0:
                s1 = sc  # child c0 + 1; child c0 comes next
                l1 = lc
            else:
                s0 = sc
                l0 = lc
                first = c0
                second = c0 + 1
                if s1 < s0:
                    first, second = second, first
                    s0, s1 = s1, s0
                    l0, l1 = l1, l0
                # the larger step below: popped last
                if s1 >= cut and l1 > tol2:
                    lower = min(lower, s1)
                else:
                    stack[top, 0] = second if split_a else ia
                    stack[top, 1] = ib if split_a else second
                    steps[top] = s1
                    lb2s[top] = l1
                    top += 1
                if s0 >= cut and l0 > tol2:
                    lower = min(lower, s0)
                else:
                    stack[top, 0] = first if split_a else ia
                    stack[top, 1] = ib if split_a else first
                    steps[top] = s0
                    lb2s[top] = l0
                    top += 1
            c -= 1
        if seed_pending:
            # after the root, before any pop: the seed pair is visited first
            seed_pending = False
            stack[top, 0] = seed_a
            stack[top, 1] = seed_b
            steps[top] = 0.0
            lb2s[top] = 0.0
            top += 1
    stats[0, 0] += n_pairs
    stats[0, 1] += n_tri
    return min(best, lower)


@njit(cache=True, nogil=True)  # nogil: a batch runs its motions on Python threads (query.batch.run_chunks)
def toi_solve(topo_a, bv_a, tris_a, meta_a, topo_b, bv_b, tris_b, meta_b, P, motion, out, stats, res):
    """Time of impact of tree a moving from P[0] to P[1] and tree b from P[2] to P[3].

    res[0:7] (in): tol, shrink (min_step), max_iter, scale, bv_kind, target, t0. The
    advancement starts at t = t0 and aims at distance ``target`` (each step keeps every
    triangle pair farther than it: no hit certifies the meshes stay more than ``target``
    apart over [t0, 1]; ``time_of_impact`` passes tol / 2, ``check_motion`` its margin
    plus a part of the band), ``0 <= target < tol``. Returns the status (TOI_*), or -(1 + 16 i + code) when pose P[i] is invalid
    (linalg.pose_error code). Writes res[0] = t, res[1] = iterations,
    res[2:18] and res[18:34] = the poses at t (row-major), and out[0] = the
    distance row at t (bvh_distance.distance_task, exact) after a hit or at the
    cap; without a hit out[0, 0] = inf (not measured) and out[0, 7:9] = -1.
    """
    for i in range(4):
        e = pose_error(P[i])
        if e != 0:
            return -(1 + 16 * i + e)
    tol = res[0]
    shrink = res[1]
    max_iter = np.int64(res[2])
    scale = res[3]
    bv_kind = np.int64(res[4])
    tgt = res[5]
    t0 = res[6]
    mra = np.empty(MR_WIDTH)
    mrb = np.empty(MR_WIDTH)
    motion_row(P[0], P[1], motion, mra)
    motion_row(P[2], P[3], motion, mrb)
    n = _stack_rows(meta_a, meta_b) + 1
    stack = np.empty((n, 2), np.int64)
    steps = np.empty(n)
    lb2s = np.empty(n)
    buf = np.empty((24, 3))
    ctx = np.empty(_CX_WIDTH)
    found = np.empty(2, np.int64)
    Ta = np.empty((4, 4))
    Tb = np.empty((4, 4))
    ka = mra[_MR_K : _MR_K + 3]
    kb = mrb[_MR_K : _MR_K + 3]
    ua = mra[_MR_U : _MR_U + 3]
    ub = mrb[_MR_U : _MR_U + 3]
    tha = mra[_MR_THETA]
    thb = mrb[_MR_THETA]
    tol2 = tol * tol
    t = t0
    it = np.int64(0)
    seed_a = np.int64(-1)
    seed_b = np.int64(-1)
    status = TOI_NO_HIT
    inf = math.inf
    row = np.int64(0)
    while True:
        pose_at(P[0], ka, tha, ua, motion, t, Ta)
        pose_at(P[2], kb, thb, ub, motion, t, Tb)
        R, tr = relative_pose(Ta, Tb)
        _fill_context(Ta, R, mra, mrb, ctx)
        slack = 64.0 * _U * (scale + abs(tr[0]) + abs(tr[1]) + abs(tr[2]))
        it += 1
        step = min_step(
            topo_a, bv_a, tris_a, topo_b, bv_b, tris_b, R, tr, slack, bv_kind, ctx, mra, mrb,
            tgt, tol2, 1.0 - t, shrink, seed_a, seed_b, stack, steps, lb2s, found, stats,
        )  # fmt: skip
        if step < 0.0:
            status = TOI_HIT
            seed_a = found[0]
            seed_b = found[1]
            break
        if step >= 1.0 - t:
            # nothing comes within tol / 2 before t = 1
            t = 1.0
            pose_at(P[0], ka, tha, ua, motion, t, Ta)
            pose_at(P[2], kb, thb, ub, motion, t, Tb)
            seed_a = np.int64(-1)
            seed_b = np.int64(-1)
            break
        if it >= max_iter:
            status = TOI_CAP
            seed_a = np.int64(-1)
            seed_b = np.int64(-1)
            break
        seed_a = found[0]
        seed_b = found[1]
        t = min(1.0, t + step * (1.0 - 1e-9))
    if status == TOI_NO_HIT:
        # not measured (one more full distance query): the advancement certified > tol / 2
        out[0, 0] = inf
        out[0, 7] = -1.0
        out[0, 8] = -1.0
    else:
        distance_task(
            topo_a, bv_a, tris_a, Ta, topo_b, bv_b, tris_b, Tb,
            scale, bv_kind, inf, 1.0, seed_a, seed_b, stack, lb2s, buf, out, stats, row,
        )  # fmt: skip
    res[0] = t
    res[1] = it
    for i in range(4):
        for j in range(4):
            res[2 + 4 * i + j] = Ta[i, j]
            res[18 + 4 * i + j] = Tb[i, j]
    return status
