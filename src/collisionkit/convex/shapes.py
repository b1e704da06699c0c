"""Convex shapes: polyhedra (``Convex``, ``Box``) and smooth primitives
(``Sphere``, ``Capsule``, ``Cylinder``).

Every shape carries the representations the queries need:

* ``.mesh``: a closed triangulated surface (a ``collisionkit.Mesh`` with
  outward faces). For polyhedra it *is* the shape's boundary; for the smooth
  primitives it is a tessellation whose vertices lie on the true surface (so
  the tessellated solid is inside the primitive).
* ``.halfspaces``: ``(A, b)`` with the solid = {v : A v <= b} (unit rows of A,
  coplanar hull facets merged). Smooth primitives: those of the tessellation.
* a *core* for GJK (``kernels/proximity/gjk.py``): the hull vertices of a polyhedron;
  the centre of a sphere and the axis segment of a capsule, grown by the
  radius; the analytic support mapping of a cylinder.
* ``.bounds``: (2, 3) float64 local AABB (min row, max row) of the true shape,
  as every shape kind has (the World's broad phase uses it).

Semantics (decided here, documented in README and docs/seed-003.md):

* A convex shape is a closed SOLID; a ``Mesh`` is a SURFACE.
* Convex-convex booleans use GJK on the exact shapes (exact support mappings
  for the smooth primitives); polyhedron pairs are decided exactly (see
  ``kernels/proximity/gjk.py``). One solid inside the other counts as intersecting.
* Everything that reports triangle pairs (``contacts``), and every query
  against a ``Mesh``, uses ``.mesh``: a smooth primitive then stands for its
  tessellation. For ``intersects`` against a mesh, a mesh triangle lying
  inside the convex solid counts as intersecting even though no triangle pair
  does (``contacts`` then reports no pair).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InvalidMeshError
from ..geometry.frozen import immutable
from ..geometry.mesh import Mesh, finite_xyz
from ..kernels.proximity.gjk import SUPPORT_CYLINDER, SUPPORT_VERTICES

#: Tessellation resolution of the smooth primitives (segments around the axis).
DEFAULT_SEGMENTS = 32


def _hull(points: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]]:
    """(hull vertices, outward triangles into them, facet equations) by qhull."""
    from scipy.spatial import ConvexHull, QhullError

    # NOTE: qhull runs on the points scaled by a power of two (exact) so that the largest
    # lies in [0.5, 1): its squares and cross products would overflow or underflow at
    # extreme scales (issue 18); the facet offsets are scaled back below.
    big = float(np.abs(points).max()) if points.size else 0.0
    ex = int(np.frexp(big)[1]) if 0.0 < big < np.inf else 0
    unit = np.ldexp(points, -ex)
    try:
        hull = ConvexHull(unit)
    except QhullError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "qhull failed"
        raise InvalidMeshError(
            f"points do not span a 3-D convex hull (coplanar, collinear or repeated): {first}"
        ) from None
    used = hull.vertices
    remap = np.full(points.shape[0], -1, np.int64)
    remap[used] = np.arange(used.size)
    faces = remap[hull.simplices]
    verts = points[used]
    # qhull's triangles are not consistently oriented: make each normal agree
    # with its facet's outward equation.
    tri = unit[used][faces]
    nrm = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    flip = np.einsum("ij,ij->i", nrm, hull.equations[:, :3]) < 0
    faces[flip] = faces[flip][:, ::-1]
    eq = np.array(hull.equations, copy=True)
    eq[:, 3] = np.ldexp(eq[:, 3], ex)
    return verts, faces, eq


def _merge_planes(eq: NDArray[np.float64], scale: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Unit outward planes n.v <= d from qhull's equations, coplanar facets merged."""
    A = eq[:, :3] / np.linalg.norm(eq[:, :3], axis=1, keepdims=True)
    b = -eq[:, 3] / np.linalg.norm(eq[:, :3], axis=1)
    keep: list[int] = []
    tol = 1e-9
    for i in range(A.shape[0]):
        dup = False
        for j in keep:
            if np.abs(A[i] - A[j]).max() <= tol and abs(b[i] - b[j]) <= tol * max(scale, 1.0):
                dup = True
                break
        if not dup:
            keep.append(i)
    return np.ascontiguousarray(A[keep]), np.ascontiguousarray(b[keep])


