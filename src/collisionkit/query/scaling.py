"""Power-of-two prescaling: the proximity queries at every scale (issue 18, item 4).

Why: ``intersects`` and ``contacts`` decide on exact predicates that rescale
their own inputs, but the proximity kernels (distance, penetration, the
winding numbers of classify, time of impact) square lengths and multiply up to
six of them (``constants.SCALE_BAND_EXP``), which overflows above about 1e51
(1e154 for plain squares) and underflows symmetrically below.

How: multiplying every length of a pair (both meshes' coordinates, volumes and
the poses' translations) by 2**-m changes exponents only, so it is exact, and
the relative pose computed from the scaled poses is the scaled relative pose,
bit for bit. Every kernel is scale-covariant inside the band: its tolerances
are relative to the scene size (``constants.BV_SLACK_ULPS``, ``GJK_REL_TOL``,
the penetration kernel's 1e-9 slack) or dimensionless (cosines, rotation
entries), so its answer at 2**-m times the pair is 2**-m times its answer
(lengths; times, labels and unit directions unchanged). Results are scaled
back by the exact 2**m. Hence, for s = 2**k,
``distance(sA, sB, s-poses).distance == s * distance(A, B, poses).distance``
bit for bit over the whole float64 range (``tests/test_scale_invariance.py``).

Cost: pairs inside the band (every real scene: [5e-20, 2e19]) run as before;
per-call entries learn that a pair is outside it from the kernel itself
(``kernels/core/scaling.OUT_OF_BAND``), so their fast path pays nothing.
Prescaled trees are cached on the mesh per (build options, exponent).

Limit: prescaling a pair whose smallest mesh is below 2**-969 of its extent
would push that mesh's coordinates into subnormals (lost bits): such a pair
(a dynamic range beyond ~1e291 inside one query) raises ``ValueError``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..bvh import BVH
from ..bvh.tree import BVHArrays
from ..bvh.volumes import length_columns
from ..constants import BV_SAABB, SCALE_BAND_EXP
from ..geometry.mesh import Mesh

#: Band of extents run as given (exact powers of two).
BAND_LO = math.ldexp(1.0, -SCALE_BAND_EXP)
BAND_HI = math.ldexp(1.0, SCALE_BAND_EXP)
#: Smallest nonzero mesh size, relative to the pair's extent, that prescaling
#: keeps exact: 2**-969 = 2**53 times the smallest normal float64.
MIN_RELATIVE_SIZE = math.ldexp(1.0, -969)
#: Prescaled trees kept per mesh geometry (a handful of exponents in practice).
_MAX_CACHED = 4


def shift_for(extent: float) -> int:
    """Exponent m to divide a pair of this extent by (2**m), 0 when it needs none.

    0 for an extent of 0, inf or NaN (nothing to scale; invalid poses are
    reported by the kernels) or inside the band; otherwise m with
    extent * 2**-m in [0.5, 1).
    """
    if BAND_LO <= extent <= BAND_HI or not (0.0 < extent < math.inf):
        return 0
    return math.frexp(extent)[1]


def exponent_of(x: float) -> int:
    """e with x * 2**-e in [0.5, 1) for a finite x > 0; 0 otherwise."""
    return math.frexp(x)[1] if 0.0 < x < math.inf else 0


def mesh_scale(mesh: Mesh) -> float:
    """Largest absolute vertex coordinate of the mesh's faces (cached per geometry)."""

    def build() -> float:
        t = np.asarray(mesh.triangles)
        return float(np.abs(t).max()) if t.size else 0.0

    return mesh.cached(("max-abs-coordinate",), build)


def extent_shifts(extent: np.ndarray) -> np.ndarray | None:
    """``shift_for`` over an array of extents (N,) -> (N,) int64; None when all are 0."""
    keep = ((extent >= BAND_LO) & (extent <= BAND_HI)) | ~(extent > 0.0) | ~np.isfinite(extent)
    out = np.where(keep, 0, np.frexp(extent)[1]).astype(np.int64)
    return out if out.any() else None


