"""Quality and cost of a hierarchy, as seed 004 (section 2) and seed 001 define them.

* Tightness tau of a node (seed 004, Def. 1): the Hausdorff distance between the
  volume and the geometry it bounds. The volume contains the geometry, so this
  is the one-sided distance sup over points b of the volume of the distance from
  b to the node's triangles (exact point-triangle distances, kernels/traverse/unit_costs.py),
  estimated on a sample of the volume: boxes: corners, edges and a 5 x 5 grid on
  each face plus a 7 x 7 x 7 lattice; spheres: 162 points spread over the
  sphere and the lattice points of its cube inside it; k-DOPs: the vertices, on
  each face its centroid and midpoints of its vertices, and the lattice points
  of its axis box inside it. A sample underestimates the sup a little, the same way for
  every node of a kind. NOTE: the sup includes the interior: near the root of a
  closed mesh tau is dominated by how thick the mesh is, not by the fit.
* Diameter d (Def. 2): the largest distance between two vertices of the node's
  triangles (over the vertices of their convex hull when there are many).
* Compression ratio rho = tau / d (Def. 3): scale-free, 0 for a perfect fit.
* Cost model T = N_v C_v + N_p C_p + N_u C_u (seed 001; seed 004 without the
  update term): the counts come from ``query_stats``; the unit costs are
  measured by ``unit_costs`` with the kernels the traversal runs.

Levels are sampled (``max_nodes_per_level`` nodes a level, seeded) so the
metric stays affordable on large meshes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..constants import BV_AABB, BV_OBB, BV_RSS, BV_SPHERE, BV_WIDTH, TRI_TEST_GUIGUE
from ..kernels.traverse.unit_costs import max_distance_to_triangles, node_tests_loop, tri_tests_loop
from ..kernels.volumes.kdop import kdop_vertices
from .tree import BVH
from .volumes import KDOP_K, kdop_normals, node_depths, node_ranges

_GRID = np.linspace(-1.0, 1.0, 5)


def _fibonacci_sphere(n: int = 162) -> NDArray[np.float64]:
    i = np.arange(n) + 0.5
    phi = np.arccos(1 - 2 * i / n)
    theta = np.pi * (1 + 5**0.5) * i
    return np.column_stack([np.cos(theta) * np.sin(phi), np.sin(theta) * np.sin(phi), np.cos(phi)])


_SPHERE = _fibonacci_sphere()


def _box_surface(half: NDArray[np.float64]) -> NDArray[np.float64]:
    """Points on the surface of the box [-half, half]: corners, edges and a 5 x 5 grid per face."""
    gu, gv = np.meshgrid(_GRID, _GRID)
    u, v = gu.reshape(-1), gv.reshape(-1)
    pts = []
    for axis in range(3):
        a1, a2 = (axis + 1) % 3, (axis + 2) % 3
        for side in (-1.0, 1.0):
            p = np.zeros((u.size, 3))
            p[:, axis] = side
            p[:, a1] = u
            p[:, a2] = v
            pts.append(p)
    return np.vstack(pts) * half


_LATTICE = np.linspace(-1.0, 1.0, 7)
_INNER = np.array(np.meshgrid(_LATTICE, _LATTICE, _LATTICE)).reshape(3, -1).T  # 343 points of [-1, 1]^3


def volume_samples(kind: int, row: NDArray[np.float64]) -> NDArray[np.float64]:
    """(M, 3) points of one node volume: its boundary (see the module doc) and a few
    interior points (tau is a sup over the whole volume, seed 004 Def. 1)."""
    if kind == BV_AABB:
        return row[:3] + np.vstack([_box_surface(row[3:6]), _INNER * row[3:6]])
    if kind == BV_OBB:
        axes = row[3:12].reshape(3, 3)
        return row[:3] + np.vstack([_box_surface(row[12:15]), _INNER * row[12:15]]) @ axes
    if kind == BV_SPHERE:
        inner = _INNER[(_INNER**2).sum(axis=1) <= 1.0]
        return row[:3] + row[3] * np.vstack([_SPHERE, inner])
    if kind in KDOP_K:
        k = KDOP_K[kind]
        m = k // 2
        lo, hi = row[:m].copy(), row[m:k].copy()
        verts = np.empty((48, 3))
        count = kdop_vertices(lo, hi, np.int64(k), verts)
        v = verts[:count]
        N = kdop_normals(k)
        if count < 4:  # cannot happen for a k-DOP; be safe
            return row[:3] + _box_surface(np.zeros(3))
        # each face polygon: the vertices on its plane; sample its centroid, the
        # midpoints centroid-vertex and vertex-vertex (convex combinations lie on the face)
        proj = v @ N.T
        size = float(np.abs(row[:k]).max()) + 1e-300
        tol = 1e-9 * size
        box_c, box_h = 0.5 * (lo[:3] + hi[:3]), 0.5 * (hi[:3] - lo[:3])
        lattice = box_c + _INNER * box_h
        lp = lattice @ N.T
        inside = np.all((lp >= lo) & (lp <= hi), axis=1)
        pts = [v, lattice[inside]]
        for j in range(m):
            for plane in (lo[j], hi[j]):
                face = v[np.abs(proj[:, j] - plane) <= tol + 2.0**-30 * size]
                if len(face) < 3:
                    continue
                c = face.mean(axis=0)
                pts.append(c[None])
                pts.append(0.5 * (face + c))
                i, jj = np.triu_indices(len(face), 1)
                pts.append(0.5 * (face[i] + face[jj]))
        return np.vstack(pts)
    if kind == BV_RSS:
        # a 7 x 7 grid of the rectangle (axes rows 0 and 1), offset by the radius along the
        # normal (the flat faces) and, from its border, along sphere directions (the rim)
        axes = row[3:12].reshape(3, 3)
        gu, gv = np.meshgrid(_LATTICE, _LATTICE)
        rect = np.outer(gu.reshape(-1) * row[12], axes[0]) + np.outer(gv.reshape(-1) * row[13], axes[1])
        border = rect[(np.abs(gu) == 1.0).reshape(-1) | (np.abs(gv) == 1.0).reshape(-1)]
        rim = (border[:, None, :] + row[14] * _SPHERE[None]).reshape(-1, 3)
        return row[:3] + np.vstack([rect, rim, rect + row[14] * axes[2], rect - row[14] * axes[2]])
    # other kinds (added by other modules): their rows start like an AABB's
    # (centre, half extents) by convention; sample that box
    return row[:3] + np.vstack([_box_surface(row[3:6]), _INNER * row[3:6]])


def _diameter(pts: NDArray[np.float64]) -> float:
    pts = np.unique(pts, axis=0)
    if len(pts) > 64:
        try:
            from scipy.spatial import ConvexHull

            pts = pts[ConvexHull(pts).vertices]
        except Exception:  # flat or degenerate: all points (bounded below)
            pts = pts[:4096]
    best = 0.0
    for i in range(0, len(pts), 512):
        d = ((pts[i : i + 512, None, :] - pts[None, :, :]) ** 2).sum(-1)
        best = max(best, float(d.max()))
    return best**0.5


@dataclass(frozen=True)
class LevelQuality:
    """Mean tightness, diameter and compression ratio of the sampled nodes of one level."""

    level: int
    nodes: int  # nodes at this level
    sampled: int
    tau: float  # mean tightness (length units)
    diameter: float  # mean diameter
    rho: float  # mean of tau / d over the sampled nodes (nodes with d = 0 left out)


@dataclass(frozen=True)
class TreeQuality:
    levels: list[LevelQuality] = field(default_factory=list)

    @property
    def tau_root(self) -> float:
        return self.levels[0].tau if self.levels else float("nan")

    @property
    def rho_mean(self) -> float:
        """Mean over levels of the level's mean rho (each level weighs the same)."""
        vals = [lv.rho for lv in self.levels if np.isfinite(lv.rho)]
        return float(np.mean(vals)) if vals else float("nan")

    @property
    def tau_mean(self) -> float:
        vals = [lv.tau for lv in self.levels]
        return float(np.mean(vals)) if vals else float("nan")


