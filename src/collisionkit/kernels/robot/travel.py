"""Travel bounds of robot links along a straight joint-space segment (issue 30 item 4).

For each link, an upper bound on how far any point of the link's geometry moves while the
configuration goes from q0 to q1 along ``q(t) = q0 + t (q1 - q0)``, t in [0, 1]
(Schwarzer, Saha & Latombe 2005, "Adaptive dynamic collision checking for single and
multiple articulated robots in complex environments", section III; the derivation and the
proof are in ``robot/travel.py``). Layout, built once per robot by ``robot.travel``:

* per link l, its moving joints on the chain from the base, base first, are the entries
  ``start[l] .. start[l + 1] - 1`` (an entry per joint h);
* ``kind[e]`` (``JOINT_PRISMATIC`` or ``JOINT_REVOLUTE``), ``src[e]``, ``mult[e]``, ``off[e]``:
  the joint's value is ``mult * q[src] + off`` (mimic joints resolved to an actuated one);
* ``hop[e]`` (9,): ``c`` (3), ``d`` (3), ``a`` (3) in the frame of the joint's child link:
  the next moving joint's child-frame origin is ``c + v d`` (v: that joint's value; d = 0
  unless it is prismatic, whose value is ``nmult[e] * q[nsrc[e]] + noff[e]``), and ``a`` is
  this joint's unit axis (its line passes through the origin of that frame);
* ``fin[l]`` (2,): over the link's mesh vertices p, expressed in the last moving joint's
  child frame, ``max |p|`` and ``max dist(p, axis line of the last joint)``.

Per revolute entry h the reach is ``R_h = line(h) + sum_{b > h} point(b) + fin_point``
(``line``: the distance of the next origin from h's axis line, ``point``: the length of
the hop after it; each the larger of its values at q0 and q1, the maximum of a convex
function of v over the segment), or ``fin_line`` for the last entry; the travel bound is
``sum_revolute |mult dq_src| R_h + sum_prismatic |mult dq_src|``; ``entry_travel`` gives
each entry's term (a self pair sums only the joints its two links do not share).
"""

from __future__ import annotations

import math

from ..core.jit import njit, njit_internal
from .kinematics import JOINT_PRISMATIC


@njit_internal(nogil=True)
def _hop(hop, e, v):
    """(|c + v d|, |(I - a a^T)(c + v d)|) of entry ``e``'s hop at next-joint value v."""
    x = hop[e, 0] + v * hop[e, 3]
    y = hop[e, 1] + v * hop[e, 4]
    z = hop[e, 2] + v * hop[e, 5]
    ax = hop[e, 6]
    ay = hop[e, 7]
    az = hop[e, 8]
    along = x * ax + y * ay + z * az
    px = x - along * ax
    py = y - along * ay
    pz = z - along * az
    return math.sqrt(x * x + y * y + z * z), math.sqrt(px * px + py * py + pz * pz)


@njit(cache=True, nogil=True)
def entry_travel(q0, q1, start, kind, src, mult, nsrc, nmult, noff, hop, fin, out):
    """Fill ``out`` (N, E) with each entry's share of its link's travel bound on each of N
    segments: ``|Dv_h| R_h`` for a revolute entry, ``|Dv_h|`` for a prismatic one; a link's
    bound is the sum of its entries (a self pair's, the sum over the joints the two links do
    not share: ``robot/travel.py``).

    q0, q1 : (N, dof) float64 segment ends; start : (L + 1,) int64; kind, src, nsrc : (E,)
    int64; mult, nmult, noff : (E,) float64; hop : (E, 9) float64; fin : (L, 2) float64
    (module notes). Each share is rounded up by a relative 2**-40, far above the float64
    rounding of its few dozen operations.
    """
    n = q0.shape[0]
    n_links = start.shape[0] - 1
    for k in range(n):
        for li in range(n_links):
            e0 = start[li]
            e1 = start[li + 1]
            tail = fin[li, 0]  # sum of the point hops after the current entry, plus fin_point
            for e in range(e1 - 1, e0 - 1, -1):
                dq = abs(mult[e] * (q1[k, src[e]] - q0[k, src[e]]))
                if e == e1 - 1:
                    line = fin[li, 1]
                    point = 0.0
                else:
                    v0 = 0.0
                    v1 = 0.0
                    if nsrc[e] >= 0:
                        v0 = nmult[e] * q0[k, nsrc[e]] + noff[e]
                        v1 = nmult[e] * q1[k, nsrc[e]] + noff[e]
                    p0, l0 = _hop(hop, e, v0)
                    p1, l1 = _hop(hop, e, v1)
                    point = max(p0, p1)
                    line = max(l0, l1) + tail
                if kind[e] == JOINT_PRISMATIC:
                    out[k, e] = dq * (1.0 + 2.0**-40)
                else:
                    out[k, e] = dq * line * (1.0 + 2.0**-40)
                tail += point


@njit(cache=True, nogil=True)
def masked_sums(terms, mask, up, out):
    """out[n, p] = sum over e of terms[n, e] * mask[p, e], in increasing e, times ``up``
    (``robot/travel.sum_terms``: terms (N, E) >= 0, mask (P, E) 0/1, out (N, P) float64).
    PERF: one pass without the (N, P, E) temporary of the numpy form (~4 us a Panda edge)."""
    for n in range(terms.shape[0]):
        for p in range(mask.shape[0]):
            acc = 0.0
            for e in range(mask.shape[1]):
                if mask[p, e] != 0.0:
                    acc += terms[n, e] * mask[p, e]
            out[n, p] = acc * up