def _as_points(points: ArrayLike) -> NDArray[np.float64]:
    try:
        p = np.array(points, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidMeshError(f"points are not numeric: {exc}") from None
    finite_xyz(p, "point", "points", "N")
    if p.shape[0] < 4:
        raise InvalidMeshError(f"a convex polyhedron needs at least 4 points, got {p.shape[0]}")
    return p


def _positive(value: Any, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return v


class ConvexShape:
    """Base of every convex shape (a closed solid in its own frame).

    Subclasses set the GJK core (``_kind``, ``_core``, ``_params``) and the
    triangulated surface (``_mesh``). Kernel arrays are private writable
    copies (a read-only array would compile a second kernel signature).
    """

    _kind: int
    _core: NDArray[np.float64]
    _params: NDArray[np.float64]
    _mesh: Mesh
    _bounds: NDArray[np.float64]
    name: str | None

    def _finish(self) -> None:
        self._tris = np.array(self._mesh.triangles, dtype=np.float64)  # writable copy for kernels
        self._scale = float(max(np.abs(self._bounds).max(), np.abs(self._core).max()))
        self._halfspaces: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
        self._cache: dict[Any, Any] = {}
        self._bounds = immutable(self._bounds)  # the World's broad phase trusts it

    # -- representations ---------------------------------------------------------------
    @property
    def mesh(self) -> Mesh:
        """The triangulated surface (outward faces): the boundary of a polyhedron, a tessellation otherwise."""
        return self._mesh

    @property
    def bounds(self) -> NDArray[np.float64]:
        """(2, 3) float64 min and max corner of the shape in its own frame (read-only)."""
        return self._bounds

    @property
    def halfspaces(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(A, b)``: (m, 3) unit outward normals and (m,) offsets, solid = {v: A v <= b}.

        Coplanar hull facets are merged into one row. For smooth primitives:
        the half-spaces of the tessellation ``.mesh``.
        """
        if self._halfspaces is None:
            v = np.asarray(self._mesh.vertices)
            _, _, eq = _hull(v)
            A, b = _merge_planes(eq, float(np.abs(v).max()))
            self._halfspaces = (immutable(A), immutable(b))
        return self._halfspaces

    @property
    def is_polytope(self) -> bool:
        """True when ``.mesh`` is the exact boundary (Convex, Box); False for smooth primitives."""
        return bool(self._params[3] == 1.0)

    @property
    def scale(self) -> float:
        """Largest absolute coordinate of the shape (for tolerances)."""
        return self._scale

    def kernel_args(self) -> tuple:
        """``(kind, core vertices, params, hull triangles, scale)`` as the GJK kernels take them.

        params = (inflation radius, cylinder radius, cylinder half height,
        1.0 if polytope else 0.0). For other kernels that call
        ``kernels.proximity.gjk.distance_convex_convex`` / ``intersect_convex_convex``.

        The arrays are writable copies (what the kernels compile for): editing them
        changes nothing this shape answers (the live arrays once handed out let a
        caller change the hits of every later query).
        """
        kind, core, params, tris, scale = self._kernel_args()
        return (kind, core.copy(), params.copy(), tris.copy(), scale)

    def _kernel_args(self) -> tuple:
        """``kernel_args`` without the copies: the live kernel arrays, for the query layer only."""
        return (np.int64(self._kind), self._core, self._params, self._tris, self._scale)

    def cached(self, key: Any, build: Any) -> Any:
        """A structure built once per shape (e.g. the double hierarchy)."""
        value = self._cache.get(key)
        if value is None:
            value = build()
            self._cache[key] = value
        return value

    def contains(self, points: ArrayLike) -> NDArray[np.bool_]:
        """(N,) whether each point (shape frame) lies in the closed solid of ``.mesh`` (exact predicates)."""
        from ..kernels.proximity.gjk import point_in_solid

        p = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        return np.array([point_in_solid(self._tris, float(x), float(y), float(z)) for x, y, z in p], dtype=bool)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._describe()})"

    def _describe(self) -> str:
        return ""


class Convex(ConvexShape):
    """A convex polyhedron: the convex hull of a point set.

    Build with :meth:`from_points` or :meth:`from_mesh`; ``Convex(points)`` is
    the same as ``Convex.from_points(points)``.

    Parameters
    ----------
    points : array_like (N, 3)
        N >= 4 finite points not all in one plane. Points strictly inside
        the hull are dropped; ``.vertices`` are the hull's vertices.

    Raises
    ------
    InvalidMeshError
        Fewer than 4 points, non-finite coordinates, or points that are
        coplanar / collinear / repeated (no 3-D hull).

    Examples
    --------
    >>> import collisionkit as ck
    >>> c = ck.Convex.from_points([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.1, 0.1, 0.1]])
    >>> c.vertices.shape, c.mesh.n_faces
    ((4, 3), 4)
    """

    def __init__(self, points: ArrayLike, *, name: str | None = None) -> None:
        p = _as_points(points)
        verts, faces, eq = _hull(p)
        self.name = name
        self._kind = SUPPORT_VERTICES
        self._core = np.ascontiguousarray(verts, dtype=np.float64)
        self._params = np.array([0.0, 0.0, 0.0, 1.0])
        self._mesh = Mesh(verts, faces, name=name)
        self._bounds = np.stack([verts.min(axis=0), verts.max(axis=0)])
        self._finish()
        A, b = _merge_planes(eq, self._scale)
        self._halfspaces = (immutable(A), immutable(b))

    @classmethod
    def from_points(cls, points: ArrayLike, *, name: str | None = None) -> Convex:
        """The convex hull of ``points`` (N, 3) by qhull (scipy.spatial.ConvexHull)."""
        return cls(points, name=name)

    @classmethod
    def from_mesh(cls, mesh: Mesh, *, name: str | None = None) -> Convex:
        """The convex hull of the vertices used by ``mesh``'s faces (the mesh itself
        when it is convex; its hull otherwise)."""
        if not isinstance(mesh, Mesh):
            raise TypeError(f"from_mesh takes a collisionkit.Mesh, got {type(mesh).__name__}")
        used = np.unique(np.asarray(mesh.faces).ravel())
        return cls(np.asarray(mesh.vertices)[used], name=name or mesh.name)

    @property
    def vertices(self) -> NDArray[np.float64]:
        """(V, 3) float64 hull vertices (read-only view of the mesh's)."""
        return self._mesh.vertices

    @property
    def faces(self) -> NDArray[np.int32]:
        """(F, 3) int32 outward hull triangles into ``vertices``."""
        return self._mesh.faces

    @property
    def exactly_convex(self) -> bool:
        """Whether every hull vertex lies inside or on every face plane, exactly.

        The exact solid tests assume the float64 hull triangles bound a convex
        solid. qhull merges nearly coplanar facets, so vertices of a regular
        polyhedron with irrational coordinates may sit an ulp outside a
        neighbouring triangle's plane; answers are then exact except for
        configurations within a few ulps of such a face.
        """
        from ..kernels.proximity.gjk import point_in_solid

        key = "exactly_convex"
        if key not in self._cache:
            v = self._core
            self._cache[key] = all(point_in_solid(self._tris, float(x), float(y), float(z)) for x, y, z in v)
        return bool(self._cache[key])

    def _describe(self) -> str:
        label = f"{self.name!r}, " if self.name else ""
        return f"{label}vertices={self._core.shape[0]}, faces={self._mesh.n_faces}"


class Box(Convex):
    """A box of full ``extents`` centred at the origin (a polyhedron: 8 vertices, 12 triangles)."""

    def __init__(self, extents: ArrayLike = (1.0, 1.0, 1.0), *, name: str | None = "box") -> None:
        e = np.asarray(extents, dtype=np.float64).reshape(-1)
        if e.shape != (3,):
            raise ValueError(f"extents must have 3 entries, got {e.shape[0]}")
        for i in range(3):
            _positive(e[i], f"extents[{i}]")
        h = e / 2.0
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64) * h
        super().__init__(corners, name=name)
        self.extents = e

    def _describe(self) -> str:
        return f"extents={self.extents.tolist()}"


def _ring(radius: float, z: float, segments: int) -> NDArray[np.float64]:
    a = 2.0 * np.pi * np.arange(segments) / segments
    return np.stack([radius * np.cos(a), radius * np.sin(a), np.full(segments, z)], axis=1)


def _tessellation(points: NDArray[np.float64], name: str | None) -> Mesh:
    verts, faces, _ = _hull(points)
    return Mesh(verts, faces, name=name)


class Sphere(ConvexShape):
    """A ball of ``radius`` centred at the origin.

    GJK uses the exact sphere (core point + radius). ``.mesh`` is an
    icosphere tessellation (``subdivisions`` 2: 320 triangles) with vertices
    on the sphere.
    """

    def __init__(self, radius: float = 0.5, *, subdivisions: int = 2, name: str | None = "sphere") -> None:
        import trimesh

        r = _positive(radius, "radius")
        self.radius = r
        self.name = name
        self._kind = SUPPORT_VERTICES
        self._core = np.zeros((1, 3))
        self._params = np.array([r, 0.0, 0.0, 0.0])
        # the unit icosphere times r: trimesh normalises at the given radius (NaN near 1e-300)
        ico = trimesh.creation.icosphere(subdivisions=int(subdivisions), radius=1.0)
        self._mesh = _tessellation(np.asarray(ico.vertices, dtype=np.float64) * r, name)
        self._bounds = np.array([[-r, -r, -r], [r, r, r]])
        self._finish()

    def _describe(self) -> str:
        return f"radius={self.radius}"


class Capsule(ConvexShape):
    """Points within ``radius`` of the segment from (0, 0, -length/2) to (0, 0, length/2).

    GJK uses the exact capsule (core segment + radius); ``.mesh`` tessellates
    it with ``segments`` around the axis and ``segments // 4`` rings per cap.
    """

    def __init__(
        self,
        radius: float = 0.25,
        length: float = 1.0,
        *,
        segments: int = DEFAULT_SEGMENTS,
        name: str | None = "capsule",
    ) -> None:
        r = _positive(radius, "radius")
        L = _positive(length, "length")
        h = L / 2.0
        self.radius, self.length, self.name = r, L, name
        self._kind = SUPPORT_VERTICES
        self._core = np.array([[0.0, 0.0, -h], [0.0, 0.0, h]])
        self._params = np.array([r, 0.0, 0.0, 0.0])
        rings = max(segments // 4, 2)
        pts = [np.array([[0.0, 0.0, h + r], [0.0, 0.0, -h - r]])]
        for i in range(rings):
            phi = 0.5 * np.pi * i / rings  # latitude from the equator
            pts.append(_ring(r * np.cos(phi), h + r * np.sin(phi), segments))
            pts.append(_ring(r * np.cos(phi), -h - r * np.sin(phi), segments))
        self._mesh = _tessellation(np.vstack(pts), name)
        self._bounds = np.array([[-r, -r, -h - r], [r, r, h + r]])
        self._finish()

    def _describe(self) -> str:
        return f"radius={self.radius}, length={self.length}"


class Cylinder(ConvexShape):
    """A solid cylinder of ``radius`` around the z axis, from z = -length/2 to length/2.

    GJK uses the exact cylinder (analytic support mapping; a curved core, so
    pairs within GJK's tolerance of touching count as touching). ``.mesh`` is
    a prism with ``segments`` sides (vertices on the true rims).
    """

    def __init__(
        self,
        radius: float = 0.5,
        length: float = 1.0,
        *,
        segments: int = DEFAULT_SEGMENTS,
        name: str | None = "cylinder",
    ) -> None:
        r = _positive(radius, "radius")
        L = _positive(length, "length")
        h = L / 2.0
        self.radius, self.length, self.name = r, L, name
        self._kind = SUPPORT_CYLINDER
        self._core = np.zeros((1, 3))  # unused by the cylinder support mapping
        self._params = np.array([0.0, r, h, 0.0])
        self._mesh = _tessellation(np.vstack([_ring(r, -h, segments), _ring(r, h, segments)]), name)
        self._bounds = np.array([[-r, -r, -h], [r, r, h]])
        self._finish()

    def _describe(self) -> str:
        return f"radius={self.radius}, length={self.length}"
