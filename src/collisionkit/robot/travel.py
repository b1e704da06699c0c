"""How far a robot's links can move along a straight joint-space segment (issue 30 item 4).

``link_travel(robot, q0, q1)`` gives, per link, an upper bound on the distance that any
point of the link's geometry moves while the configuration follows
``q(t) = q0 + t (q1 - q0)``, t in [0, 1]: the bound of Schwarzer, Saha & Latombe 2005
(IEEE T-RO 21(3), "Adaptive dynamic collision checking for single and multiple articulated
robots in complex environments"), with reaches measured from each joint's axis line and
the hops between joints taken from the URDF, so that it holds for every configuration of
the segment, not only near q0.

Derivation
----------
Let x(t) be the world position of a point p fixed in link l, and let the moving joints on
the chain from the base to l be h = 1..n (base first), with values v_h(t) = m_h q_s(t) + c_h
(mimic joints resolved to an actuated joint s, multiplier m_h), so that v_h is linear in t
with rate Dv_h = m_h (q1_s - q0_s). The velocity of x is the sum of the joints' contributions

    x'(t) = sum_{h revolute} Dv_h  w_h(t) x (x(t) - o_h(t))  +  sum_{h prismatic} Dv_h a_h(t),

with w_h, a_h the unit world axes and o_h a point of joint h's axis. Since |w x r| is the
distance of r from the line through o_h along w_h, and |a_h| = 1,

    |x(1) - x(0)| <= int_0^1 |x'(t)| dt
                  <= sum_{h revolute} |Dv_h| max_t dist(x(t), axis_h(t)) + sum_{h prismatic} |Dv_h|.

The distance from x to axis h is invariant under the joints before h (they move both
rigidly) and under h itself (a rotation about that very axis), so it depends only on the
joints after h. Take o_h to be the origin of joint h's child frame (it lies on a revolute
joint's axis). With the triangle inequality through the origins of the later moving joints,

    dist(x, axis_h) <= dist(o_{h+1}, axis_h) + |o_{h+2} - o_{h+1}| + ... + |x - o_n|,

where every term lives in one link frame: o_{h+1} in h's child frame is ``c + v_{h+1} d``
(fixed transforms of the URDF, d = 0 unless joint h+1 is prismatic), and likewise for each
hop; |x - o_n| is at most max over the link's mesh vertices of |p - o_n| in n's child
frame (the distance from a point, and from a line, is convex, so its maximum over a
triangle is at a vertex), and for h = n the whole bound is max over vertices of
dist(p, axis_n). A hop's term is a convex function of v_{h+1}, which is linear in t on the
segment: its maximum over the segment is its larger value at q0 and q1. Every term is
therefore bounded over the whole segment, which proves the bound

    travel_l(q0, q1) = sum_{h revolute} |Dv_h| R_h + sum_{h prismatic} |Dv_h|,
    R_h = line_h + sum_{b > h} point_b + fin_point  (R_n = fin_line).

Sub-segments: on [t_a, t_b] every |Dv_h| is (t_b - t_a) times the full segment's, and the
hops' maxima are over a smaller range of v, so ``travel(q(t_a), q(t_b)) <= (t_b - t_a)
travel(q0, q1)``: one bound per segment serves every bisection step (``robot/motion.py``).

Self pairs: the distance between two links is invariant under a rigid motion of both, so
it may be measured in the frame of their deepest common ancestor link, where the joints
they share (the common prefix of their chains) move neither. The relative travel of a
pair is therefore bounded by the terms of the joints that are on one chain only:
``pair_travel`` sums those, which for the Panda's two fingers is only their two prismatic
joints, not the whole arm.

The kernel rounds each term up by a relative 2**-40, far above the float64 rounding of its
few dozen operations (and the sums here by another 2**-40: sums of nonnegative terms,
rounded relatively). Links without geometry are bounded as the single point at their
frame's origin.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..kernels.robot import kinematics
from ..kernels.robot import travel as kt

#: robot -> its travel arrays (the robot's chain and meshes are fixed after construction)
_ARRAYS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _source(robot: Any, joint: Any) -> tuple[int, float, float]:
    """(actuated index, multiplier, offset) with value = mult * q[index] + offset."""
    mult, off = 1.0, 0.0
    j = joint
    while j.mimic is not None:
        mult, off = mult * j.multiplier, mult * j.offset + off
        j = robot._by_name[j.mimic]
    return j.index, mult, off


def _chain(robot: Any, link: str) -> list[Any]:
    """The joints from the base link to ``link``, base first."""
    parent_joint = {j.child: j for j in robot.joints}
    out = []
    while link in parent_joint:
        j = parent_joint[link]
        out.append(j)
        link = j.parent
    return out[::-1]


def travel_arrays(robot: Any) -> tuple[NDArray, ...]:
    """The kernel layout of ``kernels.robot.travel`` for ``robot`` (cached per robot):
    (start, kind, src, mult, nsrc, nmult, noff, hop, fin, joint), one row of ``fin`` per
    link in ``robot.links`` order; ``joint`` (E,) each entry's position in ``robot.joints``."""
    got = _ARRAYS.get(robot)
    if got is not None:
        return got
    start = [0]
    kind: list[int] = []
    src: list[int] = []
    mult: list[float] = []
    nsrc: list[int] = []
    nmult: list[float] = []
    noff: list[float] = []
    hop: list[NDArray] = []
    joint: list[int] = []
    joint_id = {j.name: k for k, j in enumerate(robot.joints)}
    fin = np.zeros((len(robot.links), 2))
    for li, name in enumerate(robot.links):
        chain = _chain(robot, name)
        moving = [k for k, j in enumerate(chain) if j.type != "fixed"]
        mesh = robot.link_meshes.get(name)
        verts = np.asarray(mesh.vertices, np.float64) if mesh is not None else np.zeros((1, 3))
        for e, k in enumerate(moving):
            j = chain[k]
            s, m, _ = _source(robot, j)
            kind.append(kinematics.JOINT_PRISMATIC if j.type == "prismatic" else kinematics.JOINT_REVOLUTE)
            src.append(s)
            mult.append(m)
            joint.append(joint_id[j.name])
            a = np.asarray(j.axis, np.float64)
            last = e == len(moving) - 1
            stop = len(chain) if last else moving[e + 1]
            F = np.eye(4)  # j's child frame <- frame of the next moving joint's parent (or the link)
            for f in chain[k + 1 : stop]:
                F = F @ f.origin
            if last:
                p = verts @ F[:3, :3].T + F[:3, 3]  # the link's vertices in j's child frame
                off_axis = p - np.outer(p @ a, a)
                fin[li] = (np.sqrt((p * p).sum(1)).max(), np.sqrt((off_axis * off_axis).sum(1)).max())
                c = d = np.zeros(3)
                nsrc.append(-1)
                nmult.append(0.0)
                noff.append(0.0)
            else:
                nj = chain[stop]
                c = F[:3, :3] @ nj.origin[:3, 3] + F[:3, 3]
                if nj.type == "prismatic":
                    d = F[:3, :3] @ nj.origin[:3, :3] @ np.asarray(nj.axis, np.float64)
                    ns, nm, no = _source(robot, nj)
                else:
                    d, ns, nm, no = np.zeros(3), -1, 0.0, 0.0
                nsrc.append(ns)
                nmult.append(nm)
                noff.append(no)
            hop.append(np.concatenate([c, d, a]))
        if not moving:  # a link fixed to the base never moves
            fin[li] = 0.0
        start.append(len(kind))
    out = (
        np.array(start, np.int64), np.array(kind, np.int64), np.array(src, np.int64), np.array(mult, np.float64),
        np.array(nsrc, np.int64), np.array(nmult, np.float64), np.array(noff, np.float64),
        np.array(hop, np.float64).reshape(-1, 9), fin, np.array(joint, np.int64),
    )  # fmt: skip
    for arr in out:
        arr.flags.writeable = False
    _ARRAYS[robot] = out
    return out