def tree_quality(
    tree: BVH, max_nodes_per_level: int = 16, seed: int = 0, levels: list[int] | None = None
) -> TreeQuality:
    """tau, d and rho per level of ``tree`` (seed 004, section 2); see the module doc.

    Parameters
    ----------
    tree : BVH
    max_nodes_per_level : int
        Nodes sampled per level (seeded); all when a level has fewer.
    levels : list of int, optional
        Only these levels (default all).
    """
    a = tree.arrays
    kind = tree.options.bv_code
    depth = node_depths(a.topo)
    lo, hi = node_ranges(a.topo)
    rng = np.random.default_rng(seed)
    out = []
    for level in range(int(depth.max()) + 1) if levels is None else levels:
        nodes = np.flatnonzero(depth == level)
        if nodes.size == 0:
            continue
        pick = nodes if nodes.size <= max_nodes_per_level else rng.choice(nodes, max_nodes_per_level, replace=False)
        taus, ds, rhos = [], [], []
        for i in pick:
            s, e = int(lo[i]), int(hi[i])
            samples = np.ascontiguousarray(volume_samples(kind, a.bv[i]))
            tau = float(max_distance_to_triangles(samples, a.tris, np.int64(s), np.int64(e)))
            d = _diameter(a.tris[s:e].reshape(-1, 3))
            taus.append(tau)
            ds.append(d)
            if d > 0:
                rhos.append(tau / d)
        out.append(
            LevelQuality(
                level,
                int(nodes.size),
                int(len(pick)),
                float(np.mean(taus)),
                float(np.mean(ds)),
                float(np.mean(rhos)) if rhos else float("nan"),
            )
        )
    return TreeQuality(out)


