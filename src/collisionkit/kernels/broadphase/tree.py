"""A dynamic AABB tree with fattened leaf boxes (the broad phase of Box2D,
Bullet's btDbvt and FCL's DynamicAABBTreeCollisionManager; written here from
the published ideas, not from their code).

* Leaves hold *fat* boxes: the object's box grown by ``margin`` times its
  largest extent on every side. While the object's box stays inside its fat
  box the tree is left alone; otherwise the leaf is removed and reinserted
  with a new fat box. Small motion therefore costs one containment test per
  object.
* Insertion walks down choosing the sibling by the surface-area cost of the
  new parent and the growth it forces on the ancestors (Goldsmith & Salmon
  1987; Catto, "Dynamic AABB trees", GDC 2019), then refits the ancestors.
* Rebalancing by tree rotations (Kopta et al. 2012, "Fast, effective BVH
  updates for animated scenes"): at every ancestor on the way up, a child may
  swap places with a grandchild on the other side when that shrinks the
  surface area of the node it enters.
* Pairs: a simultaneous descent of the tree against itself from (root, root)
  on the fat boxes; at two leaves the exact test runs on the objects' own
  (tight) boxes. A fat box contains its tight box and every inner box contains
  its children's, so no overlapping pair is missed.

Nodes live in caller-owned flat arrays with a free list (``c1`` chains free
nodes); ``st`` = [root, free head]. Inner nodes have two children; a leaf has
``c1 == -1`` and ``nslot`` = its object's slot.
"""

from __future__ import annotations

import numpy as np

from ..core.jit import njit, njit_internal
from ..core.linalg import box_half_area
from .common import add_pair, boxes_overlap_slots


@njit_internal(nogil=True)
def _union_area(nlo, nhi, a, b):
    return box_half_area(
        min(nlo[a, 0], nlo[b, 0]), min(nlo[a, 1], nlo[b, 1]), min(nlo[a, 2], nlo[b, 2]),
        max(nhi[a, 0], nhi[b, 0]), max(nhi[a, 1], nhi[b, 1]), max(nhi[a, 2], nhi[b, 2]),
    )


@njit_internal(nogil=True)
def _node_area(nlo, nhi, a):
    return box_half_area(nlo[a, 0], nlo[a, 1], nlo[a, 2], nhi[a, 0], nhi[a, 1], nhi[a, 2])


@njit_internal(nogil=True)
def _refit(nlo, nhi, c1, c2, height, a):
    b = c1[a]
    c = c2[a]
    for d in range(3):
        nlo[a, d] = min(nlo[b, d], nlo[c, d])
        nhi[a, d] = max(nhi[b, d], nhi[c, d])
    height[a] = 1 + max(height[b], height[c])


@njit_internal(nogil=True)
def _rotate(nlo, nhi, parent, c1, c2, height, a):
    """Swap a child of ``a`` with a grandchild under its other child when that
    shrinks the surface area of the grandchild's parent (Kopta et al. 2012)."""
    b = c1[a]
    c = c2[a]
    # gain of each swap (kinds 1-4 below); 0.0, never taken, where the grandchild is absent
    gain = (0.0, 0.0, 0.0, 0.0)
    if c1[c] >= 0:  # c inner: B <-> F or B <-> G
        area_c = _node_area(nlo, nhi, c)
        gain = (_union_area(nlo, nhi, b, c2[c]) - area_c, _union_area(nlo, nhi, b, c1[c]) - area_c, 0.0, 0.0)
    if c1[b] >= 0:  # b inner: C <-> D or C <-> E
        area_b = _node_area(nlo, nhi, b)
        gain = (gain[0], gain[1], _union_area(nlo, nhi, c, c2[b]) - area_b, _union_area(nlo, nhi, c, c1[b]) - area_b)
    best = 0.0
    kind = 0
    for i in range(4):  # the first strict minimum below 0
        if gain[i] < best:
            best = gain[i]
            kind = i + 1
    if kind == 0:
        return
    # kind 1: B <-> F, a = (F, C(B, G)); 2: B <-> G, a = (G, C(F, B));
    # kind 3: C <-> D, a = (B(C, E), D); 4: C <-> E, a = (B(D, C), E)
    first = kind <= 2  # a's first child B moves down under C (else C under B)
    moved = b if first else c
    p = c if first else b
    slot = c1 if kind % 2 == 1 else c2  # which child of p comes up
    own = c1 if first else c2  # the child slot of a that it takes
    x = slot[p]
    own[a] = x
    parent[x] = a
    slot[p] = moved
    parent[moved] = p
    _refit(nlo, nhi, c1, c2, height, p)


