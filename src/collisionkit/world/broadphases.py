"""The broad phases a World can use, as small stateful wrappers over the kernels.

Every broad phase sees the same per-slot boxes (``lo``, ``hi``: (cap, 3)
float64) and the live slots in insertion order, and answers the same
question: which pairs of live boxes overlap (closed intervals on all three
axes). They differ only in the work: see docs/broad-phase.md.

Protocol (what ``World`` calls, once per frame when boxes changed):

``update(lo, hi, slots, removed, added)``
    Bring the structure up to date. ``removed`` and ``added`` are (k,) int64
    slots changed since the last update (removals apply first: a slot may be
    removed and reused by a new object in the same frame).
``pairs(lo, hi, slots, out) -> int``
    Write overlapping slot pairs into ``out`` (cap, 2) int64 while room
    lasts; return their number (when larger than ``len(out)`` the caller
    grows ``out`` and calls again: this call does not change the structure).
``work``
    What the last update did: endpoint swaps (sap), relinks (octree),
    reinsertions (tree), grid entries (grid, hash), box tests (brute).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import UnsupportedOptionError
from ..kernels.broadphase import brute as kb
from ..kernels.broadphase import grid as kg
from ..kernels.broadphase import octree as ko
from ..kernels.broadphase import sap as ks
from ..kernels.broadphase import tree as kt

_I64 = np.int64


def _grow(a: np.ndarray, rows: int, fill) -> np.ndarray:
    """``a`` with at least ``rows`` rows (new rows set to ``fill``)."""
    if a.shape[0] >= rows:
        return a
    new = np.full((max(rows, 2 * a.shape[0]),) + a.shape[1:], fill, dtype=a.dtype)
    new[: a.shape[0]] = a
    return new


class BroadPhase:
    """Base class: the protocol above."""

    name = "base"

    def __init__(self) -> None:
        self.work = 0

    def update(self, lo, hi, slots, removed, added) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def pairs(self, lo, hi, slots, out) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def describe(self) -> dict:
        """Parameters and last-frame counters, for benchmarks and repr."""
        return {"name": self.name, "work": self.work}


class Brute(BroadPhase):
    """Every pair of boxes, O(n^2): the reference the others are tested against."""

    name = "brute"

    def update(self, lo, hi, slots, removed, added) -> None:
        n = slots.shape[0]
        self.work = n * (n - 1) // 2

    def pairs(self, lo, hi, slots, out) -> int:
        return int(kb.brute_pairs(lo, hi, slots, out))

    def pairs_finished(self, lo, hi, slots, group, mask, excluded, out) -> int:
        """The filtered, sorted insertion-order rows in one kernel call (the World's
        per-frame path on small scenes, where each kernel dispatch counts)."""
        return int(kb.brute_pairs_finished(lo, hi, slots, group, mask, excluded, out))


class SweepAndPrune(BroadPhase):
    """Sorted endpoint lists on three axes kept across frames (insertion sort,
    O(n + swaps)); pairs by one sweep along the axis with the fewest 1-D overlaps."""

    name = "sap"

    def __init__(self) -> None:
        super().__init__()
        self.val = np.zeros((3, 64))
        self.eid = np.zeros((3, 64), _I64)
        self.n_ep = 0
        self._removed = np.zeros(32, np.bool_)
        self.axis = 0
        self.overlaps_1d = 0

    def update(self, lo, hi, slots, removed, added) -> None:
        cap = lo.shape[0]
        need = 2 * (slots.shape[0] + removed.shape[0])
        if self.val.shape[1] < need:
            size = max(need, 2 * self.val.shape[1])
            val = np.zeros((3, size))
            eid = np.zeros((3, size), _I64)
            val[:, : self.n_ep] = self.val[:, : self.n_ep]
            eid[:, : self.n_ep] = self.eid[:, : self.n_ep]
            self.val, self.eid = val, eid
        if self._removed.shape[0] < cap:
            self._removed = np.zeros(cap, np.bool_)
        if removed.shape[0]:
            self._removed[removed] = True
        n_ep, swaps = ks.sap_update(self.val, self.eid, _I64(self.n_ep), self._removed, added, lo, hi)
        if removed.shape[0]:
            self._removed[removed] = False
        self.n_ep = int(n_ep)
        self.work = int(swaps)

    def pairs(self, lo, hi, slots, out) -> int:
        k, axis, ov = ks.sap_pairs(self.eid, _I64(self.n_ep), lo, hi, _I64(lo.shape[0]), out)
        self.axis, self.overlaps_1d = int(axis), int(ov)
        return int(k)

    def describe(self) -> dict:
        return {"name": self.name, "swaps": self.work, "axis": "xyz"[self.axis], "overlaps_1d": self.overlaps_1d}


def default_cell(lo: NDArray[np.float64], hi: NDArray[np.float64], slots: NDArray[np.int64]) -> float:
    """Cell width from the objects' sizes: twice the median largest extent (so
    a typical object covers 1 to 8 cells); 1.0 when every box is a point."""
    if slots.shape[0] == 0:
        return 1.0
    ext = (hi[slots] - lo[slots]).max(axis=1)
    cell = 2.0 * float(np.median(ext))
    if not np.isfinite(cell) or cell <= 0.0:
        span = float((hi[slots].max(axis=0) - lo[slots].min(axis=0)).max())
        cell = span / max(1.0, slots.shape[0] ** (1.0 / 3.0)) if span > 0 else 1.0
    return cell


class _Cells(BroadPhase):
    def __init__(self, cell_size: float | None = None, max_per_object: int = 512) -> None:
        super().__init__()
        if cell_size is not None and not (np.isfinite(cell_size) and cell_size > 0):
            raise ValueError(f"cell_size must be a positive finite float, got {cell_size!r}")
        if max_per_object < 1:
            raise ValueError(f"max_per_object must be >= 1, got {max_per_object!r}")
        self.cell_size = None if cell_size is None else float(cell_size)
        self.max_per_object = int(max_per_object)
        self.cell = self.cell_size or 1.0
        self._chosen = False
        self._big = np.zeros(32, np.bool_)

    def update(self, lo, hi, slots, removed, added) -> None:
        if self._big.shape[0] < lo.shape[0]:
            self._big = np.zeros(lo.shape[0], np.bool_)
        # PERF: the sizes change only when objects come or go (rotation changes a
        # world box's extent by at most sqrt(3)), so the cell is chosen then.
        if self.cell_size is not None:
            self.cell = self.cell_size
        elif removed.shape[0] or added.shape[0] or not self._chosen:
            self.cell = default_cell(lo, hi, slots)
            self._chosen = True


class UniformGrid(_Cells):
    """A dense grid over the scene's bounds (at most ``4 n`` cells), rebuilt per frame."""

    name = "grid"

    def pairs(self, lo, hi, slots, out) -> int:
        max_cells = float(max(4 * slots.shape[0], 4096))
        k, cell, entries = kg.grid_pairs(lo, hi, slots, float(self.cell), max_cells, _I64(self.max_per_object), self._big, out)
        self.cell_used, self.work = float(cell), int(entries)
        return int(k)

    def describe(self) -> dict:
        return {"name": self.name, "cell": getattr(self, "cell_used", self.cell), "entries": self.work}