def _ends(robot: Any, q0: ArrayLike, q1: ArrayLike) -> tuple[NDArray, NDArray, bool]:
    """Validated (N, dof) float64 segment ends and whether they were single (dof,) rows."""
    a = np.asarray(q0, dtype=np.float64)
    b = np.asarray(q1, dtype=np.float64)
    for name, x in (("q_start", a), ("q_end", b)):
        if x.ndim not in (1, 2) or x.shape[-1] != robot.dof:
            raise ValueError(f"{name} must have shape (N, {robot.dof}) or ({robot.dof},), got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} holds non-finite values")
    if a.shape != b.shape:
        raise ValueError(f"q_start and q_end must have the same shape, got {a.shape} and {b.shape}")
    single = a.ndim == 1
    return np.ascontiguousarray(a.reshape(-1, robot.dof)), np.ascontiguousarray(b.reshape(-1, robot.dof)), single


def entry_travel(robot: Any, q0: NDArray[np.float64], q1: NDArray[np.float64]) -> NDArray[np.float64]:
    """(N, E) each entry's term of the travel bound for validated (N, dof) ends (kernel notes)."""
    arrays = travel_arrays(robot)
    out = np.empty((q0.shape[0], arrays[1].shape[0]))
    kt.entry_travel(q0, q1, *arrays[:9], out)
    return out