@njit_internal(nogil=True)
def _walk_up(nlo, nhi, parent, c1, c2, height, a):
    while a >= 0:
        _rotate(nlo, nhi, parent, c1, c2, height, a)
        _refit(nlo, nhi, c1, c2, height, a)
        a = parent[a]


@njit(cache=True, nogil=True)
def _alloc(c1, c2, parent, height, nslot, st):
    a = st[1]
    st[1] = c1[a]
    c1[a] = -1
    c2[a] = -1
    parent[a] = -1
    height[a] = 0
    nslot[a] = -1
    return a


@njit(cache=True, nogil=True)
def _free(c1, nslot, st, a):
    c1[a] = st[1]
    nslot[a] = -1
    st[1] = a


@njit_internal(nogil=True)
def _insert(nlo, nhi, parent, c1, c2, height, nslot, st, leaf):
    root = st[0]
    if root < 0:
        st[0] = leaf
        parent[leaf] = -1
        return
    # Choose the sibling: stop where pairing with this node costs less than the
    # cheapest descent (the descent cost includes the growth of this node).
    idx = root
    while c1[idx] >= 0:
        area = _node_area(nlo, nhi, idx)
        comb = _union_area(nlo, nhi, idx, leaf)
        cost = 2.0 * comb
        inherit = 2.0 * (comb - area)
        a = c1[idx]
        b = c2[idx]
        cost1 = _union_area(nlo, nhi, a, leaf) + inherit
        if c1[a] >= 0:
            cost1 -= _node_area(nlo, nhi, a)
        cost2 = _union_area(nlo, nhi, b, leaf) + inherit
        if c1[b] >= 0:
            cost2 -= _node_area(nlo, nhi, b)
        if cost < cost1 and cost < cost2:
            break
        idx = a if cost1 < cost2 else b
    sib = idx
    old = parent[sib]
    p = _alloc(c1, c2, parent, height, nslot, st)
    parent[p] = old
    c1[p] = sib
    c2[p] = leaf
    parent[sib] = p
    parent[leaf] = p
    if old >= 0:
        if c1[old] == sib:
            c1[old] = p
        else:
            c2[old] = p
    else:
        st[0] = p
    _walk_up(nlo, nhi, parent, c1, c2, height, p)


@njit_internal(nogil=True)
def _remove(nlo, nhi, parent, c1, c2, height, nslot, st, leaf):
    if st[0] == leaf:
        st[0] = -1
        return
    p = parent[leaf]
    gp = parent[p]
    sib = c2[p] if c1[p] == leaf else c1[p]
    if gp >= 0:
        if c1[gp] == p:
            c1[gp] = sib
        else:
            c2[gp] = sib
        parent[sib] = gp
        _free(c1, nslot, st, p)
        _walk_up(nlo, nhi, parent, c1, c2, height, gp)
    else:
        st[0] = sib
        parent[sib] = -1
        _free(c1, nslot, st, p)


@njit_internal(nogil=True)
def _set_fat(nlo, nhi, lo, hi, leaf, s, margin, floor):
    m = max(floor, margin * max(hi[s, 0] - lo[s, 0], max(hi[s, 1] - lo[s, 1], hi[s, 2] - lo[s, 2])))
    for d in range(3):
        nlo[leaf, d] = lo[s, d] - m
        nhi[leaf, d] = hi[s, d] + m