@dataclass(frozen=True)
class UnitCosts:
    """Seconds per operation of the cost model (seed 001): c_v a volume test, c_p a
    triangle test, c_u a volume update (0 for kinds that never update)."""

    c_v: float
    c_p: float
    c_u: float

    def model(self, n_v, n_p, n_u):
        """T = n_v c_v + n_p c_p + n_u c_u (seconds), elementwise; NaN for a
        volume kind whose unit costs are unknown (``unit_costs``)."""
        with np.errstate(invalid="ignore"):  # 0 * NaN for unknown costs: NaN, quietly
            return np.asarray(n_v) * self.c_v + np.asarray(n_p) * self.c_p + np.asarray(n_u) * self.c_u


def _time(fn, min_seconds: float = 0.03) -> float:
    """Seconds per call of fn() (repeated until min_seconds has passed; best of 5:
    the machine is shared, the minimum is the least disturbed)."""
    fn()
    best = np.inf
    for _ in range(5):
        reps = 0
        start = time.perf_counter()
        while True:
            fn()
            reps += 1
            el = time.perf_counter() - start
            if el >= min_seconds:
                break
        best = min(best, el / reps)
    return best


def unit_costs(tree_a: BVH, tree_b: BVH | None = None, n: int = 4096, seed: int = 0) -> UnitCosts:
    """Measure c_v, c_u and c_p (seconds) with the kernels the traversal runs.

    Node pairs: half are a node against its own copy slightly moved (they
    overlap: every axis or normal is evaluated), half against a random node
    (most separate early), about the mix a descent meets. c_v: under a pure
    translation; c_v + c_u: under a small rotation, so c_u is the difference
    for kinds that update b's volume (k-DOPs recompute it from its points).
    OBB: the test always moves b's box, so c_v is the same 15-axis test on
    boxes already related by R (the AABB test on the OBB rows' centres and
    half extents) and c_u the rest. AABB and sphere: c_u = 0 (only a centre
    moves, as in the traversal's counters). c_p: the exact triangle test on
    pairs of a's and b's triangles placed to overlap about half the time.
    """
    tree_b = tree_a if tree_b is None else tree_b
    kind = tree_a.options.bv_code
    if kind not in BV_WIDTH:
        # a kind this module does not know (added later): kernels/bv_costs.node_tests_loop
        # must learn its test before c_v can be measured
        nan = float("nan")
        return UnitCosts(nan, nan, nan)
    rng = np.random.default_rng(seed)
    ia = rng.integers(0, tree_a.n_nodes, n).astype(np.int64)
    ib = ia.copy()
    ib[n // 2 :] = rng.integers(0, tree_a.n_nodes, n - n // 2)
    bv_a = bv_b = tree_a.arrays.bv
    size = float(2 * tree_a.arrays.scale[0])
    slack = 64.0 * 2.0**-53 * size
    ident = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    Rm = np.eye(3) + np.sin(0.2) * K + (1 - np.cos(0.2)) * K @ K
    rot = tuple(float(x) for x in Rm.reshape(-1))
    t = tuple(float(x) for x in rng.uniform(-0.01, 0.01, 3) * size)
    reps = np.int64(1)
    t_trans = _time(lambda: node_tests_loop(np.int64(kind), bv_a, bv_b, ia, ib, ident, t, slack, reps)) / n
    t_rot = _time(lambda: node_tests_loop(np.int64(kind), bv_a, bv_b, ia, ib, rot, t, slack, reps)) / n
    if kind == BV_OBB:
        # The OBB test always moves b's box into a's frame: its update is the
        # difference to the same 15-axis test on boxes already related by R (the
        # AABB test, run here on the OBB rows' centres and half extents).
        rows_a = np.ascontiguousarray(np.column_stack([bv_a[:, :3], bv_a[:, 12:15]]))
        rows_b = np.ascontiguousarray(np.column_stack([bv_b[:, :3], bv_b[:, 12:15]]))
        sat = _time(lambda: node_tests_loop(np.int64(BV_AABB), rows_a, rows_b, ia, ib, rot, t, slack, reps)) / n
        c_v, c_u = sat, max(t_rot - sat, 0.0)
    elif kind in (BV_AABB, BV_SPHERE):
        c_v, c_u = t_rot, 0.0
    else:
        c_v, c_u = t_trans, max(t_rot - t_trans, 0.0)
    # triangle pairs: b's triangles moved onto a's with a random offset of about one triangle size
    ta, tb = tree_a.arrays.tris, tree_b.arrays.tris
    A = np.ascontiguousarray(ta[rng.integers(0, ta.shape[0], n)])
    B = np.array(tb[rng.integers(0, tb.shape[0], n)])
    ext = np.linalg.norm(A.max(axis=1) - A.min(axis=1), axis=1)[:, None]
    B += (A.mean(axis=1) - B.mean(axis=1) + rng.normal(size=(n, 3)) * 0.3 * ext)[:, None, :]
    B = np.ascontiguousarray(B)
    c_p = _time(lambda: tri_tests_loop(A, B, np.int64(TRI_TEST_GUIGUE), reps)) / n
    return UnitCosts(c_v, c_p, c_u)
