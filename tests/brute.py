"""Brute-force mesh-mesh oracle: every triangle pair, no hierarchy, none of the library's kernels.

The oracle owns its arithmetic (issue #20):

* **Mapping.** b's vertices are mapped into a's frame by :func:`map_points`, plain numpy
  written here from the contract in ARCHITECTURE.md ("Frames, poses and signs"):
  ``R = R_a^T R_b``, ``t = R_a^T (t_b - t_a)``, ``p -> R p + t``, each sum left to right,
  no fused multiply-add. Written to the contract, not copied from the kernels; a test
  (``tests/test_brute_oracle.py``) checks that the library's ``map_triangle`` gives the same
  bits, so the pair set below is what any correct traversal must return, bit for bit.
* **Deciding a pair.** :func:`_float_verdict` (numba, this file) proves a verdict in float64
  only when the rounding cannot change it:
  - *disjoint*: some axis (the two normals, the nine edge-edge cross products, the six
    in-plane edge normals, each as computed: any vector is a valid axis) separates the
    projections by more than a bound on their rounding (3-term dot products:
    ``|err| <= 4u sum|a_i||x_i|``, u = 2**-53, doubled);
  - *intersecting*: an edge of one triangle pierces the other's interior, shown by five
    orientation signs each certified by Shewchuk's static bound for orient3d
    (``(7u + 56u^2) * permanent``, doubled).
  Every other candidate (touching, coplanar, degenerate, within rounding of either) is
  decided by the exact rational test ``tests.oracles.tri_tri_rational`` (Fractions, an LP
  feasibility test written from scratch). So every verdict is exact, and the numba code
  only ever says "certain" or "ask the rationals".
* The per-triangle bounding-box rejection is exact (min/max of the very coordinates).

Also the suite's shared helpers (kept here, not in conftest, so that test modules import
them once under one name): session-cached real meshes, random scenes, exact
signed-permutation poses.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import njit
from tests.oracles import map_points  # noqa: F401 - re-exported: the oracle's own mapping

import collisionkit  # configures numba's cache folder before any kernel
import collisionkit.constants

_U = 2.0**-53
#: Shewchuk's o3derrboundA, doubled for margin (any larger bound is still a proof).
_O3D = 2.0 * (7.0 + 56.0 * _U) * _U
#: Outside [_TINY, _HUGE] a product sum may have underflowed or overflowed: the static
#: bounds prove nothing there, and the pair goes to the rationals (e.g. 1e150-scaled scenes).
_TINY = 1e-250
_HUGE = 1e250
_BIG_COORD = 1e60
#: bound on a 3-term float dot product relative to sum |a_i||x_i| (gamma_3 < 4u), doubled.
_DOT = 8.0 * _U


@njit(cache=True, nogil=True)
def _orient(a, b, c, d):
    """Certified sign of det[a - d, b - d, c - d] (Shewchuk's orient3d): +1, -1, or 0 = unsure."""
    adx = a[0] - d[0]
    bdx = b[0] - d[0]
    cdx = c[0] - d[0]
    ady = a[1] - d[1]
    bdy = b[1] - d[1]
    cdy = c[1] - d[1]
    adz = a[2] - d[2]
    bdz = b[2] - d[2]
    cdz = c[2] - d[2]
    bdxcdy = bdx * cdy
    cdxbdy = cdx * bdy
    cdxady = cdx * ady
    adxcdy = adx * cdy
    adxbdy = adx * bdy
    bdxady = bdx * ady
    det = adz * (bdxcdy - cdxbdy) + bdz * (cdxady - adxcdy) + cdz * (adxbdy - bdxady)
    perm = (
        (abs(bdxcdy) + abs(cdxbdy)) * abs(adz)
        + (abs(cdxady) + abs(adxcdy)) * abs(bdz)
        + (abs(adxbdy) + abs(bdxady)) * abs(cdz)
    )
    if not perm >= _TINY or not perm <= _HUGE:  # underflow or overflow: the bound is no proof
        return 0
    bound = _O3D * perm
    if det > bound:
        return 1
    if -det > bound:
        return -1
    return 0


@njit(cache=True, nogil=True)
def _pierces(u, v, P):
    """Certain that the segment uv crosses the interior of triangle P (proper crossing)."""
    su = _orient(P[0], P[1], P[2], u)
    sv = _orient(P[0], P[1], P[2], v)
    if su == 0 or sv == 0 or su == sv:
        return False
    o0 = _orient(u, v, P[0], P[1])
    o1 = _orient(u, v, P[1], P[2])
    o2 = _orient(u, v, P[2], P[0])
    return o0 != 0 and o0 == o1 and o1 == o2


@njit(cache=True, nogil=True)
def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True, nogil=True)
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True, nogil=True)
def _separates(ax, P, Q):
    """Certain that the axis ax (taken as exact) separates the triangles' projections."""
    if ax[0] == 0.0 and ax[1] == 0.0 and ax[2] == 0.0:
        return False
    lo_p = np.inf
    hi_p = -np.inf
    lo_q = np.inf
    hi_q = -np.inf
    err = 0.0
    for k in range(3):
        dp = ax[0] * P[k, 0] + ax[1] * P[k, 1] + ax[2] * P[k, 2]
        dq = ax[0] * Q[k, 0] + ax[1] * Q[k, 1] + ax[2] * Q[k, 2]
        ep = abs(ax[0] * P[k, 0]) + abs(ax[1] * P[k, 1]) + abs(ax[2] * P[k, 2])
        eq = abs(ax[0] * Q[k, 0]) + abs(ax[1] * Q[k, 1]) + abs(ax[2] * Q[k, 2])
        err = max(err, max(ep, eq))
        lo_p = min(lo_p, dp)
        hi_p = max(hi_p, dp)
        lo_q = min(lo_q, dq)
        hi_q = max(hi_q, dq)
    if not err >= _TINY or not err <= _HUGE:  # underflow or overflow: no proof
        return False
    margin = 2.0 * _DOT * err  # both sides' rounding, and the subtraction's
    return lo_q - hi_p > margin or lo_p - hi_q > margin


