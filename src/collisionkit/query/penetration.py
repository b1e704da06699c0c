"""Penetration depth: ``collisionkit.penetration``.

The minimal translation that separates two overlapping solids (seed 001:
"minimale Verschiebung"). Conventions: world frame; ``direction`` is a unit
vector from a towards b; moving b by ``depth * direction`` (or a by its
opposite) leaves them touching; ``depth`` >= 0, 0 when they do not overlap.

Three methods, chosen per pair (``method="auto"``: convex when both meshes
pass the hull check, else bounds when both are closed, else sampled):

* **convex** (``exact=True``): both meshes pass the hull check (closed, and
  their volume equals their convex hull's to 1e-9 relative), or the caller
  asks for ``method="convex"`` (then the convex HULLS are used, whatever the
  meshes). The depth is the exact minimum of the Minkowski difference's
  support function f(n) = h_a(n) + h_b(-n) over its facet normals (the
  value EPA converges to, computed directly): face normals of both hulls and
  the edge-edge axes whose Gauss arcs cross. ``kernels.proximity.penetration.depth_pruned``
  evaluates the same minimum without visiting every candidate: an edge pair
  whose arcs clearly cross costs O(1) (f = n.(p_a - p_b), the two edges being
  the supports), and candidates are skipped (singly, or whole Gauss-map
  buckets) when a lower bound of f (from a point and inner radius of each
  hull, ``pack_hull``) exceeds the best f found so far plus a slack far above
  rounding; a skipped axis cannot hold the minimum, so the answer is the
  brute-force one (``kernels.proximity.penetration.convex_depth``, kept as the tests'
  oracle). Error: float64 rounding only; ``error_bound`` = ``ERROR_RTOL``
  (1e-12) times the hulls' largest coordinates plus the poses' largest
  translation. Cost per pose: one pass over bucket bounds, then only the
  features near the optimum (a 360-triangle sphere pair visits ~10 axes).
  One pose pair each: a per-call path (packed hulls cached on the mesh, one
  kernel call); batches: one kernel over all poses (threads from 32 poses).
* **sampled** (``exact=False``), for meshes the bounds method refuses (open
  ones) or by name: for each candidate direction u (a Fibonacci sphere of
  ``directions`` points, plus the normals of the faces in contact, a's outward
  and b's inward), the length s(u) of b's translation along u is bracketed
  between 0 (b at its pose overlaps a) and a length past both meshes' supports
  along u, scanned coarsely and bisected to 2**-24 relative, all directions at
  once as one batched ``intersects`` per step: the bounds method's upper-bound
  search (``query.penetration_bounds.separating_search``), from 0 and without
  its cone rounds. A length counts as separating only when the surfaces do not
  meet (exact) and, for two closed meshes, no connected piece of either mesh
  lies inside the other (ray parity, exact). An open mesh encloses no volume:
  then the surfaces alone decide, and only surfaces that cross overlap (a mesh
  inside an open one without touching it has depth 0). The depth is min s(u)
  over the candidates: an UPPER BOUND of the true minimal translation (the
  reported translation really separates the meshes), but a better direction
  may exist between the samples. No guaranteed
  bound on that gap exists (s(u) is not continuous in u for non-convex shapes);
  ``error_bound`` is therefore ``inf``. Measured on convex pairs
  (tests/test_penetration.py) the sampled depth is within a few percent of the
  exact one with the default 64 directions, and exact when the optimum is a face
  normal in contact. Until issue 32 each direction ran conservative advancement
  (time of impact) from outside to first contact; the search gives the same
  depths on the tests' tori to 6 digits, 3-4x faster, and compiles no
  time-of-impact or distance kernels.

* **bounds** (``exact=False``), for closed non-convex meshes: a certified
  bracket ``depth_lower <= true depth <= depth_upper`` (0.5 s on 15k + 58k
  triangle gears on a busy 2-core VM, docs/penetration.md; the method is in
  ``query.penetration_bounds``;
  ``depth`` is ``depth_upper``, a translation ``intersects`` confirms).

Convex shapes are answered by the handlers the convex-shape module registers in
``query.registry``; other shape kinds: ``UnsupportedPairError``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from ..constants import MODE_ALL
from ..errors import InvalidMeshError
from ..geometry.mesh import Mesh
from ..geometry.pose import PoseLike
from ..kernels.core.scaling import OUT_OF_BAND
from ..kernels.proximity import penetration as kp
from ..kernels.proximity.penetration import convex_depth
from . import batch, registry, scaling
from .classify import CONTAINED, PENETRATING, overlap_codes
from .driver import ask, prepare, raise_pose_code, single_pose
from .pair import contact_rows
from .penetration_bounds import fibonacci_sphere, penetration_bounds, separating_search, usable
from .pose_form import record
from .registry import Request
from .results import Penetration
from .shapes import Shape
from .spec import THREADS, Option, Spec, a_bool, define, one_of, positive_int

METHODS = ("auto", "convex", "bounds", "sampled")
PENETRATION = define(Spec(
    "penetration",
    {
        "method": Option("auto", one_of("method", METHODS), "auto (exact for two convex meshes, else bounds for two closed ones, else sampled), convex (exact depth of the convex hulls), bounds or sampled", cli=True,
                         text=str, choices=METHODS),
        "directions": Option(64, positive_int("directions"), "sphere directions of bounds and sampled"),
        "refine": Option(False, a_bool("refine"), "bounds: a tighter upper bound, slower"),
        "threads": THREADS,
    },
    result=Penetration, cli="penetration",
))  # fmt: skip

#: Relative volume gap under which a closed mesh counts as convex.
CONVEX_VOLUME_RTOL = 1e-9
#: ``error_bound`` of the convex method, relative to the hulls' and poses' coordinates.
ERROR_RTOL = 1e-12
#: Relative width to which the sampled method bisects each direction's separating length
#: (about the 1e-7 of the radii to which its earlier conservative advancement stopped).
SAMPLED_RTOL = 2.0**-24


class _Hull:
    # volume: of the hull scaled by 2**-exponent (the mesh's, ``scaling.exponent_of``)
    __slots__ = ("vertices", "normals", "edges", "edge_points", "volume", "exponent")

    def __init__(self, vertices, normals, edges, edge_points, volume, exponent):
        self.vertices, self.normals, self.edges, self.volume = vertices, normals, edges, volume
        self.edge_points, self.exponent = edge_points, exponent


def hull(mesh: Mesh) -> _Hull:
    """The convex hull of the mesh's vertices: vertices, unit face normals, and
    true edges (direction, adjacent normals), cached per geometry."""

    def build() -> _Hull:
        from scipy.spatial import ConvexHull

        # NOTE: the hull of the points scaled by a power of two (exact) so that their
        # largest lies in [0.5, 1): qhull squares coordinates; lengths are scaled back below.
        ex = scaling.exponent_of(scaling.mesh_scale(mesh))
        pts = np.unique(np.ldexp(np.asarray(mesh.triangles).reshape(-1, 3), -ex), axis=0)
        h = ConvexHull(pts)
        normals = np.ascontiguousarray(h.equations[:, :3])
        normals = np.unique(np.round(normals, 12), axis=0)
        normals /= np.linalg.norm(normals, axis=1, keepdims=True)
        edges: dict[tuple[int, ...], list[int]] = {}
        for f, simplex in enumerate(h.simplices):
            for i in range(3):
                e = tuple(sorted((int(simplex[i]), int(simplex[(i + 1) % 3]))))
                edges.setdefault(e, []).append(f)
        rows, points = [], []
        for (i, j), faces in edges.items():
            if len(faces) != 2:
                continue
            n1, n2 = h.equations[faces[0], :3], h.equations[faces[1], :3]
            if float(n1 @ n2) > 1 - 1e-12:
                continue  # flat edge between coplanar hull triangles: not an edge of the polytope
            d = h.points[j] - h.points[i]
            rows.append([d / np.linalg.norm(d), n1, n2])
            points.append(h.points[i])
        edges_arr = np.ascontiguousarray(np.array(rows, dtype=np.float64).reshape(-1, 3, 3))
        points_arr = np.ascontiguousarray(np.ldexp(np.array(points, dtype=np.float64).reshape(-1, 3), ex))
        verts = np.ascontiguousarray(np.ldexp(h.points[h.vertices], ex))
        return _Hull(verts, normals, edges_arr, points_arr, float(h.volume), ex)

    return mesh.cached(("convex-hull",), build)


def pack_hull(h: _Hull) -> np.ndarray:
    """The hull as one float64 array for ``kernels.proximity.penetration.depth_pruned`` (layout there).

    The inner point is the mean of the hull's vertices (strictly inside a 3-D
    hull); the inner radius its smallest distance to a face plane, shrunk by a
    relative 1e-12 so that rounding keeps it a lower bound. Features go to the
    nearest of up to 64 Fibonacci directions (one bucket for small hulls); a
    bucket's cone half-angle is widened by 1e-6 rad against rounding, and is
    taken as pi once it reaches pi / 2 (a cap is convex only below that).
    """
    V, N, E, P = h.vertices, h.normals, h.edges, h.edge_points
    D = (V @ N.T).max(axis=0)
    c = V.mean(axis=0)
    size = float(np.abs(V).max())
    r = max(float((D - N @ c).min()) - 1e-12 * size, 0.0)
    half = np.linalg.norm(E[:, 1] + E[:, 2], axis=1) / 2.0  # cos of half the arc angle
    inv_half = 1.0 / half
    g_face = D - N @ c
    w = P - c
    m = np.minimum(np.einsum("ij,ij->i", E[:, 1], w), np.einsum("ij,ij->i", E[:, 2], w))
    g_edge = np.where(m < 0, m * inv_half, m)
    nfeat = len(N) + len(E)
    nk = 1 if nfeat <= 64 else min(64, nfeat // 12)
    axes = fibonacci_sphere(nk) if nk > 1 else np.array([[0.0, 0.0, 1.0]])
    mid = (E[:, 1] + E[:, 2]) / (2.0 * half[:, None])
    fb = np.argmax(N @ axes.T, axis=1)
    eb = np.argmax(mid @ axes.T, axis=1) if len(E) else np.zeros(0, np.int64)
    fo, eo = np.argsort(fb, kind="stable"), np.argsort(eb, kind="stable")
    N, D, g_face, fb = N[fo], D[fo], g_face[fo], fb[fo]
    E, P, inv_half, g_edge, eb = E[eo], P[eo], inv_half[eo], g_edge[eo], eb[eo]
    buckets = np.zeros((nk, kp.BUCKET_ROW))
    f_at = np.searchsorted(fb, np.arange(nk + 1))
    e_at = np.searchsorted(eb, np.arange(nk + 1))
    for q in range(nk):
        f0, f1, e0, e1 = f_at[q], f_at[q + 1], e_at[q], e_at[q + 1]
        normals = np.concatenate([N[f0:f1], E[e0:e1, 1], E[e0:e1, 2]])
        g = np.concatenate([g_face[f0:f1], g_edge[e0:e1]])
        if len(g) == 0:
            buckets[q] = [*axes[q], 1.0, 0.0, 1e300, f0, f1, e0, e1]
            continue
        theta = float(np.arccos(np.clip(normals @ axes[q], -1.0, 1.0)).max()) + 1e-6
        if nk == 1 or theta >= math.pi / 2:
            theta = math.pi
        buckets[q] = [*axes[q], math.cos(theta), math.sin(theta), float(g.min()), f0, f1, e0, e1]
    rows = np.concatenate([E.reshape(-1, 9), P, inv_half[:, None]], axis=1)
    header = [len(V), len(N), len(E), nk, c[0], c[1], c[2], r, size, 0.0]
    parts = [np.array(header, dtype=np.float64), V.ravel(), N.ravel(), D, rows.ravel(), buckets.ravel()]
    return np.ascontiguousarray(np.concatenate(parts))


def is_convex(mesh: Mesh) -> bool:
    """Hull check: closed (every edge shared by exactly two faces, vertices merged
    by coordinates) and volume equal to the convex hull's within 1e-9 relative."""

    def build() -> bool:
        tris = np.asarray(mesh.triangles)
        _, inv = np.unique(tris.reshape(-1, 3), axis=0, return_inverse=True)
        f = inv.reshape(-1, 3)
        e = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
        _, counts = np.unique(e, axis=0, return_counts=True)
        if not np.all(counts == 2):
            return False
        try:
            h = hull(mesh)
        except Exception:  # noqa: BLE001 - qhull refuses flat input: not a convex solid
            return False
        hv, tris = h.volume, np.ldexp(tris, -h.exponent)  # both at the hull's scale (no overflow)
        vol = float(np.einsum("ij,ij->i", tris[:, 0], np.cross(tris[:, 1], tris[:, 2])).sum() / 6.0)
        return hv > 0 and abs(vol - hv) <= CONVEX_VOLUME_RTOL * hv

    return mesh.cached(("is-convex",), build)


