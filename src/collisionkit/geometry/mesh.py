"""Triangle meshes: validated, read-only geometry plus a per-geometry cache of
acceleration structures (built lazily, once, even when several threads ask)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import replace
from typing import Any, SupportsIndex

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InvalidMeshError
from ..options import BuildOptions
from .frozen import immutable


class _Geometry:
    """Arrays shared by every Mesh view of the same geometry, and their cache."""

    __slots__ = ("vertices", "faces", "_surfaces", "_triangles", "_cache", "_lock", "_building")

    def __init__(self, vertices: NDArray[np.float64], faces: NDArray[np.int32], surfaces: NDArray[np.int32] | None):
        self.vertices = vertices
        self.faces = faces
        self._surfaces = surfaces  # None: segmented on first use (geometry/segmentation.py)
        self._triangles: NDArray[np.float64] | None = None
        self._cache: dict[Hashable, Any] = {}
        self._lock = threading.Lock()
        self._building: dict[Hashable, threading.Lock] = {}

    @property
    def surfaces(self) -> NDArray[np.int32]:
        if self._surfaces is None:
            from .segmentation import segment_surfaces

            self._surfaces = _readonly(segment_surfaces(self.vertices, self.faces))
        return self._surfaces

    @property
    def triangles(self) -> NDArray[np.float64]:
        if self._triangles is None:
            # PERF: np.take gathers rows 3x faster than fancy indexing (issue 15 item 7)
            self._triangles = _readonly(np.take(self.vertices, self.faces, axis=0))
        return self._triangles

    # -- pickling (issue 17: geometry shipped to Dask workers with its built structures) --
    def __getstate__(self) -> tuple:
        """The arrays and every structure built so far (trees, hulls, ...); not the locks."""
        return (self.vertices, self.faces, self._surfaces, self._triangles, dict(self._cache))

    def __setstate__(self, state: tuple) -> None:
        vertices, faces, surfaces, triangles, cache = state
        # NOTE: pickle protocol 5 (what Dask uses) brings read-only arrays back read-only
        # over an immutable buffer; an older protocol brings writable copies: re-freeze them.
        self.vertices = _frozen(vertices)
        self.faces = _frozen(faces)
        self._surfaces = None if surfaces is None else _frozen(surfaces)
        self._triangles = None if triangles is None else _frozen(triangles)
        self._cache = cache
        self._lock = threading.Lock()
        self._building = {}

    def cached(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """Return the structure stored under ``key``, building it once.

        A per-key lock makes concurrent first queries wait for one build
        instead of each building its own copy.
        """
        value = self._cache.get(key)
        if value is not None:
            return value
        with self._lock:
            key_lock = self._building.setdefault(key, threading.Lock())
        with key_lock:
            value = self._cache.get(key)
            if value is None:
                value = build()
                self._cache[key] = value
        return value


def _as_vertices(vertices: ArrayLike) -> NDArray[np.float64]:
    try:
        raw = np.asarray(vertices)
    except (TypeError, ValueError) as exc:
        raise InvalidMeshError(f"vertices are not numeric: {exc}") from None
    if raw.dtype.kind not in "iuf":
        # complex would lose its imaginary part, strings and objects would be parsed
        raise InvalidMeshError(f"vertices must be real numeric values, got dtype {raw.dtype}")
    try:
        v = np.array(raw, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise InvalidMeshError(f"vertices are not numeric: {exc}") from None
    return finite_xyz(v, "vertex", "vertices", "V")


def finite_xyz(p: NDArray[np.float64], one: str, many: str, n: str) -> NDArray[np.float64]:
    """``p`` when it is an (n, 3) array of finite values, else an InvalidMeshError naming
    the ``many`` (its shape) or the first ``one`` that is not finite (mesh vertices,
    the points of a convex hull)."""
    if p.ndim != 2 or p.shape[1] != 3:
        raise InvalidMeshError(f"{many} must have shape ({n}, 3), got {p.shape}")
    if not np.all(np.isfinite(p)):
        bad = int(np.argwhere(~np.isfinite(p))[0, 0])
        raise InvalidMeshError(f"{one} {bad} is not finite: {p[bad].tolist()}")
    return p


def _as_faces(faces: ArrayLike, n_vertices: int) -> NDArray[np.int32]:
    f = np.asarray(faces)
    if f.dtype == object or not (np.issubdtype(f.dtype, np.integer) or f.size == 0):
        if np.issubdtype(f.dtype, np.floating) and f.size and np.all(np.isfinite(f)) and np.all(f == np.round(f)):
            f = f.astype(np.int64)
        else:
            raise InvalidMeshError(f"faces must be integer vertex indices, got dtype {f.dtype}")
    if f.ndim != 2 or f.shape[1] != 3:
        raise InvalidMeshError(f"faces must have shape (F, 3), got {f.shape}")
    if f.shape[0] == 0:
        raise InvalidMeshError("mesh has no faces")
    lo, hi = int(f.min()), int(f.max())
    if lo < 0 or hi >= n_vertices:
        bad = int(np.argwhere((f < 0) | (f >= n_vertices))[0, 0])
        raise InvalidMeshError(
            f"face {bad} indexes vertex {f[bad].tolist()} out of range [0, {n_vertices})"
        )
    return np.ascontiguousarray(f, dtype=np.int32)


def _readonly(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` over an immutable ``bytes`` buffer (``frozen.immutable``).

    NOTE: ``flags.writeable = False`` alone can be undone by anyone holding
    the array (``a.flags.writeable = True``, or through ``a.base``); numpy
    refuses that for an array over an immutable buffer, so the geometry (and
    every tree built from it) cannot change behind the mesh's back.
    """
    return immutable(a)


