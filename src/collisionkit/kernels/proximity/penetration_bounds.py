"""Kernels for the bracketing penetration method (``query.penetration_bounds``).

Two ingredients, both over one mesh M's AABB tree (``bv`` rows: centre, half
extents; M's own frame) and a *query frame* into which M's triangles are mapped
by ``linalg.map_triangle`` with (R, t) -- exactly as ``intersects`` maps b into
a's frame, so every decision here is on the coordinates ``intersects`` decides
on:

* **Point in solid by ray parity, exactly.** A segment from the point p to a
  point q outside M's bounding sphere crosses M's surface an odd number of
  times iff p is inside (closed mesh). Each segment-triangle crossing is
  decided by exact orientation predicates (``core.predicates.orient3d``): the
  plane test (p and q strictly on opposite sides) and the three Pluecker-type
  edge tests orient3d(p, q, v_i, v_j) (all strictly of one sign: the line
  passes through the open triangle). Any zero that could matter (the segment
  through an edge or vertex, p on the surface, a coplanar triangle) makes the
  ray *ambiguous*; the next of a fixed list of directions is tried, and after
  all of them the answer is "unknown" (-1), which callers treat on the safe
  side. Tree culling maps the segment into M's frame (rigid inverse, rounded)
  and tests it against each node box grown by a slack far above that rounding
  (``_slack``), so culling may only err towards keeping a node.
* **Point to surface distance** by a pruned depth-first descent (box lower
  bounds, nearest child first) that may stop as soon as the point is known
  to be no deeper than a given cut: the maximum over many points of their
  minimum distance (a one-sided Hausdorff distance) then visits few nodes
  per point.

No allocation in per-point code: traversal stacks come from the caller, one
row per chunk.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ...constants import LEAF_FLAG
from ..core.jit import njit, njit_internal
from ..core.linalg import map_triangle, relative_pose
from ..core.predicates import orient3d
from ..core.tri_rows import map_point
from ..core.unlinked import call_unlinked, njit_driver
from ..triangle.tri_distance import point_face, seg_seg_closest

#: Ray directions tried in turn; irrational-looking components so that a
#: ray along a mesh's axes, diagonals or grid planes is unlikely (unit length).
_RAYS = (
    (0.5773502691896258, 0.5773502691896258, 0.5773502691896258),
    (0.2672612419124244, -0.5345224838248488, 0.8017837257372732),
    (-0.7071067811865476, 0.1178511301977579, 0.6972166887783963),
    (0.1230914909793327, 0.9847319278346618, -0.1230914909793327),
    (-0.3015113445777636, -0.3015113445777636, -0.9045340337332909),
    (0.8320502943378437, -0.5547001962252291, 0.0176776695296637),
    (-0.4364357804719848, 0.8728715609439696, 0.2182178902359924),
    (0.6246950475544243, 0.0390434404721515, -0.7808688094430304),
)
_N_RAYS = 8
#: Relative slack of the culling boxes: 2**-30 of the magnitudes involved,
#: ~8e6 times the rounding of the inverse map and of the axis tests.
_SLACK_REL = 2.0**-30
IDENTITY_R = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
IDENTITY_T = (0.0, 0.0, 0.0)


def stack_size(depth: int, fanout: int) -> int:
    """Entries a single-tree depth-first stack needs (``depth`` levels below the root)."""
    return int(depth) * max(int(fanout) - 1, 1) + 2


@njit_internal(nogil=True)
def _from_frame(R, t, x, y, z):
    """p -> R^T (p - t), the rigid inverse (rounded; used for culling and distances only)."""
    dx = x - t[0]
    dy = y - t[1]
    dz = z - t[2]
    return (
        R[0] * dx + R[3] * dy + R[6] * dz,
        R[1] * dx + R[4] * dy + R[7] * dz,
        R[2] * dx + R[5] * dy + R[8] * dz,
    )


@njit_internal(nogil=True)
def segment_crosses(px, py, pz, qx, qy, qz, T):
    """Does segment [p, q] cross triangle T (a 9-tuple) at one interior point?

    Returns 1 (a transversal crossing through the open triangle, p and q
    strictly off its plane), 0 (no common point) or -1 (ambiguous: the segment
    meets an edge or vertex, an endpoint lies on the triangle, or it lies in
    the triangle's plane). Exact: signs of ``orient3d`` only.
    """
    s1 = orient3d(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], px, py, pz)
    s2 = orient3d(T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7], T[8], qx, qy, qz)
    if (s1 > 0.0 and s2 > 0.0) or (s1 < 0.0 and s2 < 0.0):
        return 0
    # the line pq passes through the open triangle iff these three agree strictly
    o0 = orient3d(px, py, pz, qx, qy, qz, T[0], T[1], T[2], T[3], T[4], T[5])
    o1 = orient3d(px, py, pz, qx, qy, qz, T[3], T[4], T[5], T[6], T[7], T[8])
    o2 = orient3d(px, py, pz, qx, qy, qz, T[6], T[7], T[8], T[0], T[1], T[2])
    if (o0 > 0.0 or o1 > 0.0 or o2 > 0.0) and (o0 < 0.0 or o1 < 0.0 or o2 < 0.0):
        return 0
    if o0 == 0.0 or o1 == 0.0 or o2 == 0.0 or s1 == 0.0 or s2 == 0.0:
        return -1
    return 1


@njit_internal(nogil=True)
def segment_parity(topo, bv, tris, R, t, px, py, pz, qx, qy, qz, slack, stack):
    """Parity (0 or 1) of the crossings of segment [p, q] (query frame) with M's
    triangles mapped by (R, t); -1 when some crossing is ambiguous."""
    ax, ay, az = _from_frame(R, t, px, py, pz)
    bx, by, bz = _from_frame(R, t, qx, qy, qz)
    mx = 0.5 * (ax + bx)
    my = 0.5 * (ay + by)
    mz = 0.5 * (az + bz)
    dx = 0.5 * (bx - ax)
    dy = 0.5 * (by - ay)
    dz = 0.5 * (bz - az)
    adx = abs(dx)
    ady = abs(dy)
    adz = abs(dz)
    parity = 0
    n = 1
    stack[0] = 0
    while n > 0:
        n -= 1
        i = stack[n]
        cx = mx - bv[i, 0]
        cy = my - bv[i, 1]
        cz = mz - bv[i, 2]
        hx = bv[i, 3] + slack
        hy = bv[i, 4] + slack
        hz = bv[i, 5] + slack
        # separating axes of a segment and a box: the box's three, then d x e_i
        if abs(cx) > hx + adx or abs(cy) > hy + ady or abs(cz) > hz + adz:
            continue
        if abs(cy * dz - cz * dy) > hy * adz + hz * ady:
            continue
        if abs(cz * dx - cx * dz) > hx * adz + hz * adx:
            continue
        if abs(cx * dy - cy * dx) > hx * ady + hy * adx:
            continue
        first = topo[i, 0]
        count = topo[i, 1]
        if topo[i, 2] & LEAF_FLAG:
            for k in range(first, first + count):
                T = map_triangle(
                    R, t, tris[k, 0, 0], tris[k, 0, 1], tris[k, 0, 2], tris[k, 1, 0], tris[k, 1, 1],
                    tris[k, 1, 2], tris[k, 2, 0], tris[k, 2, 1], tris[k, 2, 2],
                )  # fmt: skip
                c = segment_crosses(px, py, pz, qx, qy, qz, T)
                if c < 0:
                    return -1
                parity ^= c
        else:
            for c in range(count):
                stack[n] = first + c
                n += 1
    return parity


@njit_internal(nogil=True)
def inside_code(topo, bv, tris, R, t, px, py, pz, centre, radius, scale, stack):
    """1 if p (query frame) is inside closed mesh M (triangles mapped by (R, t)),
    0 if outside, -1 if every ray was ambiguous (p on M's surface, typically).

    ``centre`` (3-tuple, M's frame) and ``radius`` bound M's vertices;
    ``scale`` is M's largest absolute coordinate (sizes the culling slack).
    """
    cx, cy, cz = map_point(R, t, centre[0], centre[1], centre[2])
    ex = px - cx
    ey = py - cy
    ez = pz - cz
    r = math.sqrt(ex * ex + ey * ey + ez * ez)
    if r > radius * (1.0 + 1e-9) + 1e-300:
        return 0  # outside the bounding sphere (grown against rounding)
    length = 2.0 * (r + radius) + 1e-300
    mag = scale + abs(t[0]) + abs(t[1]) + abs(t[2]) + abs(px) + abs(py) + abs(pz) + length
    slack = _SLACK_REL * mag
    for k in range(_N_RAYS):
        u = _RAYS[k]
        code = segment_parity(
            topo, bv, tris, R, t, px, py, pz, px + length * u[0], py + length * u[1], pz + length * u[2], slack, stack
        )
        if code >= 0:
            return code
    return -1


@njit_internal(nogil=True)
def point_triangle2(px, py, pz, T):
    """Squared distance from p to triangle T (9-tuple) and the closest point."""
    inside, d2, fx, fy, fz = point_face(px, py, pz, T)
    if inside:
        return d2, fx, fy, fz
    best = math.inf
    bx = by = bz = 0.0
    for e in range(3):
        i = 3 * e
        j = 3 * ((e + 1) % 3)
        r = seg_seg_closest(px, py, pz, px, py, pz, T[i], T[i + 1], T[i + 2], T[j], T[j + 1], T[j + 2])
        if r[0] < best:
            best = r[0]
            bx = r[4]
            by = r[5]
            bz = r[6]
    return best, bx, by, bz


@njit_internal(nogil=True)
def _box_gap2(px, py, pz, bv, i, slack):
    gx = max(abs(px - bv[i, 0]) - bv[i, 3] - slack, 0.0)
    gy = max(abs(py - bv[i, 1]) - bv[i, 4] - slack, 0.0)
    gz = max(abs(pz - bv[i, 2]) - bv[i, 5] - slack, 0.0)
    return gx * gx + gy * gy + gz * gz


@njit_internal(nogil=True)
def surface_distance2(topo, bv, tris, px, py, pz, cut2, slack, stack):
    """Squared distance from p (M's frame) to M's surface, and the closest point.

    Stops early, returning some value <= ``cut2``, as soon as the point is
    known to be within sqrt(cut2) of the surface (pass -1 to never stop).
    Box gaps are reduced by ``slack`` so that rounding never prunes the minimum.
    """
    best = math.inf
    fx = fy = fz = 0.0
    n = 1
    stack[0] = 0
    while n > 0:
        n -= 1
        i = stack[n]
        if _box_gap2(px, py, pz, bv, i, slack) >= best:
            continue
        first = np.int64(topo[i, 0])  # int64, as stack rows: one signature of _box_gap2
        count = topo[i, 1]
        if topo[i, 2] & LEAF_FLAG:
            for k in range(first, first + count):
                T = (
                    tris[k, 0, 0], tris[k, 0, 1], tris[k, 0, 2], tris[k, 1, 0], tris[k, 1, 1],
                    tris[k, 1, 2], tris[k, 2, 0], tris[k, 2, 1], tris[k, 2, 2],
                )  # fmt: skip
                d2, x, y, z = point_triangle2(px, py, pz, T)
                if d2 < best:
                    best, fx, fy, fz = d2, x, y, z
            if best <= cut2:
                return best, fx, fy, fz
        elif count == 2:
            # nearest child last, so it is popped first
            g0 = _box_gap2(px, py, pz, bv, first, slack)
            g1 = _box_gap2(px, py, pz, bv, first + 1, slack)
            stack[n] = first if g0 > g1 else first + 1
            stack[n + 1] = first + 1 if g0 > g1 else first
            n += 2
        else:
            for c in range(count):
                stack[n] = first + c
                n += 1
    return best, fx, fy, fz


@njit_internal(nogil=True)
def _frames(Ta, Tb, m_is_a):
    """(R, t) mapping M into a's frame, and (R, t) mapping the points there.

    b enters a's frame by ``relative_pose`` as in ``intersects``; a stays put."""
    R, t = relative_pose(Ta, Tb)
    if m_is_a:
        return IDENTITY_R, IDENTITY_T, R, t
    return R, t, IDENTITY_R, IDENTITY_T


@njit_internal(nogil=True)
def _deepest_chunk(topo, bv, tris, Ta, Tb, m_is_a, pts, first, step, centre, radius, scale, cut2, stack, codes):
    """Points first, first + step, ... of ``deepest_inside``: (d2, index, closest point)."""
    Rm, tm, Rp, tp = _frames(Ta, Tb, m_is_a)
    best = cut2
    best_i = -1
    fx = fy = fz = 0.0
    for i in range(first, pts.shape[0], step):
        qx, qy, qz = map_point(Rp, tp, pts[i, 0], pts[i, 1], pts[i, 2])
        code = inside_code(topo, bv, tris, Rm, tm, qx, qy, qz, centre, radius, scale, stack)
        codes[i] = code
        if code != 1:
            continue
        mx, my, mz = _from_frame(Rm, tm, qx, qy, qz)
        slack = 2.0**-40 * (scale + abs(mx) + abs(my) + abs(mz))
        d2, x, y, z = surface_distance2(topo, bv, tris, mx, my, mz, best, slack, stack)
        if d2 > best:
            best, best_i, fx, fy, fz = d2, i, x, y, z
    return best, best_i, fx, fy, fz


@njit(cache=True, nogil=True)
def _deepest_into(c, nchunks, topo, bv, tris, Ta, Tb, m_is_a, pts, centre, radius, scale, cut2, stacks, codes, out):
    """Chunk c of ``deepest_inside``: points c, c + nchunks, ... into out[c]."""
    r = _deepest_chunk(topo, bv, tris, Ta, Tb, m_is_a, pts, c, nchunks, centre, radius, scale, cut2, stacks[c], codes)
    out[c, 0] = r[0]
    out[c, 1] = r[1]
    out[c, 2] = r[2]
    out[c, 3] = r[3]
    out[c, 4] = r[4]


# NOTE: a driver that calls its chunk unlinked (kernels/core/unlinked.py): linked, the chunk's
# chain (ray parity, the point-to-surface search) compiled again in each of the prange
# kernel's functions
@njit_driver(_deepest_into, parallel=True)
def deepest_inside(topo, bv, tris, Ta, Tb, m_is_a, pts, centre, radius, scale, cut2, stacks, codes, out, nchunks):
    """The point of ``pts`` inside M that lies deepest below M's surface.

    M is a (``m_is_a``) or b, posed by (4, 4) ``Ta``/``Tb``; ``pts`` (P, 3) are
    the other mesh's vertices in its own frame. Each point is classified in a's
    frame (``inside_code``: codes[i] = 1, 0 or -1) and, if inside, measured to
    M's surface in M's frame, the search stopping once the point cannot beat
    the deepest found so far in its chunk (nor ``cut2``, a squared depth
    already known). Chunk c (of ``nchunks`` = len(stacks)) takes points c,
    c + nchunks, ... and writes out[c] = (d2, point index or -1, closest point
    on M in M's frame). Only the row with the largest d2 is meaningful as a
    maximum; the others may hold values cut short.
    """
    for c in prange(nchunks):
        # the tuple in the loop: parfor passes no tuple holding a tuple (``centre``) to its body
        args = (topo, bv, tris, Ta, Tb, m_is_a, pts, centre, radius, scale, cut2, stacks, codes, out)
        call_unlinked(_deepest_into, np.int64(c), nchunks, args)  # kernels/core/unlinked.py


@njit_internal(nogil=True)
def _contained_one(topo, bv, tris, Ta, Tb, m_is_a, reps, centre, radius, scale, stack):
    """1 / -1 / 0 of ``contained_any`` for one pose pair."""
    Rm, tm, Rp, tp = _frames(Ta, Tb, m_is_a)
    res = 0
    for i in range(reps.shape[0]):
        qx, qy, qz = map_point(Rp, tp, reps[i, 0], reps[i, 1], reps[i, 2])
        code = inside_code(topo, bv, tris, Rm, tm, qx, qy, qz, centre, radius, scale, stack)
        if code == 1:
            return 1
        if code < 0:
            res = -1
    return res


@njit(cache=True, nogil=True)
def _contained_into(c, nchunks, topo, bv, tris, Ta, Tb, m_is_a, reps, centre, radius, scale, stacks, out):
    """Chunk c of ``contained_any``: pose pairs c, c + nchunks, ..."""
    for k in range(c, Ta.shape[0], nchunks):
        out[k] = _contained_one(topo, bv, tris, Ta[k], Tb[k], m_is_a, reps, centre, radius, scale, stacks[c])


@njit_driver(_contained_into, parallel=True)
def contained_any(topo, bv, tris, Ta, Tb, m_is_a, reps, centre, radius, scale, stacks, out, nchunks):
    """For each pose pair k (``Ta``, ``Tb``: (N, 4, 4)): is some point of
    ``reps`` (the other mesh's vertices, its own frame) inside M?

    out[k] = 1 (one is inside), -1 (none is known inside but some is unknown)
    or 0 (all outside). With one vertex per connected piece and surfaces that
    do not meet, 0 means no piece of the other mesh lies inside M. ``nchunks``
    = len(stacks); the chunk calls unlinked, as ``deepest_inside``.
    """
    for c in prange(nchunks):
        args = (topo, bv, tris, Ta, Tb, m_is_a, reps, centre, radius, scale, stacks, out)  # as deepest_inside
        call_unlinked(_contained_into, np.int64(c), nchunks, args)  # kernels/core/unlinked.py