def translation_extent(poses: np.ndarray) -> np.ndarray:
    """Largest |translation| of each pose: (N, 4, 4) -> (N,); (4, 4) -> ()."""
    t = np.abs(poses[..., :3, 3])
    # PERF: two elementwise maxima, not .max(axis=-1) (numpy's reduction over a length-3
    # axis costs 12 us on 200 poses, this 3 us)
    return np.maximum(np.maximum(t[..., 0], t[..., 1]), t[..., 2])


def check_range(query: str, sizes: tuple[float, ...], m: int) -> None:
    """Refuse a prescaling by 2**-m that would flush a mesh into subnormals.

    ``sizes``: the largest absolute coordinate of each mesh (or hull).
    """
    if m <= 0:
        return  # scaling up loses nothing: the extent lands below 1
    for s in sizes:
        if 0.0 < s and math.ldexp(s, -m) < MIN_RELATIVE_SIZE:
            extent = math.ldexp(1.0, m)
            raise ValueError(
                f"{query}: a shape of size {s:.3g} beside a pair extent of about {extent:.3g} "
                f"(largest coordinate or translation) spans more than 2**969 (~1e291); {query} "
                "supports any scale from 1e-300 to 1e300, but only pairs whose sizes and "
                "translations lie within that dynamic range of each other"
            )


def scaled_poses(poses: np.ndarray, m: int) -> np.ndarray:
    """A copy of (..., 4, 4) poses with translations multiplied by 2**-m (exact)."""
    out = np.array(poses, dtype=np.float64, order="C", copy=True)
    out[..., :3, 3] = np.ldexp(out[..., :3, 3], -m)
    return out


def _length_cols(tree: BVH) -> list[int]:
    # As build_tree: an S-AABB row is the AABB row (0-5), a sphere (6-9) and a ratio (10).
    if tree.options.bv_code == BV_SAABB:
        return list(range(10))
    return length_columns(tree.options.bv_code, tree.arrays.bv.shape[1])


def scaled_tree(mesh: Mesh, tree: BVH, m: int) -> BVHArrays:
    """``tree``'s arrays with every length multiplied by 2**-m, cached on the mesh.

    Topology, leaf order and counts are shared; volumes, triangles and the
    scale are new arrays. Trees are built on coordinates normalised by a power
    of two (``bvh.tree.build_tree``), so this equals the tree of the scaled mesh.
    """
    if m == 0:
        return tree.arrays
    key = ("prescaled-bvh", tree.options, m)
    cache = mesh._geom._cache
    hit = cache.get(key)
    if hit is not None:
        return hit
    x = tree.arrays
    bv = np.array(x.bv, copy=True)
    cols = _length_cols(tree)
    bv[:, cols] = np.ldexp(bv[:, cols], -m)
    arrays = BVHArrays(x.topo, bv, np.ldexp(x.tris, -m), x.face_ids, x.meta, np.ldexp(x.scale, -m))
    if sum(1 for k in cache if isinstance(k, tuple) and k[:1] == ("prescaled-bvh",)) < _MAX_CACHED:
        cache[key] = arrays
    return arrays


def task_extents(req: Any) -> tuple[np.ndarray, np.ndarray]:
    """Largest |translation| of a's and of b's pose per task of a prepared request
    (``per_task`` columns: (n,), or (1,) for a side with one pose)."""
    return per_task(translation_extent(req.pa), req.ia), per_task(translation_extent(req.pb), req.ib)


def task_shifts(
    req: Any, scale_a: float, scale_b: float, extents: tuple[np.ndarray, np.ndarray] | None = None
) -> np.ndarray | None:
    """Per-task prescaling exponents (N,) int64 of a prepared batch; None when all are 0.

    A task's extent is max(scale_a + scale_b, |translation a|, |translation b|), as the
    per-call kernels measure it (``kernels/core/scaling.in_band``). ``extents``:
    ``task_extents(req)`` where the caller has it already.
    """
    if req.n == 0:
        return None
    base = scale_a + scale_b
    ea, eb = task_extents(req) if extents is None else extents
    # PERF: one vectorised check of the whole batch; the common case ends here
    hi = max(base, float(ea.max()), float(eb.max()))
    if hi <= BAND_HI and (base >= BAND_LO or hi == 0.0):
        return None
    return extent_shifts(np.broadcast_to(np.maximum(np.maximum(ea, eb), base), (req.n,)))