def pair_masks(robot: Any, a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """(P, E) 0/1 float64: the entries whose terms bound the relative travel of pairs
    (link a, link b), b = -1 for a static object: a's entries and b's, less the joints
    both chains share (module notes)."""
    arrays = travel_arrays(robot)
    start, joint = arrays[0], arrays[9]
    a = np.asarray(a, np.int64).reshape(-1)
    b = np.asarray(b, np.int64).reshape(-1)
    mask = np.zeros((a.size, joint.size))
    for p, (i, j) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        mine = range(start[i], start[i + 1])
        theirs = range(start[j], start[j + 1]) if j >= 0 else range(0)
        shared = {int(joint[e]) for e in mine} & {int(joint[e]) for e in theirs}
        for e in (*mine, *theirs):
            if int(joint[e]) not in shared:
                mask[p, e] = 1.0
    return mask


def sum_terms(terms: NDArray[np.float64], mask: NDArray[np.float64]) -> NDArray[np.float64]:
    """(N, P) ``terms`` (N, E) summed under ``mask`` (P, E), rounded up (sums of
    nonnegative float64 terms: relative error below E * 2**-53). Row by row, so that an
    edge's bound does not depend on the batch it came in (a BLAS product's rounding does)."""
    out = np.empty((terms.shape[0], mask.shape[0]))
    kt.masked_sums(np.ascontiguousarray(terms, np.float64), np.ascontiguousarray(mask, np.float64), 1.0 + 2.0**-40, out)
    return out


def link_travel(robot: Any, q0: ArrayLike, q1: ArrayLike) -> NDArray[np.float64]:
    """Upper bound on how far any point of each link moves from q0 to q1 (straight in
    joint space): (N, L) float64 for (N, dof) ends, (L,) for (dof,) ends; ``robot.links``
    order, world units. The module notes derive and prove the bound.

    Raises
    ------
    ValueError
        Ends of the wrong shape (or of different shapes) or holding NaN or inf.
    """
    x, y, single = _ends(robot, q0, q1)
    L = len(robot.links)
    out = sum_terms(entry_travel(robot, x, y), pair_masks(robot, np.arange(L), np.full(L, -1)))
    return out[0] if single else out


def pair_travel(robot: Any, q0: ArrayLike, q1: ArrayLike, a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """Upper bound on the relative travel of link pairs (a, b) (b = -1: a static object)
    from q0 to q1: (N, P) float64, or (P,) for (dof,) ends. A point of a moves at most this
    far relative to b's frame (module notes)."""
    x, y, single = _ends(robot, q0, q1)
    out = sum_terms(entry_travel(robot, x, y), pair_masks(robot, a, b))
    return out[0] if single else out


__all__ = ["entry_travel", "link_travel", "pair_masks", "pair_travel", "sum_terms", "travel_arrays"]
