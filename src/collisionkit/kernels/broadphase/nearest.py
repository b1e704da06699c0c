"""Nearest-pair candidates of one set of boxes, pruned by box distance (no all-pairs scan).

The question (``collisionkit.world.nearest``): among the allowed pairs (i, j), i < j,
of n objects, which can be the closest? Each pair has a lower bound ``L`` and an
upper bound ``U`` of the distance of what the two objects hold, from their world
boxes and bounding spheres (the formulas of ``world/nearest.py``: box gap and
centre distance plus half diagonals; sphere centre distance minus/plus radii, each
widened by its relative slack). The answer's pair has ``L <= C``, where ``C`` is the
least ``U`` over the allowed pairs (and the caller's ``upper_bound``), so these
pairs are the candidates; every other pair is farther than some allowed pair.

How, in O(n log n + candidates) for scenes whose near pairs are few:

* a static tree over the boxes (median splits on the centres along the widest
  axis, leaves of up to ``LEAF`` boxes, ``build_tree``), whose node boxes bound their
  boxes, so the box gap to a node is at most the gap to any box below it;
* a seed (``seed_pair``): the pair of least ``U`` among the pairs within each leaf
  (spatial neighbours); the caller measures its exact distance and passes it as the
  ``threshold`` (any allowed pair's distance bounds the answer, and is usually far
  below the loose ``U``: 100k separated boxes keep 440 candidates instead of 745k);
* one query per object (``nearest_candidates``), in the tree's order (neighbours one
  after another): a depth-first descent, nearer child first, skipping a node whose
  box gap from the object exceeds ``C``, the least of the threshold and the upper
  bounds met so far (``C`` only falls, so a skipped node can hold no candidate of the
  final ``C``), or whose objects all come before the object (pairs i < j only); at
  the leaves each allowed pair gets its bounds, lowers ``C`` to its ``U`` and is kept
  while ``L <= C``.

Kept pairs whose ``L`` exceeds the final ``C`` are dropped at the end (and whenever
the buffer fills), so the memory is linear in the pairs that survive.

EXACT: a node's gap is computed with the same rounded operations as a box's on
coordinates that are never closer (a node box holds its boxes), and rounding is
monotone, so a node is never skipped when one of its boxes is a candidate. Norms
are taken scaled (``_norm``) when the squares would overflow or underflow, so huge
and tiny coordinates keep the bounds on the right side.
"""

from __future__ import annotations

import numpy as np

from ..core.jit import njit, njit_internal
from .common import groups_match, is_excluded

#: Boxes per leaf of the query tree.
LEAF = 4
#: Relative slack of the box bounds (world/nearest.py: BOX_RTOL) and of the sphere bounds
#: (world/nearest.py: SPHERE_RTOL): far above the rounding of the few float64 operations.
BOX_RTOL = 1e-12
SPHERE_RTOL = 1e-12
_TINY = 1e-290


@njit_internal(nogil=True)
def _norm(x, y, z):
    """Euclidean norm of (x, y, z), scaled when the squares would overflow or underflow."""
    s = x * x + y * y + z * z
    if _TINY < s < np.inf:
        return np.sqrt(s)
    m = max(abs(x), abs(y), abs(z))
    if m == 0.0 or not m < np.inf:
        return m
    x /= m
    y /= m
    z /= m
    return m * np.sqrt(x * x + y * y + z * z)


@njit_internal(nogil=True)
def _gap(alo, ahi, blo, bhi, a, b):
    """Lower bound of the distance between box a of (alo, ahi) and box b of (blo, bhi)."""
    gx = max(max(alo[a, 0] - bhi[b, 0], blo[b, 0] - ahi[a, 0]), 0.0)
    gy = max(max(alo[a, 1] - bhi[b, 1], blo[b, 1] - ahi[a, 1]), 0.0)
    gz = max(max(alo[a, 2] - bhi[b, 2], blo[b, 2] - ahi[a, 2]), 0.0)
    return _norm(gx, gy, gz) * (1.0 - BOX_RTOL)


