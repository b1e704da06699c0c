"""Python-side helpers of the volume kinds: row layouts, containment checks, hull-based OBB fits.

Kinds and rows: see constants.BV_KINDS / BV_WIDTH, kernels/volumes/sphere.py, kernels/volumes/kdop.py.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from numpy.typing import NDArray

from ..constants import BV_AABB, BV_KDOP6, BV_KDOP14, BV_KDOP18, BV_KDOP26, BV_OBB, BV_RSS, BV_SPHERE, LEAF_FLAG
from ..errors import InvalidBVHError
from ..kernels.volumes.kdop import _SETS, NORMALS

KDOP_K = {BV_KDOP6: 6, BV_KDOP14: 14, BV_KDOP18: 18, BV_KDOP26: 26}


def kdop_normals(k: int) -> NDArray[np.float64]:
    """(k/2, 3) the integer normals of a k-DOP, in row order."""
    row = {6: 0, 14: 1, 18: 2, 26: 3}[k]
    return NORMALS[_SETS[row, : k // 2]]


def length_columns(kind: int, width: int) -> list[int]:
    """Columns of a node row that are lengths or coordinates (scaled with the mesh)."""
    if kind == BV_AABB:
        return [0, 1, 2, 3, 4, 5]
    if kind == BV_OBB or kind == BV_RSS:  # centre; half extents, or half lengths and radius
        return [0, 1, 2, 12, 13, 14]
    if kind == BV_SPHERE:
        return [0, 1, 2, 3]
    if kind in KDOP_K:
        k = KDOP_K[kind]
        return [c for c in range(width) if c != k]
    raise ValueError(f"no layout for volume code {kind}")


def node_ranges(topo: NDArray[np.int32]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(lo, hi): each node's triangle range [lo, hi) in leaf order (subtrees are contiguous)."""
    n = topo.shape[0]
    lo = np.zeros(n, np.int64)
    hi = np.zeros(n, np.int64)
    leaf = (topo[:, 2] & LEAF_FLAG) != 0
    # children always have larger indices than their parent in every builder
    for i in range(n - 1, -1, -1):
        first, count = int(topo[i, 0]), int(topo[i, 1])
        if leaf[i]:
            lo[i], hi[i] = first, first + count
        else:
            lo[i] = lo[first : first + count].min()
            hi[i] = hi[first : first + count].max()
    return lo, hi


def node_depths(topo: NDArray[np.int32]) -> NDArray[np.int64]:
    """Depth of every node (root 0)."""
    n = topo.shape[0]
    depth = np.zeros(n, np.int64)
    leaf = (topo[:, 2] & LEAF_FLAG) != 0
    for i in range(n):
        if not leaf[i]:
            first, count = int(topo[i, 0]), int(topo[i, 1])
            depth[first : first + count] = depth[i] + 1
    return depth


def containment_excess(kind: int, row: NDArray[np.float64], pts: NDArray[np.float64]) -> float:
    """How far (length units, <= 0 when inside) the points stick out of one node volume."""
    if kind == BV_AABB:
        return float((np.abs(pts - row[:3]) - row[3:6]).max())
    if kind == BV_OBB:
        axes = row[3:12].reshape(3, 3)
        if not np.allclose(axes @ axes.T, np.eye(3), atol=1e-9):
            raise InvalidBVHError("OBB axes not orthonormal")
        return float((np.abs((pts - row[:3]) @ axes.T) - row[12:15]).max())
    if kind == BV_SPHERE:
        return float(np.sqrt(((pts - row[:3]) ** 2).sum(axis=1)).max() - row[3])
    if kind == BV_RSS:
        axes = row[3:12].reshape(3, 3)
        if not np.allclose(axes @ axes.T, np.eye(3), atol=1e-9):
            raise InvalidBVHError("RSS axes not orthonormal")
        local = (pts - row[:3]) @ axes.T
        du = np.maximum(np.abs(local[:, 0]) - row[12], 0.0)
        dv = np.maximum(np.abs(local[:, 1]) - row[13], 0.0)
        return float(np.sqrt(du**2 + dv**2 + local[:, 2] ** 2).max() - row[14])
    if kind in KDOP_K:
        k = KDOP_K[kind]
        m = k // 2
        N = kdop_normals(k)
        norms = np.abs(N).sum(axis=1)
        proj = pts @ N.T
        excess = np.maximum(row[:m] - proj, proj - row[m:k]) / norms
        count = int(row[k])
        if not 1 <= count <= 2 * k - 4:
            raise InvalidBVHError(f"k-DOP point count {count} out of range")
        # the stored points' k-DOP must contain the node's own (what a rotation recomputes)
        kp = row[k + 1 : k + 1 + 3 * count].reshape(-1, 3) @ N.T
        scale = float(np.abs(row[:k]).max()) + 1e-300
        if not (np.all(kp.min(axis=0) <= row[:m] + 1e-9 * scale) and np.all(kp.max(axis=0) >= row[m:k] - 1e-9 * scale)):
            raise InvalidBVHError("k-DOP points do not span the k-DOP")
        return float(excess.max())
    raise ValueError(f"no containment check for volume code {kind}")


