"""The pair queries: intersects, contacts, query_stats.

Poses are world-from-object rigid transforms, (4, 4) or (N, 4, 4) array-likes
(None = identity) that broadcast against each other; see ARCHITECTURE.md.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from ..bvh import pair_trees
from ..constants import MODE_ALL, MODE_ANY, MODE_FIRST, NO_BUDGET, SPLIT_WORK
from ..errors import UnsupportedOptionError
from ..geometry.mesh import Mesh
from ..geometry.pose import PoseLike
from ..kernels.core.layout import META_FACES, N_STATS, STAT_BV_TESTS, STAT_BV_UPDATES, STAT_NODE_PAIRS, STAT_TRI_TESTS
from ..kernels.proximity import threshold as kth
from ..kernels.traverse.descent import UNSETTLED, intersect_one
from ..runtime import using_threads
from ..strategies import Descent, Strategy, resolve
from . import batch, registry, scaling
from .batch import Pinned, thread_count
from .driver import FAST, ask, prepare, raise_pose_code, single_pose, single_poses
from .pose_form import per_pose, record
from .registry import Request
from .results import Contacts, Stats
from .rows import BatchResult, gather
from .shapes import Shape, mesh_surfaces
from .spec import (
    MODE_NAMES,
    THREADS,
    Mode,
    Option,
    RowMode,
    Spec,
    define,
    int_text,
    length_text,
    mode_option,
    nonnegative_length,
    strategy_option,
    traversal_view,
)
from .spec import max_pairs as check_max_pairs
from .strategies import RUNNERS
from .strategies.descent import CONTACTS_ONE, descent_tri, split_boolean, split_pose, splits


def _boolean_view(options: Any) -> tuple[int, int, Any]:
    return MODE_ANY, -1, options["strategy"]


#: ``margin=``: pairs at most this far apart count as intersecting (issue 30 item 2)
_MARGIN = nonnegative_length("margin")
INTERSECTS = define(Spec(
    "intersects",
    {
        "margin": Option(
            0.0, _MARGIN, "count shapes at most this far apart (world units) as intersecting", cli=True,
            text=length_text,
        ),
        "strategy": strategy_option("descent"),
        "threads": THREADS,
    },
    view=_boolean_view, cli="check",
))  # fmt: skip
CONTACTS = define(Spec(
    "contacts",
    {
        "mode": mode_option("all", ("first", "all"), "all: every pair; first: one per colliding pose"),
        "max_pairs": Option(None, check_max_pairs, "keep at most this many pairs per pose", cli=True, text=int_text(1)),
        "strategy": strategy_option("descent"),
        "threads": THREADS,
    },
    result=Contacts, view=traversal_view, cli="contacts",
))  # fmt: skip


QUERY_STATS = define(Spec(
    "query_stats",
    {
        "mode": mode_option("any", MODE_NAMES, "the walk counted: any (intersects), first or all (contacts)"),
        "strategy": strategy_option("descent"),
        "threads": THREADS,
    },
    result=Stats, view=traversal_view,
))  # fmt: skip

_DEFAULT = Descent()
#: the per-call boolean kernel without numba's per-call type dispatch (batch.Pinned): its
#: arguments are library-built tree arrays, poses checked by driver.single_pose and ints.
#: One per ``descent_tri`` specialisation, as ``CONTACTS_ONE``: ``[tri is not None]``.
#: A query its SPLIT_WORK budget does not settle runs on numba's threads (``_large``).
_INTERSECT_ONE = (Pinned(intersect_one), Pinned(intersect_one))
_GUIGUE = _DEFAULT.tri_test_code


def intersects(
    a: Shape,
    b: Shape,
    pose_a: PoseLike = None,
    pose_b: PoseLike = None,
    *,
    margin: float = 0.0,
    strategy: str | Strategy = "descent",
    threads: int | None = None,
) -> bool | NDArray[np.bool_]:
    """Whether mesh ``a`` at ``pose_a`` and mesh ``b`` at ``pose_b`` intersect.

    Triangles are closed: touching (sharing a single point) counts. The answer
    is exact for a's vertices against b's vertices mapped into a's frame by the
    float64 relative pose (ARCHITECTURE.md, "Exactness").

    Parameters
    ----------
    a, b : Mesh or convex shape (Box, Convex, Sphere, Capsule, Cylinder)
    pose_a, pose_b : array_like (4, 4) or (N, 4, 4), optional
        World-from-object rigid transforms; None is the identity. A (4, 4) pose
        broadcasts against an (N, 4, 4) batch.
    margin : float, optional
        A finite length >= 0 (world units): the shapes count as intersecting when
        their distance is at most ``margin`` (an offset by a ball, not an inflation of
        vertices): exactly ``collisionkit.distance(a, b, ...).distance <= margin``,
        answered without the full distance (meshes: a threshold descent that stops at
        the first triangle pair within the margin or when every open node pair is
        farther; two convex shapes: GJK's distance; a convex shape and a mesh: the
        shape's surface, or the mesh inside the solid). 0 (the default) is the plain
        exact test. Strategies: ``"descent"``/``Descent`` records (and ``"gjk"`` for convex pairs).
    strategy : str or strategy record
        How the shapes are walked; every strategy gives the same answer. Two
        meshes: "descent" (default), "bfs", "oaabb", or a record
        (``Descent(tri_test=...)``, ``BFS(...)``, ``OAABB(...)``). Two
        convex shapes: "gjk" (what "descent" runs for them) or "double-box". A
        mesh and a convex shape: "descent" or ``Descent`` records only. Any other pairing raises
        ``UnsupportedOptionError`` (or ``UnsupportedPairError``) naming it.
    threads : int, optional
        Threads (default: all cores); 1 runs the serial path. A batch is split over
        its poses; fewer poses than threads, each pose whose descent is large is
        split over its node pairs (same answers).

    Returns
    -------
    bool for two (4, 4) poses; an (N,) bool array as soon as either pose is a
    3-D array (even N = 1).

    Raises
    ------
    InvalidPoseError
        A non-finite or non-rigid pose (its index is in the message).
    ValueError
        Poses of the wrong shape or batches that do not broadcast; a margin that is
        negative, NaN, infinite or not a number.

    Examples
    --------
    >>> import numpy as np, collisionkit as ck
    >>> box = ck.primitives.box_mesh([1, 1, 1])
    >>> ck.intersects(box, box, None, ck.translation([0.5, 0, 0]))
    True
    >>> ck.intersects(box, box, None, ck.translation([1.5, 0, 0]), margin=0.5)
    True
    """
    # PERF: margin 0 (the default float) goes straight on: one type check and comparison
    if type(margin) is not float or margin != 0.0:
        m = _MARGIN(margin)
        if m > 0.0:
            return _intersects_within(a, b, pose_a, pose_b, m, strategy, threads)
    # PERF: the per-call path (one pose each, default strategy) touches as
    # little Python as it can: ~1.5 us of wrapper and dispatch around the kernel.
    if threads is not None:
        nthreads = thread_count(threads)  # validated (and resolved) once, even where the path ignores it
    if type(a) is Mesh and type(b) is Mesh:
        Ta = single_pose(pose_a)
        Tb = single_pose(pose_b)
        if strategy == "descent":
            tri_code = _GUIGUE  # the default strategy, not resolved again
        else:
            strat = resolve(strategy)
            tri_code = strat.tri_test_code if type(strat) is Descent else -1
        if Ta is not None and Tb is not None and tri_code >= 0:
            ta, tb = pair_trees(a, b)
            # PERF: descent_tri inlined with the tree's box_kind (7 ns here against 30 ns for the
            # call, of a ~1.6 us miss)
            tri = None if tri_code == _GUIGUE and ta.box_kind else tri_code
            # a query its budget does not settle is large: it is split over the threads (_large)
            if threads is None:
                r = _INTERSECT_ONE[tri is not None].call(*ta.descent_args, Ta, *tb.descent_args, Tb, ta.bv_code, tri, SPLIT_WORK)
            else:
                r = _intersect_on(nthreads, ta, tb, Ta, Tb, tri)
            if r < 0:  # PERF: UNSETTLED is negative, so a settled answer pays one test
                if r == UNSETTLED:
                    r = _large(ta, tb, Ta, Tb, tri)
                if r < 0:
                    raise_pose_code(r)
            return r == 1
    else:
        fast = FAST.get(("intersects", type(a), type(b)))
        if fast is not None and strategy == "descent":
            # PERF: a per-call kernel registered for these shape kinds (driver.FAST)
            Ta = single_pose(pose_a)
            Tb = single_pose(pose_b)
            if Ta is not None and Tb is not None:
                r = fast(a, b, Ta, Tb)
                if r < 0:
                    raise_pose_code(r)
                return r == 1
    res = ask(INTERSECTS, a, b, pose_a, pose_b, strategy=strategy, threads=threads)
    if type(res) is not BatchResult:  # lazy: the Dask hand-off's answer
        return res
    return per_pose(res.counts > 0, res.batched)


def _intersects_within(a: Any, b: Any, pose_a: Any, pose_b: Any, m: float, strategy: Any, threads: int | None) -> Any:
    """``intersects`` with a margin m > 0: the per-call threshold kernel for one pose pair of
    meshes (default strategy), else the request path (``margin_rows`` and the convex
    handlers)."""
    if type(a) is Mesh and type(b) is Mesh and (strategy == "descent" or type(strategy) is Descent):
        if threads is not None:
            thread_count(threads)
        Ta = single_pose(pose_a)
        Tb = single_pose(pose_b)
        if Ta is not None and Tb is not None:
            r = within_one(a, b, Ta, Tb, m)
            if r != kth.ONE_OUT_OF_BAND:
                if r < 0:
                    raise_pose_code(r)
                return r == kth.WITHIN
    res = ask(INTERSECTS, a, b, pose_a, pose_b, margin=m, strategy=strategy, threads=threads)
    if type(res) is not BatchResult:  # lazy: the Dask hand-off's answer
        return res
    return per_pose(res.counts > 0, res.batched)


#: the per-call threshold kernel without numba's per-call type dispatch (batch.Pinned): its
#: arguments are library-built tree arrays, poses checked by driver.single_pose, floats, ints
_WITHIN_ONE = Pinned(kth.within_one)


def within_one(a: Mesh, b: Mesh, Ta: NDArray[np.float64], Tb: NDArray[np.float64], m: float) -> int:
    """The per-call threshold kernel on two meshes (their pair volume kind) at one pose pair:
    1 within ``m``, 0 not, a negative pose code, or ``threshold.ONE_OUT_OF_BAND`` (nothing
    computed: the pair must be prescaled)."""
    ta, tb = pair_trees(a, b)
    x, y = ta.arrays, tb.arrays
    return int(_WITHIN_ONE.call(
        x.topo, x.bv, x.tris, x.meta, Ta, y.topo, y.bv, y.tris, y.meta, Tb, float(x.scale[0] + y.scale[0]), ta.bv_code,
        float(m),
    ))  # fmt: skip


def check_margin_strategy(req: Request, convex: bool = False) -> None:
    """Refuse a strategy that cannot answer a margin: the threshold descent walks BVHs
    (``Descent`` records), GJK measures convex pairs."""
    name = type(req.strategy).__name__
    if type(req.strategy) is Descent or (convex and name == "GJK"):
        return
    raise UnsupportedOptionError(
        f"intersects with margin={req.options['margin']!r} is answered by the threshold descent (BVH records)"
        + (" or GJK" if convex else "") + f", not by strategy {name}"
    )


def margin_rows(req: Request, a: Mesh, b: Mesh, m: float) -> NDArray[np.bool_]:
    """(n,) bool over a prepared request's tasks: meshes ``a`` and ``b`` (surfaces) at most
    ``m`` > 0 apart, by the threshold descent (``kernels.proximity.threshold``); tasks
    outside the kernel's band of scales run prescaled by a power of two (``query/scaling.py``;
    the threshold with them)."""
    ta, tb = pair_trees(a, b)
    n = req.n
    hit = np.zeros(n, np.bool_)
    if n == 0:
        return hit
    sa, sb = float(ta.arrays.scale[0]), float(tb.arrays.scale[0])
    for e, tasks in scaling.groups(scaling.task_shifts(req, sa, sb), n):
        sub = req if tasks is None else scaling.sub_request(req, tasks, e)
        if e:
            scaling.check_range("intersects", (sa, sb), e)
        x = scaling.scaled_tree(a, ta, e) if e else ta.arrays
        y = scaling.scaled_tree(b, tb, e) if e else tb.arrays
        k = sub.n
        tasks4 = np.zeros((k, 4), np.int64)
        tasks4[:, 2] = sub.ia
        tasks4[:, 3] = sub.ib
        out = np.zeros(k, np.int8)
        stats = np.zeros((k, 2), np.int64)
        batch.launch(
            batch.plan(k, req.threads, uniform=True), kth.within_serial, kth.within_parallel,
            x.topo, x.bv, x.tris, x.meta, x.scale, sub.pa, y.topo, y.bv, y.tris, y.meta, y.scale, sub.pb,
            tasks4, ta.bv_code, float(np.ldexp(m, -e)), out, stats,
        )  # fmt: skip
        if tasks is None:
            hit[:] = out == kth.WITHIN
        else:
            hit[tasks] = out == kth.WITHIN
    return hit


def bool_result(req: Request, hit: NDArray[np.bool_]) -> BatchResult:
    """The boolean answer (n,) of a request as the engine's ``BatchResult`` (no rows)."""
    n = req.n
    return BatchResult(n, req.batched, hit.astype(np.int64), np.zeros((n, N_STATS), np.int64),
                       np.zeros(0, np.int64), np.zeros(n, np.int64), 0)  # fmt: skip


