"""Surfaces of a mesh whose file names none: connected, near-planar or smooth regions.

Seed 000 describes an object as surfaces made of triangles (a CAD model's
faces). A mesh that comes without that information (no ``surfaces=`` given,
no OBJ objects/groups, one geometry in a scene) is segmented here.

The rule (documented in ARCHITECTURE.md's words, stated once here):

1. Vertices are welded by **exact** coordinates (files often repeat a vertex
   per face for its normal or texture coordinate; welding by a tolerance
   would join parts that merely touch).
2. Two faces are **neighbours** when they share an edge (two welded vertices).
   Faces that share only a vertex are never in the same surface, so a surface
   never spans two connected components.
3. Two neighbours are in the same surface when the angle between their unit
   normals is at most ``feature_angle`` (default 30 degrees, a common
   crease-angle choice for CAD tessellations: a box splits into its 6 sides,
   a cylinder into its mantle and 2 caps, a finely tessellated sphere stays
   one smooth surface). Surfaces are the connected classes of this relation
   (region growing across every edge below the feature angle).
4. A zero-area face has no normal: it joins the surface of its first
   neighbour (by face index) that has one, and stays alone if it has none.
   This keeps slivers from bridging two regions that a crease separates.
5. Labels are numbered 0, 1, ... in the order of each surface's first face,
   so the labelling is deterministic and independent of how the file lists
   vertices.

An edge shared by more than two faces (non-manifold) links each face to the
next one in face order around that edge, each link under the same angle rule.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

#: Default crease angle between neighbouring face normals, in degrees.
FEATURE_ANGLE_DEG = 30.0


def _union_labels(n: int, i: NDArray[np.int64], j: NDArray[np.int64]) -> NDArray[np.int64]:
    """Connected-component labels of n nodes under the undirected links (i, j)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    if n == 0:
        return np.zeros(0, np.int64)
    g = coo_matrix((np.ones(i.shape[0], np.int8), (i, j)), shape=(n, n))
    _, labels = connected_components(g, directed=False)
    return labels.astype(np.int64)


def _first_order_labels(labels: NDArray[np.int64]) -> NDArray[np.int32]:
    """Renumber labels 0, 1, ... in the order of their first occurrence."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    return rank[inverse].astype(np.int32)


def face_adjacency(vertices: NDArray[np.float64], faces: NDArray[np.integer]) -> NDArray[np.int64]:
    """(E, 2) int64 pairs of faces sharing an edge (vertices welded by exact coordinates).

    Each pair once with the smaller face first; an edge of k faces gives the
    k - 1 pairs of consecutive faces in face order.
    """
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces, np.int64)
    if f.shape[0] == 0:
        return np.zeros((0, 2), np.int64)
    _, weld = np.unique(v, axis=0, return_inverse=True)
    wf = weld.reshape(-1)[f]  # (F, 3) welded vertex ids
    edges = np.concatenate([wf[:, [0, 1]], wf[:, [1, 2]], wf[:, [2, 0]]])
    owner = np.tile(np.arange(f.shape[0], dtype=np.int64), 3)
    edges.sort(axis=1)
    keep = edges[:, 0] != edges[:, 1]  # an edge collapsed to a point links nothing
    edges, owner = edges[keep], owner[keep]
    order = np.lexsort((owner, edges[:, 1], edges[:, 0]))
    edges, owner = edges[order], owner[order]
    same = np.all(edges[1:] == edges[:-1], axis=1) & (owner[1:] != owner[:-1])
    pairs = np.stack([owner[:-1][same], owner[1:][same]], axis=1)
    pairs.sort(axis=1)
    return np.unique(pairs, axis=0) if pairs.shape[0] else pairs.reshape(0, 2)


def segment_surfaces(
    vertices: NDArray[np.float64], faces: NDArray[np.integer], feature_angle: float = FEATURE_ANGLE_DEG
) -> NDArray[np.int32]:
    """Surface label of each face by the feature-angle rule (module docstring).

    Parameters
    ----------
    vertices : (V, 3) float64
    faces : (F, 3) integer
    feature_angle : float
        Largest angle in degrees, in [0, 180], between the normals of two
        edge-neighbours that keeps them in one surface.

    Returns
    -------
    (F,) int32 labels 0..S-1, numbered by each surface's first face.

    Examples
    --------
    >>> import collisionkit as ck
    >>> box = ck.primitives.box_mesh([1, 2, 3])
    >>> segment_surfaces(box.vertices, box.faces).tolist()
    [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    """
    if not 0.0 <= float(feature_angle) <= 180.0:
        raise ValueError(f"feature_angle must be in [0, 180] degrees, got {feature_angle!r}")
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces, np.int64)
    n = f.shape[0]
    if n == 0:
        return np.zeros(0, np.int32)
    tris = v[f]
    # NOTE: normals from coordinates scaled by a power of two (exact) so the largest
    # is about 1: cross products square the coordinates and would overflow above
    # ~1e150 or underflow below ~1e-150.
    big = float(np.abs(tris).max()) if tris.size else 0.0
    if big > 0.0:
        tris = np.ldexp(tris, -int(np.frexp(big)[1]))
    normal = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    length = np.linalg.norm(normal, axis=1)
    good = length > 0.0
    unit = np.zeros_like(normal)
    unit[good] = normal[good] / length[good, None]

    pairs = face_adjacency(v, f)
    i, j = pairs[:, 0], pairs[:, 1]
    both = good[i] & good[j]
    cos_limit = math.cos(math.radians(float(feature_angle)))
    cosine = np.einsum("ij,ij->i", unit[i], unit[j])
    smooth = both & (cosine >= cos_limit - 1e-12)  # 1e-12: exact right angles at 90 deg stay in
    links_i, links_j = [i[smooth]], [j[smooth]]
    # zero-area faces: join the first neighbour (by face index) that has a normal
    one = good[i] ^ good[j]
    if np.any(one):
        deg = np.where(good[i[one]], j[one], i[one])
        other = np.where(good[i[one]], i[one], j[one])
        order = np.lexsort((other, deg))
        deg, other = deg[order], other[order]
        _, first = np.unique(deg, return_index=True)
        links_i.append(deg[first])
        links_j.append(other[first])
    labels = _union_labels(n, np.concatenate(links_i), np.concatenate(links_j))
    return _first_order_labels(labels)


def connected_components(vertices: NDArray[np.float64], faces: NDArray[np.integer]) -> NDArray[np.int32]:
    """(F,) int32 component label of each face (faces sharing an edge), numbered by first face."""
    f = np.asarray(faces, np.int64)
    pairs = face_adjacency(vertices, f)
    return _first_order_labels(_union_labels(f.shape[0], pairs[:, 0], pairs[:, 1]))


__all__ = ["FEATURE_ANGLE_DEG", "connected_components", "face_adjacency", "segment_surfaces"]