# --- OBB axes from the convex hull (seed 001 "OBB-Baum": hull, covariance, box) ---------------


def _box_row(axes: NDArray[np.float64], pts: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
    """OBB row (centre, axes rows, half extents) of pts for the given axes, and its volume."""
    proj = pts @ axes.T
    lo, hi = proj.min(axis=0), proj.max(axis=0)
    half = 0.5 * (hi - lo) + 4.0 * 2.0**-53 * (np.abs(lo) + np.abs(hi))
    centre = axes.T @ (0.5 * (lo + hi))
    row = np.concatenate([centre, axes.reshape(-1), half])
    return row, float(np.prod(2 * half))


def _orthonormal(vecs: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rows: a right-handed orthonormal frame from eigenvectors (columns of eigh)."""
    axes = np.ascontiguousarray(vecs.T[::-1])  # largest variance first
    axes[2] = np.cross(axes[0], axes[1])
    axes[2] /= np.linalg.norm(axes[2])
    axes[1] = np.cross(axes[2], axes[0])
    return axes


def _pca_axes(pts: NDArray[np.float64]) -> NDArray[np.float64]:
    c = np.cov(pts.T, bias=True) if len(pts) > 1 else np.eye(3)
    return _orthonormal(np.linalg.eigh(c)[1])


def _area_axes(tri: NDArray[np.float64]) -> NDArray[np.float64] | None:
    """Gottschalk's area-weighted covariance of triangles (F, 3, 3); None when all areas are 0."""
    area = 0.5 * np.linalg.norm(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]), axis=1)
    total = area.sum()
    if total <= 0:
        return None
    cent = tri.mean(axis=1)
    m = (area[:, None] * cent).sum(axis=0) / total
    s = tri.sum(axis=1)
    C = np.einsum("f,fp,fq->pq", area / 12.0, s, s) + np.einsum("f,fvp,fvq->pq", area / 12.0, tri, tri)
    C = C / total - np.outer(m, m)
    return _orthonormal(np.linalg.eigh(C)[1])


def refit_obb_from_hulls(
    bv: NDArray[np.float64], topo: NDArray[np.int32], tris_leaf: NDArray[np.float64], fit: str
) -> int:
    """Replace each node's OBB (in place) by the hull-based fit ``fit``; return the nodes changed.

    "hull_points": PCA of the convex hull's vertices (seed 001); "hull_triangles":
    Gottschalk's area-weighted covariance of the hull's triangles; "best": the
    smallest volume of these two and the triangle fit already in ``bv``. The
    hull of an inner node is the hull of its children's hull vertices (computed
    bottom-up). Degenerate hulls (flat or collinear nodes) keep the triangle fit.
    """
    from scipy.spatial import ConvexHull, QhullError

    lo, hi = node_ranges(topo)
    leaf = (topo[:, 2] & LEAF_FLAG) != 0
    hull_pts: list[NDArray[np.float64] | None] = [None] * topo.shape[0]
    changed = 0
    for i in range(topo.shape[0] - 1, -1, -1):
        if leaf[i]:
            pts = tris_leaf[lo[i] : hi[i]].reshape(-1, 3)
        else:
            first, count = int(topo[i, 0]), int(topo[i, 1])
            # the children come later in the order: their points are set
            pts = np.vstack([cast(NDArray[np.float64], hull_pts[c]) for c in range(first, first + count)])
            for c in range(first, first + count):
                hull_pts[c] = None  # children are no longer needed
        pts = np.unique(pts, axis=0)
        try:
            hull = ConvexHull(pts)
        except (QhullError, ValueError):
            hull_pts[i] = pts
            continue
        hv = pts[hull.vertices]
        hull_pts[i] = hv
        candidates = []
        if fit in ("hull_points", "best"):
            candidates.append(_box_row(_pca_axes(hv), hv))
        if fit in ("hull_triangles", "best"):
            axes = _area_axes(pts[hull.simplices])
            if axes is not None:
                candidates.append(_box_row(axes, hv))
        if fit == "best":
            old = bv[i]
            candidates.append((old.copy(), float(np.prod(2 * old[12:15]))))
        if not candidates:
            continue
        row, _ = min(candidates, key=lambda rv: rv[1])
        if not np.array_equal(row, bv[i]):
            bv[i] = row
            changed += 1
    return changed
