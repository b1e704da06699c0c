"""Seed 000's CollisionSearch as a strategy (``strategy="oaabb"``), the seed's
three queries (``surface_contacts``) and per-node visit counters (``node_visits``).

``OAABB`` walks per-object R-trees of surfaces and triangles
(``bvh/rtree.py``), filters b's trees by the overlap box of the two objects
and walks a's trees with each surviving triangle's tight box
(``kernels/traverse/oaabb.py``). Like every strategy it returns exactly the
triangle pairs of the default BVH traversal (the triangle test is exact and
b's vertices are mapped by the same arithmetic).

Its ``query_stats`` counters mean: ``bv_tests`` box tests (nodes and
triangle entries against the OAABB or a triangle's box, plus the root test),
``tri_tests`` exact triangle tests, ``node_pairs`` nodes visited in all four
walks (R-tree walks visit single nodes, not node pairs), ``bv_updates`` boxes
moved into the other object's frame (a's root box, then one per mapped
triangle of b): the seed's table 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..bvh.rtree import DEFAULT_NODE_CAPACITY, RTrees, rtrees_for
from ..constants import (
    MODE_SURFACE_PAIRS,
    MODES,
    TRI_TEST_GUIGUE,
)
from ..errors import UnsupportedOptionError
from ..geometry.mesh import Mesh
from ..kernels.build.rtree import RT_FACES, RT_SURFACES
from ..kernels.traverse import oaabb as ko
from ..strategies import Strategy, register, resolve
from . import batch, registry
from .convex import GJK
from .double_box import DoubleBox
from .engine import BatchResult, check_mesh, prepare
from .pair import contacts
from .pose_form import in_form, record
from .registry import Request
from .results import Contacts, _freeze
from .shapes import register_mesh_query

#: Result rows reserved for the first pass of a batch (as query.engine does).
_FIRST_PASS_ROWS = 1 << 18


@dataclass(frozen=True)
class OAABB:
    """Seed 000's CollisionSearch over R-trees of surfaces and triangles.

    Parameters
    ----------
    use_overlap_box : bool
        True (default): b's surface and triangle trees are filtered by the
        overlap box (OAABB) of the two objects before b's triangles are mapped
        into a's frame. False: every triangle of b is mapped and walked through
        a's trees (the seed's "without OAABB").
    node_capacity : int
        Node capacity m of the STR-packed R-trees (>= 2).

    Examples
    --------
    >>> import collisionkit as ck
    >>> box = ck.primitives.box_mesh([1, 1, 1])
    >>> ck.intersects(box, box, None, ck.translation([0.9, 0, 0]), strategy="oaabb")
    True
    >>> ck.contacts(box, box, None, ck.translation([2, 0, 0]), strategy=ck.OAABB(use_overlap_box=False)).counts
    array([0])
    """

    use_overlap_box: bool = True
    node_capacity: int = DEFAULT_NODE_CAPACITY

    def __post_init__(self) -> None:
        if not isinstance(self.use_overlap_box, (bool, np.bool_)):
            raise ValueError(f"use_overlap_box must be a bool, got {self.use_overlap_box!r}")
        m = self.node_capacity
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 2:
            raise ValueError(f"node_capacity must be an int >= 2, got {m!r}")

    def trees(self, mesh: Mesh) -> RTrees:
        """``mesh``'s R-trees for this node capacity (cached per geometry)."""
        return rtrees_for(mesh, int(self.node_capacity))

    def run(self, request: Request) -> BatchResult:
        """Answer a validated batch (``query.registry.Request``) in one compiled call."""
        return _execute(self, request, request.mode, None)


register("oaabb", OAABB())


def _kernel_args(rt: RTrees) -> tuple:
    x = rt.arrays
    return (x.topo, x.box, x.surf_root, x.surf_ids, x.tbox, x.tris, x.face_ids, x.meta, x.scale)


#: Visit counters handed to the kernels when nobody counts (never written then).
_NO_VISITS = (np.zeros(1, np.int64), np.zeros(1, np.int64))