def _frozen(a: np.ndarray) -> np.ndarray:
    """``a`` itself when read-only, else a read-only copy (``_readonly``)."""
    return a if not a.flags.writeable else _readonly(a)


_FROZEN_SLOTS = frozenset({"_geom", "options", "_trees"})


class Mesh:
    """A triangle mesh in its own (object) frame.

    Parameters
    ----------
    vertices : array_like, (V, 3)
        Finite coordinates; stored as a read-only float64 copy.
    faces : array_like, (F, 3)
        Vertex indices, F >= 1; stored as read-only int32. Face ids in every
        query result index these rows as given. Zero-area triangles and
        duplicate vertices are accepted: a zero-area triangle is the closed
        segment or point it spans.
    surfaces : array_like, (F,), optional
        Surface (part, group) label of each face. Default: computed on first
        use of ``surfaces`` by ``geometry.segmentation.segment_surfaces``
        (edge-connected regions whose neighbouring normals differ by at most
        30 degrees; labels 0..S-1 by first face).
    options : BuildOptions, optional
        How this mesh's hierarchy is built (default ``BuildOptions()``).

    Raises
    ------
    InvalidMeshError
        Wrong shapes, NaN/inf coordinates, indices out of range, no faces.

    Examples
    --------
    >>> import numpy as np, collisionkit as ck
    >>> tet = ck.Mesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]],
    ...               [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    >>> tet.n_faces
    4
    """

    __slots__ = ("_geom", "options", "name", "_trees")  # _trees: per-view dict of bvh/cache.tree_for

    def __init__(
        self,
        vertices: ArrayLike,
        faces: ArrayLike,
        surfaces: ArrayLike | None = None,
        options: BuildOptions | None = None,
        *,
        name: str | None = None,
    ) -> None:
        v = _as_vertices(vertices)
        f = _as_faces(faces, v.shape[0])
        if surfaces is None:
            s = None
        else:
            s = np.asarray(surfaces)
            if s.shape != (f.shape[0],) or not np.issubdtype(s.dtype, np.integer):
                raise InvalidMeshError(f"surfaces must be an int array of shape ({f.shape[0]},), got {s.dtype} {s.shape}")
            i32 = np.iinfo(np.int32)
            if s.size and (int(s.min()) < i32.min or int(s.max()) > i32.max):
                # a cast would wrap 2**32 to 0 and merge unrelated surfaces
                bad = int(np.argmax((s < i32.min) | (s > i32.max)))
                raise InvalidMeshError(f"surface id {int(s[bad])} of face {bad} does not fit int32")
            s = np.ascontiguousarray(s, dtype=np.int32)
        if options is not None and not isinstance(options, BuildOptions):
            raise TypeError(f"options must be a BuildOptions, got {type(options).__name__}")
        self._geom = _Geometry(_readonly(v), _readonly(f), None if s is None else _readonly(s))
        self.options = options or BuildOptions()
        self.name = name
        self._trees: dict[str, Any] = {}

    def __setattr__(self, name: str, value: Any) -> None:
        # NOTE: a mesh is frozen: its geometry and options are set once (assigning options
        # to a built mesh was accepted and ignored by its cached trees); ``name`` is a
        # label only and may be set (io.load_mesh names meshes after their files)
        if name in _FROZEN_SLOTS:
            try:
                object.__getattribute__(self, name)
            except AttributeError:
                pass
            else:
                raise AttributeError(f"Mesh.{name} cannot be assigned (a Mesh is frozen; use with_options or a new Mesh)")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Mesh.{name} cannot be deleted (a Mesh is frozen)")

    # -- construction ----------------------------------------------------------------
    @classmethod
    def _from_geometry(cls, geom: _Geometry, options: BuildOptions, name: str | None) -> Mesh:
        mesh = cls.__new__(cls)
        mesh._geom = geom
        mesh.options = options
        mesh.name = name
        mesh._trees = {}
        return mesh

    def with_options(self, options: BuildOptions | None = None, **changes: Any) -> Mesh:
        """A mesh sharing this geometry (and its cache) with other build options.

        ``mesh.with_options(BuildOptions(bv="obb"))`` or ``mesh.with_options(bv="obb")``.
        """
        if options is None:
            options = replace(self.options, **changes)
        elif changes:
            raise TypeError("pass either a BuildOptions or keyword changes, not both")
        if not isinstance(options, BuildOptions):
            raise TypeError(f"options must be a BuildOptions, got {type(options).__name__}")
        return Mesh._from_geometry(self._geom, options, self.name)

    # -- geometry ---------------------------------------------------------------------
    @property
    def vertices(self) -> NDArray[np.float64]:
        """(V, 3) float64, read-only."""
        return self._geom.vertices

    @property
    def faces(self) -> NDArray[np.int32]:
        """(F, 3) int32, read-only."""
        return self._geom.faces

    @property
    def surfaces(self) -> NDArray[np.int32]:
        """(F,) int32 surface label of each face, read-only (given, from the file's
        objects/groups, or segmented on first use: ``geometry.segmentation``)."""
        return self._geom.surfaces

    @property
    def triangles(self) -> NDArray[np.float64]:
        """(F, 3, 3) float64 vertex coordinates per face (cached, read-only)."""
        return self._geom.triangles

    @property
    def n_faces(self) -> int:
        return int(self._geom.faces.shape[0])

    @property
    def n_vertices(self) -> int:
        return int(self._geom.vertices.shape[0])

    @property
    def bounds(self) -> NDArray[np.float64]:
        """(2, 3) min and max corner of the vertices used by faces, in the mesh's frame.

        Every shape kind has this property (the World's broad phase uses it).
        An empty mesh has the inverted box (+inf, -inf), which overlaps nothing.
        """
        return self.cached(("bounds",), self._bounds)

    def _bounds(self) -> NDArray[np.float64]:
        t = self.triangles.reshape(-1, 3)
        if t.shape[0] == 0:
            b = np.stack([np.full(3, np.inf), np.full(3, -np.inf)])
        else:
            b = np.stack([t.min(axis=0), t.max(axis=0)])
        return immutable(b)  # cached: shared by every caller, so nobody may rewrite it

    def shares_geometry(self, other: Mesh) -> bool:
        """True when both meshes view the same arrays (e.g. one came from with_options)."""
        return self._geom is other._geom

    # -- cache of derived structures (bvh/cache.py keeps the trees here) -----------------
    def cached(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """Cache any structure a strategy needs under a hashable key (its frozen options)."""
        return self._geom.cached(key, build)

    def __reduce_ex__(self, protocol: SupportsIndex):  # noqa: ANN204  (pickle's signature)
        """Pickle the geometry with every structure built for it (trees are not rebuilt
        after unpickling; views that share geometry share it again in one pickle)."""
        return (Mesh._from_geometry, (self._geom, self.options, self.name))

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name else ""
        return f"Mesh({label}vertices={self.n_vertices}, faces={self.n_faces}, options={self.options})"
