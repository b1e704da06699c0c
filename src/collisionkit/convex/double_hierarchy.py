"""The double hierarchy of outer and inner boxes (seed 003): the build.

The ``"double-box"`` strategy that walks it lives in ``query/strategies/double_box.py``.

Build (seed sections 3-5), per convex polyhedron, a binary tree:

* the root holds the polyhedron, its outer box (the AABB) and its inner box
  (the largest box inside it, ``inscribed.py``);
* a node is split by the plane through its centroid (mean of its triangle
  vertices) perpendicular to its principal axis (largest-eigenvalue
  eigenvector of their covariance); the two halves are computed by clipping
  (hull of the kept vertices and the edge/plane crossings);
* a node whose region touches no original face is INTERIOR and is not split;
  EXTERIOR nodes are split until ``depth``; leaves keep the ORIGINAL hull
  triangles that touch their region (whole, not clipped: the face tests then
  see exactly the coordinates GJK's exact fallback sees);
* below the root, outer boxes are oriented in the node's principal frame
  (the seed: "the children acquire an orientation"); inner boxes are the
  larger of the best box aligned with the principal frame and with the
  object's axes.

Soundness, made explicit (the seed does not discuss rounding):

* outer boxes bound the node's clipped polytope, grown by 1e-9 of the scale
  (clipping rounds), and triangles are assigned to a node when they meet its
  region grown by the same amount: every surface point lies in some leaf
  whose box holds it and whose list holds its triangle;
* inner boxes are shrunk by 1e-7 of the scale and their 8 corners verified
  inside the ORIGINAL solid with exact predicates (shrunk further, or
  dropped, if not), and the traversal accepts an inner overlap only past a
  negative slack. So an inner acceptance is always a true collision.

Traversal: ``kernels/traverse/double_box.py`` (our reconstruction of the garbled
pseudo-code, with the containment case the seed leaves out).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..errors import InvalidMeshError, UnsupportedPairError
from ..kernels.proximity.gjk import point_in_solid
from ..kernels.traverse import double_box as kd
from .inscribed import largest_box_in_frame, principal_frame
from .shapes import Convex

#: Relative growth of outer boxes and of the triangle-assignment regions (clipping rounds).
_GROW = 1e-9
#: Relative shrink of inner boxes before their exact verification.
_SHRINK = 1e-7


class DoubleHierarchy(NamedTuple):
    """Flat arrays of one polyhedron's double hierarchy (node 0 = root; children consecutive)."""

    topo: NDArray[np.int64]  # (n, 4): first child (-1 at leaves), flags, first tri_ids entry, count
    outer: NDArray[np.float64]  # (n, 15): centre, axes rows, half extents
    inner: NDArray[np.float64]  # (n, 15): same layout (valid where flags & FLAG_INNER)
    tri_ids: NDArray[np.int64]  # (K,) original hull triangles per node
    depth: int
    inner_volume: NDArray[np.float64]  # (n,) volume of each inner box (0 where none)


def _obb_row(centre, axes, half) -> NDArray[np.float64]:
    return np.concatenate([centre, np.asarray(axes).ravel(), half])


def _clip_polygon(poly: list[NDArray[np.float64]], n: NDArray[np.float64], c: float) -> list[NDArray[np.float64]]:
    """Sutherland-Hodgman: the part of a convex polygon with n.x <= c."""
    out: list[NDArray[np.float64]] = []
    m = len(poly)
    for i in range(m):
        p, q = poly[i], poly[(i + 1) % m]
        dp, dq = n @ p - c, n @ q - c
        if dp <= 0:
            out.append(p)
        if (dp < 0 < dq) or (dq < 0 < dp):
            out.append(p + (q - p) * (dp / (dp - dq)))
    return out


def _touches(tri: NDArray[np.float64], planes: list[tuple[NDArray[np.float64], float]], tol: float) -> bool:
    poly = [tri[0], tri[1], tri[2]]
    for n, c in planes:
        poly = _clip_polygon(poly, n, c + tol)
        if not poly:
            return False
    return True