@njit_internal(nogil=True)
def _select(perm, key, lo, hi, k):
    """Reorder ``perm[lo:hi + 1]`` so that ``perm[k]`` holds the k-th smallest ``key``,
    with no larger key before it and no smaller after it (Hoare's selection)."""
    while hi > lo:
        m = (lo + hi) // 2
        # median of three as the pivot (sorted and clustered inputs stay O(n))
        x, y, z = key[perm[lo]], key[perm[m]], key[perm[hi]]
        pivot = max(min(x, y), min(max(x, y), z))
        i, j = lo, hi
        while i <= j:
            while key[perm[i]] < pivot:
                i += 1
            while key[perm[j]] > pivot:
                j -= 1
            if i <= j:
                t = perm[i]
                perm[i] = perm[j]
                perm[j] = t
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return


@njit(cache=True, nogil=True)
def build_tree(lo, hi):
    """A static box tree over n boxes by median splits of their centres.

    lo, hi : (n, 3) float64 boxes, n >= 1

    Returns ``(perm, nlo, nhi, first, count, child, nmax)``: ``perm`` (n,) the box of
    each tree position (leaves hold consecutive positions); per node (m,) its box
    ``nlo``/``nhi`` (m, 3), ``first``/``count`` its positions when a leaf (``child``
    -1), else ``child`` its first child (the second is ``child + 1``), and ``nmax``
    the largest box index below it.
    """
    n = lo.shape[0]
    perm = np.arange(n)
    cap = 2 * n + 2
    nlo = np.empty((cap, 3))
    nhi = np.empty((cap, 3))
    first = np.zeros(cap, np.int64)
    count = np.zeros(cap, np.int64)
    child = np.full(cap, -1, np.int64)
    nmax = np.zeros(cap, np.int64)
    cen = (lo + hi) * 0.5
    key = np.empty(n)
    st_node = np.empty(128, np.int64)
    st_lo = np.empty(128, np.int64)
    st_hi = np.empty(128, np.int64)
    st_node[0], st_lo[0], st_hi[0] = 0, 0, n
    top = 1
    n_nodes = 1
    c_lo = np.empty(3)
    c_hi = np.empty(3)
    while top > 0:
        top -= 1
        node, s, e = st_node[top], st_lo[top], st_hi[top]
        b0 = perm[s]
        nmax[node] = b0
        for ax in range(3):
            nlo[node, ax] = lo[b0, ax]
            nhi[node, ax] = hi[b0, ax]
            c_lo[ax] = cen[b0, ax]
            c_hi[ax] = cen[b0, ax]
        for p in range(s + 1, e):
            b = perm[p]
            nmax[node] = max(nmax[node], b)
            for ax in range(3):
                nlo[node, ax] = min(nlo[node, ax], lo[b, ax])
                nhi[node, ax] = max(nhi[node, ax], hi[b, ax])
                c_lo[ax] = min(c_lo[ax], cen[b, ax])
                c_hi[ax] = max(c_hi[ax], cen[b, ax])
        if e - s <= LEAF:
            first[node] = s
            count[node] = e - s
            continue
        axis = 0
        for ax in range(1, 3):
            if c_hi[ax] - c_lo[ax] > c_hi[axis] - c_lo[axis]:
                axis = ax
        for p in range(s, e):
            key[perm[p]] = cen[perm[p], axis]
        mid = (s + e) // 2
        _select(perm, key, s, e - 1, mid)
        left = n_nodes
        n_nodes += 2
        child[node] = left
        # NOTE: depth is log2(n / LEAF) + 1 (median splits), far below the stack's 64 levels
        st_node[top], st_lo[top], st_hi[top] = left, s, mid
        st_node[top + 1], st_lo[top + 1], st_hi[top + 1] = left + 1, mid, e
        top += 2
    return perm, nlo[:n_nodes], nhi[:n_nodes], first[:n_nodes], count[:n_nodes], child[:n_nodes], nmax[:n_nodes]