def _large(ta: Any, tb: Any, Ta: NDArray[np.float64], Tb: NDArray[np.float64], tri: int | None) -> int:
    """A per-call boolean its first pass left UNSETTLED, on numba's current threads (one
    thread: the serial descent to the end)."""
    n = numba.get_num_threads()
    if n == 1:
        return _INTERSECT_ONE[tri is not None].call(*ta.descent_args, Ta, *tb.descent_args, Tb, ta.bv_code, tri, NO_BUDGET)
    return split_boolean(ta, tb, Ta, Tb, tri, n)


def _intersect_on(
    nthreads: int, ta: Any, tb: Any, Ta: NDArray[np.float64], Tb: NDArray[np.float64], tri: int | None
) -> int:
    """The per-call boolean on ``nthreads`` threads, as ``intersects(threads=)`` asks (1: the
    serial descent, no budget), after a first pass that settles small queries; ``tri`` as
    ``descent_tri`` gives it."""
    one = _INTERSECT_ONE[tri is not None]
    if nthreads == 1:
        return one.call(*ta.descent_args, Ta, *tb.descent_args, Tb, ta.bv_code, tri, NO_BUDGET)
    r = one.call(*ta.descent_args, Ta, *tb.descent_args, Tb, ta.bv_code, tri, SPLIT_WORK)
    if r != UNSETTLED:
        return r
    if nthreads == numba.get_num_threads():  # PERF: setting the count costs ~16 us
        return _large(ta, tb, Ta, Tb, tri)
    with using_threads(nthreads):
        return _large(ta, tb, Ta, Tb, tri)