def _execute(strat: OAABB, req: Request, mode: int, visits: tuple[NDArray, NDArray] | None) -> BatchResult:
    a, b = check_mesh(req.a, "a"), check_mesh(req.b, "b")
    ra, rb = strat.trees(a), strat.trees(b)
    n, max_pairs, nthreads = req.n, req.max_pairs, req.threads
    surf_mode = mode == MODE_SURFACE_PAIRS
    width_b = int(rb.arrays.meta[RT_SURFACES if surf_mode else RT_FACES])
    # PERF: per-call overhead matters (one pose per call is common): no np.stack/np.full
    tasks = np.empty((n, 2), np.int64)
    tasks[:, 0] = req.ia
    tasks[:, 1] = req.ib
    counting = visits is not None
    size = (ra.n_surfaces + rb.n_surfaces) if surf_mode else (a.n_faces + b.n_faces)
    guess = batch.row_guess(mode, max_pairs, size)
    p = batch.plan(n, nthreads, parallel_ok=not counting)  # visit counters are shared: serial
    head = (*_kernel_args(ra), req.pa, *_kernel_args(rb), req.pb)
    opts = (np.int64(bool(strat.use_overlap_box)), np.int64(TRI_TEST_GUIGUE), np.int64(mode), np.int64(max_pairs))
    flag = np.int64(counting)

    def run(p_, tasks_, keys_, cap_, starts_, counts_, stats_, rerun):
        # the first pass counted the visits of a task that ran out of room in full
        # (it keeps walking): a rerun counts into scratch
        va, vb = _NO_VISITS if visits is None else (np.zeros_like(visits[0]), np.zeros_like(visits[1])) if rerun else visits
        args = (*head, tasks_, *opts, keys_, np.int64(cap_), starts_, counts_, stats_, flag, va, vb)
        batch.launch(p_, ko.oaabb_serial, ko.oaabb_parallel, *args)

    rows = batch.pair_rows(tasks, p, guess, mode, max_pairs, run, rerun_parallel=False)
    return BatchResult(n, req.batched, rows.counts, rows.stats, rows.keys, rows.starts, width_b)


# --------------------------------------------------------------------------- records


@dataclass(frozen=True, eq=False)
class SurfaceContacts:
    """Intersecting surface pairs of a batch of N pose pairs (seed 000's queries).

    Attributes
    ----------
    pose_index, surface_a, surface_b : (M,) int64
        One row per intersecting surface pair, surface labels as in
        ``mesh.surfaces``, sorted by (pose_index, surface_a, surface_b), each once.
    counts : int or (N,) int64
        Surface pairs per pose (at most 1 with ``mode="first"``): an int for
        two (4, 4) poses, an (N,) array for a batch.
    triangles : Contacts or None
        With ``triangles=True``: the triangle pairs behind them (all of them for
        ``mode="all"``, the one found for ``mode="first"``), in the same form.
    """

    PER_POSE: ClassVar[tuple[str, ...]] = ("counts",)

    pose_index: NDArray[np.int64]
    surface_a: NDArray[np.int64]
    surface_b: NDArray[np.int64]
    counts: int | NDArray[np.int64]
    triangles: Contacts | None = None

    def __post_init__(self) -> None:
        _freeze(self, "pose_index", "surface_a", "surface_b", "counts")

    def __len__(self) -> int:
        return int(self.pose_index.shape[0])

    @property
    def n_poses(self) -> int:
        """N (1 for a single pose)."""
        return int(np.size(self.counts))

    @property
    def colliding(self) -> bool | NDArray[np.bool_]:
        """bool or (N,) bool: the poses with at least one surface pair."""
        return self.counts > 0

    def pairs(self, pose: int = 0) -> NDArray[np.int64]:
        """(k, 2) int64 (surface_a, surface_b) rows of one pose."""
        if not 0 <= pose < self.n_poses:
            raise IndexError(f"pose {pose} out of range for {self.n_poses} poses")
        counts = np.atleast_1d(self.counts)
        start = int(counts[:pose].sum())
        stop = start + int(counts[pose])
        return np.stack([self.surface_a[start:stop], self.surface_b[start:stop]], axis=1)

    def __repr__(self) -> str:
        tri = "" if self.triangles is None else f", triangle_pairs={len(self.triangles)}"
        return f"SurfaceContacts(poses={self.n_poses}, surface_pairs={len(self)}{tri})"