@njit(cache=True, nogil=True)
def _float_verdict(P, Q):
    """1: the closed triangles certainly meet; 0: certainly disjoint; -1: ask the rationals."""
    m = 0.0
    for k in range(3):
        for d in range(3):
            m = max(m, max(abs(P[k, d]), abs(Q[k, d])))
    if m > _BIG_COORD:  # products of four coordinates must stay finite
        return -1
    for i in range(3):
        if _pierces(Q[i], Q[(i + 1) % 3], P) or _pierces(P[i], P[(i + 1) % 3], Q):
            return 1
    e = (_sub(P[1], P[0]), _sub(P[2], P[1]), _sub(P[0], P[2]))
    f = (_sub(Q[1], Q[0]), _sub(Q[2], Q[1]), _sub(Q[0], Q[2]))
    nP = _cross(e[0], e[1])
    nQ = _cross(f[0], f[1])
    if _separates(nP, P, Q) or _separates(nQ, P, Q):
        return 0
    for i in range(3):
        for j in range(3):
            if _separates(_cross(e[i], f[j]), P, Q):
                return 0
    for i in range(3):
        if _separates(_cross(nP, e[i]), P, Q) or _separates(_cross(nQ, f[i]), P, Q):
            return 0
    return -1


@njit(cache=True, nogil=True)
def _boxes(tris, lo, hi):
    for i in range(tris.shape[0]):
        for d in range(3):
            lo[i, d] = min(tris[i, 0, d], min(tris[i, 1, d], tris[i, 2, d]))
            hi[i, d] = max(tris[i, 0, d], max(tris[i, 1, d], tris[i, 2, d]))


@njit(cache=True, nogil=True)
def _candidates(tris_a, mapped, first_only):
    """Rows (face_a, face_b, verdict) of every box-overlapping pair whose float verdict is
    1 (meets) or -1 (unsure), for ONE pose; with first_only, stops at the first certain hit."""
    fa = tris_a.shape[0]
    fb = mapped.shape[0]
    lo_a = np.empty((fa, 3))
    hi_a = np.empty((fa, 3))
    lo_b = np.empty((fb, 3))
    hi_b = np.empty((fb, 3))
    _boxes(tris_a, lo_a, hi_a)
    _boxes(mapped, lo_b, hi_b)
    cap = 1024
    out = np.empty((cap, 3), np.int64)
    k = 0
    for i in range(fa):
        for j in range(fb):
            if (
                hi_a[i, 0] < lo_b[j, 0]
                or lo_a[i, 0] > hi_b[j, 0]
                or hi_a[i, 1] < lo_b[j, 1]
                or lo_a[i, 1] > hi_b[j, 1]
                or hi_a[i, 2] < lo_b[j, 2]
                or lo_a[i, 2] > hi_b[j, 2]
            ):
                continue
            v = _float_verdict(tris_a[i], mapped[j])
            if v == 0:
                continue
            if k == cap:
                cap *= 2
                bigger = np.empty((cap, 3), np.int64)
                bigger[:k] = out[:k]
                out = bigger
            out[k, 0] = i
            out[k, 1] = j
            out[k, 2] = v
            k += 1
            if first_only and v == 1:
                return out[:k].copy()
    return out[:k].copy()