def contacts(
    a: Shape,
    b: Shape,
    pose_a: PoseLike = None,
    pose_b: PoseLike = None,
    *,
    mode: RowMode = "all",
    max_pairs: int | None = None,
    strategy: str | Strategy = "descent",
    threads: int | None = None,
) -> Contacts:
    """The intersecting triangle pairs (face of a, face of b) for each pose pair.

    Parameters
    ----------
    mode : {"first", "all"}
        The ``mode`` vocabulary of every question: "all" every pair; "first"
        one valid pair per colliding pose (which one is unspecified). ("any",
        the boolean, is ``intersects``.)
    max_pairs : int, optional
        Cap per pose: the first pairs found are kept (then sorted) and
        ``truncated`` is set for that pose. Never a silent cut.

    strategy : str or strategy record
        As for ``intersects``; every strategy gives the same rows. On two
        convex shapes "gjk" and "double-box" answer only the boolean: their
        rows come from the surfaces ``.mesh`` by the descent.
    threads : int, optional
        Threads (default: all cores); 1 runs the serial path. A batch is split over
        its poses; fewer poses than threads, each pose whose descent is large
        (without ``max_pairs``, mode "all") is split over its node pairs, with the
        same rows.

    Returns
    -------
    Contacts
        Rows (M,) ``pose_index``, ``face_a``, ``face_b`` in both forms;
        ``counts`` and ``truncated`` per pose: an int and a bool for two
        (4, 4) poses, (N,) arrays for a batch. Without a cap, every strategy,
        volume kind, split rule and thread count gives identical rows.
        ``collisionkit.contact_geometry`` returns the same rows with their
        intersection segments, points and normals.

    Examples
    --------
    >>> import collisionkit as ck
    >>> box = ck.primitives.box_mesh([1, 1, 1])
    >>> c = ck.contacts(box, box, None, ck.translation([0.5, 0.25, 0.125]))
    >>> c.counts > 0, len(c) == c.counts, c.pose_index.shape == (c.counts,)
    (True, True, True)
    """
    return contact_pairs(a, b, pose_a, pose_b, mode, max_pairs, strategy, threads)