def _surface_rows(a: Mesh, b: Mesh, c: Contacts, n: int) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    sa = a.surfaces[c.face_a].astype(np.int64)
    sb = b.surfaces[c.face_b].astype(np.int64)
    rows = np.stack([c.pose_index, sa, sb], axis=1)
    rows = np.unique(rows, axis=0) if rows.shape[0] else rows.reshape(0, 3)
    pose = np.ascontiguousarray(rows[:, 0])
    counts = np.bincount(pose, minlength=n).astype(np.int64) if n else np.zeros(0, np.int64)
    return pose, np.ascontiguousarray(rows[:, 1]), np.ascontiguousarray(rows[:, 2]), counts


def surface_contacts(
    a: Any,
    b: Any,
    pose_a: Any = None,
    pose_b: Any = None,
    *,
    mode: str = "all",
    triangles: bool = False,
    strategy: str | Strategy = "oaabb",
    threads: int | None = None,
) -> SurfaceContacts:
    """The intersecting surface pairs of ``a`` and ``b``: seed 000's three queries.

    (1) the first intersecting surface pair: ``mode="first"``; (2) all
    intersecting surface pairs: ``mode="all"``; (3) all of them with their
    triangle pairs: ``mode="all", triangles=True``.

    Surfaces are ``mesh.surfaces`` (given, from the file's groups, or
    segmented). With an ``OAABB`` strategy, query (2) settles a surface pair at
    its first intersecting triangle pair and skips that pair's remaining
    triangles; any other strategy finds the triangle pairs and reduces them
    to surface pairs (same answer).

    Parameters
    ----------
    a, b : Mesh
    pose_a, pose_b : array_like (4, 4) or (N, 4, 4), optional
        World-from-object poses; broadcast like ``contacts``.
    mode : {"all", "first"}
    triangles : bool
        Also return the triangle pairs (``SurfaceContacts.triangles``).
    strategy : str or strategy record
        Default "oaabb" (the seed's method); "bvh", "bfs" or their records:
        every shape is walked as its triangle surface (a convex shape's
        ``.mesh``), so the convex strategies "gjk" and "double-box" raise
        ``UnsupportedOptionError``.
    threads : int, optional

    Returns
    -------
    SurfaceContacts
        Rows (M,) with ``pose_index`` in both forms; ``counts`` an int for two
        (4, 4) poses, an (N,) array for a batch.

    Examples
    --------
    >>> import collisionkit as ck
    >>> box = ck.primitives.box_mesh([1, 1, 1])   # 6 surfaces (its sides)
    >>> sc = ck.surface_contacts(box, box, None, ck.translation([1.0, 0, 0]))
    >>> sorted(map(tuple, sc.pairs(0).tolist()))[:3]
    [(1, 0), (1, 2), (1, 3)]
    """
    if mode not in ("all", "first"):
        raise ValueError(f"mode must be 'all' or 'first', got {mode!r}")
    strat = resolve(strategy)
    if isinstance(strat, (GJK, DoubleBox)):
        raise UnsupportedOptionError(
            f"surface_contacts walks the shapes' triangle surfaces: option strategy={strategy!r} answers "
            "convex solids and is not supported here (take 'oaabb', the default, 'bvh', 'bfs' or their records)"
        )
    options = {"mode": mode, "triangles": triangles, "strategy": strategy, "threads": threads}
    handler = registry.checked("surface_contacts", a, b, options)  # convex shapes: their surface (query/shapes.py)
    return handler(prepare(a, b, pose_a, pose_b, MODE_SURFACE_PAIRS, -1, strat, threads, "surface_contacts", options))


def _surface_contacts_meshes(req: Request) -> SurfaceContacts:
    """The mesh-mesh handler (convex shapes arrive as their surfaces)."""
    a, b, strat, mode, triangles = req.a, req.b, req.strategy, req.options["mode"], req.options["triangles"]
    if isinstance(strat, OAABB) and mode == "all" and not triangles:
        res = _execute(strat, req, MODE_SURFACE_PAIRS, None)
        ra, rb = strat.trees(a), strat.trees(b)
        pose, ca, cb, counts = _gather_keys(res)
        sa, sb = ra.labels[ca].astype(np.int64), rb.labels[cb].astype(np.int64)
        return record(SurfaceContacts, req.batched, pose_index=pose, surface_a=sa, surface_b=sb, counts=counts)
    c = contacts(a, b, req.pa[req.ia], req.pb[req.ib], mode=mode, strategy=strat, threads=req.threads)  # batch form
    pose, sa, sb, counts = _surface_rows(a, b, c, c.n_poses)
    tri = in_form(c, req.batched) if triangles else None
    return record(SurfaceContacts, req.batched, pose_index=pose, surface_a=sa, surface_b=sb, counts=counts, triangles=tri)