@njit(cache=True, nogil=True)
def tree_update(lo, hi, slots, removed, added, margin, floor,
                nlo, nhi, parent, c1, c2, height, nslot, slot_leaf, st):
    """Remove, add, and reinsert the leaves whose object left its fat box;
    return the number of reinsertions. Fat boxes are grown by
    max(floor, margin * largest extent). Node arrays need 2 * live objects rows."""
    for i in range(removed.shape[0]):
        s = removed[i]
        leaf = slot_leaf[s]
        if leaf >= 0:
            _remove(nlo, nhi, parent, c1, c2, height, nslot, st, leaf)
            _free(c1, nslot, st, leaf)
            slot_leaf[s] = -1
    for i in range(added.shape[0]):
        s = added[i]
        leaf = _alloc(c1, c2, parent, height, nslot, st)
        nslot[leaf] = s
        _set_fat(nlo, nhi, lo, hi, leaf, s, margin, floor)
        _insert(nlo, nhi, parent, c1, c2, height, nslot, st, leaf)
        slot_leaf[s] = leaf
    moved = np.int64(0)
    for p in range(slots.shape[0]):
        s = slots[p]
        leaf = slot_leaf[s]
        if (
            lo[s, 0] >= nlo[leaf, 0] and lo[s, 1] >= nlo[leaf, 1] and lo[s, 2] >= nlo[leaf, 2]
            and hi[s, 0] <= nhi[leaf, 0] and hi[s, 1] <= nhi[leaf, 1] and hi[s, 2] <= nhi[leaf, 2]
        ):
            continue
        _remove(nlo, nhi, parent, c1, c2, height, nslot, st, leaf)
        _set_fat(nlo, nhi, lo, hi, leaf, s, margin, floor)
        _insert(nlo, nhi, parent, c1, c2, height, nslot, st, leaf)
        moved += 1
    return moved


@njit_internal(nogil=True)
def _fat_overlap(nlo, nhi, a, b):
    return (
        nlo[a, 0] <= nhi[b, 0] and nlo[b, 0] <= nhi[a, 0]
        and nlo[a, 1] <= nhi[b, 1] and nlo[b, 1] <= nhi[a, 1]
        and nlo[a, 2] <= nhi[b, 2] and nlo[b, 2] <= nhi[a, 2]
    )


@njit(cache=True, nogil=True)
def tree_pairs(lo, hi, nlo, nhi, c1, c2, height, nslot, st, out):
    """Self-descent from (root, root); write overlapping slot pairs into ``out``
    while room lasts. Returns (pairs found, node pairs visited)."""
    root = st[0]
    if root < 0:
        return 0, 0
    size = 4 * (height[root] + 2)
    stack = np.empty((size, 2), np.int64)
    stack[0, 0] = root
    stack[0, 1] = root
    top = 1
    k = np.int64(0)
    visits = np.int64(0)
    while top > 0:
        top -= 1
        a = stack[top, 0]
        b = stack[top, 1]
        visits += 1
        if top + 3 > size:
            bigger = np.empty((2 * size, 2), np.int64)
            for r in range(size):  # NOTE: a loop, not bigger[:size] = stack: a slice copy of an
                bigger[r, 0] = stack[r, 0]  # array compiles numba's shape-mismatch message
                bigger[r, 1] = stack[r, 1]  # (string formatting, ~2 CPU s of a first use, issue 32)
            stack = bigger
            size *= 2
        if a == b:
            if c1[a] < 0:
                continue
            stack[top, 0] = c1[a]
            stack[top, 1] = c1[a]
            stack[top + 1, 0] = c2[a]
            stack[top + 1, 1] = c2[a]
            stack[top + 2, 0] = c1[a]
            stack[top + 2, 1] = c2[a]
            top += 3
            continue
        if not _fat_overlap(nlo, nhi, a, b):
            continue
        la = c1[a] < 0
        lb = c1[b] < 0
        if la and lb:
            sa = nslot[a]
            sb = nslot[b]
            if boxes_overlap_slots(lo, hi, sa, sb):
                k = add_pair(out, k, sa, sb)
        elif lb or (not la and _node_area(nlo, nhi, a) >= _node_area(nlo, nhi, b)):
            stack[top, 0] = c1[a]
            stack[top, 1] = b
            stack[top + 1, 0] = c2[a]
            stack[top + 1, 1] = b
            top += 2
        else:
            stack[top, 0] = a
            stack[top, 1] = c1[b]
            stack[top + 1, 0] = a
            stack[top + 1, 1] = c2[b]
            top += 2
    return k, visits