class SpatialHash(_Cells):
    """Integer cell coordinates hashed into a table (unbounded space), rebuilt per frame."""

    name = "hash"

    def pairs(self, lo, hi, slots, out) -> int:
        k, buckets, entries = kg.hash_pairs(lo, hi, slots, float(self.cell), _I64(self.max_per_object), self._big, out)
        self.work = int(entries)
        return int(k)

    def describe(self) -> dict:
        return {"name": self.name, "cell": self.cell, "entries": self.work}


class LooseOctree(BroadPhase):
    """A loose octree in a hash table of (level, cell) nodes, relinking only the
    objects whose node changed."""

    name = "octree"

    def __init__(self) -> None:
        super().__init__()
        self._alloc(32, 64)
        self.lookups = 0

    def _alloc(self, cap: int, ncap: int) -> None:
        self.obj_node = np.full(cap, -1, _I64)
        self.obj_next = np.full(cap, -1, _I64)
        self.obj_prev = np.full(cap, -1, _I64)
        self.node_key = np.zeros((ncap, 4), _I64)
        self.node_head = np.full(ncap, -1, _I64)
        self.node_count = np.zeros(ncap, _I64)
        tcap = 16
        while tcap < 2 * ncap:
            tcap *= 2
        self.table = np.full(tcap, -1, _I64)
        self.level_count = np.zeros(ko.N_LEVELS, _I64)
        self.info = np.zeros(2, _I64)

    def update(self, lo, hi, slots, removed, added) -> None:
        cap = lo.shape[0]
        if self.obj_node.shape[0] < cap:
            self.obj_node = _grow(self.obj_node, cap, -1)
            self.obj_next = _grow(self.obj_next, cap, -1)
            self.obj_prev = _grow(self.obj_prev, cap, -1)
        r = ko.octree_update(
            lo, hi, slots, removed, added, self.obj_node, self.obj_next, self.obj_prev,
            self.node_key, self.node_head, self.node_count, self.table, self.level_count, self.info,
        )
        if r < 0:
            # The node table is full (empty nodes accumulate as objects move):
            # rebuild from scratch with room for 4 nodes per object.
            self._alloc(cap, max(64, 4 * slots.shape[0]))
            r = ko.octree_update(
                lo, hi, slots, np.empty(0, _I64), slots, self.obj_node, self.obj_next, self.obj_prev,
                self.node_key, self.node_head, self.node_count, self.table, self.level_count, self.info,
            )
            assert r >= 0
        self.work = int(r)

    def pairs(self, lo, hi, slots, out) -> int:
        k, lookups = ko.octree_pairs(
            lo, hi, slots, self.obj_node, self.obj_next, self.node_key, self.node_head, self.table, self.level_count, out
        )
        self.lookups = int(lookups)
        return int(k)

    def describe(self) -> dict:
        levels = np.flatnonzero(self.level_count) - ko.LEVEL_OFFSET
        return {"name": self.name, "relinks": self.work, "nodes": int(self.info[0]), "levels": levels.tolist(), "lookups": self.lookups}