def contact_pairs(
    a: Any, b: Any, pose_a: Any, pose_b: Any, mode: str, max_pairs: int | None, strategy: Any, threads: int | None
) -> Contacts:
    """``contacts`` (its body): the row function other questions share (``contact_geometry``)."""
    CONTACTS.options["mode"].validated(mode)
    cap = -1 if max_pairs is None else check_max_pairs(max_pairs)
    if threads is not None:
        thread_count(threads)  # validate even where the single-pose path ignores it
    if strategy == "descent" or type(strategy) is Descent:
        # a convex shape's rows are its surface's (query.convex): the same per-call path
        surfaces = mesh_surfaces(a, b)
        if surfaces is not None:
            strat = _DEFAULT if strategy == "descent" else strategy
            code = MODE_ALL if mode == "all" else MODE_FIRST
            found = _contacts_one(surfaces[0], surfaces[1], pose_a, pose_b, code, cap, strat, threads)
            if found is not None:
                return found
    res = ask(CONTACTS, a, b, pose_a, pose_b, mode=mode, max_pairs=max_pairs, strategy=strategy, threads=threads)
    if type(res) is not BatchResult:  # lazy: the Dask hand-off's answer
        return res
    return _contacts_record(res, cap, res.batched)


def _contacts_record(res: BatchResult, cap: int, batched: bool) -> Contacts:
    pose_index, face_a, face_b, counts, truncated = gather(res, cap)
    return record(
        Contacts, batched, pose_index=pose_index, face_a=face_a, face_b=face_b, counts=counts, truncated=truncated
    )