_PACKED = ("penetration-packed-hull",)
_METHOD = ("none", "convex")
_METHODS = np.array(_METHOD)  # indexed by hit (batch form)
_new = object.__new__
_empty = np.empty


def _packed(mesh: Mesh) -> tuple[bool, np.ndarray | None]:
    """(hull check passed, packed hull or None when there is no 3-D hull), cached per geometry."""

    def build() -> tuple[bool, np.ndarray | None]:
        try:
            h = hull(mesh)
        except Exception:  # noqa: BLE001 - qhull: flat or too few points
            return False, None
        return is_convex(mesh), pack_hull(h)

    return mesh.cached(_PACKED, build)


def _checked_hull(mesh: Mesh, name: str) -> _Hull:
    try:
        return hull(mesh)
    except Exception as exc:  # noqa: BLE001 - qhull: flat or too few points
        raise InvalidMeshError(f"{name} has no 3-D convex hull ({type(exc).__name__})") from None


def _convex_one(a: Mesh, b: Mesh, Ta: np.ndarray, Tb: np.ndarray) -> tuple[float, np.ndarray, int]:
    ha, hb = _checked_hull(a, "a"), _checked_hull(b, "b")
    Rrel = Ta[:3, :3].T @ Tb[:3, :3]
    trel = Ta[:3, :3].T @ (Tb[:3, 3] - Ta[:3, 3])
    VB = np.ascontiguousarray(hb.vertices @ Rrel.T + trel)
    NB = np.ascontiguousarray(hb.normals @ Rrel.T)
    EB = np.ascontiguousarray(hb.edges @ Rrel.T)
    out = np.empty(5)
    convex_depth(ha.vertices, VB, ha.normals, NB, ha.edges, EB, out)
    return float(out[0]), Ta[:3, :3] @ out[1:4], int(out[4])


