"""A drop-in for ``trimesh.collision.CollisionManager``: change one import.

>>> from collisionkit.trimesh import CollisionManager   # was: from trimesh.collision import ...

The manager keeps trimesh's signatures and return forms (trimesh >= 5.2: the
same arguments, the same ``bool`` / ``set`` / tuple results, the same
``ValueError`` for an unknown name, and trimesh's own
``trimesh.collision.ContactData`` and ``DistanceData`` records), and answers
with collisionkit's exact queries instead of python-fcl:

* one ``collisionkit.World`` per manager, kept in step on ``add_object``,
  ``remove_object`` and ``set_transform``; ``in_collision_internal`` is its
  broad phase and one batched narrow phase over every candidate pair, and
  ``min_distance_internal`` its broad-phase nearest pair (``World.nearest_pair``);
* after ``set_transform`` of a few objects, only their pairs are measured again:
  the World keeps its candidate and colliding pairs, and the manager keeps each
  pair's depth, containment and (across managers) answer by pair of objects (a
  moved object is a new ``ManagedObject``, so a kept answer holds for exactly the
  poses it was measured at); ``min_distance_internal()`` keeps its deepest pair
  while it does not move and measures only the moved objects' deeper neighbours;
  the boolean forms (no names, no data) stop at the first colliding pair, as FCL's
  manager does;
* a trimesh mesh becomes one ``collisionkit.Mesh`` (cached per trimesh object and
  its vertex/face contents), so instances of shared geometry share one tree;
* triangle tests are exact (touching counts), and closed meshes are solids: a
  mesh inside a closed mesh collides (FCL reports that only when both are convex);
* distances are signed: minus the penetration depth for overlapping closed meshes
  (a certified lower bound of it for non-convex pairs, by default: ``depth=``);
* the manager holds no user data beyond its objects: ``as_mesh``'s conversions are
  keyed weakly and bounded in bytes, and a failed call leaves the manager as it was.

Where the answers differ from FCL's on purpose
-----------------------------------------------

====================================  ===========================  ==================================
case                                  trimesh + python-fcl         collisionkit.trimesh
====================================  ===========================  ==================================
surfaces touching (shared point)      convex pairs: no collision   collision (exact test), distance 0
                                      (GJK tolerance), -0.0
one mesh inside a closed one          reported only when both      reported (winding number of a
                                      are convex (``fcl.Convex``)  vertex, ``collisionkit.classify``)
near touching (gaps 1e-6 .. 1e-12)    the same answers (tested)    the same answers (exact predicates)
signed distance of an overlap         convex pairs: -EPA depth;    minus the depth for closed meshes:
                                      two non-convex (BVH)         exact for convex pairs (``method=
                                      meshes: 0.0; a BVH and a     "convex"``), else the certified
                                      convex mesh: a depth, not    bracket's lower end (the deepest
                                      certified (7.1e-10 for a     vertex, else face centroid, inside
                                      1e-9 sink, below the lower   the other mesh; ~1 ms a pair); its
                                      bound)                       upper end with ``depth="refined"``
                                                                   (0.1 s a pair of 300-1000
                                                                   triangles); 0.0 for open meshes
``min_distance_*`` with overlaps      the first overlapping pair   the deepest pair (pruned by the
                                      its broad phase meets        boxes' depth bound)
distance of two convex meshes         GJK can stop short (1.26     the exact minimum (pruned BVH
                                      for two icospheres 1.0       distance)
                                      apart)
contacts (``return_data``)            convex pairs: 1 contact,     one per intersecting triangle pair
                                      faces -1; meshes: 1 per      (faces, midpoint of the exact
                                      triangle pair, depth 0       segment, a's face normal); depth:
                                                                   the pair's exact depth for convex
                                                                   pairs, else 0.0; a contained pair:
                                                                   one contact, faces -1
``add_object`` returns                ``fcl.CollisionObject``      ``ManagedObject`` (name, mesh, pose)
no pair to measure                    1.797e308 (DBL_MAX);         ``inf``; names and data None
                                      names: ``TypeError``
====================================  ===========================  ==================================

Poses: ``add_object`` rounds the transform to float32 as trimesh does (FCL
then sees the same pose to ~1e-7; the rounded rotation is made exactly orthogonal
again, see ``_transform``), ``set_transform`` and the ``*_single`` queries keep
float64 as trimesh 5.2 does; every answer is exact at the pose stored
(``ManagedObject.transform``).

Batches trimesh lacks: ``in_collision_many`` and ``min_distance_many`` take an
(N, 4, 4) stack of transforms of one mesh and answer all of them in a few
batched calls per manager object.
"""

from __future__ import annotations

import contextlib
import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import trimesh  # the real trimesh: absolute import (this module is collisionkit.trimesh)
from numpy.typing import NDArray

from .constants import POSE_RIGIDITY_TOL
from .geometry.mesh import Mesh
from .kernels.broadphase.common import box_pairs_across, deeper_neighbours
from .query.classify import classify
from .query.contact_geometry import contact_geometry
from .query.distance import distance as ck_distance
from .query.pair import intersects
from .query.penetration import is_convex, penetration
from .query.penetration_bounds import lower_bound
from .world import World
from .world.nearest import box_bounds, local_sphere, nearest, pair_measure
from .world.records import rows_in

__all__ = [
    "COLLISION_PER_PAIR_CAP", "MESH_CACHE_BYTES", "MESH_CACHE_ENTRIES", "CollisionManager", "ManagedObject", "scene_to_collision",
]  # fmt: skip

#: Contacts reported per object pair with ``return_data`` (trimesh's cap).
COLLISION_PER_PAIR_CAP = 100000
#: The name trimesh gives the query mesh of the ``*_single`` methods in ContactData/DistanceData.
EXTERNAL = "__external"

_I64 = np.int64


@dataclass(frozen=True, eq=False)
class ManagedObject:
    """What ``add_object`` returns (trimesh returns an ``fcl.CollisionObject``).

    Attributes
    ----------
    name : hashable
        The manager's name of the object.
    mesh : collisionkit.Mesh
        The geometry the manager queries (shared by every object added from the
        same trimesh mesh).
    transform : (4, 4) float64
        The pose stored (the transform given, rounded to float32 like trimesh, its
        rotation block made orthogonal again).
    """

    name: Hashable
    mesh: Mesh
    transform: NDArray[np.float64]


class _Contact(NamedTuple):
    # the attributes trimesh.collision.ContactData reads from an fcl.Contact
    b1: int
    b2: int
    normal: NDArray[np.float64]
    pos: NDArray[np.float64]
    penetration_depth: float


class _DistanceResult(NamedTuple):
    # the attributes trimesh.collision.DistanceData reads from an fcl.DistanceResult
    b1: int
    b2: int
    nearest_points: tuple[NDArray[np.float64], NDArray[np.float64]]
    min_distance: float


# -- inputs ------------------------------------------------------------------------------


def _closed(mesh: Mesh) -> bool:
    """Every edge (vertices merged by exact coordinates) on an even number of faces: a solid."""

    def build() -> bool:
        used = np.unique(mesh.faces)
        _, inv = np.unique(mesh.vertices[used], axis=0, return_inverse=True)
        remap = np.zeros(mesh.n_vertices, _I64)
        remap[used] = inv.reshape(-1)
        f = remap[mesh.faces]
        e = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
        _, counts = np.unique(e, axis=0, return_counts=True)
        return bool(np.all(counts % 2 == 0))

    return bool(mesh.cached(("trimesh-closed",), build))


#: The conversions ``as_mesh`` keeps for meshes that no manager object holds (the probe
#: meshes of the ``*_single`` and ``*_many`` queries): at most this many ...
MESH_CACHE_ENTRIES = 16
#: ... and at most this many bytes (vertices, faces and every structure built for them,
#: trees included, measured each time an entry is stored or found), the most recent
#: conversion excepted. Entries are keyed weakly: one goes when its trimesh mesh is
#: garbage collected.
MESH_CACHE_BYTES = 64 * 2**20


def _nbytes(x: Any, seen: set[int], depth: int = 0) -> int:
    """Bytes of the arrays reachable from ``x`` (arrays, tuples, lists, dicts, objects'
    ``__dict__`` / ``__slots__``), each array counted once; a bounded walk for accounting."""
    if id(x) in seen or depth > 6 or x is None or isinstance(x, (str, bytes, int, float, bool)):
        return 0
    seen.add(id(x))
    if isinstance(x, np.ndarray):
        return int(x.nbytes) if x.base is None or id(x.base) in seen else int(x.nbytes) + _nbytes(x.base, seen, depth + 1)
    if isinstance(x, dict):
        return sum(_nbytes(v, seen, depth + 1) for v in x.values())
    if isinstance(x, (tuple, list, set, frozenset)):
        return sum(_nbytes(v, seen, depth + 1) for v in x)
    total = 0
    for name in getattr(type(x), "__slots__", ()):
        total += _nbytes(getattr(x, name, None), seen, depth + 1)
    return total + _nbytes(getattr(x, "__dict__", None), seen, depth + 1)