def contact_rows(req: Request, mode: str = "all", max_pairs: int | None = None) -> Contacts:
    """``contacts`` over a prepared request's tasks, in batch form (``pose_index`` indexes the
    tasks), with the request's strategy and threads: the row function other questions share."""
    options = CONTACTS.validate({"mode": mode, "max_pairs": max_pairs, "strategy": req.strategy, "threads": req.threads})
    handler = registry.checked("contacts", req.a, req.b, options)
    view_mode, cap, _ = CONTACTS.engine_view(options)
    sub = req._replace(mode=view_mode, max_pairs=cap, batched=True, query="contacts", options=MappingProxyType(options))
    return _contacts_record(handler(sub), cap, True)


def hits(a: Mesh, b: Mesh, pose_a: Any, pose_b: Any, threads: int | None) -> NDArray[np.bool_]:
    """(N,) bool: ``intersects`` over a batch of pose pairs (default strategy), as the
    request path answers it: the row function other questions share."""
    options = INTERSECTS.validate({"threads": threads})
    handler = registry.checked("intersects", a, b, options)
    res = handler(prepare(a, b, pose_a, pose_b, MODE_ANY, -1, "descent", threads, "intersects", options))
    return res.counts > 0


def mesh_bool_one(a: Mesh, b: Mesh, Ta: NDArray[np.float64], Tb: NDArray[np.float64]) -> int:
    """The per-call boolean of two meshes (default strategy and threads): 1, 0 or a negative
    pose code (``driver.raise_pose_code``); poses as ``driver.single_pose`` gives them."""
    ta, tb = pair_trees(a, b)
    tri = None if ta.box_kind else _GUIGUE  # descent_tri
    r = _INTERSECT_ONE[tri is not None].call(*ta.descent_args, Ta, *tb.descent_args, Tb, ta.bv_code, tri, SPLIT_WORK)
    return _large(ta, tb, Ta, Tb, tri) if r == UNSETTLED else r