def _face_normals(mesh: Mesh, faces: np.ndarray, T: np.ndarray) -> np.ndarray:
    """(K, 3) world unit normals (right-hand rule) of the distinct ``faces``, zero-area ones left out.

    The triangles are scaled by a power of two first (exact), so that the cross
    products neither overflow nor underflow at any scale.
    """
    t = np.ldexp(np.asarray(mesh.triangles[np.unique(faces)]), -scaling.exponent_of(scaling.mesh_scale(mesh)))
    t = t @ T[:3, :3].T
    n = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
    n = n[np.linalg.norm(n, axis=1) > 0]
    return n / np.linalg.norm(n, axis=1, keepdims=True)


def _sampled_one(a: Mesh, b: Mesh, Ta, Tb, directions: int, threads: int, solids: bool) -> tuple[float, np.ndarray]:
    """(depth, unit direction) of the sampled method: the smallest translation found to
    separate along the sampled directions (module notes); ``solids``: containment counts
    (both meshes closed), else the surfaces alone."""
    U = [fibonacci_sphere(directions)]
    c = contact_rows(prepare(a, b, Ta, Tb, MODE_ALL, 4096, "descent", None, "contacts"), "all", 4096)
    if len(c):
        na = _face_normals(a, c.face_a, Ta)
        na = na[np.unique(na.round(9), axis=0, return_index=True)[1]]
        nb = -_face_normals(b, c.face_b, Tb)
        rng = np.random.default_rng(0)
        for extra in (na, nb):
            if len(extra) > directions:
                extra = extra[rng.choice(len(extra), directions, replace=False)]
            U.append(extra)
    dirs = np.concatenate(U)
    dirs = dirs[np.sort(np.unique(dirs.round(12), axis=0, return_index=True)[1])]
    Ta = np.ascontiguousarray(Ta, dtype=np.float64)
    Tb = np.ascontiguousarray(Tb, dtype=np.float64)
    # the bounds method's search from length 0 (b at its pose overlaps a), no cone rounds
    best, u, _ = separating_search(a, b, Ta, Tb, dirs, 0.0, SAMPLED_RTOL, math.inf, threads, solids)
    return best, u


