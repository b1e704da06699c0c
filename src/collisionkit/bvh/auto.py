"""``BuildOptions(bv="auto")``, the default: each mesh's volume kind chosen from its shape.

Why: the volume that prunes best depends on the mesh. AABB trees are cheapest per test and
best on compact meshes whose small patches are about as thick as they are wide (the bunny,
a robot link of blocky parts, plates whose faces lie along the axes). On curved or oblique
surfaces (gear flanks, shafts in bores, thin tubes, scans) an axis-aligned box around a
small patch is as thick as the patch is wide, while an oriented box is as thin as the
patch's sag: near contact, AABB trees then test 9-45x more triangle pairs than OBB trees
(benchmarks/results/hard_cases.md; python -m benchmarks.hard_cases).

The measure (seed 004's tightness tau, taken per leaf-sized patch): the mesh's triangles,
in Morton order of their centroids, form patches of ``PATCH`` triangles (at most
``MAX_PATCHES``, evenly spaced); per patch, the thinnest half-extent of its axis-aligned
box and of its principal-axes box, each over the patch's largest axis-aligned half-extent.
The ratio of the two medians is the mesh's ``leaf_thickness_ratio``: about 1 when an AABB is
as tight as an OBB, large when AABBs are much thicker. A mesh prefers "obb" from
``OBB_RATIO`` on, else "aabb".

A pair of "auto" meshes is traversed as OBB trees when either prefers it (the thicker
boxes of the other tree still meet the thin ones), as AABB trees otherwise; a mesh with
an explicit kind imposes it (``pair_volume``).

The threshold, measured (leaf thickness ratio and the faster kind; 2-core VM): OBB won on
the generated gears (17-38; 4-11x), the shaft and bore (10-17), the scan (21 with a 6.5
partner) and thin links (17); AABB won on the bolted flange (1.1-1.3), the bunny (1.5),
env (4.3), rob (0.7), the shelf (1.05) and the KUKA links (1.4-3.4). The soccer-ball mesh
(7.6) goes either way (benchmarks/results/pairs.md, regenerated at both thresholds): on
OBB trees random soccer-soccer poses run 1.69x the fastest peer (AABB trees: 0.90x, slower
than python-fcl), the near-contact assembly of two such balls 1.31x (AABB trees: 1.67x;
both kinds reach ~80k triangle tests a pose there). 6.0 takes OBB for it: no scene falls
below the fastest peer, and the geometric mean over the six scenes is higher (2.01x against
1.89x boolean per call). A per-pair choice from the query's own counts would pick per case
(issue 15).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..geometry.mesh import Mesh
from ..options import AUTO_BV as AUTO

#: Triangles per patch (leaf-sized groups: leaves hold up to 4 triangles, their parents 8-16).
PATCH = 16
#: Patches measured at most (evenly spaced in Morton order): bounds the cost on huge meshes.
MAX_PATCHES = 8192
#: Leaf thickness ratio (AABB over OBB) from which a mesh prefers OBB trees (see the module notes).
OBB_RATIO = 6.0
_KEY = ("auto-volume",)  # the geometry cache's key of a mesh's VolumeChoice


class VolumeChoice(NamedTuple):
    """What ``auto`` chose for a mesh, and why."""

    bv: str  # "aabb" or "obb"
    leaf_thickness_ratio: float  # median AABB / median OBB thinnest half-extent of leaf patches
    threshold: float  # OBB_RATIO


def _spread10(x: np.ndarray) -> np.ndarray:
    """The low 10 bits of x spread to every third bit (a 30-bit Morton code component)."""
    x = x & 0x3FF
    x = (x | (x << 16)) & 0x030000FF
    x = (x | (x << 8)) & 0x0300F00F
    x = (x | (x << 4)) & 0x030C30C3
    return (x | (x << 2)) & 0x09249249


def leaf_thickness_ratio(triangles: np.ndarray) -> float:
    """Median thinnest half-extent of leaf-sized patches, axis-aligned boxes over principal-axes
    boxes (both over the patch's largest axis-aligned half-extent); 1.0 below one patch.

    ``triangles``: (F, 3, 3). Scale-free: the patches are measured relative to their own size.
    """
    T = np.asarray(triangles, dtype=np.float64)
    n = T.shape[0] // PATCH
    if n == 0:
        return 1.0
    big = float(np.abs(T).max())
    if big > 0.0:  # scaled by a power of two (exact) into [0.5, 1): no overflow at any scale
        T = np.ldexp(T, -np.frexp(big)[1])
    # PERF: the sum of the three vertices in numpy's order for T.mean(axis=1), without its
    # strided reduction (same bits)
    c = (T[:, 0] + T[:, 1] + T[:, 2]) / 3.0
    lo = c.min(axis=0)
    span = c.max(axis=0) - lo
    q = ((c - lo) / np.where(span > 0.0, span, 1.0) * 1023.0).astype(np.int64)
    order = np.argsort(_spread10(q[:, 0]) | (_spread10(q[:, 1]) << 1) | (_spread10(q[:, 2]) << 2), kind="stable")
    starts = np.linspace(0, n - 1, min(n, MAX_PATCHES)).astype(np.int64) * PATCH
    P = T[order[starts[:, None] + np.arange(PATCH)]].reshape(-1, 3 * PATCH, 3)
    # PERF: extremes over a patch's points as contiguous rows (Pt: (patches, 3, points));
    # numpy's reductions over the middle axis of P ran 5-8x slower. Same values.
    Pt = np.ascontiguousarray(P.transpose(0, 2, 1))
    half_aabb = (Pt.max(axis=2) - Pt.min(axis=2)) / 2.0
    size = half_aabb.max(axis=1)
    keep = size > 0.0
    if not keep.any():
        return 1.0
    P, Pt, half_aabb, size = P[keep], Pt[keep], half_aabb[keep], size[keep]
    mean = P.mean(axis=1, keepdims=True)
    Q = (P - mean) / size[:, None, None]  # each patch at unit size
    Qt = (Pt - mean.transpose(0, 2, 1)) / size[:, None, None]  # Q transposed, the same values
    _, axes = np.linalg.eigh(np.einsum("gki,gkj->gij", Q, Q))
    # projections on the axes, transposed: sum over i of Q[g, k, i] * axes[g, i, j] in einsum's order
    proj = Qt[:, 0, None, :] * axes[:, 0, :, None] + Qt[:, 1, None, :] * axes[:, 1, :, None]
    proj += Qt[:, 2, None, :] * axes[:, 2, :, None]
    half_obb = (proj.max(axis=2) - proj.min(axis=2)) / 2.0  # in units of the patch's size
    thick_obb = float(np.median(half_obb.min(axis=1)))
    thick_aabb = float(np.median(half_aabb.min(axis=1) / size))
    return thick_aabb / max(thick_obb, 1e-12)


def volume_choice(triangles: np.ndarray) -> VolumeChoice:
    """The volume kind ``auto`` picks for these (F, 3, 3) triangles, with its measure."""
    r = leaf_thickness_ratio(triangles)
    return VolumeChoice("obb" if r >= OBB_RATIO else "aabb", r, OBB_RATIO)


def choose_volume(mesh: Mesh) -> VolumeChoice:
    """The volume kind ``auto`` picks for ``mesh`` (cached per geometry), with its measure.

    Examples
    --------
    >>> import collisionkit as ck
    >>> ck.bvh.choose_volume(ck.primitives.box_mesh([1, 1, 1])).bv
    'aabb'
    """
    return mesh.cached(_KEY, lambda: volume_choice(mesh.triangles))


def mesh_volume(mesh: Mesh) -> str:
    """The mesh's own volume kind: its options', or ``auto``'s choice."""
    bv = mesh.options.bv
    return choose_volume(mesh).bv if bv == AUTO else bv


def pair_volume(a: Any, b: Any) -> str:
    """The volume kind a query traverses the pair (a, b) in (both trees in that kind).

    a's explicit kind, else b's explicit kind, else "obb" when either mesh prefers it
    (``choose_volume``), else "aabb".
    """
    bv = a.options.bv
    if bv != AUTO:
        return bv
    bv = b.options.bv
    if bv != AUTO:
        return bv
    # PERF: on every per-call query: the geometry caches read directly (0.5 -> 0.15 us)
    choice = a._geom._cache.get(_KEY) or choose_volume(a)
    if choice.bv == "obb":
        return "obb"
    return (b._geom._cache.get(_KEY) or choose_volume(b)).bv


__all__ = ["AUTO", "OBB_RATIO", "VolumeChoice", "choose_volume", "volume_choice", "leaf_thickness_ratio", "mesh_volume", "pair_volume"]