def mesh_nbytes(mesh: Mesh) -> int:
    """Bytes a ``collisionkit.Mesh`` holds: its arrays and every structure built for it
    so far (trees, hulls, ...)."""
    return _nbytes(mesh, set())


class _Conversion(NamedTuple):
    ref: Any  # weakref.ref to the trimesh mesh (ids are reused after it dies)
    key: tuple[int, int]  # trimesh's hashes of its vertex and face arrays when converted
    mesh: Mesh


def _converted(hit: _Conversion | None, mesh: Any, key: tuple[int, int]) -> Mesh | None:
    return hit.mesh if hit is not None and hit.ref() is mesh and hit.key == key else None


class _MeshCache:
    """trimesh mesh -> ``collisionkit.Mesh``, keyed weakly (by ``id`` with a weak reference
    and the contents' hashes), least recently used first out, bounded by
    ``MESH_CACHE_ENTRIES`` and ``MESH_CACHE_BYTES``."""

    def __init__(self) -> None:
        self._entries: OrderedDict[int, _Conversion] = OrderedDict()
        self._bytes: dict[int, tuple[tuple[int, int], int]] = {}  # id -> (structures counted, bytes)
        self._lock = threading.Lock()
        self._dead: list[tuple[int, Any]] = []  # collected while the lock was held

    def _forget(self, i: int, ref: Any) -> None:
        hit = self._entries.get(i)
        if hit is not None and hit.ref is ref:
            del self._entries[i]
            self._bytes.pop(i, None)

    def _purge(self) -> None:  # with the lock held
        while self._dead:
            self._forget(*self._dead.pop())

    def _measure(self, i: int) -> None:
        """Measure entry i again when structures were built for it since (trees are built by
        the queries after the conversion was stored)."""
        m = self._entries[i].mesh
        built = (len(m._geom._cache), len(m._trees))  # PERF: a full measure costs ~0.1 ms
        old = self._bytes.get(i)
        if old is None or old[0] != built:
            self._bytes[i] = (built, mesh_nbytes(m))

    def _evict(self) -> None:
        """Least recently used out until the budgets hold (the newest entry always stays)."""
        total = sum(b for _, b in self._bytes.values())
        while len(self._entries) > 1 and (len(self._entries) > MESH_CACHE_ENTRIES or total > MESH_CACHE_BYTES):
            j, _ = self._entries.popitem(last=False)
            total -= self._bytes.pop(j)[1]

    def __len__(self) -> int:
        with self._lock:
            self._purge()
            return len(self._entries)

    def nbytes(self) -> int:
        """Bytes of the meshes held now (measured again)."""
        with self._lock:
            self._purge()
            return sum(mesh_nbytes(c.mesh) for c in self._entries.values())

    def get(self, mesh: Any, key: tuple[int, int]) -> Mesh | None:
        with self._lock:
            self._purge()
            i = id(mesh)
            m = _converted(self._entries.get(i), mesh, key)
            if m is not None:
                self._entries.move_to_end(i)
                self._measure(i)
                self._evict()
            return m

    def put(self, mesh: Any, key: tuple[int, int], m: Mesh) -> None:
        i = id(mesh)

        def collected(ref: Any, i: int = i) -> None:
            # NOTE: a weakref callback can run inside any allocation, this thread's locked
            # sections included: never wait for the lock here, leave the entry to _purge
            if self._lock.acquire(blocking=False):
                try:
                    self._forget(i, ref)
                finally:
                    self._lock.release()
            else:
                self._dead.append((i, ref))

        with self._lock:
            self._purge()
            self._entries[i] = _Conversion(weakref.ref(mesh, collected), key, m)
            self._entries.move_to_end(i)
            self._bytes.pop(i, None)
            for j in self._entries:
                self._measure(j)
            self._evict()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes.clear()
            self._dead.clear()


_MESHES = _MeshCache()


def _content_key(mesh: Any) -> tuple[int, int]:
    # trimesh's hashes of its tracked arrays (cached by trimesh until an array changes)
    return (hash(mesh.vertices), hash(mesh.faces))


def _check_mesh(mesh: Any) -> None:
    if not isinstance(mesh, trimesh.Trimesh):
        raise TypeError(f"mesh must be a trimesh.Trimesh (or a collisionkit.Mesh), got {type(mesh).__name__}")


def as_mesh(mesh: Any) -> Mesh:
    """A ``collisionkit.Mesh`` for a ``trimesh.Trimesh`` (or a Mesh as is).

    Conversions are cached per trimesh object and its contents (trimesh's hash of
    its vertex and face arrays), so asking again for an unchanged mesh (the probe of
    repeated ``*_single`` queries) reuses its tree. The cache holds no user data for
    long: an entry goes when its trimesh mesh is garbage collected, and at most
    ``MESH_CACHE_ENTRIES`` conversions and ``MESH_CACHE_BYTES`` bytes are kept (the
    most recent one always), least recently used first out. A manager shares one
    conversion between its objects of the same trimesh mesh on its own (the
    instances of a ``trimesh.Scene`` build one tree) and keeps it only while an
    object uses it.

    Raises
    ------
    TypeError
        Neither a ``trimesh.Trimesh`` nor a ``collisionkit.Mesh``.
    """
    if isinstance(mesh, Mesh):
        return mesh
    _check_mesh(mesh)
    key = _content_key(mesh)
    m = _MESHES.get(mesh, key)
    if m is None:
        m = Mesh(np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces))
        _MESHES.put(mesh, key, m)
    return m


def _transform(transform: Any, *, float32: bool) -> NDArray[np.float64]:
    """(4, 4) float64 pose (identity for None).

    ``float32``: rounded through float32 as trimesh does in ``add_object``, then the
    rotation block replaced by the nearest rotation (polar factor) when the rounding left
    it measurably non-orthogonal. NOTE: the kernels invert a pose as its transpose
    (ARCHITECTURE.md, "Frames"); a float32-rounded rotation is orthogonal only to ~1e-7,
    which would move b's mapped vertices by ~1e-8 relative and make answers depend on the
    argument order at that level. The stored pose is exactly rigid (to float64 rounding)
    and within ~1e-7 of the float32 one.
    """
    if transform is None:
        return np.eye(4)
    try:
        t = np.asarray(transform, dtype=np.float32 if float32 else np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"transform must be a (4, 4) numeric array, got {transform!r}") from None
    if t.shape != (4, 4):
        raise ValueError(f"transform must be (4, 4), got shape {t.shape}")
    T = np.array(t, dtype=np.float64)
    if float32 and np.all(np.isfinite(T)):
        R = T[:3, :3]
        # only what float32 rounding explains (a pose beyond the rigidity tolerance is refused)
        if 1e-15 < np.abs(R.T @ R - np.eye(3)).max() <= POSE_RIGIDITY_TOL:
            u, _, vt = np.linalg.svd(R)
            Q = u @ vt
            if np.linalg.det(Q) > 0:  # a reflection stays as given: the pose check refuses it
                T[:3, :3] = Q
    return T