#: Room for pair keys on the per-call contacts path's first pass; a pose with more pairs
#: runs the kernel once more with exact room (the count is known then), and later calls on
#: the same two trees start with that room (``_ROOM``).
_ONE_CALL_KEYS = 4096
#: (id of a's tree arrays, id of b's) -> the largest pair count that outgrew the first pass.
#: Only a buffer size: a stale entry (a freed tree's id reused) costs memory, never answers.
_ROOM: dict[tuple[int, int], int] = {}
_ROOM_ENTRIES = 256


#: ``front`` of a per-call contacts that never splits (its budget never runs out)
_NO_FRONT = np.zeros((0, 2), np.int32)


def _contacts_one(
    a: Mesh, b: Mesh, pose_a: Any, pose_b: Any, mode: int, cap: int, strat: Descent, threads: int | None
) -> Contacts | None:
    """``contacts`` on one pose pair by the per-call kernel (kernels.traverse.descent.contacts_one);
    None for a batch. All pairs without a cap: ``strategies.descent.split_pose`` (a large pose on all
    threads). Otherwise one call, or two when the pairs outgrow the first pass's room.

    PERF: a pose with more pairs than the room ran on the batch path, about 2x slower than
    the batch itself on 4,000-pair poses (issue 15 item 4); now only the first such call on
    two trees runs twice."""
    poses = single_poses(pose_a, pose_b)
    if poses is None:
        return None
    Ta, Tb = poses
    ta, tb = pair_trees(a, b)
    x, y = ta.arrays, tb.arrays
    if threads != 1 and splits(mode, cap):
        # a large pose runs on all threads (issue 15 item 2), a small one as below
        part = split_pose(ta, tb, Ta, Tb, strat.tri_test_code, mode, threads)
        r = kept = part.found
        keys = part.keys
    else:
        key = (id(x), id(y))
        room = _ROOM.get(key, _ONE_CALL_KEYS)
        tri = descent_tri(ta.bv_code, strat.tri_test_code)
        one = CONTACTS_ONE[tri is not None]
        while True:
            keys = np.empty(room, np.int64)
            r, _ = one.call(
                *x, Ta, *y, Tb, ta.bv_code, tri, mode, cap, keys, NO_BUDGET, _NO_FRONT, 0,
                np.zeros((1, N_STATS), np.int64),
            )  # fmt: skip
            if r < 0:
                break
            kept = r if cap < 0 else min(r, cap)
            if kept <= room:
                break
            room = kept  # every pair was counted: the second pass has exact room
            if len(_ROOM) >= _ROOM_ENTRIES:
                _ROOM.clear()
            _ROOM[key] = room
    if r < 0:
        raise_pose_code(r)
    # PERF: one divmod, and the single-pose record built with its scalars (record() would
    # make (1,) arrays only to take their items)
    face_a, face_b = np.divmod(keys[:kept], int(y.meta[0, META_FACES]))
    return Contacts(np.zeros(kept, np.int64), face_a, face_b, int(kept), bool(cap >= 0 and r > cap))