@njit(cache=True, nogil=True)
def nearest_tree(lo, hi, scen, srad, slots, group, mask):
    """The query tree of n >= 1 objects and their data in tree order.

    lo, hi : (n, 3) float64 world boxes, insertion order
    scen, srad : (n, 3), (n,) float64 world bounding spheres (centres, radii)
    slots : (n,) int64 slot of each object (the filters are per slot)
    group, mask : (cap,) int64 collision groups and masks per slot

    Returns ``(perm, nlo, nhi, first, count, child, nmax)`` (``build_tree``), per node
    ``ngroup``, ``nmask`` the union (bitwise or) of its objects' groups and masks, and,
    per tree position (n,): ``plo``, ``phi`` the box, ``bc``, ``br`` its centre and
    half diagonal, ``sc``, ``sr``, ``sm`` the sphere's centre, radius and largest
    centre coordinate magnitude, ``pslot`` the slot. PERF: gathered in tree order, so
    a leaf's objects are contiguous in memory.
    """
    n = lo.shape[0]
    perm, nlo, nhi, first, count, child, nmax = build_tree(lo, hi)
    # PERF: a node none of whose objects a query's filters let through is skipped whole
    # (two sets joined by groups, World groups): children come after their parent
    m = child.shape[0]
    ngroup = np.zeros(m, np.int64)
    nmask = np.zeros(m, np.int64)
    for node in range(m - 1, -1, -1):
        c = child[node]
        if c >= 0:
            ngroup[node] = ngroup[c] | ngroup[c + 1]
            nmask[node] = nmask[c] | nmask[c + 1]
        else:
            for p in range(first[node], first[node] + count[node]):
                ngroup[node] |= group[slots[perm[p]]]
                nmask[node] |= mask[slots[perm[p]]]
    plo = np.empty((n, 3))
    phi = np.empty((n, 3))
    bc = np.empty((n, 3))
    br = np.empty(n)
    sc = np.empty((n, 3))
    sr = np.empty(n)
    sm = np.empty(n)
    pslot = np.empty(n, np.int64)
    for p in range(n):
        b = perm[p]
        for ax in range(3):
            plo[p, ax] = lo[b, ax]
            phi[p, ax] = hi[b, ax]
            bc[p, ax] = (lo[b, ax] + hi[b, ax]) * 0.5
            sc[p, ax] = scen[b, ax]
        br[p] = _norm(hi[b, 0] - lo[b, 0], hi[b, 1] - lo[b, 1], hi[b, 2] - lo[b, 2]) * 0.5
        sr[p] = srad[b]
        sm[p] = max(abs(scen[b, 0]), abs(scen[b, 1]), abs(scen[b, 2]))
        pslot[p] = slots[b]
    return perm, nlo, nhi, first, count, child, nmax, ngroup, nmask, plo, phi, bc, br, sc, sr, sm, pslot


@njit(cache=True, nogil=True)
def _bounds(plo, phi, bc, br, sc, sr, sm, a, b):
    """(lower, upper) distance bounds of the objects at tree positions a and b (the
    tighter of the box and the sphere bounds; ``world/nearest.py`` derives them)."""
    lower = _gap(plo, phi, plo, phi, a, b)
    upper = (_norm(bc[a, 0] - bc[b, 0], bc[a, 1] - bc[b, 1], bc[a, 2] - bc[b, 2]) + br[a] + br[b]) * (1.0 + BOX_RTOL)
    d = _norm(sc[a, 0] - sc[b, 0], sc[a, 1] - sc[b, 1], sc[a, 2] - sc[b, 2])
    slack = SPHERE_RTOL * (sm[a] + sm[b] + sr[a] + sr[b] + d)
    lower = max(lower, d - sr[a] - sr[b] - slack)
    upper = min(upper, d + sr[a] + sr[b] + slack)
    return lower, upper


@njit(cache=True, nogil=True)
def seed_pair(tree, group, mask, excluded):
    """A near allowed pair, cheaply: the least upper bound over the pairs within each
    leaf (spatial neighbours). Returns ``(i, j, lower, upper)``, i < j insertion-order
    indices, or ``(-1, -1, inf, inf)`` when no leaf holds an allowed pair."""
    perm, _, _, first, count, child, _, _, _, plo, phi, bc, br, sc, sr, sm, pslot = tree
    filtered = excluded.shape[0] > 0
    bi, bj, bl, bu = -1, -1, np.inf, np.inf
    for node in range(child.shape[0]):
        if child[node] >= 0:
            continue
        for a in range(first[node], first[node] + count[node]):
            for b in range(a + 1, first[node] + count[node]):
                if not groups_match(pslot[a], pslot[b], group, mask) or (filtered and is_excluded(excluded, pslot[a], pslot[b])):
                    continue
                low, up = _bounds(plo, phi, bc, br, sc, sr, sm, a, b)
                if up < bu:
                    bi, bj, bl, bu = min(perm[a], perm[b]), max(perm[a], perm[b]), low, up
    return bi, bj, bl, bu