def _convex_rows(HA: np.ndarray, HB: np.ndarray, req: Any, out: np.ndarray) -> None:
    """Rows (depth, direction (3), axes evaluated) of the convex method over the request's tasks."""
    if req.n:
        # wave one never set the count (threads= was ignored); the convex method's tasks cost
        # alike (a few hull axes each), so one chunk per thread
        p = batch.plan(req.n, req.threads, uniform=True)
        batch.launch(p, kp.penetration_serial, kp.penetration_parallel, HA, HB, req.pa, req.pb, req.ia, req.ib, out)


def _scaled_packed(H: np.ndarray, m: int) -> np.ndarray:
    """A packed hull (``pack_hull``) with every length times 2**-m (exact); H itself for m = 0.

    Lengths: the inner point, inner radius and size (header 4-8), the vertices,
    the face offsets D, the edge points (edge row columns 9-11) and each bucket's g
    (column 5); normals, edge directions, cosines and counts are scale-free.
    """
    if m == 0:
        return H
    nv, nf, ne, nk = (int(H[i]) for i in range(4))
    on = kp.HULL_HEADER + 3 * nv
    od = on + 3 * nf
    oe = od + nf
    ok = oe + kp.EDGE_ROW * ne
    mask = np.zeros(H.shape[0], bool)
    mask[4:9] = True
    mask[kp.HULL_HEADER : on] = True
    mask[od:oe] = True
    mask[oe:ok].reshape(ne, kp.EDGE_ROW)[:, 9:12] = True
    mask[ok : ok + kp.BUCKET_ROW * nk].reshape(nk, kp.BUCKET_ROW)[:, 5] = True
    out = H.copy()
    out[mask] = np.ldexp(H[mask], -m)
    return out