def query_stats(
    a: Shape,
    b: Shape,
    pose_a: PoseLike = None,
    pose_b: PoseLike = None,
    *,
    mode: Mode = "any",
    strategy: str | Strategy = "descent",
    threads: int | None = None,
) -> Stats:
    """Traversal counters of a query, per pose: n_v, n_p, n_u of the seeds' cost model.

    ``mode`` is the walk whose work is counted, in the one ``mode`` vocabulary:
    "any" (the boolean ``intersects``), "first" or "all" (``contacts``); ``strategy`` and
    ``threads`` as for ``intersects`` (each strategy counts its own walk). A pose
    split over threads (fewer poses than threads, a large descent: ARCHITECTURE.md,
    "One large pose on all threads") counts the same work for "all"; for "any" it
    stops at another first pair, so its counters may differ from ``threads=1``'s.

    Returns
    -------
    Stats
        Ints (and a bool ``colliding``) for two (4, 4) poses, (N,) arrays for a batch.
    """
    res = ask(QUERY_STATS, a, b, pose_a, pose_b, mode=mode, strategy=strategy, threads=threads)
    if type(res) is not BatchResult:  # lazy: the Dask hand-off's answer
        return res
    s = res.stats
    return record(
        Stats, res.batched,
        bv_tests=np.ascontiguousarray(s[:, STAT_BV_TESTS]),
        tri_tests=np.ascontiguousarray(s[:, STAT_TRI_TESTS]),
        node_pairs=np.ascontiguousarray(s[:, STAT_NODE_PAIRS]),
        bv_updates=np.ascontiguousarray(s[:, STAT_BV_UPDATES]),
        colliding=res.counts > 0,
    )  # fmt: skip


def _traverse_meshes(req: Request) -> BatchResult:
    """The mesh-mesh handler of the three pair questions: the request's strategy walks them
    (``strategies.walk``, inlined: PERF)."""
    strategy = req.strategy
    return RUNNERS[type(strategy)](req, strategy)


def _intersects_meshes(req: Request) -> BatchResult:
    """The mesh-mesh handler of ``intersects``: with a margin, the threshold descent."""
    m = req.options.get("margin", 0.0)
    if m > 0.0:
        check_margin_strategy(req)
        return bool_result(req, margin_rows(req, req.a, req.b, m))
    return _traverse_meshes(req)


registry.register("intersects", Mesh, Mesh, _intersects_meshes, honours=INTERSECTS.options)
for _spec in (CONTACTS, QUERY_STATS):
    registry.register(_spec.name, Mesh, Mesh, _traverse_meshes, honours=_spec.options)


def single_call_args(a: Mesh, b: Mesh, pose_a: Any = None, pose_b: Any = None) -> tuple:
    """The arguments ``intersects`` passes to its per-call kernel
    (``kernels.traverse.descent.intersect_one``) for one pose pair and the default
    strategy, with the budget of the complete serial answer (NO_BUDGET; ``intersects``
    passes SPLIT_WORK and finishes a query that leaves UNSETTLED on numba's threads).

    For benchmarks that split a call into wrapper, dispatch and kernel time.
    """
    poses = single_poses(pose_a, pose_b)
    if poses is None:
        raise ValueError("single_call_args takes one (4, 4) float64 pose per side")
    Ta, Tb = poses
    ta, tb = pair_trees(a, b)
    x, y = ta.arrays, tb.arrays
    return (
        x.topo, x.bv, x.tris, x.meta, x.scale, Ta,
        y.topo, y.bv, y.tris, y.meta, y.scale, Tb,
        ta.options.bv_code, descent_tri(ta.options.bv_code, _GUIGUE), NO_BUDGET,
    )
