"""The World: named objects, their poses, a broad phase, exact pair queries.

Per frame (``step`` or ``set_poses`` then a query) the path is a handful of
compiled calls, none per object in Python: world boxes of all objects from
their local boxes and poses (one kernel), the broad phase's incremental update
and pair search (one or two kernels), filtering and sorting (one kernel), and
the narrow phase of every mesh-mesh candidate pair in one batched launch
(``query.batch``) of the descent kernel over a pool of all the meshes' trees,
one pool and launch per volume kind: each mesh keeps its own build options. Pairs with
other shapes go through ``collisionkit.intersects`` / ``contacts`` (and so
through ``query.registry``), one call per pair.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from ..bvh import mesh_volume, tree_for
from ..constants import (
    MODE_ALL,
    MODE_ANY,
    TRI_TEST_GUIGUE,
    WORLD_BOX_SLACK,
    WORLD_DEFAULT_GROUP,
    WORLD_DEFAULT_MASK,
    WORLD_TASKS_PER_CALL,
)
from ..errors import InvalidPoseError
from ..geometry.mesh import Mesh
from ..kernels.broadphase.common import finish_pairs, pairs_after_moves, world_boxes
from ..kernels.core.layout import META_FACES, META_NODE_OFF, META_TRI_OFF
from ..kernels.proximity import threshold as kth
from ..query import batch, deferred
from ..query.driver import pose_error
from ..query.spec import nonnegative_length
from ..query.strategies.descent import descent_rows
from . import broadphases
from .filters import PairFilter, as_bits
from .nearest import NearestPair, local_sphere, nearest, nearest_self, pair_measure
from .records import FramePairs, Pairs, WorldContacts, rows_in

_I64 = np.int64
_F64 = np.dtype(np.float64)
_EMPTY = np.empty(0, _I64)
#: ``margin=`` of the collision queries: a finite length >= 0
_check_margin = nonnegative_length("margin")
#: pose changes of at most this fraction of the objects keep the last results (``World._moved``)
WORLD_INCREMENTAL_MOVED = 0.25
#: ... and the candidates are kept while (moved objects) x (objects) is at most this many box
#: tests (~0.1 ms; a broad phase's own update and sweep cost about that on 100k objects)
WORLD_INCREMENTAL_TESTS = 1 << 16
#: ``first_colliding_pair`` tests the candidate rows in blocks of this many, then 8x more each,
WORLD_FIRST_ROWS = 16
#: ... after this many rows tested one per-call ``intersects`` each
WORLD_FIRST_CALLS = 4


def _since(
    valid: NDArray[np.int64] | None, was: tuple[NDArray[np.int64], set[int]] | None, moved: Iterable[int], limit: int
) -> tuple[NDArray[np.int64], set[int]] | None:
    """The (rows, slots moved since) to keep after ``moved`` changed pose: from the rows
    valid until now, else the ones kept before; None once more than ``limit`` moved."""
    if valid is not None:
        was = (valid, set())
    if was is None:
        return None
    was[1].update(moved)
    return was if len(was[1]) <= limit else None


class World:
    """Many named objects with poses; which pairs collide.

    Parameters
    ----------
    broadphase : {"sap", "brute", "grid", "hash", "octree", "tree"}
        How candidate pairs are found; all give exactly the same pairs
        (docs/broad-phase.md says which suits which workload).
    threads : int, optional
        Threads for the narrow phase of many pairs (default: all cores).
    cell_size : float, optional
        Grid and hash: the cell edge, a length (default: from the objects' sizes).
    max_per_object : int, optional
        Grid and hash: most cells one object may cover (default 512; larger objects
        are tested against every other).
    rel_margin : float, optional
        Tree: fat boxes grown by rel_margin x the object's extent (default 0.2; a
        fraction, not a length).

    A broad-phase option that ``broadphase`` does not take raises
    ``UnsupportedOptionError`` (a ``ValueError``) naming it.

    Objects are kept in insertion order: index ``i`` of every array argument
    and result is the i-th live object (``names[i]``); removing an object
    shifts the later indices down by one.

    Examples
    --------
    >>> import collisionkit as ck
    >>> w = ck.World(broadphase="sap")
    >>> box = ck.primitives.box_mesh([1, 1, 1])
    >>> w.add("a", box); w.add("b", box, ck.translation([0.9, 0, 0]))
    0
    1
    >>> w.add("c", box, ck.translation([5, 0, 0]))
    2
    >>> w.colliding_pairs().names
    [('a', 'b')]
    """

    def __init__(
        self,
        broadphase: str = "sap",
        *,
        threads: int | None = None,
        cell_size: float | None = None,
        max_per_object: int | None = None,
        rel_margin: float | None = None,
    ) -> None:
        given = (("cell_size", cell_size), ("max_per_object", max_per_object), ("rel_margin", rel_margin))
        options = {k: v for k, v in given if v is not None}
        self._bp = broadphases.make(broadphase, **options)
        self._bp_options = options
        self.broadphase = broadphase
        self._threads = threads if threads is None else batch.thread_count(threads)
        cap = 16
        self._local = np.zeros((cap, 6))
        self._sphere = np.zeros((cap, 4))  # local bounding sphere (centre, radius) per slot
        self._poses = np.zeros((cap, 4, 4))
        self._lo = np.zeros((cap, 3))
        self._hi = np.zeros((cap, 3))
        self._group = np.full(cap, WORLD_DEFAULT_GROUP, _I64)
        self._mask = np.full(cap, WORLD_DEFAULT_MASK, _I64)
        self._rank = np.full(cap, -1, _I64)
        self._shapes: list[Any] = [None] * cap
        self._slot_names: list[str | None] = [None] * cap
        self._slot_of: dict[str, int] = {}
        self._free: list[int] = list(range(cap - 1, -1, -1))
        # insertion-order index -> slot: a list (O(1) add), its array and the
        # names tuple built lazily (a 100k-object world is built in O(n))
        self._order_list: list[int] = []
        self._order_arr: NDArray[np.int64] | None = np.empty(0, _I64)
        self._names_t: tuple[str, ...] | None = ()
        self._rank_dirty = False
        self._contiguous = True
        self._added: dict[int, None] = {}
        self._removed: set[int] = set()
        self._filter = PairFilter()
        self._bp_dirty = True
        self._cand: NDArray[np.int64] | None = None
        self._coll: NDArray[np.int64] | None = None
        # PERF: after pose changes, the last candidates / colliding pairs and the slots moved
        # since (``_moved``): a query then re-tests only the pairs with a moved object
        self._cand_was: tuple[NDArray[np.int64], set[int]] | None = None
        self._coll_was: tuple[NDArray[np.int64], set[int]] | None = None
        # slots of a pair found colliding (first_colliding_pair), and whether one of them moved since
        self._witness: tuple[int, int] | None = None
        self._witness_moved = False
        self._pools: dict[str, tuple] = {}  # volume kind -> (pool, tree of slot, bv code)
        self._kinds: list[str] = []
        self._kind_of: NDArray[np.int64] | None = None
        self._raw = np.empty((1024, 2), _I64)
        #: bumped by every change of objects, poses or filters (``version``)
        self._version = 0

    @property
    def version(self) -> int:
        """A counter that changes whenever objects, poses or filters change (add, remove,
        set_pose(s), step, run, set_filter, exclude, include, set_exclusion_matrix): what a
        prepared ``Robot.checker`` compares to know its arrays are current."""
        return self._version

    # -- objects -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._order_list)

    @property
    def _order(self) -> NDArray[np.int64]:
        """(n,) int64 slot of each insertion-order index (ranks kept in step)."""
        if self._order_arr is None:
            self._order_arr = np.array(self._order_list, dtype=_I64)
            n = self._order_arr.shape[0]
            self._contiguous = n == 0 or (int(self._order_arr[-1]) == n - 1 and bool(np.all(np.diff(self._order_arr) == 1)))
        if self._rank_dirty:
            self._rank[self._order_arr] = np.arange(self._order_arr.shape[0], dtype=_I64)
            self._rank_dirty = False
        return self._order_arr

    @property
    def _names(self) -> tuple[str, ...]:
        if self._names_t is None:
            names = self._slot_names
            self._names_t = tuple(cast(str, names[s]) for s in self._order_list)  # live slots are named
        return self._names_t

    def __contains__(self, name: object) -> bool:
        return name in self._slot_of

    def __repr__(self) -> str:
        return f"World({len(self)} objects, broadphase={self.broadphase!r})"

    @property
    def names(self) -> tuple[str, ...]:
        """Names of the live objects in insertion order (index -> name)."""
        return self._names

    def index(self, name: str) -> int:
        """Insertion-order index of object ``name``."""
        s = self._slot(name)
        self._order  # noqa: B018 - brings the ranks up to date
        return int(self._rank[s])

    def shape(self, name: str) -> Any:
        return self._shapes[self._slot(name)]

    def _slot(self, name: str) -> int:
        try:
            return self._slot_of[name]
        except (KeyError, TypeError):
            raise KeyError(f"no object named {name!r} in the world") from None

    def _grow(self) -> None:
        old = self._local.shape[0]
        cap = 2 * old

        def grown(a: np.ndarray, fill: Any) -> np.ndarray:
            new = np.full((cap,) + a.shape[1:], fill, a.dtype)
            new[:old] = a
            return new

        self._local = grown(self._local, 0.0)
        self._sphere = grown(self._sphere, 0.0)
        self._poses = grown(self._poses, 0.0)
        self._lo = grown(self._lo, 0.0)
        self._hi = grown(self._hi, 0.0)
        self._group = grown(self._group, WORLD_DEFAULT_GROUP)
        self._mask = grown(self._mask, WORLD_DEFAULT_MASK)
        self._rank = grown(self._rank, -1)
        self._shapes += [None] * old
        self._slot_names += [None] * old
        self._free = list(range(cap - 1, old - 1, -1)) + self._free

    def add(self, name: str, shape: Any, pose: Any = None, *, group: int = WORLD_DEFAULT_GROUP,
            mask: int = WORLD_DEFAULT_MASK) -> int:
        """Add an object; return its insertion-order index.

        Parameters
        ----------
        name : str
            Unique name.
        shape : Mesh or any shape with a ``.bounds`` property
            ((2, 3) float64 local box); the narrow phase uses
            ``collisionkit.intersects``/``contacts`` for non-mesh pairs.
        pose : array_like (4, 4), optional
            World-from-object rigid transform (None = identity).
        group, mask : int
            Collision bits: a pair is tested when each one's group meets the
            other's mask (default: group 1, every mask bit).

        Raises
        ------
        ValueError
            Duplicate name, a shape without finite bounds, bad group/mask.
        InvalidPoseError
            A non-finite or non-rigid pose.
        """
        if not isinstance(name, str):
            raise ValueError(f"object names must be str, got {type(name).__name__}")
        if name in self._slot_of:
            raise ValueError(f"an object named {name!r} is already in the world")
        if not hasattr(shape, "bounds"):
            raise ValueError(f"{name!r}: shape {type(shape).__name__} has no .bounds (a (2, 3) local box)")
        b = np.asarray(shape.bounds, dtype=np.float64)
        if b.shape != (2, 3) or not np.all(np.isfinite(b)) or np.any(b[0] > b[1]):
            raise ValueError(f"{name!r}: shape bounds must be a finite (2, 3) box with min <= max, got {b.tolist()}")
        g = as_bits(group, "group")
        m = as_bits(mask, "mask")
        T = self._pose_stack(pose, 1, "pose")
        if not self._free:
            self._grow()
        s = self._free.pop()
        self._local[s, :3] = b[0]
        self._local[s, 3:] = b[1]
        self._sphere[s] = local_sphere(shape, b)
        self._boxes(T, np.array([s], _I64), "pose", False)
        self._poses[s] = T[0]
        self._group[s] = g
        self._mask[s] = m
        self._shapes[s] = shape
        self._slot_names[s] = name
        self._slot_of[name] = s
        self._added[s] = None
        self._order_list.append(s)
        self._rank[s] = len(self._order_list) - 1
        self._reindex(mesh_changed=isinstance(shape, Mesh))
        return len(self) - 1

    def remove(self, name: str) -> None:
        """Remove object ``name`` (later objects' indices shift down by one)."""
        s = self._slot(name)
        del self._slot_of[name]
        if s in self._added:
            del self._added[s]
        else:
            self._removed.add(s)
        mesh = isinstance(self._shapes[s], Mesh)
        self._shapes[s] = None
        self._slot_names[s] = None
        self._group[s] = WORLD_DEFAULT_GROUP
        self._mask[s] = WORLD_DEFAULT_MASK
        self._filter.drop_slot(s)
        self._rank[s] = -1
        self._order_list.remove(s)
        self._rank_dirty = True
        self._free.append(s)
        self._reindex(mesh_changed=mesh)

    def clear(self) -> None:
        """Remove every object (filters go with them)."""
        for name in list(self._names):
            self.remove(name)

    def _reindex(self, mesh_changed: bool) -> None:
        self._version += 1
        self._order_arr = None
        self._names_t = None
        self._bp_dirty = True
        self._forget()
        if mesh_changed:
            self._pools = {}
            self._kind_of = None

    def _forget(self) -> None:
        """Objects or filters changed: no earlier result holds."""
        self._cand = self._coll = None
        self._cand_was = self._coll_was = None
        self._witness = None
        self._witness_moved = False

    def _moved(self, slots: Iterable[int] | NDArray[np.int64]) -> None:
        """Poses of ``slots`` changed: keep the last results, with the slots moved since
        (while few moved: re-testing more than a fraction of the pairs saves nothing)."""
        moved = slots.tolist() if isinstance(slots, np.ndarray) else slots
        if self._cand is not None or self._cand_was is not None or self._coll is not None or self._coll_was is not None:
            # PERF: skipped once nothing is kept (a loop moving every object: ~1 us a move)
            n = len(self)
            limit = max(1, int(n * WORLD_INCREMENTAL_MOVED))
            # the candidates: each moved box is tested against every box, so fewer in a large world
            self._cand_was = _since(self._cand, self._cand_was, moved, max(1, min(limit, WORLD_INCREMENTAL_TESTS // max(n, 1))))
            self._coll_was = _since(self._coll, self._coll_was, moved, limit)
            self._cand = self._coll = None
        if self._witness is not None and not self._witness_moved and not self._witness_kept(moved):
            self._witness_moved = True  # tested again first: it often still collides

    def _witness_kept(self, moved: Iterable[int]) -> bool:
        w = self._witness
        return w is not None and not any(s == w[0] or s == w[1] for s in moved)

    def _moved_mask(self, was: tuple[NDArray[np.int64], set[int]]) -> NDArray[np.bool_]:
        """(n,) bool by insertion index: moved since ``was``'s rows were computed."""
        self._order  # noqa: B018 - brings the ranks up to date
        mask = np.zeros(len(self), np.bool_)
        mask[self._rank[np.fromiter(was[1], _I64, len(was[1]))]] = True
        return mask

    # -- poses ---------------------------------------------------------------------------
    @staticmethod
    def _pose_stack(pose: Any, n: int, what: str) -> NDArray[np.float64]:
        if pose is None:
            return np.eye(4).reshape(1, 4, 4).repeat(n, axis=0) if n != 1 else np.eye(4).reshape(1, 4, 4)
        if type(pose) is np.ndarray and pose.dtype is _F64 and pose.flags.c_contiguous:
            arr = pose
        else:
            try:
                arr = np.ascontiguousarray(pose, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{what} is not a numeric array: {exc}") from None
        if arr.shape == (4, 4) and n == 1:
            return arr.reshape(1, 4, 4)
        if arr.shape != (n, 4, 4):
            raise ValueError(f"{what} must have shape {(n, 4, 4) if n != 1 else (4, 4)}, got {arr.shape}")
        return arr

    def _boxes(self, T: NDArray[np.float64], slots: NDArray[np.int64], what: str, batched: bool) -> None:
        """World boxes of ``slots`` at poses ``T``; on a bad pose restore and raise."""
        k, code = world_boxes(self._local, T, slots, WORLD_BOX_SLACK, self._lo, self._hi)
        if k >= 0:
            live = slots[: int(k)]
            live = live[self._rank[live] >= 0]
            if live.shape[0]:
                world_boxes(self._local, np.ascontiguousarray(self._poses[live]), live, WORLD_BOX_SLACK, self._lo, self._hi)
            raise pose_error(what, int(k), int(code), batched)

    def set_poses(self, poses: Any, names: Iterable[str] | None = None) -> None:
        """Set the poses of all objects at once, or of the named ones.

        Parameters
        ----------
        poses : array_like (N, 4, 4)
            World-from-object rigid transforms, in insertion order (N = number
            of objects), or in the order of ``names``.
        names : iterable of str, optional
            The objects ``poses`` are for.

        Raises
        ------
        InvalidPoseError
            A non-finite or non-rigid pose (its index is in ``.index``); no
            pose is changed then.
        """
        if names is None:
            slots = self._order
        else:
            slots = np.array([self._slot(n) for n in names], dtype=_I64).reshape(-1)
        n = slots.shape[0]
        if n == 0:
            return
        T = self._pose_stack(poses, n, "poses")
        self._boxes(T, slots, "poses", True)
        if names is None and self._contiguous:
            self._poses[:n] = T  # PERF: no removal yet: slots are 0..n-1, a slice copy
        else:
            self._poses[slots] = T
        self._bp_dirty = True
        self._version += 1
        self._moved(slots)

    def set_pose(self, name: str, pose: Any) -> None:
        """Set one object's pose."""
        s = self._slot(name)
        T = self._pose_stack(pose, 1, "pose")
        self._boxes(T, np.array([s], _I64), "pose", False)
        self._poses[s] = T[0]
        self._bp_dirty = True
        self._version += 1
        self._moved((s,))

    def pose(self, name: str) -> NDArray[np.float64]:
        """(4, 4) float64 copy of one object's pose."""
        return self._poses[self._slot(name)].copy()

    @property
    def poses(self) -> NDArray[np.float64]:
        """(N, 4, 4) float64 copy of all poses in insertion order."""
        return self._poses[self._order]

    def boxes(self) -> NDArray[np.float64]:
        """(N, 2, 3) float64 world boxes (min row, max row) the broad phase sees."""
        return np.stack([self._lo[self._order], self._hi[self._order]], axis=1)

    # -- filters -----------------------------------------------------------------------
    def set_filter(self, name: str, group: int | None = None, mask: int | None = None) -> None:
        """Change an object's collision group and/or mask bits."""
        s = self._slot(name)
        if group is not None:
            self._group[s] = as_bits(group, "group")
        if mask is not None:
            self._mask[s] = as_bits(mask, "mask")
        self._version += 1
        self._forget()

    def exclude(self, a: str, b: str) -> None:
        """Never report the pair (a, b) (e.g. adjacent links of a robot)."""
        sa, sb = self._slot(a), self._slot(b)
        if sa == sb:
            raise ValueError(f"cannot exclude {a!r} from itself")
        self._filter.exclude(sa, sb)
        self._version += 1
        self._forget()

    def include(self, a: str, b: str) -> None:
        """Undo ``exclude(a, b)``."""
        self._filter.include(self._slot(a), self._slot(b))
        self._version += 1
        self._forget()

    def exclude_pairs(self, pairs: Iterable[tuple[str, str]]) -> None:
        for a, b in pairs:
            self.exclude(a, b)

    def excluded_pairs(self) -> list[tuple[str, str]]:
        """The excluded pairs by name (each (earlier, later) in insertion order)."""
        out: list[tuple[str, str]] = []
        self._order  # noqa: B018 - brings the ranks up to date
        for sa, sb in self._filter.slot_pairs():
            if self._rank[sa] > self._rank[sb]:
                sa, sb = sb, sa
            out.append((cast(str, self._slot_names[sa]), cast(str, self._slot_names[sb])))  # live slots
        return sorted(out, key=lambda p: (self.index(p[0]), self.index(p[1])))

    def exclusion_matrix(self) -> NDArray[np.bool_]:
        """(N, N) bool: True where the pair is excluded (MoveIt's allowed-collision
        matrix: "allowed to touch", never reported). Symmetric, False diagonal."""
        n = len(self)
        m = np.zeros((n, n), np.bool_)
        self._order  # noqa: B018 - brings the ranks up to date
        for sa, sb in self._filter.slot_pairs():
            i, j = self._rank[sa], self._rank[sb]
            m[i, j] = m[j, i] = True
        return m

    def set_exclusion_matrix(self, matrix: Any) -> None:
        """Replace every exclusion by an (N, N) bool matrix (symmetric; diagonal ignored)."""
        m = np.asarray(matrix)
        n = len(self)
        if m.shape != (n, n):
            raise ValueError(f"exclusion matrix must have shape ({n}, {n}), got {m.shape}")
        m = m.astype(bool)
        if not np.array_equal(m, m.T):
            raise ValueError("exclusion matrix must be symmetric")
        self._filter.clear()
        for i, j in zip(*np.nonzero(np.triu(m, 1)), strict=True):
            self._filter.exclude(int(self._order[i]), int(self._order[j]))
        self._version += 1
        self._forget()

    # -- queries -----------------------------------------------------------------------
    def _update_broadphase(self) -> None:
        if not self._bp_dirty:
            return
        removed = np.array(sorted(self._removed), dtype=_I64) if self._removed else _EMPTY
        added = np.array(list(self._added), dtype=_I64) if self._added else _EMPTY
        self._bp.update(self._lo, self._hi, self._order, removed, added)
        self._removed.clear()
        self._added.clear()
        self._bp_dirty = False

    def _candidates(self) -> NDArray[np.int64]:
        if self._cand is not None:
            return self._cand
        if self._cand_was is not None:
            self._cand = self._candidates_since(self._cand_was)
            self._cand.flags.writeable = False
            self._cand_was = None
            return self._cand
        self._update_broadphase()
        if isinstance(self._bp, broadphases.Brute):
            # PERF: one kernel gives the finished rows (no slot->index map, no sort)
            while True:
                k = self._bp.pairs_finished(self._lo, self._hi, self._order, self._group, self._mask, self._filter.array, self._raw)
                if k <= self._raw.shape[0]:
                    break
                self._raw = np.empty((k + k // 2, 2), _I64)
            self._cand = self._raw[:k].copy()
            self._cand.flags.writeable = False
            return self._cand
        while True:
            k = self._bp.pairs(self._lo, self._hi, self._order, self._raw)
            if k <= self._raw.shape[0]:
                break
            self._raw = np.empty((k + k // 2, 2), _I64)
        out = np.empty((k, 2), _I64)
        m = finish_pairs(self._raw, _I64(k), self._rank, _I64(len(self)), self._group, self._mask, self._filter.array, out)
        self._cand = out[:m]
        self._cand.flags.writeable = False  # shared with the Pairs records handed out
        return self._cand

    def _candidates_since(self, was: tuple[NDArray[np.int64], set[int]]) -> NDArray[np.int64]:
        """The candidates from the last ones and the objects moved since: the rows of
        unmoved pairs kept, each moved object's box tested against every box (the same
        closed-interval test and filters as the broad phases, so the same rows)."""
        order = self._order
        moved = self._moved_mask(was)
        return pairs_after_moves(was[0], moved, self._lo, self._hi, order, self._group, self._mask, self._filter.array)

    def candidate_pairs(self) -> Pairs:
        """Pairs whose world boxes overlap (broad phase only), filters applied.

        Returns
        -------
        Pairs
            ``object_a``, ``object_b`` (M,) int64 rows, object_a < object_b, sorted;
            ``rows`` (M, 2); ``names``.
        """
        return Pairs.from_rows(self._candidates(), self._names)

    def colliding_pairs(self, *, margin: float = 0.0) -> Pairs:
        """Pairs whose shapes intersect (exact narrow phase on the candidates).

        Parameters
        ----------
        margin : float, optional
            A finite length >= 0: pairs at most this far apart count as colliding
            (``collisionkit.intersects(..., margin=margin)``, which is
            ``distance <= margin``); 0 (default) is the exact intersection test.

        Returns
        -------
        Pairs
            Exactly the pairs ``collisionkit.intersects`` (with the margin) reports for
            every filtered pair of objects, as ``object_a``, ``object_b`` (M,) rows,
            object_a < object_b.

        Raises
        ------
        ValueError
            A negative, NaN, infinite or non-numeric margin.
        """
        m = _check_margin(margin)
        return Pairs.from_rows(self._colliding() if m == 0.0 else self._within(m), self._names)

    def first_colliding_pair(self) -> tuple[str, str] | None:
        """Some pair whose shapes intersect, or None when no pair does.

        The boolean question ("does anything collide?") answered as soon as one
        pair is found: the narrow phase stops at the first intersecting pair
        (``colliding_pairs`` tests every candidate). Which pair is returned when
        several collide is unspecified. A search that finds none has tested every
        candidate, so it also settles ``colliding_pairs()`` (empty) until
        something moves.

        Returns
        -------
        (str, str) or None
            The pair's names in insertion order, or None.
        """
        row = self._first_colliding()
        return None if row is None else (self._names[row[0]], self._names[row[1]])

    def step(self, poses: Any, *, margin: float = 0.0) -> Pairs:
        """``set_poses(poses)`` then ``colliding_pairs(margin=margin)``: one frame."""
        m = _check_margin(margin)  # before the poses change
        self.set_poses(poses)
        return self.colliding_pairs(margin=m)

    def run(self, frames: Any, *, margin: float = 0.0) -> FramePairs:
        """``step`` over many frames: the colliding pairs of each, as rows (frame, object_a, object_b)
        (``margin`` as for ``colliding_pairs``; numpy frames only).

        The broad phase keeps its state from frame to frame inside the call (and the
        world is left at the last frame's poses, as after ``step``).

        Parameters
        ----------
        frames : array_like (F, N, 4, 4), iterable of (N, 4, 4), or dask.array (F, N, 4, 4)
            Poses of all N objects (insertion order) per frame. A Dask array
            (chunked along F) runs each chunk on a copy of the world with its own
            broad phase (fresh at the chunk's first frame) and returns a lazy
            ``FramePairs``; its rows equal the local answer; the world itself is
            not changed.

        Returns
        -------
        FramePairs
            ``frame``, ``object_a``, ``object_b`` (M,) int64 rows sorted by
            (frame, object_a, object_b) and
            ``counts`` (F,) pairs per frame; ``pairs(f)`` is frame f's ``Pairs``.

        Raises
        ------
        ValueError
            ``frames`` is an array of the wrong shape (checked before any frame runs).
        KeyboardInterrupt
            On Ctrl-C: every frame is a few compiled calls of bounded size
            (``constants.WORLD_TASKS_PER_CALL`` pair tasks at most), and the
            signal is seen between them.
        """
        m = _check_margin(margin)
        if deferred.is_lazy(frames):
            if m > 0.0:
                raise ValueError("World.run: a margin does not take Dask frames yet")
            return deferred.run("world_run", self, frames)
        if isinstance(frames, np.ndarray) and (frames.ndim != 4 or frames.shape[1:] != (len(self), 4, 4)):
            raise ValueError(f"frames must have shape (F, {len(self)}, 4, 4), got {frames.shape}")
        found: list[NDArray[np.int64]] = []
        for f, T in enumerate(frames):
            try:
                self.set_poses(T)
            except InvalidPoseError as exc:  # name the frame too (its index is the frame's)
                raise InvalidPoseError(f"frames[{f}]: {exc}", f) from None
            found.append(self._colliding() if m == 0.0 else self._within(m))
        counts = np.array([f.shape[0] for f in found], dtype=_I64)
        rows = np.concatenate(found) if found else np.empty((0, 2), _I64)
        frame = np.repeat(np.arange(counts.shape[0], dtype=_I64), counts)
        return FramePairs(frame, rows[:, 0].copy(), rows[:, 1].copy(), counts, self._names)

    def _replica(self, threads: int | None = None) -> World:
        """A copy for one chunk of frames (``collisionkit.distributed``): the same objects,
        shapes (shared, with their trees), poses and filters, and a fresh broad phase of
        the same kind; running it leaves this world unchanged. ``threads`` replaces the
        world's thread count when given."""
        w = copy.copy(self)
        w._bp = broadphases.make(self.broadphase, **self._bp_options)
        for name in ("_local", "_poses", "_lo", "_hi", "_group", "_mask", "_rank"):
            setattr(w, name, getattr(self, name).copy())
        w._shapes = list(self._shapes)
        w._slot_names = list(self._slot_names)
        w._slot_of = dict(self._slot_of)
        w._free = list(self._free)
        w._order_list = list(self._order_list)
        w._added = dict.fromkeys(self._order_list)
        w._removed = set()
        w._filter = copy.deepcopy(self._filter)
        w._bp_dirty = True
        w._forget()
        w._pools = dict(self._pools)
        w._raw = np.empty_like(self._raw)
        if threads is not None:
            w._threads = batch.thread_count(threads)
        return w

    def broadphase_stats(self) -> dict:
        """What the broad phase did on the last frame (swaps, relinks, entries...).

        The broad phase is brought up to the current poses first: after a small move the
        World finds the candidates without it (``pairs_after_moves``), and its update
        then happens here or at the next full search."""
        self._update_broadphase()
        return self._bp.describe()

    def _allowed(self, ii: NDArray[np.int64], jj: NDArray[np.int64]) -> NDArray[np.bool_]:
        """Which index pairs (i, j) the filters let through (groups, masks, exclusions)."""
        order = self._order
        si, sj = order[ii], order[jj]
        ok = ((self._group[si] & self._mask[sj]) != 0) & ((self._group[sj] & self._mask[si]) != 0)
        if len(self._filter) and ok.any():
            keys = (np.minimum(si, sj) << 32) + np.maximum(si, sj)
            ok &= ~np.isin(keys, self._filter.array)
        return ok

    def _spheres(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """World bounding spheres in insertion order: centres (N, 3), radii (N,)."""
        order = self._order
        sph, T = self._sphere[order], self._poses[order]
        return np.einsum("nij,nj->ni", T[:, :3, :3], sph[:, :3]) + T[:, :3, 3], sph[:, 3]

    def nearest_pair(self, name: str | None = None, *, upper_bound: float = math.inf) -> NearestPair:
        """The closest pair of objects (broad-phase pruned exact distance).

        Every allowed pair (filters apply, as in ``colliding_pairs``) gets a lower
        and an upper bound of its distance from the two world boxes and bounding
        spheres; only the
        pairs whose lower bound does not exceed the smallest upper bound are
        measured with ``collisionkit.distance``, in increasing lower-bound order,
        each with the best distance so far as its ``upper_bound``; the search
        stops when the next lower bound is not below the best distance
        (``world.nearest`` has the bounds). The answer is the brute-force minimum
        over all pairs. Without ``name`` the candidates come from a box tree pruned
        by box distance (O(n log n) plus the candidates, memory linear in them;
        benchmarks/results/world_nearest.md);
        with ``name``, from one O(n) pass over the others.

        Parameters
        ----------
        name : str, optional
            Only pairs of this object with the others.
        upper_bound : float
            Only distances below it are searched for (> 0; inf for none).

        Returns
        -------
        NearestPair
            ``distance`` (0.0 exactly when some pair intersects; unsigned), the
            pair's insertion-order indices ``object_a`` < ``object_b`` and ``names``, the closest
            points (world frame) and faces, and how many pairs were measured.
            ``distance`` is inf with fewer than two objects, when the filters
            leave no pair, or when no pair is closer than ``upper_bound``.

        Raises
        ------
        KeyError
            ``name`` is not an object of the world.
        ValueError
            ``upper_bound`` is not a number > 0.

        Examples
        --------
        >>> import collisionkit as ck
        >>> w = ck.World()
        >>> box = ck.primitives.box_mesh([1, 1, 1])
        >>> for k, x in enumerate([0.0, 3.0, 4.5]):
        ...     _ = w.add(f"b{k}", box, ck.translation([x, 0, 0]))
        >>> p = w.nearest_pair()
        >>> p.names, p.distance
        (('b1', 'b2'), 0.5)
        """
        try:
            ub = float(upper_bound)
        except (TypeError, ValueError):
            raise ValueError(f"upper_bound must be a number, got {upper_bound!r}") from None
        if not ub > 0.0:
            raise ValueError(f"upper_bound must be > 0 (inf for none), got {upper_bound!r}")
        order = self._order
        lo, hi = self._lo[order], self._hi[order]
        shapes = [self._shapes[s] for s in order.tolist()]
        poses = self._poses[order]
        cen, rad = self._spheres()
        if name is None:
            measure = pair_measure(shapes, poses, shapes, poses)
            # PERF: a box tree pruned by the least upper bound so far, not the all-pairs scan
            # (8,000 boxes: 9.8 s before; benchmarks/world_nearest.py)
            res = nearest_self(lo, hi, measure, spheres=(cen, rad), slots=order, group=self._group, mask=self._mask,
                               excluded=self._filter.array, upper_bound=ub)  # fmt: skip
            d, i, j, pa, pb, fa, fb, measured, cand = res
        else:
            k = self.index(name)
            one = np.array([k], _I64)
            measure = pair_measure([shapes[k]], poses[one], shapes, poses)

            def allowed_one(_: NDArray[np.int64], jj: NDArray[np.int64]) -> NDArray[np.bool_]:
                return (jj != k) & self._allowed(np.full(jj.shape[0], k, _I64), jj)

            res = nearest(lo[one], hi[one], lo, hi, measure, same=False, allowed=allowed_one, upper_bound=ub,
                          spheres_a=(cen[one], rad[one]), spheres_b=(cen, rad))  # fmt: skip
            d, _, j, pa, pb, fa, fb, measured, cand = res
            i = k if j >= 0 else -1
            if j >= 0 and j < k:  # report (i < j), points and faces following the objects
                i, j, pa, pb, fa, fb = j, k, pb, pa, fb, fa
        names = None if i < 0 else (self._names[i], self._names[j])
        return NearestPair(d, int(i), int(j), names, pa, pb, fa, fb, measured, cand)

    # -- narrow phase ------------------------------------------------------------------
    def _mesh_kinds(self) -> NDArray[np.int64]:
        """Per slot, the index in ``self._kinds`` of the mesh's own volume kind (-1: not a mesh)."""
        if self._kind_of is not None and self._kind_of.shape[0] >= self._local.shape[0]:
            return self._kind_of
        kind_of = np.full(self._local.shape[0], -1, _I64)
        kinds: list[str] = []
        for s in self._order_list:
            shape = self._shapes[s]
            if isinstance(shape, Mesh):
                bv = mesh_volume(shape)
                if bv not in kinds:
                    kinds.append(bv)
                kind_of[s] = kinds.index(bv)
        self._kinds, self._kind_of = kinds, kind_of
        return kind_of

    def _mesh_pool(self, bv: str):
        """Every mesh object's tree of volume kind ``bv`` (its own split rule and leaf
        size; shared geometry shares a tree) concatenated into one pool, and each
        slot's tree in it (-1: not a mesh). One pool per kind: volume rows of
        different kinds differ in width."""
        cached = self._pools.get(bv)
        if cached is not None and cached[1].shape[0] >= self._local.shape[0]:
            return cached
        tree_of = np.full(self._local.shape[0], -1, _I64)
        trees: list = []
        where: dict[int, int] = {}
        for s in self._order_list:
            shape = self._shapes[s]
            if isinstance(shape, Mesh):
                tree = tree_for(shape, bv)
                key = id(tree)
                if key not in where:
                    where[key] = len(trees)
                    trees.append(tree)
                tree_of[s] = where[key]
        arrs = [t.arrays for t in trees]
        meta = np.concatenate([a.meta for a in arrs]).astype(_I64)
        meta[:, META_NODE_OFF] = np.cumsum([0] + [a.topo.shape[0] for a in arrs[:-1]])
        meta[:, META_TRI_OFF] = np.cumsum([0] + [a.tris.shape[0] for a in arrs[:-1]])
        pool = (
            np.ascontiguousarray(np.concatenate([a.topo for a in arrs])),
            np.ascontiguousarray(np.concatenate([a.bv for a in arrs])),
            np.ascontiguousarray(np.concatenate([a.tris for a in arrs])),
            np.ascontiguousarray(np.concatenate([a.face_ids for a in arrs])),
            np.ascontiguousarray(meta),
            np.ascontiguousarray(np.concatenate([a.scale for a in arrs])),
        )
        self._pools[bv] = (pool, tree_of, trees[0].options.bv_code)
        return self._pools[bv]

    def _split(self, cand: NDArray[np.int64]):
        """Candidate rows into mesh-mesh task groups and a mask of the rest.

        A pair (i, j) is traversed as ``collisionkit.intersects(mesh_i, mesh_j)``
        would: in mesh i's volume kind (mesh j's tree of that kind, its own split
        rule). One group per kind: ``(rows of cand, pool, bv code, tasks)``.
        """
        kind_of = self._mesh_kinds()
        si = self._order[cand[:, 0]]
        sj = self._order[cand[:, 1]]
        ki = kind_of[si]
        mesh = (ki >= 0) & (kind_of[sj] >= 0)
        groups = []
        for k in np.unique(ki[mesh]).tolist():
            rows = np.flatnonzero(mesh & (ki == k))
            pool, tree_of, bv_code = self._mesh_pool(self._kinds[k])
            tasks = np.empty((rows.shape[0], 4), _I64)
            tasks[:, 0] = tree_of[si[rows]]
            tasks[:, 1] = tree_of[sj[rows]]
            tasks[:, 2] = si[rows]
            tasks[:, 3] = sj[rows]
            groups.append((rows, pool, bv_code, tasks))
        return groups, mesh

    def _narrow(self, cand: NDArray[np.int64], first: bool = False) -> NDArray[np.bool_]:
        """Which candidate rows (i, j) collide (exact narrow phase). ``first``: stop at the
        first colliding row; the rows after it are then untested (False)."""
        hit = np.zeros(cand.shape[0], np.bool_)
        if not cand.shape[0]:
            return hit
        if first and cand.shape[0] > WORLD_FIRST_CALLS:
            # PERF: the first rows one per-call test each (~2 us, a launch ~20 us), then
            # blocks that grow 8x: a first hit early costs little, a miss one launch more
            for r in range(WORLD_FIRST_CALLS):
                si, sj = self._order[cand[r, 0]], self._order[cand[r, 1]]
                if self._pair_intersects(si, sj):
                    hit[r] = True
                    return hit
            r0, step = WORLD_FIRST_CALLS, WORLD_FIRST_ROWS
            while r0 < cand.shape[0]:
                r1 = min(r0 + step, cand.shape[0])
                hit[r0:r1] = self._narrow_launch(cand[r0:r1], True)
                if hit[r0:r1].any():
                    break
                r0, step = r1, 8 * step
            return hit
        return self._narrow_launch(cand, first)

    def _pair_intersects(self, si: int, sj: int) -> bool:
        """The exact test of one pair of slots: ``collisionkit.intersects`` (PERF: two meshes
        take its per-call kernel path without the public call's argument checks, ~2 us of a
        boolean after one move; the World's poses are checked rows)."""
        a, b = self._shapes[si], self._shapes[sj]
        if type(a) is Mesh and type(b) is Mesh:
            from ..query.pair import mesh_bool_one

            return mesh_bool_one(a, b, self._poses[si], self._poses[sj]) == 1
        from ..query.pair import intersects

        return bool(intersects(a, b, self._poses[si], self._poses[sj]))

    def _narrow_launch(self, cand: NDArray[np.int64], first: bool) -> NDArray[np.bool_]:
        """``_narrow`` of all the rows in one launch per volume kind (``first``: one shared exit)."""
        hit = np.zeros(cand.shape[0], np.bool_)
        groups, mesh = self._split(cand)
        nthreads = batch.thread_count(self._threads)
        for rows, pool, bv_code, tasks in groups:
            # pairs differ in cost by orders of magnitude: the threads claim them as they go;
            # ``first``: the tasks share one early exit, the first pair found ends the launch
            run = descent_rows(
                pool, self._poses, pool, self._poses, bv_code, TRI_TEST_GUIGUE, MODE_ANY, -1, dynamic=True, shared_exit=first
            )  # fmt: skip
            # NOTE: calls of bounded size, so Ctrl-C is seen between them
            for t0 in range(0, tasks.shape[0], WORLD_TASKS_PER_CALL):
                sub = np.ascontiguousarray(tasks[t0 : t0 + WORLD_TASKS_PER_CALL])
                p = batch.plan(sub.shape[0], nthreads, uniform=True)
                found = batch.pair_rows(sub, p, 0, MODE_ANY, -1, run).counts
                hit[rows[t0 : t0 + sub.shape[0]]] = found > 0
                if first and hit.any():
                    return hit
        if not mesh.all():
            from ..query.pair import intersects

            for r in np.flatnonzero(~mesh).tolist():
                si, sj = self._order[cand[r, 0]], self._order[cand[r, 1]]
                hit[r] = bool(intersects(self._shapes[si], self._shapes[sj], self._poses[si], self._poses[sj]))
                if first and hit[r]:
                    return hit
        return hit

    def _colliding(self) -> NDArray[np.int64]:
        if self._coll is not None:
            return self._coll
        was = self._coll_was
        cand = self._candidates()
        if was is None:
            hit = self._narrow(cand)
        else:
            # pairs without a moved object collide as they did; the others are tested
            moved = self._moved_mask(was)
            n = len(self)
            touched = moved[cand[:, 0]] | moved[cand[:, 1]]
            hit = np.zeros(cand.shape[0], np.bool_)
            hit[~touched] = rows_in(cand[~touched], was[0], n)
            hit[touched] = self._narrow(cand[touched])
        self._coll = cand[hit]
        self._coll.flags.writeable = False
        self._coll_was = None
        return self._coll

    def _first_colliding(self) -> tuple[int, int] | None:
        """(i, j) of some colliding pair, or None (then ``_coll`` is set, empty)."""
        if self._coll is not None:
            return None if not self._coll.shape[0] else (int(self._coll[0, 0]), int(self._coll[0, 1]))
        if self._witness is not None:  # a pair found colliding
            si, sj = self._witness
            if self._witness_moved:  # one of them moved since: the exact test again
                self._witness_moved = False
                if not self._pair_intersects(si, sj):
                    self._witness = None
            if self._witness is not None:
                self._order  # noqa: B018 - brings the ranks up to date
                i, j = int(self._rank[si]), int(self._rank[sj])
                return (i, j) if i < j else (j, i)
        was = self._coll_was
        cand = self._candidates()
        test = cand
        if was is not None:
            moved = self._moved_mask(was)
            still = was[0][~(moved[was[0][:, 0]] | moved[was[0][:, 1]])]
            if still.shape[0]:  # a pair that collided and did not move still does
                return int(still[0, 0]), int(still[0, 1])
            # no pair without a moved object collided: only the others can
            test = cand[moved[cand[:, 0]] | moved[cand[:, 1]]]
        hit = np.flatnonzero(self._narrow(test, first=True))
        if hit.size:
            i, j = int(test[hit[0], 0]), int(test[hit[0], 1])
            order = self._order
            self._witness = (int(order[i]), int(order[j]))
            self._witness_moved = False
            return i, j
        self._coll = cand[:0]  # every candidate settled: none collides
        self._coll.flags.writeable = False
        self._coll_was = None
        return None

    def _margin_candidates(self, m: float) -> NDArray[np.int64]:
        """Filtered pairs (i < j, sorted) whose world boxes are at most ``m`` apart along every
        axis (a pair within ``m`` always is): each box grown by m / 2, every pair tested
        (``broadphases.Brute``). NOTE: the boxes are padded (``WORLD_BOX_SLACK``) far beyond
        the rounding of growing them."""
        self._update_broadphase()
        h = 0.5 * m
        lo, hi = self._lo - h, self._hi + h
        bp = broadphases.Brute()
        raw = np.empty((max(1024, 4 * len(self)), 2), _I64)
        while True:
            k = bp.pairs_finished(lo, hi, self._order, self._group, self._mask, self._filter.array, raw)
            if k <= raw.shape[0]:
                return raw[:k].copy()
            raw = np.empty((k + k // 2, 2), _I64)

    def _within(self, m: float) -> NDArray[np.int64]:
        """Rows (i, j) of the pairs at most ``m`` > 0 apart: mesh pairs by the threshold
        descent (``kernels.proximity.threshold``) over the World's pools, one launch per
        volume kind; other shapes (and mesh pairs outside the kernel's band of scales) by
        ``collisionkit.intersects(..., margin=m)``."""
        cand = self._margin_candidates(m)
        hit = np.zeros(cand.shape[0], np.bool_)
        if cand.shape[0]:
            from ..query.pair import intersects

            groups, mesh = self._split(cand)
            nthreads = batch.thread_count(self._threads)
            rest = [np.flatnonzero(~mesh)]
            for rows, pool, bv_code, tasks in groups:
                topo, bv, tris, _, meta, scale = pool
                for t0 in range(0, tasks.shape[0], WORLD_TASKS_PER_CALL):  # Ctrl-C seen between calls
                    sub = np.ascontiguousarray(tasks[t0 : t0 + WORLD_TASKS_PER_CALL])
                    out = np.zeros(sub.shape[0], np.int8)
                    stats = np.zeros((sub.shape[0], 2), _I64)
                    batch.launch(
                        batch.plan(sub.shape[0], nthreads, uniform=True), kth.within_serial, kth.within_parallel,
                        topo, bv, tris, meta, scale, self._poses, topo, bv, tris, meta, scale, self._poses,
                        sub, bv_code, float(m), out, stats,
                    )  # fmt: skip
                    r = rows[t0 : t0 + sub.shape[0]]
                    hit[r] = out == kth.WITHIN
                    rest.append(r[out == kth.OUT_BAND])
            for r in np.concatenate(rest).tolist():
                si, sj = self._order[cand[r, 0]], self._order[cand[r, 1]]
                hit[r] = bool(intersects(self._shapes[si], self._shapes[sj], self._poses[si], self._poses[sj], margin=m))
        out_rows = cand[hit]
        out_rows.flags.writeable = False
        return out_rows

    def contacts(self, *, max_pairs: int | None = None) -> WorldContacts:
        """The intersecting triangle pairs of every colliding object pair.

        Parameters
        ----------
        max_pairs : int, optional
            Cap per object pair (``truncated`` marks where it cut).

        Returns
        -------
        WorldContacts
            Colliding pairs (i < j, sorted) and, per pair, its (face_a, face_b)
            rows, face_a on object i. Without a cap the rows equal
            ``collisionkit.contacts`` of each pair.
        """
        if max_pairs is not None and (isinstance(max_pairs, bool) or not isinstance(max_pairs, (int, np.integer)) or max_pairs < 1):
            raise ValueError(f"max_pairs must be a positive int or None, got {max_pairs!r}")
        cap = -1 if max_pairs is None else int(max_pairs)
        cand = self._candidates()
        m = cand.shape[0]
        counts = np.zeros(m, _I64)
        truncated = np.zeros(m, np.bool_)
        fa_parts: list[NDArray[np.int64]] = [np.empty(0, _I64)] * m
        fb_parts: list[NDArray[np.int64]] = [np.empty(0, _I64)] * m
        if m:
            groups, mesh = self._split(cand)
            for rows, pool, bv_code, tasks in groups:
                fa, fb, cnt, trunc = self._all_pairs(pool, bv_code, tasks, cap)
                offs = np.concatenate([[0], np.cumsum(cnt)])
                for t, r in enumerate(rows.tolist()):
                    if cnt[t]:
                        fa_parts[r] = fa[offs[t] : offs[t + 1]]
                        fb_parts[r] = fb[offs[t] : offs[t + 1]]
                        counts[r] = cnt[t]
                        truncated[r] = trunc[t]
            if not mesh.all():
                from ..query.pair import contacts as pair_contacts

                for r in np.flatnonzero(~mesh).tolist():
                    si, sj = self._order[cand[r, 0]], self._order[cand[r, 1]]
                    c = pair_contacts(self._shapes[si], self._shapes[sj], self._poses[si], self._poses[sj], max_pairs=max_pairs)
                    counts[r] = len(c)
                    truncated[r] = c.truncated  # one pose pair: a bool
                    fa_parts[r] = np.asarray(c.face_a, _I64)
                    fb_parts[r] = np.asarray(c.face_b, _I64)
        keep = counts > 0
        rows = np.flatnonzero(keep)
        face_a = np.concatenate([fa_parts[r] for r in rows]) if rows.size else np.empty(0, _I64)
        face_b = np.concatenate([fb_parts[r] for r in rows]) if rows.size else np.empty(0, _I64)
        pair_index = np.repeat(np.arange(rows.size, dtype=_I64), counts[rows])
        kept = cand[keep]
        return WorldContacts(
            np.ascontiguousarray(kept[:, 0]), np.ascontiguousarray(kept[:, 1]), counts[keep].copy(),
            truncated[keep].copy(), pair_index, face_a.astype(_I64), face_b.astype(_I64), self._names,
        )

    def _all_pairs(self, pool, bv_code, tasks, cap):
        """Every intersecting triangle pair of each task (first pass into a
        shared buffer, tasks that overflow rerun with exact room)."""
        n = tasks.shape[0]
        p = batch.plan(n, batch.thread_count(self._threads))
        # at least 256 rows a chunk: world pairs in contact tend to touch in many triangles
        run = descent_rows(pool, self._poses, pool, self._poses, bv_code, TRI_TEST_GUIGUE, MODE_ALL, cap)
        counts, _, keys, starts = batch.pair_rows(tasks, p, 64, MODE_ALL, cap, run, min_chunk_rows=256)
        kept = counts if cap < 0 else np.minimum(counts, cap)
        meta = pool[4]
        faces_b = meta[tasks[:, 1], META_FACES]
        idx = np.repeat(starts, kept) + (np.arange(int(kept.sum()), dtype=_I64) - np.repeat(np.cumsum(kept) - kept, kept))
        k = keys[idx]
        fb_rep = np.repeat(faces_b, kept)
        face_a = k // fb_rep
        face_b = k % fb_rep
        trunc = (counts > kept) if cap >= 0 else np.zeros(n, np.bool_)
        return face_a, face_b, kept, trunc