def _decide(tris_a, mapped, first_only: bool) -> np.ndarray:
    """(M, 2) intersecting (face_a, face_b) of ONE pose, sorted; unsure pairs decided exactly."""
    from tests.oracles import tri_tri_rational

    rows = _candidates(tris_a, mapped, first_only)
    if first_only and len(rows) and rows[-1, 2] == 1:
        return rows[-1:, :2].copy()
    keep = []
    for i, j, v in rows.tolist():
        if v == 1 or tri_tri_rational(tris_a[i].tolist(), mapped[j].tolist()):
            keep.append((i, j))
            if first_only:
                break
    return np.array(sorted(keep), dtype=np.int64).reshape(-1, 2)


def pose_stack(pose) -> np.ndarray:
    """(N, 4, 4) writable C-contiguous float64 copy of a pose argument (None = identity)."""
    if pose is None:
        return np.eye(4).reshape(1, 4, 4)
    arr = np.array(pose, dtype=np.float64, order="C", copy=True)
    return arr.reshape(1, 4, 4) if arr.ndim == 2 else arr


def broadcast(pose_a, pose_b) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pose stacks and, per query, the pose of a and of b (numpy broadcasting of the batch axis)."""
    pa, pb = pose_stack(pose_a), pose_stack(pose_b)
    n = max(pa.shape[0], pb.shape[0]) if min(pa.shape[0], pb.shape[0]) > 0 else 0
    ia = np.zeros(n, np.int64) if pa.shape[0] == 1 else np.arange(n, dtype=np.int64)
    ib = np.zeros(n, np.int64) if pb.shape[0] == 1 else np.arange(n, dtype=np.int64)
    return pa, pb, ia, ib


def _tris(mesh) -> np.ndarray:
    return np.array(mesh.triangles, dtype=np.float64, order="C", copy=True)


def _per_pose(a, b, pose_a, pose_b, first_only: bool) -> list[np.ndarray]:
    pa, pb, ia, ib = broadcast(pose_a, pose_b)
    tris_a, tris_b = _tris(a), _tris(b)
    # The answer is a function of the pose pair alone: decide each distinct pair once
    # (batches that repeat poses, e.g. the overflow tests' coplanar grids, where every
    # pair goes to exact rationals, would otherwise pay the oracle once per copy).
    done: dict[bytes, np.ndarray] = {}
    out = []
    for p in range(ia.shape[0]):
        Ta, Tb = pa[ia[p]], pb[ib[p]]
        key = Ta.tobytes() + Tb.tobytes()
        if key not in done:
            done[key] = _decide(tris_a, map_points(Ta, Tb, tris_b), first_only)
        out.append(done[key])
    return out


def brute_pairs(a, b, pose_a=None, pose_b=None) -> np.ndarray:
    """(M, 3) int64 rows (pose, face_a, face_b) of every intersecting triangle pair,
    sorted lexicographically; the poses broadcast like the library's."""
    rows = [
        np.column_stack([np.full(len(r), p, np.int64), r]) for p, r in enumerate(_per_pose(a, b, pose_a, pose_b, False))
    ]
    return np.concatenate(rows).astype(np.int64) if rows else np.zeros((0, 3), np.int64)


def brute_colliding(a, b, pose_a=None, pose_b=None) -> np.ndarray:
    """(N,) bool: does each query have at least one intersecting pair (stops at the first)."""
    return np.array([len(r) > 0 for r in _per_pose(a, b, pose_a, pose_b, True)], dtype=bool)


