"""The prepared robot checker: a robot, its self-collision pairs and a World flattened once
into arrays, so that one configuration (or a batch) is one compiled call (issue 30 item 1).

``robot.checker(world, self_collision=..., allowed=..., ignore=..., base=...)`` returns a
``RobotChecker``; ``Robot.check`` and ``Robot.check_detail`` use one transparently, cached
on the robot per (world, options). The arrays are rebuilt when the world changes (its
``version`` counter: add, remove, poses, filters) and never otherwise.

Which pairs the kernel answers: every (link, object) and self pair whose two shapes are
``collisionkit.Mesh`` objects, in one volume kind per pair (``ROBOT_VOLUME``, "obb", where
both meshes leave it to "auto", else ``bvh.pair_volume``'s rule; both trees of that kind,
``bvh.tree_for``), every kind in one pool.
Pairs with any other shape (a convex ``ck.Box``, ``ck.Sphere`` or ``ck.Convex`` in the World)
are routed through today's per-pair path (``robot/check.py``: padded boxes, then
``collisionkit.intersects`` per pair, which runs the convex kernels), only for the
configurations the kernel left free. Either way each pair's answer is ``intersects``'s on
the same two poses, so every answer equals the per-pair path's bit for bit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..bvh import choose_volume, pair_volume, tree_for
from ..constants import BV_KINDS, BV_OBB, DESCENT_BOX_KINDS, TRI_TEST_GUIGUE
from ..geometry.mesh import Mesh
from ..kernels.core.layout import META_DEPTH, META_FANOUT, META_NODE_OFF, META_TRI_OFF, META_WIDTH
from ..kernels.core.linalg import first_bad_pose
from ..kernels.robot import checker as kernel
from ..kernels.robot import proximity as pkernel
from ..kernels.robot.kinematics import JOINT_FIXED
from ..options import AUTO_BV
from ..query import batch
from ..query.driver import pose_error
from ..query.pose_form import in_form
from .check import RobotCheck, _overlap, _run_batch, _run_one, excluded_keys, gather_record, mesh_links, self_pair_array

_F64 = np.dtype(np.float64)
_I64 = np.int64
#: the per-call kernel without numba's per-call type dispatch (``query.batch.Pinned``): every
#: argument is an array this module built (fixed dtypes, C-contiguous, writable) or an int,
#: and q is checked to be a writable C-contiguous (dof,) float64 array before the call
#: per-call entries, one per triangle-test argument type (``tri``: None on box trees, an int
#: code otherwise): a Pinned keeps its first call's argument types
_CHECK_ONE = (batch.Pinned(kernel.check_one), batch.Pinned(kernel.check_one))
_CHECK_ONE_SWEEP = (batch.Pinned(kernel.check_one_sweep), batch.Pinned(kernel.check_one_sweep))
#: checkers kept per robot (a cache entry holds its World alive: few of them)
_CACHE_ENTRIES = 8
#: configurations sampled (fixed seed) to order the kernel's pairs (``_order_pairs``); PERF:
#: 256 rather than 64 orders a colliding configuration's likely hit sooner (thread CPU us a
#: colliding configuration at threads=1, 64 -> 256 samples: Panda among 7 boxes 2.73 -> 2.62,
#: iiwa among them 3.43 -> 2.91, Panda table scene 5.21 -> 4.70, cage 3.45 -> 3.35; free ones
#: unchanged) for a few ms more preparation; ``_ORDER_FEW`` samples past ``_ORDER_MANY_PAIRS``
#: pairs (the (C, samples) matrix and its time)
_ORDER_SAMPLES = 256
_ORDER_FEW = 64
_ORDER_MANY_PAIRS = 4096
#: listed pairs above which ``_order_pairs`` is skipped (its (C, 64) sample matrix)
_ORDER_MAX_PAIRS = 200_000
#: held while a checker orders its pairs (``RobotChecker.order_pairs_once``): threads sharing
#: a checker wait for the ordered arrays rather than read ``_pairs`` and ``_args`` mid-change
_ORDER_LOCK = threading.Lock()
#: links with geometry from which the checker lists no self pairs: the kernel finds them per
#: configuration by a sort-and-sweep of the link boxes (``kernels.robot.checker._self_sweep``;
#: issue 31 item 6). Below it the list, ordered by sampled hits, is faster (the Panda's 45
#: pairs: 2.2 against 4.0 us a call for 8 box links); past it the list's O(M^2) box tests per
#: configuration cost more than the sweep (64 links: 10.0 against 10.8 us, 96: 16.6 against
#: 15.3, 256: 65 against 40; ``python -m benchmarks.many_links``, results/many_links.md).
SWEEP_MIN_LINKS = 80
#: the volume kind of a pair whose two meshes leave their kind to "auto", unless the caller
#: names one (``bv=``; "auto": ``bvh.pair_volume``'s own pick). A mesh built with a named kind
#: keeps it (``pair_volume``'s rule). Answers never depend on it. PERF: OBB trees were the
#: fastest kind on every scene measured but one (``python -m benchmarks.robot_volumes``,
#: results/robot_volumes.md; batched thread CPU us a configuration at threads=1 on random
#: configurations, auto pick / aabb / obb / kdop14 / rss): the Panda among 7 boxes 4.18 / 4.21
#: / 2.34 / 13.1 / 4.74, the iiwa among them 2.57 / 2.63 / 2.02 / 41.6 / 5.04, the Panda in
#: benchmarks/planning_scenes.py's table 4.28 / 4.32 / 2.94, bookshelf 4.57 / 4.48 / 2.70, cage
#: 4.40 / 4.40 / 2.43, thin plate 4.08 / 4.03 / 2.32; colliding configurations 1.7-2.1x faster
#: than the auto pick. The exception: the iiwa's free configurations, 1.29 against 1.17-1.19
#: (few descents there, and an OBB node test costs more than an AABB one). The auto pick is
#: AABB for every Panda and iiwa link (thick leaves, ``bvh.leaf_thickness_ratio``), yet the
#: links' long, rotated parts fit oriented boxes far tighter near the root.
ROBOT_VOLUME = "obb"



def _non_finite(Q: NDArray[np.float64], what: str) -> ValueError:
    """The error for configurations with a non-finite value, naming the first such row of a
    batch (``q[3]``; a Dask chunk's caller shifts it to the global row)."""
    if Q.ndim == 1:
        return ValueError(f"{what} holds non-finite values")
    row = int(np.flatnonzero(~np.isfinite(Q).all(axis=1))[0])
    return ValueError(f"{what}[{row}] holds non-finite values")

class RobotChecker:
    """A robot against a World (and itself), prepared once into flat arrays.

    Made by ``Robot.checker``; ``Robot.check`` and ``check_detail`` use one. Holds the
    world: when the world changes (``World.version``), the next call rebuilds the arrays.

    Parameters
    ----------
    robot : Robot
    world : World, optional
        The obstacles at their current poses (None: self-collision only).
    base : array_like (4, 4), optional
        World-from-base pose of the robot (default identity).
    self_collision : bool
        Also test the robot's links against each other (default True), except
        ``robot.adjacent_pairs``, ``robot.allowed_pairs`` and ``allowed``.
    allowed : iterable of (link, link)
        More link pairs not to test (unknown link names raise ``ValueError``).
    ignore : iterable of str
        World objects to skip (names not in the world are ignored).
    bv : str, optional
        The volume kind every pair is traversed in ("aabb", "obb", "sphere", "kdop14",
        "saabb", ...; trees of that kind with each mesh's own split rule and leaf size).
        Default: ``ROBOT_VOLUME`` ("obb") for a pair of two meshes whose kind is "auto", a
        mesh's named kind where it has one; "auto": each pair's kind as
        ``collisionkit.intersects`` takes it (``bvh.pair_volume``). The answers do not
        depend on it (ARCHITECTURE.md, "Exactness"), only the work: the Panda's and the
        iiwa's links are 1.3-1.8x as fast in "obb" trees as in the "auto" pick's AABB trees
        (benchmarks/results/robot_volumes.md).
    listed : bool
        List every self pair even past ``SWEEP_MIN_LINKS`` (``Robot.clearance``,
        ``check_motion`` and margins read the checker's pairs by row): O(M^2) memory for
        M links with geometry. Default False: the sweep past that count.

    Self pairs: a robot with fewer than ``SWEEP_MIN_LINKS`` links with geometry lists them
    once (``check.self_pair_array``); from that count the kernel finds them per configuration
    (a sort-and-sweep of the link world boxes, each surviving pair looked up in the sorted
    keys of the adjacent and allowed pairs), so memory stays linear in the links and the
    pairs whose boxes overlap. Answers are the same either way; ``check_detail``'s
    ``self_hits`` then holds only the pairs that touch in some configuration.

    Examples
    --------
    >>> import os, numpy as np, pybullet_data, collisionkit as ck
    >>> panda = ck.Robot.load(os.path.join(pybullet_data.getDataPath(), "franka_panda/panda.urdf"))
    >>> world = ck.World()
    >>> _ = world.add("table", ck.primitives.box_mesh([1.0, 1.0, 0.04]), ck.translation([0.6, 0, -0.03]))
    >>> checker = panda.checker(world)
    >>> checker.check(np.zeros(panda.dof))  # q = 0 folds the wrist onto link5
    True
    >>> checker.first_colliding(np.zeros((4, panda.dof)))
    0
    """

    def __init__(
        self,
        robot: Any,
        world: Any = None,
        *,
        base: ArrayLike | None = None,
        self_collision: bool = True,
        allowed: Iterable[tuple[str, str]] = (),
        ignore: Iterable[str] = (),
        bv: str | None = None,
        listed: bool = False,
    ) -> None:
        self.robot = robot
        self.world = world
        #: list every self pair even past SWEEP_MIN_LINKS (the proximity kernels read the
        #: pairs by row: ``motion._PairSet``); O(M^2) memory for M links with geometry
        self.listed = bool(listed)
        self.self_collision = bool(self_collision)
        self.allowed = robot.link_pairs(allowed, "allowed")  # validated even without self-collision
        self.ignore = frozenset(ignore)
        self.base = _base_pose(base)
        self.bv = _volume(bv)
        self._version = -1
        self._build()

    # -- preparation --------------------------------------------------------------------
    def _build(self) -> None:
        """Flatten the robot, the pairs and the world's objects into the kernel's arrays."""
        robot, world = self.robot, self.world
        self._version = -1 if world is None else world.version
        mesh_ids = mesh_links(robot)
        links = [(int(i), robot.link_meshes[robot.links[i]]) for i in mesh_ids]
        self._mesh_ids = mesh_ids
        link_row = np.full(len(robot.links), -1, _I64)
        link_row[mesh_ids] = np.arange(len(links), dtype=_I64)
        local = np.array([m.bounds.ravel() for _, m in links], dtype=np.float64).reshape(-1, 6)
        self._world_names = world.names if world is not None else ()
        names = [m for m in self._world_names if m not in self.ignore]
        self.names = tuple(names)
        shapes = [world.shape(n) for n in names]
        self._shapes = shapes
        self._obj_poses = np.zeros((len(names), 4, 4))
        self._world_state()
        all_mesh = all(type(m) is Mesh for _, m in links)
        self._sweep = bool(self.self_collision and all_mesh and sweeps(robot, self.listed))
        if self.self_collision and not self._sweep:
            spairs = self_pair_array(robot, self.allowed)
        else:
            spairs = np.zeros((0, 2), _I64)
        meshes = dict(links)
        # every check in the per-pair path's order (robot/check.py): (link, other link or -1,
        # object or -1, shape a, shape b, the object's pose or None); its row in the detail
        # matrix. The listed self pairs follow as an array (rows len(checks) + s): no Python
        # object per pair
        checks: list[tuple[int, int, int, Any, Any, NDArray | None]] = []
        for o in range(len(names)):
            checks += [(i, -1, o, m, shapes[o], self._obj_poses[o]) for i, m in links]
        if not all_mesh:  # NOTE: a link shape that is not a Mesh: every self pair routed by tuple
            checks += [(i, j, -1, meshes[i], meshes[j], None) for i, j in spairs.tolist()]
            spairs = np.zeros((0, 2), _I64)
        self._checks = checks
        self._self_pairs = spairs
        self._n_checks = len(checks) + spairs.shape[0]
        # the kernel's pairs (both shapes Mesh) and the rest (today's per-pair path)
        rows: list[list[int]] = []
        trees: list[Any] = []
        where: dict[int, int] = {}

        def tree_index(tree: Any) -> int:
            if id(tree) not in where:
                where[id(tree)] = len(trees)
                trees.append(tree)
            return where[id(tree)]

        external = []
        for c, (i, j, o, a, b, _) in enumerate(checks):
            if type(a) is not Mesh or type(b) is not Mesh:
                external.append(c)
                continue
            bv = _pair_volume(a, b, self.bv)
            ta, tb = tree_for(a, bv), tree_for(b, bv)
            b_index, b_row = (j, int(link_row[j])) if j >= 0 else (o, o)
            rows.append([i, int(link_row[i]), b_index, b_row, int(j >= 0), tree_index(ta), tree_index(tb), ta.bv_code, c])
        self._external = external
        pair_arr = np.array(rows, dtype=_I64).reshape(-1, kernel.PAIR_WIDTH)
        # self pairs: each link's kinds (bvh.pair_volume's rule, vectorised) and trees
        kinds_of = _link_kinds([m for _, m in links], self.bv) if (self._sweep or spairs.shape[0]) else np.zeros((0, 2), _I64)
        link_tree = np.full((len(links), len(_KIND_NAMES)), -1, _I64)
        if spairs.shape[0]:
            ra, rb = link_row[spairs[:, 0]], link_row[spairs[:, 1]]
            kind = _pair_kinds(kinds_of, ra, rb)
            need = np.zeros(link_tree.shape, np.bool_)
            need[ra, kind] = True
            need[rb, kind] = True
        else:
            need = np.zeros(link_tree.shape, np.bool_)
            if self._sweep:
                # every link in every kind a pair may take: the links' own kinds, and the
                # choices of the "auto" links (pair_volume's rule)
                own, auto = kinds_of[:, kernel.KIND_OWN], kinds_of[:, kernel.KIND_OWN] < 0
                need[:, np.union1d(own[~auto], kinds_of[auto, kernel.KIND_CHOICE])] = True
        for m, k in zip(*np.nonzero(need), strict=True):
            link_tree[m, k] = tree_index(tree_for(links[m][1], _KIND_NAMES[k]))
        if spairs.shape[0]:
            self_rows = np.empty((spairs.shape[0], kernel.PAIR_WIDTH), _I64)
            self_rows[:, kernel.PAIR_A] = spairs[:, 0]
            self_rows[:, kernel.PAIR_A_BOX] = ra
            self_rows[:, kernel.PAIR_B] = spairs[:, 1]
            self_rows[:, kernel.PAIR_B_BOX] = rb
            self_rows[:, kernel.PAIR_SELF] = 1
            self_rows[:, kernel.PAIR_TREE_A] = link_tree[ra, kind]
            self_rows[:, kernel.PAIR_TREE_B] = link_tree[rb, kind]
            self_rows[:, kernel.PAIR_KIND] = kind
            self_rows[:, kernel.PAIR_ROW] = len(checks) + np.arange(spairs.shape[0], dtype=_I64)
            pair_arr = np.concatenate([pair_arr, self_rows])
        # PERF (issue 32, compile time): every pair on box trees (AABB, OBB, saabb) takes the
        # descent's box-tree variant (``tri_test=None``, Guigue's test), the one ``intersects``
        # compiles: a process checking a robot and asking ``intersects`` compiles one descent
        kinds = set(pair_arr[:, kernel.PAIR_KIND].tolist()) | set(np.flatnonzero(need.any(axis=0)).tolist())
        self._tri = None if kinds <= DESCENT_BOX_KINDS else TRI_TEST_GUIGUE
        pool, stack_rows = _pool(trees, pair_arr, self._sweep)
        vsrc, vmul, vdepth = _joint_sources(robot)
        parents, children, kinds, H = robot._chain
        topo, bv, tris, _, meta, scale = pool
        header = np.zeros(kernel.HEADER, _I64)
        header[kernel.H_BASE_LINK] = robot.link_index(robot.base_link)
        header[kernel.H_STEPS] = parents.shape[0]
        header[kernel.H_LINKS] = len(robot.links)
        header[kernel.H_BOXED] = len(links)
        header[kernel.H_OBJECTS] = len(names)
        header[kernel.H_PAIRS] = pair_arr.shape[0]
        header[kernel.H_TREES] = meta.shape[0]
        header[kernel.H_MIMIC] = vmul.shape[1]
        header[kernel.H_WIDTH] = bv.shape[1]
        header[kernel.H_NODES] = bv.shape[0]
        header[kernel.H_TRIS] = tris.shape[0]
        header[kernel.H_STACK] = stack_rows
        if self._sweep:
            excluded = excluded_keys(robot, self.allowed)
            sweep = [excluded, mesh_ids, kinds_of.ravel(), link_tree.ravel()]
            header[kernel.H_SWEEP_LINKS] = len(links)
            header[kernel.H_EXCLUDED] = excluded.shape[0]
            header[kernel.H_KIND_CODES] = link_tree.shape[1]
        else:
            sweep = []
        # the kernel's arrays (kernels/robot/checker._unpack reads them in this order)
        fb = np.concatenate([
            self.base.ravel(), H.ravel(), vmul.ravel(), local.ravel(), _local_obbs([m for _, m in links]).ravel(),
            _local_obbs(shapes).ravel(), bv.ravel(), tris.ravel(), scale.ravel(),
        ])  # fmt: skip
        self._fb = np.ascontiguousarray(fb, dtype=np.float64)
        head = [header, parents, children, kinds, vsrc, vdepth, link_row]
        # the sweep's section after the pairs and meta (``_unpack_sweep``)
        header[kernel.H_SWEEP] = sum(a.shape[0] for a in head) + pair_arr.size + meta.size
        self._ib_head = np.concatenate(head).astype(_I64)
        self._meta = meta.astype(_I64).ravel()
        self._ib_sweep = np.concatenate([np.asarray(a, _I64) for a in sweep]) if sweep else np.zeros(0, _I64)
        # a row at least: the kernel reads topo[0] as the (unused) face ids of MODE_ANY
        self._topo = np.ascontiguousarray(topo if topo.shape[0] else np.zeros((1, 3), np.int32))
        self._pairs = pair_arr
        self._pack()
        self._dof = robot.dof
        self._shape1 = (robot.dof,)
        # PERF (issue 32, compile time): ordered on the first check, not here. Ordering runs
        # the check kernel; the proximity queries that read these arrays in any order
        # (``Robot.clearance``, ``check_motion``'s edge search: ``motion._PairSet``) would
        # otherwise compile the whole collision chain for it (a first clearance from an empty
        # cache 31.7-37.6 -> 24.9-29.9 CPU s, benchmarks/results/compile_times.md, stop 50)
        self._order_pending = 1 < pair_arr.shape[0] <= _ORDER_MAX_PAIRS

    def _tail(self, found: NDArray[np.int64]) -> tuple:
        """The last arguments of ``self._kernels`` before the chunk count: the sweep's CHECK_DETAIL
        hits (a sweeping checker), then the triangle test."""
        return (found, self._tri) if self._sweep else (self._tri,)

    def _pack(self) -> None:
        """The kernel's arguments from the parts (``_pairs`` in the narrow phase's order)."""
        sweep = self._sweep
        self._kernels = (kernel.check_sweep_serial, kernel.check_sweep_parallel) if sweep else (kernel.check_serial, kernel.check_parallel)
        # a Pinned (its .call is set on first use)
        self._one = (_CHECK_ONE_SWEEP if sweep else _CHECK_ONE)[self._tri is not None]
        ib = np.concatenate([self._ib_head, self._pairs.ravel(), self._meta, self._ib_sweep])
        self._args = (self._fb, self._wb, np.ascontiguousarray(ib, dtype=_I64), self._topo)

    def _world_state(self) -> None:
        """The obstacles' poses and world boxes (``_wb``, a new array: a running batch keeps
        its own) and the routed checks' object boxes, from the world as it is now."""
        world, names = self.world, self.names
        boxes = dict(zip(world.names, world.boxes(), strict=True)) if names else {}
        poses = np.array([world.pose(n) for n in names], dtype=np.float64).reshape(-1, 4, 4)
        self._obj_poses[...] = poses  # in place: the routed checks hold views of its rows
        box = np.array([boxes[n].ravel() for n in names], dtype=np.float64).reshape(-1, 6)
        self._wb = np.ascontiguousarray(np.concatenate([poses.ravel(), box.ravel()]), dtype=np.float64)
        self._object_box = [boxes[n].reshape(6, 1) for n in names]

    def _order_pairs(self, thr: NDArray[np.float64] | None = None) -> None:
        """Order the kernel's pairs so that typical hits come early: by hits per unit of
        descent work (node pairs + triangle tests) over ``_ORDER_SAMPLES`` (``_ORDER_FEW`` past
        ``_ORDER_MANY_PAIRS`` pairs) configurations drawn
        with a fixed seed (``Robot.random_configurations``), highest first; pairs never hit
        keep their order after them. Deterministic; answers do not depend on the order.
        The hits are collisions (the checker's kernel), or with ``thr`` (one threshold per
        row of ``_pairs``: the first margin check's) pairs within their thresholds (the
        margin kernel, ``kernels.robot.proximity``): each question orders by its own
        kernel, so its first call compiles no other (PERF: a first margin check compiled
        the collision chain only to order its pairs: 16.9 -> 13.9 CPU s on an empty cache,
        ``benchmarks.compile_times``' first-robot-margin, compile_times.md stop 51).

        PERF: a configuration stops at its first colliding pair; with the per-pair path's
        order the Panda's colliding configurations cost more than its free ones.

        Run once, by the first question that stops at a hit (``check``, ``check_detail``,
        ``first_colliding``, the margin check: ``order_pairs_once``). NOTE: it replaces
        ``_pairs`` and ``_args``; whoever took them before (``motion._PairSet``) keeps a
        consistent pair of the old ones (rows index their own arrays).
        """
        samples = _ORDER_SAMPLES if self._pairs.shape[0] <= _ORDER_MANY_PAIRS else _ORDER_FEW
        Q = self.robot.random_configurations(samples, seed=0)
        n = Q.shape[0]
        detail = np.zeros((self._n_checks, n), np.bool_)
        work = np.zeros(self._pairs.shape[0], _I64)
        fb, wb, ib, topo = self._args  # the listed pairs only (check_serial): the sweep's come after them
        out, none, serial = np.zeros(n, np.int8), np.zeros(0, _I64), _I64(1)
        if thr is None:
            kernel.check_serial(Q, fb, wb, ib, topo, _I64(kernel.CHECK_DETAIL), out, detail, work, none, self._tri, serial)
        else:
            pkernel.margin_serial(Q, fb, wb, ib, topo, thr, out, none, detail, work, serial)
        hits = detail[self._pairs[:, kernel.PAIR_ROW]].sum(axis=1)
        # a descent call costs about as much as a few node pairs besides its own work
        rate = hits / (work + 4.0 * hits + 1.0)
        order = np.argsort(-rate, kind="stable")
        self._pairs = np.ascontiguousarray(self._pairs[order])
        self._pack()
        self._order_pending = False  # NOTE: last: a thread that reads False finds the new arrays

    def order_pairs_once(self, thresholds: Callable[[], NDArray[np.float64]] | None = None) -> None:
        """Order the kernel's pairs if they are not yet (``_order_pairs``; ``thresholds``: for
        a margin check, a function returning its thresholds for the pairs as they are);
        threads that share the checker wait for the one ordering it."""
        if self._order_pending:
            with _ORDER_LOCK:
                if self._order_pending:
                    self._order_pairs(None if thresholds is None else thresholds())

    def _current(self) -> None:
        """Bring the arrays up to date with the world: its poses alone changed (the same
        objects and shapes) -> new obstacle poses and boxes; anything else -> rebuilt."""
        world = self.world
        if world is None or world.version == self._version:
            return
        if world.names == self._world_names and all(world.shape(n) is s for n, s in zip(self.names, self._shapes, strict=True)):
            self._world_state()
            self._version = world.version
            self._pack()
        else:
            self._build()

    # -- questions ------------------------------------------------------------------------
    def check(self, q: ArrayLike, *, threads: int | None = None) -> bool | NDArray[np.bool_]:
        """Whether each configuration collides: a bool for one (dof,) configuration, an (N,)
        bool array for an (N, dof) batch (its answers equal ``robot/check.py``'s per-pair path).

        Raises
        ------
        ValueError
            q of the wrong shape, with non-finite values, or not real numbers.
        """
        world = self.world
        if world is not None and world.version != self._version:
            self._current()
        if self._order_pending:
            self.order_pairs_once()
        # PERF: one writable C-contiguous (dof,) float64 array goes straight to the kernel
        if type(q) is np.ndarray and q.dtype is _F64 and q.shape == self._shape1 and q.flags.c_contiguous and q.flags.writeable:
            qa = q
        else:
            qa = _configurations(q, self._dof)
            if qa.ndim == 2:
                return self._batch(qa, kernel.CHECK_ANY, threads)[0]
        if threads is not None:
            batch.thread_count(threads)  # validated, though one configuration runs serially
        r = self._one.call(qa, *self._args, self._tri)
        if r < 0:
            raise _non_finite(qa, "q")
        if r == 0 and self._external:
            return bool(self._routed(qa.reshape(1, -1), np.ones(1, np.bool_), False, threads).any())
        return r == 1

    def check_detail(self, q: ArrayLike, *, threads: int | None = None) -> RobotCheck:
        """A ``RobotCheck`` (per link, object and self pair; every pair whose boxes overlap
        is tested), in the form of ``Robot.check_detail``."""
        self._current()
        self.order_pairs_once()
        qa = _configurations(q, self._dof)
        single = qa.ndim == 1
        Q = qa.reshape(1, -1) if single else qa
        _, H, found = self._batch(Q, kernel.CHECK_DETAIL, threads)
        return in_form(self._record(H, found), not single)

    def first_colliding(self, qs: ArrayLike, *, threads: int | None = None) -> int:
        """The index of the first colliding configuration of an ordered (N, dof) batch (for
        example an edge's samples), or -1 when all are free. Stops at the first: the
        configurations after it are not tested (on several threads, at most those already
        claimed)."""
        self._current()
        self.order_pairs_once()
        Q = _configurations(qs, self._dof)
        if Q.ndim != 2:
            raise ValueError(f"qs must have shape (N, {self._dof}), got {Q.shape}")
        if not np.isfinite(Q).all():
            raise _non_finite(Q, "qs")
        n = Q.shape[0]
        p = batch.plan(n, batch.thread_count(threads), uniform=True)
        out = np.zeros(n, np.int8)
        shared = np.array([n, 0, 0] if p.parallel else [n], dtype=_I64)  # [first, cursor, the sweep's cursor]
        batch.launch(p, *self._kernels, Q, *self._args, _I64(kernel.CHECK_FIRST), out, _NO_DETAIL, _NO_WORK, shared,
                     *self._tail(_NO_FOUND))  # fmt: skip
        hit = np.flatnonzero(out)
        first = int(hit[0]) if hit.size else n
        if self._external and first > 0:
            # routed pairs on the configurations before it, in order
            todo = np.zeros(n, np.bool_)
            todo[:first] = True
            routed = self._routed(Q, todo, False, threads).any(axis=0)
            if routed.any():
                first = min(first, int(np.flatnonzero(routed)[0]))
        return first if first < n else -1

    # -- internals ------------------------------------------------------------------------
    def _batch(
        self, Q: NDArray[np.float64], mode: int, threads: int | None
    ) -> tuple[NDArray[np.bool_], NDArray[np.bool_], NDArray[np.int64] | None]:
        """(N,) colliding and, for CHECK_DETAIL, the (C, N) hits of every check and the
        sweep's self hits (S, 3) rows (i, j, k) (None without the sweep)."""
        if not np.isfinite(Q).all():
            raise _non_finite(Q, "q")
        n = Q.shape[0]
        p = batch.plan(n, batch.thread_count(threads), uniform=True)
        detail_mode = mode == kernel.CHECK_DETAIL
        cap = 4 * n + 64  # sweep hits the first pass has room for (then the exact count)
        while True:
            out = np.zeros(n, np.int8)
            detail = np.zeros((self._n_checks, n), np.bool_) if detail_mode else _NO_DETAIL
            found = np.zeros(1 + 3 * cap, _I64) if detail_mode and self._sweep else _NO_FOUND
            shared = np.zeros(3 if p.parallel else 0, _I64)  # [unused, cursor, the sweep's cursor]
            if n:
                batch.launch(p, *self._kernels, Q, *self._args, _I64(mode), out, detail, _NO_WORK, shared, *self._tail(found))
            if found.shape[0] == 0 or found[0] <= cap:
                break
            cap = int(found[0])  # PERF: rare (more self hits than 4 a configuration): one rerun
        hits = found[1 : 1 + 3 * int(found[0])].reshape(-1, 3) if found.shape[0] else None
        colliding = out.astype(np.bool_)
        if self._external:
            todo = np.ones(n, np.bool_) if mode == kernel.CHECK_DETAIL else ~colliding
            routed = self._routed(Q, todo, mode == kernel.CHECK_DETAIL, threads)
            colliding |= routed.any(axis=0)
            if mode == kernel.CHECK_DETAIL:
                detail[self._external] = routed
        return colliding, detail, hits

    def _routed(self, Q: NDArray[np.float64], todo: NDArray[np.bool_], detail: bool, threads: int | None) -> NDArray[np.bool_]:
        """(E, N) hits of the checks the kernel does not answer (a shape that is not a
        ``Mesh``), by today's per-pair path on the configurations ``todo``."""
        n = Q.shape[0]
        hits = np.zeros((len(self._external), n), np.bool_)
        idx = np.flatnonzero(todo)
        if idx.size == 0:
            return hits
        by_link, box = self.robot.poses_and_boxes(Q[idx], self.base, boxed=self._mesh_ids, threads=threads)
        row = {int(i): k for k, i in enumerate(self._mesh_ids)}
        checks = [self._checks[c] for c in self._external]
        near = np.stack([
            _overlap(box[row[i]], box[row[j]] if j >= 0 else self._object_box[o]) for i, j, o, *_ in checks
        ])  # fmt: skip
        run = _run_one if idx.size == 1 else _run_batch
        hits[:, idx] = run(checks, near, by_link, detail, threads)
        return hits

    def _record(self, H: NDArray[np.bool_], found: NDArray[np.int64] | None = None) -> RobotCheck:
        """The batch-form ``RobotCheck`` of the (C, N) hits, as ``robot/check.py`` builds it;
        with the sweep, its self hits ``found`` (S, 3) rows (i, j, k) added (``self_hits``
        then holds the pairs that touch in some configuration, in link order)."""
        robot = self.robot
        checks = self._checks + [(i, j, -1) for i, j in self._self_pairs.tolist()]
        rec = gather_record(robot, checks, self.names, H)
        if found is None:
            return rec
        n = H.shape[1]
        link_hits = rec.link_hits.copy()  # (N, L)
        link_hits[found[:, 2], found[:, 0]] = True
        link_hits[found[:, 2], found[:, 1]] = True
        L = len(robot.links)
        keys, inverse = np.unique(found[:, 0] * L + found[:, 1], return_inverse=True)
        per_pair = np.zeros((keys.shape[0], n), np.bool_)
        per_pair[inverse.reshape(-1), found[:, 2]] = True
        self_hits = {(robot.links[int(key) // L], robot.links[int(key) % L]): per_pair[r] for r, key in enumerate(keys.tolist())}
        colliding = np.array(rec.colliding)
        colliding[found[:, 2]] = True
        return RobotCheck(colliding, link_hits, rec.object_hits, self_hits)


_NO_DETAIL = np.zeros((1, 1), np.bool_)
_NO_FOUND = np.zeros(0, _I64)
_NO_WORK = np.zeros(0, _I64)


def _base_pose(base: ArrayLike | None) -> NDArray[np.float64]:
    """The base pose as the kernel takes it (a rigid (4, 4) float64 array)."""
    if base is None:
        return np.eye(4)
    B = np.array(base, dtype=np.float64)  # a copy: the checker keeps it
    if B.shape != (4, 4):
        raise ValueError(f"base must have shape (4, 4), got {B.shape}")
    k, code = first_bad_pose(B.reshape(1, 4, 4))
    if k >= 0:
        raise pose_error("base", 0, int(code), False)
    return B


def _local_obbs(shapes: list[Any]) -> NDArray[np.float64]:
    """(K, kernel.OBB_WIDTH) local oriented boxes of ``shapes``, each holding every vertex:
    centre, axes (rows), half extents, the largest |coordinate| (the descent's scale).

    A mesh's box is the smaller of its axis-aligned box and the box on the principal axes
    of its vertices; other shapes take their ``bounds``. The half extents are rounded up by
    16 ulps of the scale (the slack of the kernel's test covers the rest of the rounding).

    PERF: the Panda among seven boxes: a sixth of the descent work went to pairs whose
    axis-aligned local boxes overlapped and whose principal-axis boxes do not.
    """
    out = np.zeros((len(shapes), kernel.OBB_WIDTH))
    for k, shape in enumerate(shapes):
        lo, hi = np.asarray(shape.bounds, dtype=np.float64)
        scale = max(float(np.abs(lo).max()), float(np.abs(hi).max()))
        axes, c, h = np.eye(3), 0.5 * lo + 0.5 * hi, 0.5 * hi - 0.5 * lo
        if isinstance(shape, Mesh):
            v = np.asarray(shape.vertices, dtype=np.float64)[np.unique(np.asarray(shape.faces))]
            if v.shape[0] >= 4:
                _, vecs = np.linalg.eigh(np.cov((v - v.mean(axis=0)).T))
                u = np.ascontiguousarray(vecs.T)  # the principal axes, one a row
                p = v @ u.T
                plo, phi = p.min(axis=0), p.max(axis=0)
                ph = 0.5 * (phi - plo)
                if np.prod(ph) < np.prod(h):
                    axes, c, h = u, u.T @ (0.5 * (plo + phi)), ph
            # every vertex inside, measured along each axis: rounding of c and h covered
            d = np.abs((v - c) @ axes.T).max(axis=0)
            h = np.maximum(h, d)
        out[k, :3] = c
        out[k, 3:12] = axes.ravel()
        out[k, 12:15] = h + 16.0 * np.finfo(np.float64).eps * scale
        out[k, 15] = scale
    return out


def _volume(bv: str | None) -> str | None:
    """The ``bv`` option checked: None (the robot default, ``ROBOT_VOLUME``), "auto" (each
    pair's ``bvh.pair_volume``), else a kind name."""
    if bv is None or bv == "auto":
        return bv
    if bv not in BV_KINDS:
        raise ValueError(f"bv must be one of {sorted(BV_KINDS)} or 'auto', got {bv!r}")
    return bv


def _configurations(q: ArrayLike, dof: int) -> NDArray[np.float64]:
    """q as a C-contiguous float64 (dof,) or (N, dof) array; a clear ValueError otherwise."""
    qa = np.asarray(q)
    if qa.dtype.kind not in "biuf":
        raise ValueError(f"q must hold real numbers, got dtype {qa.dtype}")
    if qa.ndim not in (1, 2) or qa.shape[-1] != dof:
        raise ValueError(f"q must have shape (N, {dof}) or ({dof},), got {qa.shape}")
    qa = np.ascontiguousarray(qa, dtype=np.float64)
    if not qa.flags.writeable:
        qa = qa.copy()
    return qa


def _joint_sources(robot: Any) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """Per joint step (``robot._order``): the q index its value comes from (-1: fixed) and its
    mimic chain's (multiplier, offset) pairs, innermost first (``Robot._joint_value``)."""
    steps = robot._order
    vsrc = np.full(len(steps), -1, _I64)
    vdepth = np.zeros(len(steps), _I64)
    chains = []
    for s, j in enumerate(steps):
        chain: list[tuple[float, float]] = []
        if robot._chain[2][s] != JOINT_FIXED:
            k = j
            while k.mimic is not None:
                chain.append((k.multiplier, k.offset))
                k = robot._by_name[k.mimic]
            vsrc[s] = k.index
        chains.append(chain[::-1])
        vdepth[s] = len(chain)
    vmul = np.zeros((len(steps), max(1, int(vdepth.max(initial=0))), 2))
    for s, chain in enumerate(chains):
        for d, (m, o) in enumerate(chain):
            vmul[s, d] = (m, o)
    return vsrc, vmul, vdepth


def _pool(trees: list[Any], pairs: NDArray[np.int64], sweep: bool = False) -> tuple[tuple, int]:
    """The trees concatenated into one pool (volume rows padded to the widest kind used),
    and the traversal stack rows the largest pair needs (``descent.stack_size``; with
    ``sweep``, any two trees of the pool)."""
    if not trees:
        empty = (
            np.zeros((0, 3), np.int32), np.zeros((0, 1)), np.zeros((0, 3, 3)), np.zeros(0, np.int32),
            np.zeros((0, META_WIDTH), _I64), np.zeros(0),
        )  # fmt: skip
        return empty, 2
    arrs = [t.arrays for t in trees]
    width = max(a.bv.shape[1] for a in arrs)
    bv = np.zeros((sum(a.bv.shape[0] for a in arrs), width))
    r = 0
    for a in arrs:
        bv[r : r + a.bv.shape[0], : a.bv.shape[1]] = a.bv
        r += a.bv.shape[0]
    meta = np.concatenate([a.meta for a in arrs]).astype(_I64)
    meta[:, META_NODE_OFF] = np.cumsum([0] + [a.topo.shape[0] for a in arrs[:-1]])
    meta[:, META_TRI_OFF] = np.cumsum([0] + [a.tris.shape[0] for a in arrs[:-1]])
    pool = (
        np.ascontiguousarray(np.concatenate([a.topo for a in arrs]), dtype=np.int32),
        bv,
        np.ascontiguousarray(np.concatenate([a.tris for a in arrs]), dtype=np.float64),
        np.ascontiguousarray(np.concatenate([a.face_ids for a in arrs]), dtype=np.int32),
        np.ascontiguousarray(meta),
        np.ascontiguousarray(np.concatenate([a.scale for a in arrs]), dtype=np.float64),
    )
    depth, fan = meta[:, META_DEPTH], meta[:, META_FANOUT]
    rows = 2
    if pairs.shape[0]:
        ta, tb = pairs[:, kernel.PAIR_TREE_A], pairs[:, kernel.PAIR_TREE_B]
        rows = max(rows, int(((depth[ta] + depth[tb]) * (np.maximum(fan[ta], fan[tb]) - 1) + 2).max()))
    if sweep:
        rows = max(rows, int(2 * depth.max() * (fan.max() - 1) + 2))
    return pool, rows


#: volume kind names by code (``link_tree``'s columns)
_KIND_NAMES = tuple(sorted(BV_KINDS, key=BV_KINDS.__getitem__))


def sweeps(robot: Any, listed: bool = False) -> bool:
    """Whether the robot's checker finds self pairs by the sweep (``SWEEP_MIN_LINKS``)."""
    return not listed and len(robot.link_meshes) >= SWEEP_MIN_LINKS


def _pair_volume(a: Mesh, b: Mesh, bv: str | None) -> str:
    """The kind the checker traverses the pair (a, b) in for its ``bv`` option: a named kind
    as given; "auto": ``bvh.pair_volume``; None: a's named kind, else b's, else
    ``ROBOT_VOLUME`` (``pair_volume``'s rule with the robot default for the "auto" pick)."""
    if bv == "auto":
        return pair_volume(a, b)
    if bv is not None:
        return bv
    for mesh in (a, b):
        if mesh.options.bv != AUTO_BV:
            return mesh.options.bv
    return ROBOT_VOLUME


def _link_kinds(meshes: list[Mesh], bv: str | None) -> NDArray[np.int64]:
    """(M, 2) per mesh (``kernel.KIND_OWN``, ``kernel.KIND_CHOICE``): its own volume kind code
    (-1: "auto") and the kind picked for it where it has none (``bv`` "auto": ``choose_volume``'s;
    None: ``ROBOT_VOLUME``); every entry ``bv``'s code when the checker's ``bv`` names a kind."""
    out = np.empty((len(meshes), 2), _I64)
    if bv is not None and bv != "auto":
        out[:] = BV_KINDS[bv]
        return out
    for m, mesh in enumerate(meshes):
        own = mesh.options.bv
        out[m, kernel.KIND_OWN] = -1 if own == AUTO_BV else BV_KINDS[own]
        pick = BV_KINDS[choose_volume(mesh).bv if bv == "auto" else ROBOT_VOLUME]
        out[m, kernel.KIND_CHOICE] = pick if own == AUTO_BV else out[m, kernel.KIND_OWN]
    return out


def _pair_kinds(kinds: NDArray[np.int64], ra: NDArray[np.int64], rb: NDArray[np.int64]) -> NDArray[np.int64]:
    """The kind code of each pair of link box rows (ra, rb), a the lower link index:
    ``kernel.pair_kind`` vectorised (``bvh.pair_volume``'s rule)."""
    own_a, own_b = kinds[ra, kernel.KIND_OWN], kinds[rb, kernel.KIND_OWN]
    auto = np.where(kinds[ra, kernel.KIND_CHOICE] == BV_OBB, BV_OBB, kinds[rb, kernel.KIND_CHOICE])
    return np.where(own_a >= 0, own_a, np.where(own_b >= 0, own_b, auto)).astype(_I64)


def always_colliding_pairs(
    robot: Any, n: int, seed: int | None, threads: int | None = None
) -> frozenset[tuple[str, str]]:
    """Non-adjacent link pairs that intersect in every one of ``n`` random
    configurations (``Robot.allowed_pairs_from_samples`` documents it).

    PERF: one ``check_detail`` of the prepared checker over the samples, on the robot less its
    ``allowed_pairs`` (every non-adjacent pair is sampled): compiled, and past
    ``SWEEP_MIN_LINKS`` links without a pair list (it used to call ``intersects`` per pair
    from Python, O(L^2) calls). Each pair's answers are ``intersects``'s, as before.
    """
    q = robot.random_configurations(n, seed=seed)
    bare = type(robot)(robot.name, robot.links, robot.joints, robot.link_meshes, robot.path) if robot.allowed_pairs else robot
    hits = RobotChecker(bare, None).check_detail(q, threads=threads).self_hits
    return frozenset((min(a, b), max(a, b)) for (a, b), v in hits.items() if np.all(v))


class _Cache(dict):
    """A robot's checkers by (id(world), options): pickled and copied empty (a checker holds
    its world and arrays; a robot shipped to Dask workers or copied rebuilds its own)."""

    def __reduce__(self) -> tuple:
        return (_Cache, ())


def checker_for(robot: Any, world: Any, options: dict[str, Any]) -> RobotChecker:
    """The robot's cached checker for ``world`` and the options of ``Robot.check`` (less
    ``threads``), made on first use; a new world version rebuilds it on its next call."""
    cache = robot.__dict__.get("_checkers")
    if cache is None:
        cache = robot.__dict__["_checkers"] = _Cache()
    key = (id(world), _options_key(robot, **options)) if options else (id(world), None)
    chk = cache.get(key)
    if chk is None or chk.world is not world:
        if len(cache) >= _CACHE_ENTRIES:
            cache.pop(next(iter(cache)))
        chk = cache[key] = RobotChecker(robot, world, **options)
    return chk


def _options_key(
    robot: Any,
    *,
    self_collision: bool = True,
    allowed: Iterable[tuple[str, str]] = (),
    ignore: Iterable[str] = (),
    base: ArrayLike | None = None,
    bv: str | None = None,
    listed: bool = False,
) -> tuple | None:
    """What identifies a checker's options (validated: a bad option raises here). ``listed``
    counts only where it changes the checker (a robot that ``sweeps``, self-collision on)."""
    B = None if base is None else _base_pose(base).tobytes()
    listed = bool(listed and self_collision and sweeps(robot))
    key = (bool(self_collision), robot.link_pairs(allowed, "allowed"), frozenset(ignore), B, _volume(bv), listed)
    return None if key == (True, frozenset(), frozenset(), None, None, False) else key


def check(robot: Any, q: ArrayLike, world: Any, options: dict[str, Any]) -> Any:
    """``Robot.check``: the cached checker's answer (``threads`` is the only per-call option)."""
    threads = options.pop("threads", None) if options else None
    return checker_for(robot, world, options).check(q, threads=threads)


def check_detail(robot: Any, q: ArrayLike, world: Any, options: dict[str, Any]) -> RobotCheck:
    """``Robot.check_detail`` through the cached checker."""
    threads = options.pop("threads", None) if options else None
    return checker_for(robot, world, options).check_detail(q, threads=threads)


__all__ = ["RobotChecker", "always_colliding_pairs", "check", "check_detail", "checker_for"]