def per_task(per_pose: np.ndarray, index: np.ndarray) -> np.ndarray:
    """A per-pose column ``per_pose[index]`` over a request's tasks: (n,), or (1,) where
    that side has one pose (it broadcasts against the other side's (n,)). Not a copy.

    PERF: no gather where broadcasting made the index trivial (``broadcast_poses``,
    ``sub_request``): one pose on that side, or one pose per task (index 0..n-1).
    """
    if per_pose.shape[0] == 1 or per_pose.shape[0] == index.shape[0]:
        return per_pose  # the index is 0..n-1 (Request's invariant)
    return per_pose[index]


def groups(shifts: np.ndarray | None, n: int) -> list[tuple[int, np.ndarray | None]]:
    """[(m, task indices)] of a batch; [(0, None)] (every task, unscaled) when shifts is None."""
    if shifts is None:
        return [(0, None)]
    return [(int(m), np.flatnonzero(shifts == m)) for m in np.unique(shifts)]


def sub_request(req: Any, tasks: np.ndarray | None, m: int) -> Any:
    """The request restricted to ``tasks`` with poses prescaled by 2**-m (a copy)."""
    if tasks is None and m == 0:
        return req
    if tasks is None:
        tasks = np.arange(req.n)
    k = tasks.shape[0]
    pa = scaled_poses(req.pa[req.ia[tasks]], m)
    pb = scaled_poses(req.pb[req.ib[tasks]], m)
    idx = np.arange(k, dtype=np.int64)
    return req._replace(pa=pa, pb=pb, ia=idx, ib=idx.copy(), n=k)


def prescale_pair(
    query: str, a: Mesh, ta: BVH, b: Mesh, tb: BVH, *poses: np.ndarray
) -> tuple[int, BVHArrays, BVHArrays, list[np.ndarray]]:
    """(m, a's arrays, b's arrays, poses), every length times 2**-m, for one pose pair.

    m brings the pair's extent (the trees' largest coordinates summed, or the largest translation
    of any of ``poses``, each (4, 4) or (N, 4, 4)) into [0.5, 1); m = 0 (nothing
    copied) inside the band. Raises ``ValueError`` (``check_range``) when the
    pair's dynamic range is too wide to prescale exactly.
    """
    sa, sb = float(ta.arrays.scale[0]), float(tb.arrays.scale[0])
    extent = max([sa + sb] + [float(translation_extent(p).max()) for p in poses])
    m = shift_for(extent)
    if m == 0:
        return 0, ta.arrays, tb.arrays, list(poses)
    check_range(query, (sa, sb), m)
    return m, scaled_tree(a, ta, m), scaled_tree(b, tb, m), [scaled_poses(p, m) for p in poses]


def squared(x: float) -> float:
    """x * x for a length bound, never rounded down to 0 for x > 0 (nor up past inf)."""
    y = x * x
    return y if y > 0.0 or x == 0.0 else 5e-324


def unscale_distance_rows(out: np.ndarray, m: int) -> None:
    """Undo a 2**-m prescaling on distance rows (``query.distance.mesh_distance_rows``), in place:
    distance and points (columns 0-6) times 2**m, the squared lower bound (11) times 4**m."""
    if m:
        out[:, 0:7] = np.ldexp(out[:, 0:7], m)
        with np.errstate(over="ignore", under="ignore"):  # a square: inf (or 0) beyond the range is right
            out[:, 11] = np.ldexp(out[:, 11], 2 * m)


__all__ = [
    "check_range",
    "exponent_of",
    "extent_shifts",
    "mesh_scale",
    "prescale_pair",
    "squared",
    "unscale_distance_rows",
    "groups",
    "scaled_poses",
    "scaled_tree",
    "shift_for",
    "sub_request",
    "per_task",
    "task_extents",
    "task_shifts",
    "translation_extent",
]