def _one_prescaled(HA: np.ndarray, HB: np.ndarray, Ta: np.ndarray, Tb: np.ndarray, u: np.ndarray):
    """``kp.penetration_one`` on a pair outside the band: lengths times 2**-m, then back."""
    m = scaling.shift_for(
        max(HA[8] + HB[8], float(scaling.translation_extent(Ta)), float(scaling.translation_extent(Tb)))
    )
    scaling.check_range("penetration", (HA[8], HB[8]), m)
    Ta2, Tb2 = scaling.scaled_poses(Ta, m), scaling.scaled_poses(Tb, m)
    code, d, e = kp.penetration_one(_scaled_packed(HA, m), _scaled_packed(HB, m), Ta2, Tb2, u, ERROR_RTOL)
    return code, math.ldexp(d, m), math.ldexp(e, m)


def penetration(
    a: Shape,
    b: Shape,
    pose_a: PoseLike = None,
    pose_b: PoseLike = None,
    *,
    method: Literal["auto", "convex", "bounds", "sampled"] = "auto",
    directions: int = 64,
    refine: bool = False,
    threads: int | None = None,
) -> Penetration:
    """Minimal translation separating ``a`` and ``b`` (module notes for methods and bounds).

    Parameters
    ----------
    a, b : Mesh or convex shape
    pose_a, pose_b : array_like (4, 4) or (N, 4, 4), optional
    method : {"auto", "convex", "bounds", "sampled"}
        "auto": exact for two convex meshes (hull check), else "bounds" for
        two closed meshes, else "sampled"; "convex": exact depth of the two
        convex HULLS; "bounds": a certified bracket ``depth_lower <= true
        depth <= depth_upper`` (``query.penetration_bounds``; closed meshes
        only); "sampled": the older upper bound by conservative advancement.
    directions : int
        Sphere directions of the "bounds" and "sampled" methods.
    refine : bool
        "bounds" only: four times the directions, a local search around the
        best one and bisection to 2**-30 relative (slower, tighter upper
        bound; face centroids join the vertices for the lower bound).
    threads : int, optional
        Threads for a batch of the convex method, and for the "bounds" method's
        searches (default: all cores).

    Returns
    -------
    Penetration
        Per pose: Python scalars (``method`` a str) and a (3,) ``direction``
        for two (4, 4) poses, (N,) arrays and (N, 3) directions for a batch.

    Examples
    --------
    >>> import collisionkit as ck
    >>> box = ck.primitives.box_mesh([1, 1, 1])
    >>> p = ck.penetration(box, box, None, ck.translation([0.8, 0.1, 0.0]))
    >>> round(float(p.depth), 9), p.direction.round(9).tolist(), bool(p.exact)
    (0.2, [1.0, 0.0, 0.0], True)
    """
    # PERF: one pose each, convex meshes: cached packed hulls and one kernel call
    if type(a) is Mesh and type(b) is Mesh and type(directions) is int and directions >= 1 and threads is None:
        if method == "auto" or method == "convex":
            Ta = single_pose(pose_a)
            Tb = single_pose(pose_b)
            if Ta is not None and Tb is not None:
                ca, HA = a._geom._cache.get(_PACKED) or _packed(a)
                cb, HB = b._geom._cache.get(_PACKED) or _packed(b)
                if HA is not None and HB is not None and (method == "convex" or (ca and cb)):
                    u = _empty(3)
                    code, d, e = kp.penetration_one(HA, HB, Ta, Tb, u, ERROR_RTOL)
                    if code == OUT_OF_BAND:
                        code, d, e = _one_prescaled(HA, HB, Ta, Tb, u)
                    if code < 0:
                        raise_pose_code(code)
                    # the frozen dataclass's __init__ costs more than the kernel on small hulls:
                    # the single-pose form of pose_form.record, built by hand (tests/test_api_shapes.py)
                    u.flags.writeable = False
                    p = _new(Penetration)
                    p.__dict__.update(
                        depth=d, direction=u, exact=True, error_bound=e, method=_METHOD[d > 0.0], depth_lower=d, depth_upper=d
                    )
                    return p
    return ask(PENETRATION, a, b, pose_a, pose_b, method=method, directions=directions, refine=refine, threads=threads)


