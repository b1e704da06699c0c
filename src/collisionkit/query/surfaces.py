"""Seed 000's questions on surfaces: ``surface_contacts`` (its three queries) and ``node_visits``.

Surfaces are ``mesh.surfaces`` (given, from a file's groups, or segmented). A strategy
that finds surface pairs natively (``Capabilities.surface_pairs``: the overlap box,
``strategies/oaabb.py``) answers query (2) itself; any other surface-walking strategy
finds the triangle pairs (the pair questions' row function) and reduces them to surface
pairs (same answer). ``node_visits`` reads a strategy's visit counters
(``Capabilities.counts_visits``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..geometry.mesh import Mesh
from ..geometry.pose import PoseLike
from ..strategies import Strategy
from .driver import ask
from .pair import contact_rows
from .pose_form import in_form, record
from .registry import Request
from .results import Contacts, PoseRows, _freeze
from .shapes import Shape, register_mesh_query
from .spec import THREADS, Mode, Option, RowMode, Spec, a_bool, define, mode_option, strategy_option, surface_view
from .strategies import capabilities, refuse
from .strategies.oaabb import OAABB


@dataclass(frozen=True, eq=False)
class SurfaceContacts(PoseRows):
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
    ROWS: ClassVar[tuple[str, str, str]] = ("pose_index", "surface_a", "surface_b")

    pose_index: NDArray[np.int64]
    surface_a: NDArray[np.int64]
    surface_b: NDArray[np.int64]
    counts: int | NDArray[np.int64]
    triangles: Contacts | None = None

    def __post_init__(self) -> None:
        _freeze(self, "pose_index", "surface_a", "surface_b", "counts")

    @property
    def n_poses(self) -> int:
        """N (1 for a single pose)."""
        return int(np.size(self.counts))

    def __repr__(self) -> str:
        tri = "" if self.triangles is None else f", triangle_pairs={len(self.triangles)}"
        return f"SurfaceContacts(poses={self.n_poses}, surface_pairs={len(self)}{tri})"


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


def _surface_view(options):
    return surface_view("all", True, options["strategy"])


SURFACE_CONTACTS = define(Spec(
    "surface_contacts",
    {
        "mode": mode_option("all", ("first", "all"), "all: every surface pair; first: one per pose"),
        "triangles": Option(False, None, "also the triangle pairs behind them"),
        "strategy": strategy_option("oaabb"),
        "threads": THREADS,
    },
    result=SurfaceContacts, view=_surface_view, lazy=False,
))  # fmt: skip


def _visits_view(options):
    return surface_view(options["mode"], options["surfaces"], options["strategy"])


def _one_thread(threads: Any) -> Any:
    """threads=1 is what ``node_visits`` does anyway: the same as leaving it unset."""
    return None if threads == 1 else THREADS.validated(threads)


NODE_VISITS = define(Spec(
    "node_visits",
    {
        "mode": mode_option("all", ("any", "first", "all"), "the walk counted: any, first or all"),
        "surfaces": Option(False, a_bool("surfaces"), "count surface_contacts' walk (surface pairs) instead"),
        "strategy": strategy_option("oaabb"),
        "threads": Option(None, _one_thread, "None or 1 (the counters are shared)"),
    },
    result=NodeVisits, view=_visits_view, lazy=False,
))  # fmt: skip


def _surface_rows(a: Mesh, b: Mesh, c: Contacts, n: int) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    sa = a.surfaces[c.face_a].astype(np.int64)
    sb = b.surfaces[c.face_b].astype(np.int64)
    rows = np.stack([c.pose_index, sa, sb], axis=1)
    rows = np.unique(rows, axis=0) if rows.shape[0] else rows.reshape(0, 3)
    pose = np.ascontiguousarray(rows[:, 0])
    counts = np.bincount(pose, minlength=n).astype(np.int64) if n else np.zeros(0, np.int64)
    return pose, np.ascontiguousarray(rows[:, 1]), np.ascontiguousarray(rows[:, 2]), counts


def surface_contacts(
    a: Shape,
    b: Shape,
    pose_a: PoseLike = None,
    pose_b: PoseLike = None,
    *,
    mode: RowMode = "all",
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
    a, b : Mesh or convex shape
    pose_a, pose_b : array_like (4, 4) or (N, 4, 4), optional
        World-from-object poses; broadcast like ``contacts``.
    mode : {"first", "all"}
        The ``mode`` vocabulary of every question ("any", the boolean, is
        ``intersects``).
    triangles : bool
        Also return the triangle pairs (``SurfaceContacts.triangles``).
    strategy : str or strategy record
        Default "oaabb" (the seed's method); "descent", "bfs" or their records:
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
    # convex shapes: their surfaces (query/shapes.py)
    return ask(SURFACE_CONTACTS, a, b, pose_a, pose_b, mode=mode, triangles=triangles, strategy=strategy, threads=threads)


def _surface_contacts_meshes(req: Request) -> SurfaceContacts:
    """The mesh-mesh handler (convex shapes arrive as their surfaces)."""
    a, b, strat, mode, triangles = req.a, req.b, req.strategy, req.options["mode"], req.options["triangles"]
    caps = capabilities(strat)
    if caps.walks != "surfaces":
        raise refuse(req, "answers convex solids and is not supported here: surface_contacts walks the shapes' "
                     "triangle surfaces (take 'oaabb', the default, 'bvh', 'bfs' or their records)")  # fmt: skip
    if caps.surface_pairs and mode == "all" and not triangles:
        pose, sa, sb, counts = strat.surface_rows(req)
        return record(SurfaceContacts, req.batched, pose_index=pose, surface_a=sa, surface_b=sb, counts=counts)
    c = contact_rows(req, mode)  # batch form
    pose, sa, sb, counts = _surface_rows(a, b, c, c.n_poses)
    tri = in_form(c, req.batched) if triangles else None
    return record(SurfaceContacts, req.batched, pose_index=pose, surface_a=sa, surface_b=sb, counts=counts, triangles=tri)


def node_visits(
    a: Shape,
    b: Shape,
    pose_a: PoseLike = None,
    pose_b: PoseLike = None,
    *,
    mode: Mode = "all",
    surfaces: bool = False,
    strategy: OAABB | str = "oaabb",
    threads: int | None = None,
) -> NodeVisits:
    """Count CollisionSearch's visits to every node of both objects' R-trees.

    ``mode``: the walk counted, in the one ``mode`` vocabulary: "any" (``intersects``),
    "first" or "all" (``contacts``). ``surfaces=True``: the walk of ``surface_contacts``
    (surface pairs; with "any" or "first" it is the triangle walk, which stops at the first
    pair either way). Runs on one thread (the counters are shared):
    ``threads`` may be None or 1; more raises ``UnsupportedOptionError``. Seed 000
    claims each node of A is visited once; this measures it.
    """
    # convex shapes: their surfaces (query/shapes.py); the request runs on one thread
    return ask(NODE_VISITS, a, b, pose_a, pose_b, mode=mode, surfaces=surfaces, strategy=strategy, threads=threads)


def _node_visits_meshes(req: Request) -> NodeVisits:
    """The mesh-mesh handler (convex shapes arrive as their surfaces); serial: the counters are shared."""
    strat = req.strategy
    if not capabilities(strat).counts_visits:
        raise refuse(req, "is not supported: node_visits counts the R-tree walks of an OAABB strategy "
                     "(take 'oaabb' or an OAABB record)")  # fmt: skip
    va, vb, na, nb = strat.visits(req._replace(threads=1))
    return NodeVisits(va, vb, na, nb, req.n)


register_mesh_query("surface_contacts", _surface_contacts_meshes)
register_mesh_query("node_visits", _node_visits_meshes, honours=("mode", "surfaces", "strategy"))

__all__ = ["OAABB", "NodeVisits", "SurfaceContacts", "node_visits", "surface_contacts"]
