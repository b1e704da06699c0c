"""Clash classification: ``collisionkit.classify``.

Four classes per pose pair (codes 0..3, ``results.CLASS_NAMES``):

* ``disjoint``: the surfaces are farther apart than ``tolerance`` and neither
  mesh lies inside the other;
* ``touching``: no interior overlap, and the surfaces are within
  ``tolerance`` (tolerance 0: they share points but do not cross);
* ``penetrating``: the interiors overlap and the surfaces meet;
* ``contained``: the surfaces do not meet and one mesh lies entirely inside
  the other (which surface-only tests report as "no collision").

How each is decided (meshes are assumed closed and consistently oriented,
as solids are; for open meshes the words describe the surfaces only):

1. ``distance`` (exactly zero where the surfaces intersect, the same exact
   triangle test as ``intersects``; surfaces that share no point but lie
   within float64 rounding of each other, ~1e-16 of their size, can get a
   distance of 0.0 too, and are then touching).
2. Surfaces apart: every connected piece of a lies wholly inside or wholly
   outside b, so one vertex per piece decides; its winding number in b
   (``kernels.triangle.point_in_mesh``) is compared with 0.5 -- safe, the point is at
   least the (positive) distance away from b's surface. Likewise b in a.
   Contained wins over touching.
3. Surfaces meet: penetrating when some intersecting triangle pair crosses
   transversally -- an edge of one pierces the open interior of the other,
   decided with exact orientation predicates; near such a point one
   surface passes to both sides of the other, so the interiors overlap.
   Degenerate overlaps that never pierce an open face (e.g. two equal cubes
   shifted along one axis, where all contacts are coplanar or edge-on-edge)
   fall back to witness points: the centroids of the triangles in contact,
   each pushed 1e-6 of its longest edge into its own mesh (vertices are
   not used: they often lie on the other surface); any of them with winding number > 0.5 in the other mesh means
   overlap. NOTE: this fallback is a heuristic, not exact: an overlap
   thinner than the push, or a pushed point landing exactly on the other
   surface, can be misjudged; we know of no cheap exact test for these
   degenerate configurations.

``tolerance`` only separates disjoint from touching (an absolute length in
the world's units); it does not forgive penetration.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..constants import MODE_ANY
from ..geometry.mesh import Mesh
from ..geometry.pose import PoseLike
from ..kernels.triangle.point_in_mesh import winding_numbers_posed
from ..kernels.triangle.tri_segment import strict_piercings
from . import scaling
from .contact_geometry import writable_triangles
from .containment import piece_points
from .distance import mesh_distance_rows
from .driver import ask, prepare
from .pair import contact_rows, hits
from .pose_form import record
from .registry import Request
from .results import Classification
from .shapes import Shape, register_mesh_query
from .spec import THREADS, Option, Spec, define, length_text, nonnegative_length

CLASSIFY = define(Spec(
    "classify",
    {
        "tolerance": Option(0.0, nonnegative_length("tolerance"),
                            "surfaces closer than this (and not overlapping) are 'touching' (default 0)",
                            cli=True, text=length_text),
        "threads": THREADS,
    },
    result=Classification, cli="classify",
))  # fmt: skip

DISJOINT, TOUCHING, PENETRATING, CONTAINED = 0, 1, 2, 3


#: Winding number above which a witness point counts as inside the other mesh.
WITNESS_INSIDE = 0.5
#: Witness points are contact-triangle centroids pushed this fraction of the
#: triangle's longest edge into their own mesh (against its outward normal).
WITNESS_PUSH = 1e-6


def _pushed_centroids(mesh: Mesh, faces: np.ndarray) -> np.ndarray:
    """Centroids of ``faces`` moved slightly inside their own (outward-oriented) mesh.

    Computed on the triangles scaled by a power of two (exact, undone at the
    end): the cross products and norms would overflow or underflow otherwise.
    """
    e = scaling.exponent_of(scaling.mesh_scale(mesh))
    t = np.ldexp(np.asarray(mesh.triangles[faces]), -e)
    n = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
    norm = np.linalg.norm(n, axis=1, keepdims=True)
    edge = np.max(np.linalg.norm(t - np.roll(t, 1, axis=1), axis=2), axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        step = np.where(norm > 0, WITNESS_PUSH * edge * n / norm, 0.0)
    return np.ascontiguousarray(np.ldexp(t.mean(axis=1) - step, e))


def _winding(mesh: Mesh, pose_mesh, pose_pts, pts, im, ip) -> np.ndarray:
    """Winding numbers of ``mesh`` around ``pts`` per query (``winding_numbers_posed``).

    Its solid angles multiply three lengths: queries outside the band of
    scales are run with every length prescaled by a power of two (exact; the
    winding number is scale-free).
    """
    out = np.empty((im.shape[0], pts.shape[0]))
    if not out.size:
        return out
    size = scaling.mesh_scale(mesh) + (float(np.abs(pts).max()) if pts.size else 0.0)
    extent = np.maximum(scaling.translation_extent(pose_mesh)[im], scaling.translation_extent(pose_pts)[ip])
    shifts = scaling.extent_shifts(np.maximum(extent, size))
    tris = writable_triangles(mesh)
    for m, q in scaling.groups(shifts, out.shape[0]):
        if q is None:  # (0, None): every task, unscaled
            winding_numbers_posed(tris, pose_mesh, pose_pts, pts, im, ip, out)
            continue
        scaling.check_range("classify", (scaling.mesh_scale(mesh),), m)
        k = np.arange(q.shape[0], dtype=np.int64)
        sub = np.empty((q.shape[0], pts.shape[0]))
        winding_numbers_posed(
            np.ldexp(tris, -m), scaling.scaled_poses(pose_mesh[im[q]], m),
            scaling.scaled_poses(pose_pts[ip[q]], m), np.ldexp(pts, -m), k, k.copy(), sub,
        )  # fmt: skip
        out[q] = sub
    return out


def classify(
    a: Shape,
    b: Shape,
    pose_a: PoseLike = None,
    pose_b: PoseLike = None,
    *,
    tolerance: float = 0.0,
    threads: int | None = None,
) -> Classification:
    """Classify each pose pair as disjoint, touching, penetrating or contained.

    Parameters
    ----------
    a, b : Mesh or convex shape
        Closed meshes (see the module notes for open ones); a convex shape is
        classified by its surface ``.mesh`` (``query/shapes.py``; a smooth primitive
        against another convex shape raises ``UnsupportedQueryError``).
    pose_a, pose_b : array_like (4, 4) or (N, 4, 4), optional
    tolerance : float
        Contact distance, an absolute length in the shapes' own units (the
        one meaning of ``tolerance`` in collisionkit, README "Tolerance"):
        surfaces at most this far apart, and not overlapping, are "touching";
        >= 0, default 0 (touching = sharing points). It does not scale with
        the shapes and does not forgive penetration.
    threads : int, optional
        Threads for a batch (default: all cores).

    Returns
    -------
    Classification
        ``codes`` into ``names``, ``labels``, the ``distance`` of each pose
        pair, and which mesh is inside the other (``a_inside_b``,
        ``b_inside_a``; only when the surfaces are apart): an int, a str, a
        float and bools for two (4, 4) poses, (N,) arrays for a batch.

    Examples
    --------
    >>> import collisionkit as ck
    >>> big, small = ck.primitives.box_mesh([4, 4, 4]), ck.primitives.box_mesh([1, 1, 1])
    >>> ck.classify(big, small).labels
    'contained'
    >>> ck.classify(small, small, None, ck.translation([1.25, 0, 0]), tolerance=0.5).labels
    'touching'
    """
    # convex shapes: their surface (query/shapes.py)
    return ask(CLASSIFY, a, b, pose_a, pose_b, tolerance=tolerance, threads=threads)


def overlap_codes(a: Mesh, b: Mesh, pose_a: Any, pose_b: Any, threads: int | None) -> np.ndarray | int:
    """The codes of ``classify`` at tolerance 0, without the distances: (N,) int8, or an
    int for two (4, 4) poses. The row function other questions share (penetration's
    overlap test).

    At tolerance 0 the distance only tells whether the surfaces meet, which
    ``intersects`` decides with the same exact triangle test. So this runs
    ``intersects`` and the containment and piercing tests, not ``distance``. PERF
    (issue 32): penetration then compiles no distance kernels. The one difference:
    surfaces that share no point but whose float distance rounds to 0.0 (module
    notes, 1.) are touching to ``classify``; here they are disjoint, as the exact test
    says, or contained when one mesh lies inside the other (tests/test_classify.py).
    """
    options = CLASSIFY.validate({"threads": threads})
    req = prepare(a, b, pose_a, pose_b, MODE_ANY, -1, "descent", threads, "classify", options)
    hit = hits(a, b, req.pa[req.ia], req.pb[req.ib], threads)
    codes = _codes(req, hit, None)[0]
    return codes if req.batched else int(codes[0])


def _classify_meshes(req: Request) -> Classification:
    """The mesh-mesh handler (convex shapes arrive as their surfaces)."""
    out, _ = mesh_distance_rows(req, math.inf)
    dist = np.ascontiguousarray(out[:, 0])
    codes, a_in_b, b_in_a = _codes(req, dist == 0.0, dist)
    return record(Classification, req.batched, codes=codes, distance=dist, a_inside_b=a_in_b, b_inside_a=b_in_a)


def _codes(req: Request, hit: np.ndarray, dist: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(codes, a inside b, b inside a) per task, given whether the surfaces meet (``hit``)
    and their distances (None: tolerance 0, where apart means disjoint)."""
    a, b, tol, n = req.a, req.b, req.options["tolerance"], req.n
    codes = np.zeros(n, np.int8)
    a_in_b = np.zeros(n, bool)
    b_in_a = np.zeros(n, bool)

    apart = np.flatnonzero(~hit)
    if apart.size:
        ia, ib = req.ia[apart], req.ib[apart]
        wa = _winding(b, req.pb, req.pa, piece_points(a), ib, ia)
        wb = _winding(a, req.pa, req.pb, piece_points(b), ia, ib)
        a_in_b[apart] = np.all(wa > 0.5, axis=1)
        b_in_a[apart] = np.all(wb > 0.5, axis=1)
        if dist is not None:
            codes[apart] = np.where(dist[apart] <= tol, TOUCHING, DISJOINT)
        codes[apart[a_in_b[apart] | b_in_a[apart]]] = CONTAINED

    met = np.flatnonzero(hit)
    if met.size:
        codes[met] = TOUCHING
        sub_a = req.pa[req.ia[met]]
        sub_b = req.pb[req.ib[met]]
        c = contact_rows(req._replace(ia=req.ia[met], ib=req.ib[met], n=met.size))
        ones = np.arange(met.size, dtype=np.int64)
        pierce = np.zeros(len(c), bool)
        if len(c):
            strict_piercings(
                writable_triangles(a), writable_triangles(b), sub_a, sub_b,
                np.ascontiguousarray(c.pose_index), ones, ones,
                np.ascontiguousarray(c.face_a), np.ascontiguousarray(c.face_b), pierce,
            )  # fmt: skip
        crossing = np.zeros(met.size, bool)
        crossing[c.pose_index[pierce]] = True
        codes[met[crossing]] = PENETRATING
        for k in np.flatnonzero(~crossing):
            rows = c.pose_index == k
            pts_a = _pushed_centroids(a, np.unique(c.face_a[rows]))
            pts_b = _pushed_centroids(b, np.unique(c.face_b[rows]))
            one = np.zeros(1, np.int64)
            wa = _winding(b, sub_b[k : k + 1].copy(), sub_a[k : k + 1].copy(), pts_a, one, one)
            wb = _winding(a, sub_a[k : k + 1].copy(), sub_b[k : k + 1].copy(), pts_b, one, one)
            if (wa > WITNESS_INSIDE).any() or (wb > WITNESS_INSIDE).any():
                codes[met[k]] = PENETRATING
    return codes, a_in_b, b_in_a


register_mesh_query("classify", _classify_meshes)

__all__ = ["CLASSIFY", "CONTAINED", "DISJOINT", "PENETRATING", "TOUCHING", "classify", "overlap_codes"]