def _penetration_meshes(req: Request) -> Penetration:
    """The mesh-mesh handler: the convex method on convex pairs (or when asked), else the
    bounds of closed meshes, else sampled."""
    a, b, method, directions, refine = (req.a, req.b, *(req.options[k] for k in ("method", "directions", "refine")))
    use_convex = method == "convex" or (method == "auto" and is_convex(a) and is_convex(b))
    n = req.n
    if use_convex:
        _checked_hull(a, "a")
        _checked_hull(b, "b")
        HA, HB = _packed(a)[1], _packed(b)[1]
        if HA is None or HB is None:  # not reached: _checked_hull raised where qhull fails
            raise InvalidMeshError("a or b has no 3-D convex hull")
        out = np.empty((n, 5))
        # tasks outside the band of scales the kernel takes as given: prescaled (query/scaling.py)
        extents = scaling.task_extents(req)
        for m, tasks in scaling.groups(scaling.task_shifts(req, HA[8], HB[8], extents), n):
            if tasks is None:
                _convex_rows(HA, HB, req, out)
                continue
            scaling.check_range("penetration", (HA[8], HB[8]), m)
            sub = np.empty((tasks.shape[0], 5))
            _convex_rows(_scaled_packed(HA, m), _scaled_packed(HB, m), scaling.sub_request(req, tasks, m), sub)
            sub[:, 0] = np.ldexp(sub[:, 0], m)
            out[tasks] = sub
        hit = out[:, 0] > 0
        depth = np.where(hit, out[:, 0], 0.0)
        direction = np.where(hit[:, None], out[:, 1:4], np.nan)
        exact = np.ones(n, bool)
        err = ERROR_RTOL * (HA[8] + HB[8] + (extents[0] + extents[1]))
        methods = _METHODS[hit.view(np.int8)]
        return record(
            Penetration, req.batched, depth=depth, direction=direction, exact=exact, error_bound=err, method=methods
        )
    if method in ("auto", "bounds"):
        # closed meshes: the certified bracket; "auto" keeps the sampled method for open ones
        if method == "bounds" or usable(a, b):
            return penetration_bounds(a, b, req, int(directions), bool(refine))
    depth = np.zeros(n)
    direction = np.full((n, 3), np.nan)
    exact = np.zeros(n, bool)
    err = np.full(n, np.inf)
    methods = np.full(n, "none", dtype=object)
    codes = np.atleast_1d(overlap_codes(a, b, req.pa[req.ia], req.pb[req.ib], 1))
    # an open mesh encloses no volume: only surfaces that cross overlap (no containment)
    solids = usable(a, b)
    overlapping = (PENETRATING, CONTAINED) if solids else (PENETRATING,)
    for k in range(n):
        if codes[k] not in overlapping:
            exact[k], err[k] = True, 0.0
            continue
        Ta, Tb = req.pa[req.ia[k]], req.pb[req.ib[k]]
        d, u = _sampled_one(a, b, Ta, Tb, int(directions), req.threads, solids)
        depth[k], direction[k], methods[k] = d, u, "sampled"
    return record(
        Penetration, req.batched, depth=depth, direction=direction, exact=exact, error_bound=err,
        method=methods.astype(str),
    )  # fmt: skip


def penetration_rows(req: Request) -> Penetration:
    """``penetration`` over a prepared request on two meshes (the convex shapes' handler
    passes their surfaces), in the request's form: the mesh-mesh handler."""
    return _penetration_meshes(req)


registry.register("penetration", Mesh, Mesh, _penetration_meshes, honours=PENETRATION.options)

__all__ = ["PENETRATION", "hull", "is_convex", "penetration", "penetration_rows"]