class DynamicTree(BroadPhase):
    """A dynamic AABB tree with fat leaves (grown by ``rel_margin`` x the object's
    largest extent, at least ``rel_margin`` x the median extent), incremental
    insert/remove/reinsert and rotations.

    ``rel_margin`` is a fraction of the objects' size, not a length (hence the
    ``rel_`` prefix: a ``tolerance`` is always an absolute length). It changes
    how often leaves are reinserted, never which pairs are reported.
    """

    name = "tree"
    # node arrays, grown by _nodes
    nlo: NDArray[np.float64]
    nhi: NDArray[np.float64]

    def __init__(self, rel_margin: float = 0.2) -> None:
        super().__init__()
        if not (np.isfinite(rel_margin) and rel_margin >= 0):
            raise ValueError(f"rel_margin must be a finite float >= 0, got {rel_margin!r}")
        self.margin = float(rel_margin)
        self._floor = -1.0
        self.st = np.array([-1, 0], _I64)
        self._nodes(64)
        self.slot_leaf = np.full(32, -1, _I64)
        self.visits = 0

    def _nodes(self, size: int) -> None:
        """Node arrays with ``size`` rows, the new rows chained onto the free list."""
        old = self.nlo.shape[0] if hasattr(self, "nlo") else 0

        def grown(name: str, fill: float, dtype: Any, shape: tuple[int, ...] = ()) -> NDArray[Any]:
            new = np.full((size,) + shape, fill, dtype)
            if old:
                new[:old] = getattr(self, name)
            return new

        self.nlo = grown("nlo", np.nan, np.float64, (3,))
        self.nhi = grown("nhi", np.nan, np.float64, (3,))
        self.parent = grown("parent", -1, _I64)
        self.c2 = grown("c2", -1, _I64)
        self.height = grown("height", 0, _I64)
        self.nslot = grown("nslot", -1, _I64)
        c1 = grown("c1", -1, _I64)
        c1[old : size - 1] = np.arange(old + 1, size)
        c1[size - 1] = self.st[1] if old else -1
        self.st[1] = old
        self.c1 = c1

    def update(self, lo, hi, slots, removed, added) -> None:
        cap = lo.shape[0]
        self.slot_leaf = _grow(self.slot_leaf, cap, -1)
        need = 2 * (slots.shape[0] + removed.shape[0]) + 2
        if self.nlo.shape[0] < need:
            self._nodes(max(need, 2 * self.nlo.shape[0]))
        if removed.shape[0] or added.shape[0] or self._floor < 0:
            # fat margin: rel_margin x the object's largest extent, at least rel_margin x
            # the median extent (small objects would otherwise be reinserted on
            # almost every move)
            self._floor = self.margin * 0.5 * default_cell(lo, hi, slots) if slots.shape[0] else 0.0
        self.work = int(kt.tree_update(
            lo, hi, slots, removed, added, self.margin, self._floor,
            self.nlo, self.nhi, self.parent, self.c1, self.c2, self.height, self.nslot, self.slot_leaf, self.st,
        ))

    def pairs(self, lo, hi, slots, out) -> int:
        k, visits = kt.tree_pairs(lo, hi, self.nlo, self.nhi, self.c1, self.c2, self.height, self.nslot, self.st, out)
        self.visits = int(visits)
        return int(k)

    def validate(self, lo, hi, slots) -> None:
        """Check the tree's invariants (AssertionError naming the first broken one)."""
        root = int(self.st[0])
        leaves = []
        if root < 0:
            assert slots.shape[0] == 0, "empty tree with live objects"
            return
        assert self.parent[root] == -1, "root has a parent"
        stack = [root]
        while stack:
            a = stack.pop()
            if self.c1[a] < 0:
                s = int(self.nslot[a])
                leaves.append(s)
                assert self.slot_leaf[s] == a, f"slot {s} does not point at its leaf"
                assert np.all(self.nlo[a] <= lo[s]) and np.all(hi[s] <= self.nhi[a]), f"leaf of slot {s} misses its box"
                continue
            for c in (int(self.c1[a]), int(self.c2[a])):
                assert self.parent[c] == a, f"node {c} has the wrong parent"
                assert np.all(self.nlo[a] <= self.nlo[c]) and np.all(self.nhi[c] <= self.nhi[a]), f"node {a} misses child {c}"
                stack.append(c)
            assert self.height[a] == 1 + max(self.height[self.c1[a]], self.height[self.c2[a]]), f"height of {a}"
        assert sorted(leaves) == sorted(int(s) for s in slots), "leaves differ from the live objects"

    def describe(self) -> dict:
        root = int(self.st[0])
        return {"name": self.name, "reinserts": self.work, "height": int(self.height[root]) if root >= 0 else 0, "visits": self.visits}


BROADPHASES = {
    "brute": Brute,
    "sap": SweepAndPrune,
    "grid": UniformGrid,
    "hash": SpatialHash,
    "octree": LooseOctree,
    "tree": DynamicTree,
}


def make(name: str, **options) -> BroadPhase:
    """A broad phase by name, with its options (``cell_size``/``max_per_object``
    for grid and hash, ``rel_margin`` for tree)."""
    try:
        cls = BROADPHASES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown broadphase {name!r}; choose one of {sorted(BROADPHASES)}") from None
    taken = set(inspect.signature(cls).parameters)
    refused = sorted(set(options) - taken)
    if refused:
        offers = ", ".join(sorted(taken)) or "no options"
        raise UnsupportedOptionError(f"broadphase {name!r} does not take {', '.join(refused)} (it takes {offers})")
    return cls(**options)