def _clip_points(points: NDArray[np.float64], n: NDArray[np.float64], c: float) -> NDArray[np.float64] | None:
    """Vertices of conv(points) ∩ {n.x <= c}: kept points and hull-edge crossings."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        hull = ConvexHull(points)
    except QhullError:
        return None
    d = points @ n - c
    keep = [points[d <= 0]]
    s = hull.simplices
    edges = np.unique(np.sort(np.vstack([s[:, [0, 1]], s[:, [1, 2]], s[:, [2, 0]]]), axis=1), axis=0)
    i, j = edges[:, 0], edges[:, 1]
    cross = (d[i] < 0) & (d[j] > 0) | (d[i] > 0) & (d[j] < 0)
    i, j = i[cross], j[cross]
    if i.size:
        w = (d[i] / (d[i] - d[j]))[:, None]
        keep.append(points[i] + (points[j] - points[i]) * w)
    out = np.vstack(keep)
    return out if out.shape[0] >= 4 else None


def _halfspaces(points: NDArray[np.float64]):
    from scipy.spatial import ConvexHull

    hull = ConvexHull(points)
    eq = hull.equations
    return eq[:, :3], -eq[:, 3], points[hull.simplices]


def _inner_box(points, tris, axes, shape: Convex, scale: float):
    """Verified inner box (row, volume) of the node polytope, or (None, 0)."""
    from scipy.spatial import QhullError

    try:
        A, b, _ = _halfspaces(points)
        cands = [largest_box_in_frame(A, b, axes), largest_box_in_frame(A, b, np.eye(3))]
    except (QhullError, InvalidMeshError, np.linalg.LinAlgError):
        return None, 0.0
    box = max(cands, key=lambda ob: ob.volume)
    shrink = _SHRINK * scale
    for _ in range(4):
        half = box.half_extents - shrink
        if (half <= 0).any():
            return None, 0.0
        s = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64)
        corners = box.centre + (s * half) @ box.axes
        if all(point_in_solid(shape._tris, float(x), float(y), float(z)) for x, y, z in corners):
            return _obb_row(box.centre, box.axes, half), float(np.prod(2 * half))
        shrink *= 10.0
    return None, 0.0


def build_double_hierarchy(shape: Convex, depth: int = 4) -> DoubleHierarchy:
    """Build the double hierarchy of a polyhedron (``Convex`` or ``Box``) down to ``depth``."""
    if not isinstance(shape, Convex):
        raise UnsupportedPairError(f"the double hierarchy needs a polyhedron (Convex, Box), got {type(shape).__name__}")
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 0 or depth > 12:
        raise ValueError(f"depth must be an int in [0, 12], got {depth!r}")
    tris = np.asarray(shape.mesh.triangles)
    scale = shape.scale
    tol = _GROW * scale
    # nodes in breadth-first order so that children are consecutive
    nodes: list[dict[str, Any]] = []  # one node's fields (arrays, lists, ints)
    root_pts = np.asarray(shape.vertices, dtype=np.float64)
    queue: list[dict[str, Any]] = [dict(points=root_pts, planes=[], tris=np.arange(tris.shape[0]), level=0)]
    while queue:
        nd = queue.pop(0)
        nodes.append(nd)
        pts = nd["points"]
        _, _, node_tris = _halfspaces(pts)
        mu, axes = principal_frame(node_tris)
        nd["axes"] = axes
        if nd["level"] == 0:
            lo, hi = pts.min(axis=0), pts.max(axis=0)
            nd["outer"] = _obb_row((lo + hi) / 2, np.eye(3), (hi - lo) / 2 + tol)
        else:
            y = (pts - mu) @ axes.T
            lo, hi = y.min(axis=0), y.max(axis=0)
            nd["outer"] = _obb_row(mu + ((lo + hi) / 2) @ axes, axes, (hi - lo) / 2 + tol)
        nd["inner"], nd["inner_volume"] = _inner_box(pts, node_tris, axes, shape, scale)
        nd["interior"] = nd["tris"].size == 0
        nd["children"] = []
        if nd["interior"] or nd["level"] >= depth:
            continue
        n = axes[0]
        c = float(n @ mu)
        kids: list[dict[str, Any]] = []
        for sign in (1.0, -1.0):
            sub = _clip_points(pts, sign * n, sign * c)
            if sub is None:
                kids = []
                break
            planes = nd["planes"] + [(sign * n, sign * c)]
            keep = np.array([i for i in nd["tris"] if _touches(tris[i], planes, tol)], dtype=np.int64)
            kids.append(dict(points=sub, planes=planes, tris=keep, level=nd["level"] + 1))
        if len(kids) == 2:
            nd["children"] = kids
            queue.extend(kids)
    index = {id(nd): k for k, nd in enumerate(nodes)}
    n = len(nodes)
    topo = np.zeros((n, 4), np.int64)
    outer = np.zeros((n, 15))
    inner = np.zeros((n, 15))
    vols = np.zeros(n)
    ids: list[NDArray[np.int64]] = []
    start = 0
    max_level = 0
    for k, nd in enumerate(nodes):
        flags = 0
        if nd["children"]:
            topo[k, kd.NODE_CHILD] = index[id(nd["children"][0])]
            assert index[id(nd["children"][1])] == topo[k, kd.NODE_CHILD] + 1
        else:
            topo[k, kd.NODE_CHILD] = -1
            flags |= kd.FLAG_LEAF
        if nd["interior"]:
            flags |= kd.FLAG_INTERIOR
        if nd["inner"] is not None:
            flags |= kd.FLAG_INNER
            inner[k] = nd["inner"]
            vols[k] = nd["inner_volume"]
        topo[k, kd.NODE_FLAGS] = flags
        outer[k] = nd["outer"]
        if not nd["children"]:  # only leaves need their triangles
            topo[k, kd.NODE_TRI_START] = start
            topo[k, kd.NODE_TRI_COUNT] = nd["tris"].size
            ids.append(nd["tris"])
            start += nd["tris"].size
        max_level = max(max_level, nd["level"])
    tri_ids = np.concatenate(ids).astype(np.int64) if ids else np.zeros(0, np.int64)
    return DoubleHierarchy(topo, outer, inner, tri_ids, max_level, vols)


def hierarchy_of(shape: Convex, depth: int) -> DoubleHierarchy:
    """The shape's double hierarchy for ``depth`` (built once, cached on the shape)."""
    return shape.cached(("double-box", int(depth)), lambda: build_double_hierarchy(shape, depth))