def _transforms(transforms: Any) -> NDArray[np.float64]:
    try:
        t = np.ascontiguousarray(transforms, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("transforms must be an (N, 4, 4) numeric array") from None
    if t.ndim != 3 or t.shape[1:] != (4, 4):
        raise ValueError(f"transforms must be (N, 4, 4), got shape {t.shape}")
    return t


def _world_box(mesh: Mesh, T: NDArray[np.float64]) -> NDArray[np.float64]:
    """(N, 2, 3) world boxes of ``mesh`` at poses (N, 4, 4): the box of its local box moved
    (centre R c + t, half extents |R| h), padded by 1e-9 of its coordinates for rounding."""
    b = np.asarray(mesh.bounds, dtype=np.float64)
    c, h = (b[0] + b[1]) * 0.5, (b[1] - b[0]) * 0.5
    R = T[:, :3, :3]
    cw = R @ c + T[:, :3, 3]
    hw = np.abs(R) @ h
    pad = 1e-9 * (np.abs(cw).max(axis=1, keepdims=True) + hw.max(axis=1, keepdims=True) + 1e-300)
    return np.stack([cw - hw - pad, cw + hw + pad], axis=1)


def _mesh_index(meshes: list[Mesh]) -> NDArray[np.int64]:
    """(N,) int64: the same number for the same mesh object (instances share one)."""
    seen: dict[int, int] = {}
    return np.array([seen.setdefault(id(m), len(seen)) for m in meshes], dtype=_I64)


def _overlap(lo_a, hi_a, lo_b, hi_b) -> NDArray[np.bool_]:
    return np.all((lo_a <= hi_b) & (lo_b <= hi_a), axis=-1)


def _nested(lo_a, hi_a, lo_b, hi_b) -> NDArray[np.bool_]:
    """Either box inside the other (a containment needs it)."""
    a_in_b = np.all((lo_b <= lo_a) & (hi_a <= hi_b), axis=-1)
    b_in_a = np.all((lo_a <= lo_b) & (hi_b <= hi_a), axis=-1)
    return a_in_b | b_in_a


# -- pair answers (a, b: collisionkit meshes; Ta, Tb: (4, 4) or (N, 4, 4) poses) -----------


def _contained(a: Mesh, b: Mesh, Ta, Tb) -> bool | NDArray[np.bool_]:
    """One mesh inside the other, closed one (surfaces apart): the exact winding-number
    test of ``collisionkit.classify`` (every piece of the inner mesh inside)."""
    batched = np.ndim(Ta) == 3 or np.ndim(Tb) == 3
    ca, cb = _closed(a), _closed(b)
    if not (ca or cb):
        n = max(np.shape(Ta)[0] if np.ndim(Ta) == 3 else 1, np.shape(Tb)[0] if np.ndim(Tb) == 3 else 1)
        return np.zeros(n, bool) if batched else False
    c = classify(a, b, Ta, Tb)
    r = (np.asarray(c.a_inside_b) & cb) | (np.asarray(c.b_inside_a) & ca)
    return r if batched else bool(r)


#: ``CollisionManager(depth=...)``: how a non-convex overlap's depth is bracketed.
DEPTH_MODES = ("lower", "bounds", "refined")


def _depth(a: Mesh, b: Mesh, Ta, Tb, mode: str = "lower") -> float:
    """Penetration depth of an overlapping pair (``collisionkit.penetration``).

    Two convex meshes: the exact depth (``method="convex"``, float64 rounding only).
    Other closed meshes: the certified bracket ``depth_lower <= true depth <=
    depth_upper`` of ``method="bounds"``; mode "lower": its lower end alone, the deepest
    vertex of either mesh inside the other by exact ray parity (one pass over the
    vertices; when no vertex is inside, the face centroids join them: ``refine=True``'s
    lower end), "bounds": its upper end (a translation that separates), "refined": the
    upper end with ``refine=True``. Open meshes enclose no volume: 0.0.
    """
    if not (_closed(a) and _closed(b)):
        return 0.0
    if mode == "lower" and not (is_convex(a) and is_convex(b)):
        # PERF: the upper end's search costs ~20 intersects calls per direction (0.03-0.2 s
        # a pair); the lower end is one pass over the vertices (benchmarks/trimesh_manager.py)
        Ta = np.ascontiguousarray(Ta, dtype=np.float64)
        Tb = np.ascontiguousarray(Tb, dtype=np.float64)
        # PERF: the vertices alone first (0.6 ms for 320 x 768 triangles; with the centroids 1.6 ms)
        lower = float(lower_bound(a, b, Ta, Tb)[0])
        return lower if lower > 0.0 else float(lower_bound(a, b, Ta, Tb, refine=True)[0])
    return float(penetration(a, b, Ta, Tb, refine=mode == "refined").depth)


def _signed(depth: float) -> float:
    return -depth if depth > 0.0 else 0.0


def _depth_bound(boxes_a, boxes_b, spheres=None) -> NDArray[np.float64]:
    """Upper bounds of the penetration depths of pairs of objects (row k of ``boxes_a`` /
    ``boxes_b``, (K, 2, 3) world boxes): a translation separating the boxes separates what
    they hold, so the least overlap of the boxes along an axis; with ``spheres`` (world
    centres (K, 3) and radii (K,) of each side) also ``ra + rb - |ca - cb|``. Negative
    when the boxes are apart (closed test: touching boxes give 0)."""
    over = np.minimum(boxes_a[:, 1] - boxes_b[:, 0], boxes_b[:, 1] - boxes_a[:, 0])
    bound = over.min(axis=1)
    if spheres is not None:
        ca, ra, cb, rb = spheres
        gap = ra + rb - np.sqrt(((ca - cb) ** 2).sum(axis=1))
        # EXACT: padded for the rounding of the centres and the distance (1e-9 relative)
        pad = 1e-9 * (np.abs(ca).max(axis=1) + np.abs(cb).max(axis=1) + ra + rb)
        bound = np.minimum(bound, gap + pad)
    return bound


def _deepest_answer(best: float, a, b, na, nb, points: bool):
    """``_deepest``'s tuple for the pair (a, b) named (na, nb): with ``points`` its closest
    points and faces (PERF: only when DistanceData is asked for), else None, None, -1, -1."""
    if not points:
        return best, na, nb, None, None, -1, -1
    d = ck_distance(a.mesh, b.mesh, a.transform, b.transform)
    return best, na, nb, d.point_a, d.point_b, int(d.face_a), int(d.face_b)


def _contacts(a: Mesh, b: Mesh, Ta, Tb, names: tuple[Any, Any], mode: str) -> list:
    """trimesh ContactData of one colliding pair (a named names[0])."""
    g = contact_geometry(a, b, Ta, Tb, max_pairs=COLLISION_PER_PAIR_CAP)
    convex = is_convex(a) and is_convex(b)
    depth = float(penetration(a, b, Ta, Tb).depth) if convex else 0.0
    out = []
    if len(g) == 0:  # contained: one contact at a vertex of the inner mesh
        inner, T = (a, Ta) if bool(classify(a, b, Ta, Tb).a_inside_b) else (b, Tb)
        p = T[:3, :3] @ inner.vertices[inner.faces[0, 0]] + T[:3, 3]
        depth = _depth(a, b, Ta, Tb, mode)
        return [trimesh.collision.ContactData(names, _Contact(-1, -1, np.full(3, np.nan), p, depth))]
    for k in range(len(g)):
        c = _Contact(int(g.face_a[k]), int(g.face_b[k]), np.array(g.normals[k]), np.array(g.points[k]), depth)
        out.append(trimesh.collision.ContactData(names, c))
    return out


def _distance_data(names: tuple[Any, Any], d: float, pa, pb, fa: int, fb: int):
    return trimesh.collision.DistanceData(
        names, _DistanceResult(int(fa), int(fb), (np.asarray(pa, np.float64), np.asarray(pb, np.float64)), d)
    )


def _sorted(names: tuple[Any, Any]) -> tuple[Any, Any]:
    """The pair's names sorted (trimesh's form); names of unlike types by their repr."""
    try:
        return tuple(sorted(names))
    except TypeError:
        return tuple(sorted(names, key=repr))


def _returns(result: Any, names: Any, data: Any, return_names: bool, return_data: bool) -> Any:
    if return_names and return_data:
        return result, names, data
    if return_names:
        return result, names
    if return_data:
        return result, data
    return result


class CollisionManager:
    """A mesh collision manager with trimesh's interface and exact answers.

    Replaces ``trimesh.collision.CollisionManager`` (same methods, arguments and
    return forms; the module notes list where answers differ from FCL's and
    why). Objects are ``trimesh.Trimesh`` meshes (a ``collisionkit.Mesh`` is
    accepted too) at rigid (4, 4) world-from-object transforms.

    Parameters
    ----------
    depth : {"lower", "bounds", "refined"}
        Keyword only (trimesh's manager takes no arguments): the depth reported for an
        overlap of closed non-convex meshes by ``min_distance_*``. "lower" (default):
        the lower end of ``collisionkit.penetration(method="bounds")``'s certified
        bracket, the deepest vertex of either mesh inside the other (one pass over the
        vertices, about as fast as FCL's answer; when no vertex is inside, the face
        centroids join them, ``refine=True``'s lower end; 0.0 when none is inside
        either); "refined": the bracket's upper end, a translation that
        separates (tight: 1e-9 relative on a plate and a ring; ~0.1 s a pair);
        "bounds": the upper end without refinement (about 4x faster than "refined",
        looser: 0.2% on the same pair). Convex pairs always get their exact depth.

    Examples
    --------
    >>> import numpy as np, trimesh
    >>> from collisionkit.trimesh import CollisionManager
    >>> m = CollisionManager()
    >>> box = trimesh.creation.box([1, 1, 1])
    >>> _ = m.add_object("a", box)
    >>> _ = m.add_object("b", box, trimesh.transformations.translation_matrix([1.0, 0, 0]))
    >>> m.in_collision_internal(return_names=True)      # touching faces collide
    (True, {('a', 'b')})
    >>> m.min_distance_single(box, trimesh.transformations.translation_matrix([-1, 3, 0]), return_name=True)
    (2.0, 'a')
    """

    def __init__(self, *, depth: str = "lower") -> None:
        if depth not in DEPTH_MODES:
            raise ValueError(f"depth must be one of {DEPTH_MODES}, got {depth!r}")
        self._depth_mode = depth
        self._world = World()
        self._objs: dict[Hashable, ManagedObject] = {}
        self._key: dict[Hashable, str] = {}  # name -> the World's (str) name
        self._name: dict[str, Hashable] = {}
        self._count = 0
        self._cached: tuple[list[ManagedObject], NDArray[np.float64]] | None = None
        self._cached_arrays: tuple | None = None
        self._local_centres = np.ones((0, 4))  # with _cached_arrays: (N, 4) local sphere centres, 1
        self._flat_views = False  # _cached_flat holds views of the World's rows
        # PERF: signed depths of overlapping pairs by pair of objects (``_deepest``): after one
        # object moves, only its pairs are measured again (internal pairs, pairs across managers)
        self._depths: dict[tuple[ManagedObject, ManagedObject], float] = {}
        self._depths_other: dict[tuple[ManagedObject, ManagedObject], float] = {}
        self._held: dict[tuple[ManagedObject, ManagedObject], bool] = {}  # one inside the other
        self._hits_other: dict[tuple[ManagedObject, ManagedObject], bool] = {}  # pairs across managers
        self._apart_other: set[tuple[ManagedObject, ManagedObject]] = set()  # ... whose surfaces do not meet
        self._cached_flat: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]] | None = None
        self._pending: dict[str, ManagedObject] = {}  # World key -> object moved since the caches were built
        # PERF: the last ``min_distance_internal()`` answer over overlapping pairs (signed, a, b)
        # and the World keys moved since: the next answer measures the moved objects' pairs
        # alone (``_deepest_after_moves``); forgotten on add/remove and after many moves
        self._deep: tuple[float, ManagedObject, ManagedObject] | None = None
        self._deep_moved: set[str] = set()
        self._no_skip = np.zeros(0, np.bool_)  # all False, read-only by use: deeper_neighbours' skip mask
        # the conversions the objects use: id of a trimesh mesh -> [its conversion, objects using
        # it, the id] (instances of one mesh share one tree; dropped with its last object), and per
        # World key the record its object counts in
        self._meshes: dict[int, list] = {}
        self._uses: dict[str, list] = {}

    # -- objects ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._objs)

    def __contains__(self, name: object) -> bool:
        return name in self._objs

    def __repr__(self) -> str:
        return f"CollisionManager({len(self)} objects, depth={self._depth_mode!r})"

    @property
    def world(self) -> World:
        """The ``collisionkit.World`` the manager keeps (object names are internal keys)."""
        return self._world

    def add_object(self, name: Hashable, mesh: Any, transform: Any = None) -> ManagedObject:
        """Add an object, replacing any object of the same name.

        Parameters
        ----------
        name : hashable
            Identifier of the object.
        mesh : trimesh.Trimesh
            Its geometry (converted once per mesh; see ``as_mesh``).
        transform : (4, 4) float, optional
            World-from-object transform (None: identity), rounded to float32 as
            trimesh does (the rounded rotation made orthogonal again: ``_transform``).

        Returns
        -------
        ManagedObject
            The name, the collisionkit mesh and the stored pose.

        Raises
        ------
        ValueError
            ``transform`` is not (4, 4); ``InvalidPoseError`` (a ValueError) when it
            is not a finite rigid transform.
        TypeError
            ``mesh`` is not a mesh.
        """
        T = _transform(transform, float32=True)
        # NOTE: the name is hashed and compared first, before anything changes (an unhashable
        # name or one whose __eq__ raises leaves the manager as it was, as in trimesh)
        replacing = name in self._objs
        m, use = self._mesh_for(mesh)
        key = f"o{self._count}"
        self._world.add(key, m, T)  # validates the pose before anything changes
        self._count += 1
        self._forget_cached()
        try:
            if replacing:
                self._drop(name)
            obj = ManagedObject(name, m, T)
            T.flags.writeable = False
            self._objs[name] = obj
            self._key[name] = key
            self._name[key] = name
        except BaseException:  # pragma: no cover - a name that hashed a moment ago and fails now
            self._undo(name, key)
            raise
        if use is not None:
            use[1] += 1
            self._uses[key] = use
            self._meshes[use[2]] = use  # an older record stays with the objects counting in it
        return obj

    def _undo(self, name: Hashable, key: str) -> None:
        """Take back a half-done ``add_object`` of ``key``: the World and the maps agree again."""
        if key in self._world:
            self._world.remove(key)
        self._name.pop(key, None)
        with contextlib.suppress(Exception):
            if self._key.get(name) == key:
                del self._key[name]
                del self._objs[name]
        self._forget_cached()

    def _mesh_for(self, mesh: Any) -> tuple[Mesh, list | None]:
        """The conversion of ``mesh`` and the record its object will count in (None for a
        collisionkit Mesh): this manager's own when one of its objects uses the same
        unchanged trimesh mesh, else ``as_mesh``'s."""
        if isinstance(mesh, Mesh):
            return mesh, None
        _check_mesh(mesh)
        key = _content_key(mesh)
        use = self._meshes.get(id(mesh))
        m = _converted(use[0] if use is not None else None, mesh, key)
        if m is None:
            m = as_mesh(mesh)
            use = [_Conversion(weakref.ref(mesh), key, m), 0, id(mesh)]
        return m, use

    def _drop(self, name: Hashable) -> None:
        key = self._key.pop(name)
        self._world.remove(key)
        self._forget_cached()
        del self._name[key]
        del self._objs[name]
        use = self._uses.pop(key, None)
        if use is not None:
            use[1] -= 1
            if use[1] == 0 and self._meshes.get(use[2]) is use:  # its last object: held no longer
                del self._meshes[use[2]]

    def _check(self, name: Any) -> None:
        if name not in self._objs:
            raise ValueError(f"{name} not in collision manager!")

    def remove_object(self, name: Hashable) -> None:
        """Remove an object (``ValueError`` when no object has that name, as trimesh)."""
        self._check(name)
        self._drop(name)

    def set_transform(self, name: Hashable, transform: Any) -> None:
        """Replace an object's transform ((4, 4); kept in float64 as trimesh 5.2 does).

        Raises
        ------
        ValueError
            Unknown name (as trimesh), a transform that is not (4, 4), or (an
            ``InvalidPoseError``) not a finite rigid transform.
        """
        self._check(name)
        T = _transform(transform, float32=False)
        key = self._key[name]
        w = self._world
        w.set_pose(key, T)
        T.flags.writeable = False
        obj = self._objs[name] = ManagedObject(name, self._objs[name].mesh, T)
        # PERF: the object's rows of the cached arrays are updated when next read (rebuilding
        # them cost ~20 us on 400 objects, a boolean query after one move ~10 us); many moves
        # between two queries rebuild them instead
        if self._deep is not None:
            self._deep_moved.add(key)
        if self._cached is not None or self._cached_flat is not None or self._cached_arrays is not None:
            self._pending[key] = obj
            if len(self._pending) > max(8, len(self._objs) // 4):
                self._forget_cached()

    def _forget_cached(self) -> None:
        self._cached = self._cached_arrays = self._cached_flat = None
        self._pending.clear()
        self._deep = None
        self._deep_moved.clear()

    def _apply_pending(self) -> None:
        """The rows of objects moved since the cached arrays were built, updated in place."""
        w = self._world
        w._order  # noqa: B018 - brings the ranks up to date
        rank, lo_w, hi_w, poses_w = w._rank, w._lo, w._hi, w._poses
        cached, flat, arrays = self._cached, self._cached_flat, self._cached_arrays
        # PERF: ~1 us a numpy row on this path (a planner's one move, then one query)
        for key, obj in self._pending.items():
            s = w._slot(key)
            i = int(rank[s])
            if cached is not None:
                cached[0][i] = obj
                box = cached[1][i]
                box[0] = lo_w[s]
                box[1] = hi_w[s]
            if flat is not None and not self._flat_views:
                flat[0][i] = poses_w[s]
                flat[1][i] = lo_w[s]
                flat[2][i] = hi_w[s]
            if arrays is not None:  # the object's world bounding sphere (as World._spheres)
                arrays[2][0][i] = poses_w[s, :3] @ self._local_centres[i]
        self._pending.clear()

    # -- internal helpers ------------------------------------------------------------------
    def _entries(self) -> tuple[list[ManagedObject], NDArray[np.float64]]:
        """Objects in the World's order and their world boxes (N, 2, 3)."""
        if self._pending:
            self._apply_pending()
        if self._cached is None:  # PERF: kept until an object is added or removed (moves: _pending)
            objs = [self._objs[self._name[k]] for k in self._world.names]
            self._cached = (objs, self._world.boxes() if objs else np.empty((0, 2, 3)))
        return self._cached

    def _arrays(self) -> tuple[list[Mesh], NDArray[np.float64], tuple[NDArray[np.float64], NDArray[np.float64]]]:
        """Meshes, poses (N, 4, 4) and world bounding spheres in the World's order."""
        if self._pending:
            self._apply_pending()
        if self._cached_arrays is None:  # PERF: kept until an object is added or removed (moves: _pending)
            objs, _ = self._entries()
            w = self._world
            self._cached_arrays = ([o.mesh for o in objs], self._flat()[0], w._spheres())
            # homogeneous local centres: a moved object's world centre is one product
            self._local_centres = np.ones((len(objs), 4))
            self._local_centres[:, :3] = w._sphere[w._order, :3]
        return self._cached_arrays

    def _flat(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Poses (N, 4, 4) and world boxes' lo, hi (N, 3) in the World's order, contiguous and
        writable as the kernels take them (a (4, 4) row takes the per-call path of
        ``intersects``; ``ManagedObject.transform`` is read-only)."""
        if self._pending:
            self._apply_pending()
        if self._cached_flat is None:  # PERF: kept until an object is added or removed
            _, boxes = self._entries()
            w, n = self._world, len(self._world)
            w._order  # noqa: B018 - brings ``_contiguous`` up to date
            # PERF: no object removed: views of the World's own rows, which set_pose updates
            # (an add or a removal drops this cache; the World reallocates only on an add)
            self._flat_views = w._contiguous
            if w._contiguous:
                self._cached_flat = (w._poses[:n], w._lo[:n], w._hi[:n])
            else:
                self._cached_flat = (w.poses, np.ascontiguousarray(boxes[:, 0]), np.ascontiguousarray(boxes[:, 1]))
        return self._cached_flat

    @staticmethod
    def _probe_sphere(m: Mesh, T: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """World bounding spheres of ``m`` at poses (N, 4, 4): centres (N, 3), radii (N,)."""
        sph = local_sphere(m, np.asarray(m.bounds))
        return T[:, :3, :3] @ sph[:3] + T[:, :3, 3], np.full(T.shape[0], sph[3])

    def _internal_pairs(self) -> list[tuple[int, int]]:
        """Colliding pairs (i < j, World order): surfaces meet, or one solid holds the other."""
        w = self._world
        hits = w.colliding_pairs().rows
        cand = w.candidate_pairs().rows
        if cand.shape[0] > hits.shape[0]:
            # PERF: the candidates that are not hits by their sorted keys (a Python set of pairs
            # cost ~0.2 ms on 400 objects)
            n = len(w)
            rest = cand[~rows_in(cand, hits, n)]
            _, boxes = self._entries()
            nested = _nested(boxes[rest[:, 0], 0], boxes[rest[:, 0], 1], boxes[rest[:, 1], 0], boxes[rest[:, 1], 1])
            objs, _ = self._entries()
            held = []
            for i, j in rest[nested].tolist():
                if self._held_pair(objs[i], objs[j]):
                    held.append((i, j))
            if len(self._held) > 2 * int(nested.sum()) + 64:
                self._held.clear()
            if held:
                rows = np.concatenate([hits, np.array(held, dtype=_I64)])
                hits = rows[np.argsort(rows[:, 0] * n + rows[:, 1], kind="stable")]
        return list(map(tuple, hits.tolist()))

    def _held_pair(self, a: ManagedObject, b: ManagedObject) -> bool:
        """One of the pair inside the other, closed one (``_contained``), kept by pair of
        objects (PERF: as ``_depths``)."""
        inside = self._held.get((a, b))
        if inside is None:
            inside = self._held[(a, b)] = bool(_contained(a.mesh, b.mesh, a.transform, b.transform))
        return inside

    def _signed_depth(self, a: ManagedObject, b: ManagedObject, memo: dict | None) -> float:
        """Signed distance of an overlapping pair (minus its depth), read from and kept in ``memo``."""
        s = memo.get((a, b)) if memo is not None else None
        if s is None:
            s = _signed(_depth(a.mesh, b.mesh, a.transform, b.transform, self._depth_mode))
            if memo is not None:
                memo[(a, b)] = s
        return s

    def _single_hits(self, m: Mesh, T: NDArray[np.float64], box: NDArray[np.float64] | None = None) -> list[int]:
        """World-order indices of the objects that collide with ``m`` at ``T``."""
        objs, boxes = self._entries()
        if not objs:
            return []
        box = _world_box(m, T[None])[0] if box is None else box[0]
        flat, lo, hi = self._flat()
        near = box_pairs_across(lo, hi, box[:1].copy(), box[1:].copy(), 0, lo.shape[0])[:, 0]
        if not near.size:
            return []
        # PERF: one batched call per distinct object mesh (instances share one; the registry's
        # per-call cost is ~0.1 ms, FCL's per-object test a few microseconds)
        groups: dict[int, list[int]] = {}
        for i in near.tolist():
            groups.setdefault(id(objs[i].mesh), []).append(i)
        out = []
        for idx in groups.values():
            o = objs[idx[0]]
            if len(idx) == 1:
                hit = np.array([bool(intersects(o.mesh, m, flat[idx[0]], T))])
            else:
                poses = np.stack([objs[i].transform for i in idx])
                hit = np.asarray(intersects(o.mesh, m, poses, T), bool)
            for i, h in zip(idx, hit.tolist(), strict=True):
                if h or (_nested(boxes[i, 0], boxes[i, 1], box[0], box[1]) and _contained(objs[i].mesh, m, objs[i].transform, T)):
                    out.append(i)
        return sorted(out)

    def _single_any(self, m: Mesh, T: NDArray[np.float64]) -> bool:
        """Whether ``m`` at ``T`` collides with any object: ``bool(_single_hits(m, T))``,
        stopping at the first hit (one per-call test per candidate, no batches)."""
        objs, boxes = self._entries()
        if not objs:
            return False
        box = _world_box(m, T[None])[0]
        poses, lo, hi = self._flat()
        near = box_pairs_across(lo, hi, box[:1].copy(), box[1:].copy(), 0, lo.shape[0])[:, 0].tolist()
        for i in near:
            if intersects(objs[i].mesh, m, poses[i], T):
                return True
        # surfaces apart: one solid inside the other?
        return any(
            _nested(boxes[i, 0], boxes[i, 1], box[0], box[1]) and _contained(objs[i].mesh, m, objs[i].transform, T)
            for i in near
        )

    def _other_any(self, other: CollisionManager) -> bool:
        """Whether any object of this manager collides with one of ``other``:
        ``bool(_other_pairs(other))``, stopping at the first hit."""
        objs_a, boxes_a = self._entries()
        objs_b, boxes_b = other._entries()
        if not objs_a or not objs_b:
            return False
        poses_a, lo_a, hi_a = self._flat()
        poses_b, lo_b, hi_b = other._flat()
        memo, apart = self._hits_other, self._apart_other
        self._prune_other(other, 4 * (len(objs_a) + len(objs_b)))
        found_a, found_b = [], []
        # PERF: box tests in blocks of rows that grow (2, 8, 32, ...): a first hit is found
        # without testing every pair of boxes
        r0, step = 0, 2
        while r0 < len(objs_a):
            r1 = min(r0 + step, len(objs_a))
            rows = box_pairs_across(lo_a, hi_a, lo_b, hi_b, r0, r1)
            ia, jb = rows[:, 0], rows[:, 1]
            for i, j in zip(ia.tolist(), jb.tolist(), strict=True):
                a, b = objs_a[i], objs_b[j]
                known = memo.get((a, b))  # what ``_other_pairs`` found for these objects
                if known is None:
                    if (a, b) in apart:
                        continue
                    if intersects(a.mesh, b.mesh, poses_a[i], poses_b[j]):
                        memo[(a, b)] = True
                        return True
                    apart.add((a, b))
                elif known:
                    return True
            found_a.append(ia)
            found_b.append(jb)
            r0, step = r1, 4 * step
        ia, jb = np.concatenate(found_a), np.concatenate(found_b)
        nested = _nested(boxes_a[ia, 0], boxes_a[ia, 1], boxes_b[jb, 0], boxes_b[jb, 1])
        return any(
            _contained(objs_a[i].mesh, objs_b[j].mesh, objs_a[i].transform, objs_b[j].transform)
            for i, j in zip(ia[nested].tolist(), jb[nested].tolist(), strict=True)
        )

    def _prune_other(self, other: CollisionManager, size: int) -> None:
        """Past ``size`` + 64 entries, drop the kept answers across managers whose objects moved
        or left (or belong to another manager than ``other``)."""
        for kept in (self._hits_other, self._apart_other):
            if len(kept) > size + 64:
                stale = [(a, b) for a, b in kept if self._objs.get(a.name) is not a or other._objs.get(b.name) is not b]
                for key in stale:
                    if isinstance(kept, dict):
                        del kept[key]
                    else:
                        kept.discard(key)

    def _other_pairs(self, other: CollisionManager) -> list[tuple[int, int]]:
        """(i of self, j of other) colliding, World orders."""
        objs_a, boxes_a = self._entries()
        objs_b, boxes_b = other._entries()
        out: list[tuple[int, int]] = []
        if not objs_a or not objs_b:
            return out
        poses_a, lo_a, hi_a = self._flat()
        poses_b, lo_b, hi_b = other._flat()
        rows = box_pairs_across(lo_a, hi_a, lo_b, hi_b, 0, lo_a.shape[0])
        if not rows.shape[0]:
            return out
        # PERF: answers kept by pair of objects (a moved object is a new one, ``_depths``): only
        # pairs with an object new since the last call are tested
        memo = self._hits_other
        known = [memo.get((objs_a[i], objs_b[j])) for i, j in rows.tolist()]
        new = np.array([k is None for k in known], dtype=bool)
        if new.any():
            fresh = rows[new]
            flags = self._other_rows_hit(other, fresh[:, 0], fresh[:, 1])
            for (i, j), h in zip(fresh.tolist(), flags.tolist(), strict=True):
                memo[(objs_a[i], objs_b[j])] = h
            known = [memo[(objs_a[i], objs_b[j])] for i, j in rows.tolist()]
            self._prune_other(other, 2 * rows.shape[0])
        hit = np.array(known, dtype=bool)
        return sorted(zip(rows[hit, 0].tolist(), rows[hit, 1].tolist(), strict=True))

    def _other_rows_hit(self, other: CollisionManager, ia: NDArray[np.int64], jb: NDArray[np.int64]) -> NDArray[np.bool_]:
        """Whether each pair (object ia[k] of self, jb[k] of other), boxes overlapping, collides."""
        objs_a, boxes_a = self._entries()
        objs_b, boxes_b = other._entries()
        poses_a, _, _ = self._flat()
        poses_b, _, _ = other._flat()
        # PERF: one batched call per pair of distinct meshes (instances share one), as _single_hits
        ma = _mesh_index([o.mesh for o in objs_a])
        mb = _mesh_index([o.mesh for o in objs_b])
        key = ma[ia] * (int(mb.max()) + 1) + mb[jb]
        order = np.argsort(key, kind="stable")
        ia, jb, key = ia[order], jb[order], key[order]
        hit = np.zeros(ia.size, bool)
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        for s0, s1 in zip(starts.tolist(), [*starts[1:].tolist(), ia.size], strict=True):
            a, b = objs_a[int(ia[s0])].mesh, objs_b[int(jb[s0])].mesh
            if s1 - s0 == 1:
                hit[s0] = bool(intersects(a, b, poses_a[int(ia[s0])], poses_b[int(jb[s0])]))
            else:
                Ta = np.stack([objs_a[i].transform for i in ia[s0:s1].tolist()])
                Tb = np.stack([objs_b[j].transform for j in jb[s0:s1].tolist()])
                hit[s0:s1] = np.asarray(intersects(a, b, Ta, Tb), bool)
        rest = np.flatnonzero(~hit)
        nested = _nested(boxes_a[ia[rest], 0], boxes_a[ia[rest], 1], boxes_b[jb[rest], 0], boxes_b[jb[rest], 1])
        for k in rest[nested].tolist():  # surfaces apart: one inside the other?
            i, j = int(ia[k]), int(jb[k])
            oa, ob = objs_a[i], objs_b[j]
            hit[k] = bool(_contained(oa.mesh, ob.mesh, oa.transform, ob.transform))
        out = np.empty(ia.size, bool)
        out[order] = hit
        return out

    def _deepest(
        self, pairs: list[tuple[ManagedObject, ManagedObject, Any, Any]], boxes_a, boxes_b, points: bool = True, spheres=None,
        memo: dict | None = None,
    ):  # fmt: skip
        """The most negative signed distance over colliding pairs (a, b, name_a, name_b), row k
        of ``boxes_a`` / ``boxes_b`` ((K, 2, 3) world boxes) holding pair k's boxes:
        (signed, name_a, name_b, point_a, point_b, face_a, face_b); without ``points`` the
        last four are None, None, -1, -1.

        Pairs are measured in decreasing order of their depth bound (``_depth_bound``:
        boxes, and ``spheres``: world centres (K, 3) and radii (K,) of each side), stopping
        when it is not above the deepest found.

        ``memo``: signed depths kept by pair of objects, read and filled here. A moved or
        replaced object is a new ``ManagedObject`` (``set_transform``), so an entry holds
        for exactly the poses it was measured at; entries of pairs not among ``pairs`` are
        dropped once the memo outgrows them.
        """
        bound = _depth_bound(boxes_a, boxes_b, spheres)
        best, arg = math.inf, -1
        order = np.argsort(-bound, kind="stable").tolist()
        run = 1
        for pos, k in enumerate(order):
            if arg >= 0 and bound[k] <= -best:
                break
            a, b, _, _ = pairs[k]
            if pos and memo is not None and (a, b) not in memo:
                run = self._measure_run(pairs, order, pos, memo, run)
            s = self._signed_depth(a, b, memo)
            if arg < 0 or s < best:
                best, arg = s, k
        if memo is not None and len(memo) > 2 * len(pairs) + 64:
            live = {(a, b) for a, b, _, _ in pairs}
            for key in [key for key in memo if key not in live]:
                del memo[key]
        a, b, na, nb = pairs[arg]
        return _deepest_answer(best, a, b, na, nb, points)

    def _measure_run(self, pairs: list, order: list[int], pos: int, memo: dict, run: int) -> int:
        """Fill ``memo`` for up to ``run`` pairs from ``order[pos]`` on that share its two
        meshes, in one batched ``penetration`` call; returns the next run's length.

        PERF: the search reaches this only past its first pair, and the run grows (x4, at
        most 256) while the search goes on, so it measures at most a few pairs more than the
        one-pair-a-call loop would. Many instances of one mesh in one other (64 pegs through a
        plate: every box bound a hair above the depth) took 64 calls of ~0.1 ms each. Two
        closed convex meshes only, where ``_depth`` is ``penetration``'s convex method in
        every depth mode: the same kernels answer each pose as a single call does
        (tests/test_trimesh_manager.py checks it bit for bit). Other pairs: one call each.
        """
        a0, b0, _, _ = pairs[order[pos]]
        ma, mb, mode = a0.mesh, b0.mesh, self._depth_mode
        if run < 2 or not (_closed(ma) and _closed(mb) and is_convex(ma) and is_convex(mb)):
            return min(4 * run, 256)
        ks: list[int] = []
        for k in order[pos:]:
            a, b, _, _ = pairs[k]
            if a.mesh is not ma or b.mesh is not mb or (a, b) in memo or len(ks) == run:
                break
            ks.append(k)
        if len(ks) > 1:
            Ta = np.stack([pairs[k][0].transform for k in ks])
            Tb = np.stack([pairs[k][1].transform for k in ks])
            depths = np.asarray(penetration(ma, mb, Ta, Tb, refine=mode == "refined").depth, np.float64)
            for k, d in zip(ks, depths.tolist(), strict=True):
                memo[(pairs[k][0], pairs[k][1])] = _signed(d)
        return min(4 * run, 256)

    def _deepest_after_moves(self, points: bool):
        """``min_distance_internal()``'s answer from the last one and the objects moved since
        (``_deep``, ``_deep_moved``), or None when the full search must answer.

        The pairs without a moved object keep their signed depths, so while the last
        deepest pair has no moved object, the answer is it or a deeper pair of a moved
        object: each moved object's box neighbours are measured in decreasing order of
        their depth bound, down to the deepest found (a bound equal to it included). A
        tie with the deepest found gives up: the full search's choice among equal depths
        (its own order) is then the answer, so both paths answer alike.
        """
        assert self._deep is not None
        s0, a0, b0 = self._deep
        objs_now = self._objs
        if objs_now.get(a0.name) is not a0 or objs_now.get(b0.name) is not b0:
            return None  # the deepest pair moved (or was replaced): everything again
        w = self._world
        objs, boxes = self._entries()
        poses, lo, hi = self._flat()
        centres, radii = self._arrays()[2]
        best, a_best, b_best = s0, a0, b0
        moved = [w.index(key) for key in self._deep_moved]
        several = len(moved) > 1
        if several:
            moved.sort()
            done = np.zeros(len(objs), np.bool_)  # pairs of two moved objects: measured once
        else:  # PERF: one moved object (a planner's or simulator's step) skips nothing
            done = self._no_skip if self._no_skip.shape[0] == len(objs) else np.zeros(len(objs), np.bool_)
            self._no_skip = done
        for i in moved:
            # PERF: one kernel pass (numpy on 400 objects cost ~30 us, FCL's whole call ~15 us)
            js, bound = deeper_neighbours(i, lo, hi, centres, radii, done, -best)
            if several:
                done[i] = True
            for r in (np.argsort(-bound, kind="stable").tolist() if js.size > 1 else range(js.size)):
                if bound[r] < -best:
                    break
                j = int(js[r])
                p, q = (i, j) if i < j else (j, i)
                a, b = objs[p], objs[q]
                if not intersects(a.mesh, b.mesh, poses[p], poses[q]) and not (
                    _nested(boxes[p, 0], boxes[p, 1], boxes[q, 0], boxes[q, 1]) and self._held_pair(a, b)
                ):
                    continue
                sd = self._signed_depth(a, b, self._depths)
                if sd == best:
                    return None
                if sd < best:
                    best, a_best, b_best = sd, a, b
        self._deep = (best, a_best, b_best)
        self._deep_moved.clear()
        for memo in (self._depths, self._held):
            if len(memo) > 4 * len(objs) + 64:  # entries of objects since moved or removed
                for key in [key for key in memo if objs_now.get(key[0].name) is not key[0] or objs_now.get(key[1].name) is not key[1]]:
                    del memo[key]
        return _deepest_answer(best, a_best, b_best, a_best.name, b_best.name, points)

    # -- collision -------------------------------------------------------------------------
    def in_collision_single(self, mesh: Any, transform: Any = None, return_names: bool = False, return_data: bool = False):
        """Does ``mesh`` at ``transform`` collide with any object of the manager?

        Parameters
        ----------
        mesh : trimesh.Trimesh
        transform : (4, 4) float, optional
            World-from-object transform (None: identity).
        return_names : bool
            Also return the set of names of the objects it collides with.
        return_data : bool
            Also return a list of ``trimesh.collision.ContactData`` (the query
            mesh is named ``"__external"``).

        Returns
        -------
        is_collision : bool
        names : set
            [optional] Names of the colliding objects.
        contacts : list of ContactData
            [optional] One per intersecting triangle pair (module notes).
        """
        m = as_mesh(mesh)
        T = _transform(transform, float32=False)
        if not return_names and not return_data:  # PERF: the boolean stops at the first hit
            return self._single_any(m, T)
        hits = self._single_hits(m, T)
        objs, _ = self._entries()
        names = {objs[i].name for i in hits}
        data = []
        if return_data:
            for i in hits:
                o = objs[i]
                data += _contacts(o.mesh, m, o.transform, T, (o.name, EXTERNAL), self._depth_mode)
        return _returns(bool(hits), names, data, return_names, return_data)

    def in_collision_internal(self, return_names: bool = False, return_data: bool = False):
        """Does any pair of the manager's objects collide?

        Returns
        -------
        is_collision : bool
        names : set of (str, str)
            [optional] The colliding pairs, each pair's names sorted.
        contacts : list of ContactData
            [optional] One per intersecting triangle pair (module notes).
        """
        if not return_names and not return_data and self._world.first_colliding_pair() is not None:
            return True  # PERF: the boolean stops at the first intersecting pair
        pairs = self._internal_pairs()
        objs, _ = self._entries()
        names = {_sorted((objs[i].name, objs[j].name)) for i, j in pairs} if return_names else set()
        data = self._pair_contacts(objs, objs, pairs) if return_data else []
        return _returns(bool(pairs), names, data, return_names, return_data)

    def in_collision_other(self, other_manager: CollisionManager, return_names: bool = False, return_data: bool = False):
        """Does any object of this manager collide with any object of ``other_manager``?

        Returns
        -------
        is_collision : bool
        names : set of (str, str)
            [optional] (name in this manager, name in the other) per colliding pair.
        contacts : list of ContactData
            [optional] One per intersecting triangle pair (module notes).
        """
        if not isinstance(other_manager, CollisionManager):
            raise TypeError(f"other_manager must be a collisionkit.trimesh.CollisionManager, got {type(other_manager).__name__}")
        if not return_names and not return_data:  # PERF: the boolean stops at the first hit
            return self._other_any(other_manager)
        pairs = self._other_pairs(other_manager)
        objs_a, _ = self._entries()
        objs_b, _ = other_manager._entries()
        names = {(objs_a[i].name, objs_b[j].name) for i, j in pairs}
        data = self._pair_contacts(objs_a, objs_b, pairs) if return_data else []
        return _returns(bool(pairs), names, data, return_names, return_data)

    def _pair_contacts(self, objs_a: list, objs_b: list, pairs) -> list:
        """trimesh ContactData records of every intersecting triangle pair of the object pairs (i, j)."""
        data: list = []
        for i, j in pairs:
            a, b = objs_a[i], objs_b[j]
            data += _contacts(a.mesh, b.mesh, a.transform, b.transform, (a.name, b.name), self._depth_mode)
        return data

    # -- distance --------------------------------------------------------------------------
    def min_distance_single(self, mesh: Any, transform: Any = None, return_name: bool = False, return_data: bool = False):
        """Signed minimum distance between ``mesh`` at ``transform`` and the manager's objects.

        Returns
        -------
        distance : float
            The least distance to any object; minus the penetration depth when
            it overlaps closed ones (module notes: method and bound); ``inf``
            for an empty manager.
        name : hashable
            [optional] The closest (or deepest) object (None when empty).
        data : DistanceData
            [optional] Closest points and faces (the query mesh is
            ``"__external"``; None when empty).
        """
        m = as_mesh(mesh)
        T = _transform(transform, float32=False)
        objs, boxes = self._entries()
        box = _world_box(m, T[None])
        hits = self._single_hits(m, T, box)
        if hits:
            ext = ManagedObject(EXTERNAL, m, T)
            (centres, radii), (cm, rm) = self._arrays()[2], self._probe_sphere(m, T[None])
            s, name, _, pa, pb, fa, fb = self._deepest(
                [(objs[i], ext, objs[i].name, EXTERNAL) for i in hits], boxes[hits], np.repeat(box, len(hits), 0), return_data,
                (centres[hits], radii[hits], np.repeat(cm, len(hits), 0), np.repeat(rm, len(hits))),
            )  # fmt: skip
        else:
            meshes, poses, spheres = self._arrays()
            measure = pair_measure(meshes, poses, [m], T[None])
            sph = local_sphere(m, np.asarray(m.bounds))
            ext_sphere = (T[None, :3, :3] @ sph[:3] + T[None, :3, 3], sph[3:])
            s, i, _, pa, pb, fa, fb, _, _ = nearest(
                boxes[:, 0], boxes[:, 1], box[:, 0], box[:, 1], measure, same=False, spheres_a=spheres, spheres_b=ext_sphere
            )
            name = objs[i].name if i >= 0 else None
        data = None if name is None else _distance_data((name, EXTERNAL), s, pa, pb, fa, fb)
        return _returns(s, name, data, return_name, return_data)

    def min_distance_internal(self, name: Hashable | None = None, return_names: bool = False, return_data: bool = False):
        """Signed minimum distance between the manager's objects (or between ``name`` and the rest).

        Parameters
        ----------
        name : hashable, optional
            Only distances from this object to the others (``ValueError`` when unknown).
        return_names : bool
            Also return the two names, sorted.
        return_data : bool
            Also return a ``trimesh.collision.DistanceData``.

        Returns
        -------
        distance : float
            Minus the largest penetration depth when some pair overlaps
            (module notes), else the least distance (``World.nearest_pair``);
            ``inf`` with no pair.
        names : (2,) tuple
            [optional] Sorted names of the pair (None with no pair).
        data : DistanceData
            [optional] (None with no pair.)
        """
        if name is not None:
            self._check(name)
        elif self._deep is not None:
            kept = self._deepest_after_moves(return_data)
            if kept is not None:  # PERF: the deepest pair kept, ~10 us (the full search ~0.4 ms on 400 objects)
                s, na, nb, pa, pb, fa, fb = kept
                data = _distance_data((na, nb), s, pa, pb, fa, fb) if return_data else None
                return _returns(s, _sorted((na, nb)), data, return_names, return_data)
        objs, boxes = self._entries()
        k = None if name is None else self._world.index(self._key[name])
        pairs = [(i, j) for i, j in self._internal_pairs() if k is None or k in (i, j)]
        if pairs:
            ij = np.array(pairs, dtype=_I64)
            centres, radii = self._arrays()[2]
            i_, j_ = ij[:, 0], ij[:, 1]
            s, na, nb, pa, pb, fa, fb = self._deepest(
                [(objs[i], objs[j], objs[i].name, objs[j].name) for i, j in pairs], boxes[i_], boxes[j_], return_data,
                (centres[i_], radii[i_], centres[j_], radii[j_]), self._depths,
            )  # fmt: skip
            if name is None:
                self._deep = (s, self._objs[na], self._objs[nb])
                self._deep_moved.clear()
        else:
            if name is None:
                self._deep = None
            p = self._world.nearest_pair(None if name is None else self._key[name])
            s, pa, pb, fa, fb = p.distance, p.point_a, p.point_b, p.face_a, p.face_b
            na, nb = (None, None) if p.names is None else (self._name[p.names[0]], self._name[p.names[1]])
        if na is None:
            return _returns(s, None, None, return_names, return_data)
        data = _distance_data((na, nb), s, pa, pb, fa, fb)
        return _returns(s, _sorted((na, nb)), data, return_names, return_data)

    def min_distance_other(self, other_manager: CollisionManager, return_names: bool = False, return_data: bool = False):
        """Signed minimum distance between an object of this manager and one of ``other_manager``.

        Returns
        -------
        distance : float
            As ``min_distance_internal``, over pairs across the two managers.
        names : (2,) tuple
            [optional] (name in this manager, name in the other).
        data : DistanceData
            [optional]
        """
        if not isinstance(other_manager, CollisionManager):
            raise TypeError(f"other_manager must be a collisionkit.trimesh.CollisionManager, got {type(other_manager).__name__}")
        objs_a, boxes_a = self._entries()
        objs_b, boxes_b = other_manager._entries()
        pairs = self._other_pairs(other_manager)
        if pairs:
            ij = np.array(pairs, dtype=_I64)
            (ca, ra), (cb, rb) = self._arrays()[2], other_manager._arrays()[2]
            i_, j_ = ij[:, 0], ij[:, 1]
            s, na, nb, pa, pb, fa, fb = self._deepest(
                [(objs_a[i], objs_b[j], objs_a[i].name, objs_b[j].name) for i, j in pairs], boxes_a[i_], boxes_b[j_],
                return_data, (ca[i_], ra[i_], cb[j_], rb[j_]), self._depths_other,
            )  # fmt: skip
        else:
            meshes_a, poses_a, spheres_a = self._arrays()
            meshes_b, poses_b, spheres_b = other_manager._arrays()
            s, i, j, pa, pb, fa, fb, _, _ = nearest(
                boxes_a[:, 0], boxes_a[:, 1], boxes_b[:, 0], boxes_b[:, 1], pair_measure(meshes_a, poses_a, meshes_b, poses_b),
                same=False, spheres_a=spheres_a, spheres_b=spheres_b,
            )  # fmt: skip
            na, nb = (objs_a[i].name, objs_b[j].name) if i >= 0 else (None, None)
        if na is None:
            return _returns(s, None, None, return_names, return_data)
        data = _distance_data((na, nb), s, pa, pb, fa, fb)
        return _returns(s, (na, nb), data, return_names, return_data)

    # -- batches (not in trimesh) -------------------------------------------------------------
    def _many_hits(self, m: Mesh, T: NDArray[np.float64]) -> NDArray[np.bool_]:
        """(N, n_objects) bool: pose n of ``m`` collides with object i."""
        objs, boxes = self._entries()
        hit = np.zeros((T.shape[0], len(objs)), bool)
        if not objs or T.shape[0] == 0:
            return hit
        box = _world_box(m, T)
        for i, o in enumerate(objs):
            near = np.flatnonzero(_overlap(box[:, 0], box[:, 1], boxes[i, 0], boxes[i, 1]))
            if not near.size:
                continue
            h = np.asarray(intersects(o.mesh, m, o.transform, T[near]), bool)
            hit[near, i] = h
            rest = near[~h]
            rest = rest[_nested(box[rest, 0], box[rest, 1], boxes[i, 0], boxes[i, 1])]
            if rest.size:
                hit[rest, i] = _contained(o.mesh, m, o.transform, T[rest])
        return hit

    def in_collision_many(self, mesh: Any, transforms: Any, return_names: bool = False):
        """``in_collision_single`` for a stack of transforms of one mesh, in batched calls.

        Parameters
        ----------
        mesh : trimesh.Trimesh
        transforms : (N, 4, 4) float
            World-from-object transforms (float64, not rounded).
        return_names : bool
            Also return, per transform, the set of names it collides with.

        Returns
        -------
        is_collision : (N,) bool
        names : list of set
            [optional]

        Examples
        --------
        >>> import numpy as np, trimesh
        >>> from collisionkit.trimesh import CollisionManager
        >>> m = CollisionManager()
        >>> _ = m.add_object("box", trimesh.creation.box([1, 1, 1]))
        >>> T = np.tile(np.eye(4), (3, 1, 1)); T[:, 0, 3] = [0.5, 1.0, 1.5]
        >>> m.in_collision_many(trimesh.creation.box([1, 1, 1]), T).tolist()
        [True, True, False]
        """
        m = as_mesh(mesh)
        T = _transforms(transforms)
        hit = self._many_hits(m, T)
        res = hit.any(axis=1)
        if not return_names:
            return res
        objs, _ = self._entries()
        return res, [{objs[i].name for i in np.flatnonzero(row).tolist()} for row in hit]

    def min_distance_many(self, mesh: Any, transforms: Any, return_names: bool = False):
        """``min_distance_single`` for a stack of transforms of one mesh, in batched calls.

        Returns
        -------
        distance : (N,) float64
            Signed, as ``min_distance_single`` (``inf`` for an empty manager).
        names : list
            [optional] The closest (or deepest) object per transform (None when empty).
        """
        m = as_mesh(mesh)
        T = _transforms(transforms)
        n = T.shape[0]
        objs, boxes = self._entries()
        best = np.full(n, np.inf)
        who = np.full(n, -1, _I64)
        if not objs or n == 0:
            return (best, [None] * n) if return_names else best
        hit = self._many_hits(m, T)
        index = {id(o): i for i, o in enumerate(objs)}
        for r in np.flatnonzero(hit.any(axis=1)).tolist():  # overlapping: minus the deepest depth
            hits = np.flatnonzero(hit[r])
            ext = ManagedObject(EXTERNAL, m, T[r])
            box = _world_box(m, T[r][None])
            # the objects themselves stand as the "names": the deepest one's index comes back
            (centres, radii), (cm, rm) = self._arrays()[2], self._probe_sphere(m, T[r][None])
            s, deepest, *_ = self._deepest(
                [(objs[i], ext, objs[i], EXTERNAL) for i in hits.tolist()], boxes[hits], np.repeat(box, hits.size, 0), False,
                (centres[hits], radii[hits], np.repeat(cm, hits.size, 0), np.repeat(rm, hits.size)),
            )  # fmt: skip
            best[r], who[r] = s, index[id(deepest)]
        free = np.flatnonzero(~hit.any(axis=1))
        if free.size:
            box = _world_box(m, T[free])
            nb = len(objs)
            lo_o, hi_o = np.repeat(boxes[None, :, 0], free.size, 0), np.repeat(boxes[None, :, 1], free.size, 0)
            lo_m, hi_m = np.repeat(box[:, None, 0], nb, 1), np.repeat(box[:, None, 1], nb, 1)
            lower, upper = (x.reshape(free.size, nb) for x in box_bounds(
                lo_o.reshape(-1, 3), hi_o.reshape(-1, 3), lo_m.reshape(-1, 3), hi_m.reshape(-1, 3)))  # fmt: skip
            cap = upper.min(axis=1)
            sub_best = np.full(free.size, np.inf)
            sub_who = np.full(free.size, -1, _I64)
            for i in np.argsort(lower.min(axis=0), kind="stable").tolist():
                rows = np.flatnonzero((lower[:, i] <= cap) & (lower[:, i] < sub_best))
                if not rows.size:
                    continue
                ub = float(sub_best[rows].max())
                o = objs[i]
                d = np.atleast_1d(ck_distance(o.mesh, m, o.transform, T[free[rows]], upper_bound=ub).distance)
                better = d < sub_best[rows]
                sub_best[rows[better]] = d[better]
                sub_who[rows[better]] = i
            best[free], who[free] = sub_best, sub_who
        if not return_names:
            return best
        return best, [objs[i].name if i >= 0 else None for i in who.tolist()]


def scene_to_collision(scene: Any) -> tuple[CollisionManager, dict[Hashable, ManagedObject]]:
    """A manager holding every geometry node of a ``trimesh.Scene`` at its world transform.

    Instances of one geometry share one ``collisionkit.Mesh`` (and so one tree).

    Returns
    -------
    manager : CollisionManager
    objects : dict
        Node name -> the ``ManagedObject`` added for it.
    """
    if not isinstance(scene, trimesh.Scene):
        raise TypeError(f"scene must be a trimesh.Scene, got {type(scene).__name__}")
    manager = CollisionManager()
    objects: dict[Hashable, ManagedObject] = {}
    for node in scene.graph.nodes_geometry:
        T, geometry = scene.graph[node]
        objects[node] = manager.add_object(node, scene.geometry[geometry], T)
    return manager, objects

