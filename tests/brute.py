"""Brute-force mesh-mesh oracle: every triangle pair, no hierarchy.

b's triangles are mapped into a's frame EXACTLY as the library maps them
(``kernels.core.linalg.relative_pose`` then ``kernels.core.linalg.map_triangle``), and
every pair is decided by the library's exact triangle test
(``kernels.triangle.tri_tri.tri_tri_intersect``). So the pair set returned here is
what any correct traversal must return, bit for bit: only the hierarchy, the
volume tests and the bookkeeping differ. The exact per-triangle bounding-box
rejection below works on the very coordinates the exact test sees, so it can
never drop an intersecting pair.

Also the suite's shared helpers (kept here, not in conftest, so that test
modules import them once under one name): session-cached real meshes, random
scenes, exact signed-permutation poses.

Arguments handed to the kernels keep the library's own types (writable
C-contiguous float64 arrays, a runtime int64 method code, never a literal) so
that calling them from here adds no second specialisation
(see ``test_zz_dispatch.py``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numba import njit

import collisionkit  # configures numba's cache folder before any kernel
import collisionkit.constants
from collisionkit.constants import TRI_TEST_GUIGUE
from collisionkit.kernels.core.linalg import map_triangle, relative_pose
from collisionkit.kernels.triangle.tri_tri import tri_tri_intersect


@njit(cache=True, nogil=True)
def _map_tuples(R, t, tris_b, out):
    for j in range(tris_b.shape[0]):
        B = map_triangle(
            R, t,
            tris_b[j, 0, 0], tris_b[j, 0, 1], tris_b[j, 0, 2],
            tris_b[j, 1, 0], tris_b[j, 1, 1], tris_b[j, 1, 2],
            tris_b[j, 2, 0], tris_b[j, 2, 1], tris_b[j, 2, 2],
        )  # fmt: skip
        for v in range(3):
            for d in range(3):
                out[j, v, d] = B[3 * v + d]


@njit(cache=True, nogil=True)
def _map_all(Ta, Tb, tris_b, out):
    """out[j] = tris_b[j] mapped into a's frame with the library's own arithmetic."""
    R, t = relative_pose(Ta, Tb)
    _map_tuples(R, t, tris_b, out)


@njit(cache=True, nogil=True)
def _boxes(tris, lo, hi):
    for i in range(tris.shape[0]):
        for d in range(3):
            lo[i, d] = min(tris[i, 0, d], min(tris[i, 1, d], tris[i, 2, d]))
            hi[i, d] = max(tris[i, 0, d], max(tris[i, 1, d], tris[i, 2, d]))


@njit(cache=True, nogil=True)
def _brute_kernel(tris_a, tris_b, poses_a, poses_b, idx_a, idx_b, method, first_only):
    """Rows (pose, face_a, face_b) of every intersecting pair, sorted."""
    fa = tris_a.shape[0]
    fb = tris_b.shape[0]
    lo_a = np.empty((fa, 3))
    hi_a = np.empty((fa, 3))
    _boxes(tris_a, lo_a, hi_a)
    mapped = np.empty((fb, 3, 3))
    lo_b = np.empty((fb, 3))
    hi_b = np.empty((fb, 3))
    cap = 1024
    out = np.empty((cap, 3), np.int64)
    k = 0
    for p in range(idx_a.shape[0]):
        _map_all(poses_a[idx_a[p]], poses_b[idx_b[p]], tris_b, mapped)
        _boxes(mapped, lo_b, hi_b)
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
                if tri_tri_intersect(tris_a[i], mapped[j], method):
                    if k == cap:
                        cap *= 2
                        bigger = np.empty((cap, 3), np.int64)
                        bigger[:k] = out[:k]
                        out = bigger
                    out[k, 0] = p
                    out[k, 1] = i
                    out[k, 2] = j
                    k += 1
                    if first_only:
                        break
            if first_only and k > 0 and out[k - 1, 0] == p:
                break
    return out[:k].copy()


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


def brute_pairs(a, b, pose_a=None, pose_b=None, method: int = TRI_TEST_GUIGUE) -> np.ndarray:
    """(M, 3) int64 rows (pose, face_a, face_b) of every intersecting triangle pair,
    sorted lexicographically; the poses broadcast like the library's."""
    pa, pb, ia, ib = broadcast(pose_a, pose_b)
    return _brute_kernel(_tris(a), _tris(b), pa, pb, ia, ib, np.int64(method), False)


def brute_colliding(a, b, pose_a=None, pose_b=None) -> np.ndarray:
    """(N,) bool: does each query have at least one intersecting pair (stops at the first)."""
    pa, pb, ia, ib = broadcast(pose_a, pose_b)
    rows = _brute_kernel(_tris(a), _tris(b), pa, pb, ia, ib, np.int64(TRI_TEST_GUIGUE), True)
    out = np.zeros(ia.shape[0], bool)
    out[rows[:, 0]] = True
    return out


def mapped_triangles(b, pose_a, pose_b) -> np.ndarray:
    """(F_b, 3, 3) b's triangles in a's frame for ONE pose pair, as the library computes them."""
    Ta = np.array(pose_a if pose_a is not None else np.eye(4), dtype=np.float64, order="C", copy=True)
    Tb = np.array(pose_b if pose_b is not None else np.eye(4), dtype=np.float64, order="C", copy=True)
    out = np.empty((b.n_faces, 3, 3))
    _map_all(Ta, Tb, _tris(b), out)
    return out


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