def mapped_triangles(b, pose_a, pose_b) -> np.ndarray:
    """(F_b, 3, 3) b's triangles in a's frame for ONE pose pair (:func:`map_points`: the
    library's documented arithmetic, computed here)."""
    Ta = np.eye(4) if pose_a is None else np.asarray(pose_a, dtype=np.float64)
    Tb = np.eye(4) if pose_b is None else np.asarray(pose_b, dtype=np.float64)
    return np.ascontiguousarray(map_points(Ta, Tb, _tris(b)))


def rows_of(contacts) -> np.ndarray:
    """(M, 3) int64 rows (pose, face_a, face_b) of a Contacts record."""
    return np.stack([contacts.pose_index, contacts.face_a, contacts.face_b], axis=1).astype(np.int64)


def counts_of(rows: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(rows[:, 0], minlength=n).astype(np.int64) if n else np.zeros(0, np.int64)


def referee(a, b, pose_a, pose_b, pairs) -> list[bool]:
    """Exact rational verdicts (``tests.oracles.tri_tri_rational``) for (face_a, face_b)
    pairs of ONE pose pair, on the float64 coordinates the library tests."""
    from tests.oracles import tri_tri_rational

    mapped = mapped_triangles(b, pose_a, pose_b)
    tris_a = a.triangles
    return [bool(tri_tri_rational(tris_a[int(i)].tolist(), mapped[int(j)].tolist())) for i, j in pairs]


def rational_pairs(a, b, pose_a=None, pose_b=None) -> np.ndarray:
    """(M, 2) all intersecting (face_a, face_b) pairs of ONE pose pair by the exact
    rational reference alone (slow: small meshes only)."""
    from tests.oracles import tri_tri_rational

    mapped = mapped_triangles(b, pose_a, pose_b)
    rows = [
        (i, j)
        for i in range(a.n_faces)
        for j in range(b.n_faces)
        if tri_tri_rational(a.triangles[i].tolist(), mapped[j].tolist())
    ]
    return np.array(rows, dtype=np.int64).reshape(-1, 2)


# --- shared helpers ---------------------------------------------------------------------

#: Batches at least this long run on the parallel kernel (when threads > 1).
PARALLEL_BATCH = 2 * int(getattr(collisionkit.constants, "PARALLEL_MIN_POSES", 32))

#: ../shared/data beside the checkout.
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
_MESHES: dict[str, collisionkit.Mesh] = {}


def load_pb_mesh(name: str) -> collisionkit.Mesh:
    """A mesh from pybullet_data by relative path (session-cached); skips visibly when missing."""
    pybullet_data = pytest.importorskip("pybullet_data")
    if name not in _MESHES:
        path = Path(pybullet_data.getDataPath()) / name
        if not path.is_file():
            pytest.skip(f"pybullet_data has no {name}")
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # trimesh's texture handling of some OBJs
            _MESHES[name] = collisionkit.load_mesh(path)
    return _MESHES[name]


def load_shared_mesh(name: str) -> collisionkit.Mesh:
    """A mesh from ../shared/data (session-cached); skips visibly when missing."""
    key = "shared:" + name
    if key not in _MESHES:
        path = SHARED_DATA / name
        if not path.is_file():
            pytest.skip(f"shared test data {path} is absent")
        _MESHES[key] = collisionkit.load_mesh(path)
    return _MESHES[key]


def radius(mesh) -> float:
    lo, hi = mesh.bounds
    return float(np.linalg.norm(hi - lo) / 2)


def scene(a, b, factor: float, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random poses of both meshes: a near the origin, b within factor * (r_a + r_b)."""
    ra, rb = radius(a), radius(b)
    pose_a = collisionkit.random_poses(n, radius=0.2 * ra, seed=seed)
    pose_b = collisionkit.random_poses(n, radius=factor * (ra + rb), seed=seed + 1000)
    return pose_a, pose_b


def signed_perm(perm=(0, 1, 2), signs=(1, 1, 1), t=(0.0, 0.0, 0.0)) -> np.ndarray:
    """A rigid pose whose rotation is a signed axis permutation (det +1 enforced by
    flipping the last row's sign when needed): every product with it is exact."""
    P = np.zeros((3, 3))
    for i, (j, sgn) in enumerate(zip(perm, signs, strict=True)):
        P[i, j] = sgn
    if np.linalg.det(P) < 0:
        P[2] *= -1
    T = np.eye(4)
    T[:3, :3] = P
    T[:3, 3] = t
    return T