def _gather_keys(res: BatchResult) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """(pose, compact a, compact b, counts) from a result's per-pose sorted keys."""
    n = res.n
    counts = res.counts.astype(np.int64)
    total = int(counts.sum())
    idx = np.repeat(res.starts, counts) + (np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts))
    key = res.keys[idx] if total else np.zeros(0, np.int64)
    pose = np.repeat(np.arange(n, dtype=np.int64), counts)
    w = max(res.faces_b, 1)
    return pose, key // w, key % w, counts


# --------------------------------------------------------------------------- node visits


@dataclass(frozen=True, eq=False)
class NodeVisits:
    """How often CollisionSearch visited each R-tree node, summed over the poses.

    Attributes
    ----------
    visits_a, visits_b : (nodes,) int64
        Visits per node of a's and b's R-trees (node layout of ``RTrees``:
        surface tree first, then the triangle trees).
    surface_nodes_a, surface_nodes_b : int
        Nodes of each surface tree (the first ones).
    n_poses : int
    """

    visits_a: NDArray[np.int64]
    visits_b: NDArray[np.int64]
    surface_nodes_a: int
    surface_nodes_b: int
    n_poses: int

    def __post_init__(self) -> None:
        _freeze(self, "visits_a", "visits_b")

    def summary(self) -> dict[str, float]:
        """Visited nodes, total visits and the largest and mean visits per visited node, per side."""
        out: dict[str, float] = {}
        for side, v in (("a", self.visits_a), ("b", self.visits_b)):
            hit = v[v > 0]
            out[f"nodes_{side}"] = float(v.shape[0])
            out[f"visited_{side}"] = float(hit.shape[0])
            out[f"visits_{side}"] = float(v.sum())
            out[f"max_per_node_{side}"] = float(hit.max()) if hit.size else 0.0
            out[f"mean_per_visited_node_{side}"] = float(hit.mean()) if hit.size else 0.0
        return out


def node_visits(
    a: Any,
    b: Any,
    pose_a: Any = None,
    pose_b: Any = None,
    *,
    mode: str = "all",
    strategy: OAABB | str = "oaabb",
    threads: int | None = None,
) -> NodeVisits:
    """Count CollisionSearch's visits to every node of both objects' R-trees.

    ``mode``: "any", "first", "all" (the triangle queries) or "surfaces"
    (all surface pairs). Runs on one thread (the counters are shared):
    ``threads`` may be None or 1; more raises ``UnsupportedOptionError``. Seed 000
    claims each node of A is visited once; this measures it.
    """
    strat = resolve(strategy)
    if not isinstance(strat, OAABB):
        raise UnsupportedOptionError(
            f"node_visits counts the R-tree walks of an OAABB strategy: option strategy={strategy!r} "
            "is not supported (take 'oaabb' or an OAABB record)"
        )
    codes = dict(MODES, surfaces=MODE_SURFACE_PAIRS)
    if mode not in codes:
        raise ValueError(f"mode must be one of {sorted(codes)}, got {mode!r}")
    # threads=1 is what this query does anyway: the same as leaving it unset
    options = {"mode": mode, "strategy": strategy, "threads": None if threads == 1 else threads}
    handler = registry.checked("node_visits", a, b, options)  # convex shapes: their surface (query/shapes.py)
    return handler(prepare(a, b, pose_a, pose_b, codes[mode], -1, strat, 1, "node_visits", options))


def _node_visits_meshes(req: Request) -> NodeVisits:
    """The mesh-mesh handler (convex shapes arrive as their surfaces); serial: the counters are shared."""
    a, b, strat = req.a, req.b, req.strategy
    ra, rb = strat.trees(a), strat.trees(b)
    va = np.zeros(ra.n_nodes, np.int64)
    vb = np.zeros(rb.n_nodes, np.int64)
    _execute(strat, req, req.mode, (va, vb))
    return NodeVisits(va, vb, ra.n_surface_nodes, rb.n_surface_nodes, req.n)


register_mesh_query("surface_contacts", _surface_contacts_meshes)
register_mesh_query("node_visits", _node_visits_meshes, honours=("mode", "strategy"))

__all__ = ["OAABB", "NodeVisits", "SurfaceContacts", "node_visits", "surface_contacts"]