@njit(cache=True, nogil=True)
def nearest_candidates(tree, group, mask, excluded, upper_bound, threshold, i_lo, i_hi):
    """Candidate pairs of the nearest-pair search over one set of objects.

    tree : ``nearest_tree``'s tuple
    group, mask : (cap,) int64 collision groups and masks per slot
        (``common.finish_pairs``)
    excluded : (E,) int64 sorted excluded slot-pair keys
    upper_bound : only pairs whose lower bound is below it are candidates
    threshold : a distance some allowed pair is known to reach (inf for none):
        pairs whose lower bound exceeds it are no candidates
    i_lo, i_hi : only pairs (i, j) with i_lo <= i < i_hi (0, n for all)

    Returns ``(ii, jj, lower, cap, visits)``: the candidate pairs (k,) int64, i < j,
    with their lower bounds (k,) float64, unordered: every allowed pair with
    ``lower < upper_bound`` and ``lower <= cap``; ``cap`` the least of
    ``threshold``, ``upper_bound`` and the upper bounds of the allowed pairs met;
    ``visits`` the tree nodes visited.
    """
    perm, nlo, nhi, first, count, child, nmax, ngroup, nmask, plo, phi, bc, br, sc, sr, sm, pslot = tree
    n = perm.shape[0]
    cap = min(upper_bound, threshold)
    filtered = excluded.shape[0] > 0
    size = 1024
    ki = np.empty(size, np.int64)
    kj = np.empty(size, np.int64)
    kl = np.empty(size)
    k = 0
    st = np.empty(256, np.int64)
    st_low = np.empty(256)
    visits = 0
    for a in range(n):
        ia = perm[a]
        if ia < i_lo or ia >= i_hi:
            continue
        sa = pslot[a]
        ga = group[sa]
        ma = mask[sa]
        st[0] = 0
        st_low[0] = 0.0
        top = 1
        while top > 0:
            top -= 1
            node = st[top]
            if st_low[top] > cap or nmax[node] <= ia or (ga & nmask[node]) == 0 or (ngroup[node] & ma) == 0:
                continue  # C fell since the node was pushed; no pair i < j below; none passes the filters
            visits += 1
            c = child[node]
            if c < 0:
                for b in range(first[node], first[node] + count[node]):
                    ib = perm[b]
                    if ib <= ia:
                        continue  # each pair once, from its first object
                    sb = pslot[b]
                    if not groups_match(sa, sb, group, mask) or (filtered and is_excluded(excluded, sa, sb)):
                        continue
                    low, up = _bounds(plo, phi, bc, br, sc, sr, sm, a, b)
                    if up < cap:
                        cap = up
                    if low < upper_bound and low <= cap:
                        if k == size:
                            # full: drop the pairs the lower C has ruled out, grow if still crowded
                            w = 0
                            for q in range(k):
                                if kl[q] <= cap:
                                    ki[w], kj[w], kl[w] = ki[q], kj[q], kl[q]
                                    w += 1
                            k = w
                            if k > size // 2:
                                size *= 2
                                ki2 = np.empty(size, np.int64)
                                kj2 = np.empty(size, np.int64)
                                kl2 = np.empty(size)
                                # NOTE: a loop, not slice copies: an array's slice copy compiles
                                # numba's shape-mismatch message (string formatting, issue 32)
                                for r in range(k):
                                    ki2[r], kj2[r], kl2[r] = ki[r], kj[r], kl[r]
                                ki, kj, kl = ki2, kj2, kl2
                        ki[k] = ia
                        kj[k] = ib
                        kl[k] = low
                        k += 1
                continue
            l1 = _gap(plo, phi, nlo, nhi, a, c)
            l2 = _gap(plo, phi, nlo, nhi, a, c + 1)
            # nearer child on top of the stack (popped first: C falls sooner)
            if l1 <= l2:
                if l2 <= cap:
                    st[top], st_low[top] = c + 1, l2
                    top += 1
                if l1 <= cap:
                    st[top], st_low[top] = c, l1
                    top += 1
            else:
                if l1 <= cap:
                    st[top], st_low[top] = c, l1
                    top += 1
                if l2 <= cap:
                    st[top], st_low[top] = c + 1, l2
                    top += 1
    w = 0
    for q in range(k):
        if kl[q] <= cap:
            ki[w], kj[w], kl[w] = ki[q], kj[q], kl[q]
            w += 1
    return ki[:w].copy(), kj[:w].copy(), kl[:w].copy(), cap, visits
