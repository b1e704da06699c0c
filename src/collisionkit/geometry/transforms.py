"""Making poses: 4x4 world-from-object rigid transforms (p_world = T @ [p, 1])."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def translation(t: ArrayLike) -> NDArray[np.float64]:
    """(4, 4) pose translating by t (3,)."""
    T = np.eye(4)
    T[:3, 3] = np.asarray(t, dtype=np.float64).reshape(3)
    return T


def rotation(axis: ArrayLike, angle: float, about: ArrayLike | None = None) -> NDArray[np.float64]:
    """(4, 4) pose rotating by ``angle`` radians about ``axis`` (through ``about``, default origin)."""
    k = np.asarray(axis, dtype=np.float64).reshape(3)
    n = np.linalg.norm(k)
    if not np.isfinite(n) or n == 0.0:
        raise ValueError("rotation axis must be a finite non-zero vector")
    k = k / n
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    R = np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * (K @ K)
    T = np.eye(4)
    T[:3, :3] = R
    if about is not None:
        c = np.asarray(about, dtype=np.float64).reshape(3)
        T[:3, 3] = c - R @ c
    return T


def random_rotations(n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """(n, 3, 3) rotations uniform over SO(3) (from uniform unit quaternions)."""
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    w, x, y, z = q.T
    R = np.empty((n, 3, 3))
    R[:, 0, 0] = 1 - 2 * (y * y + z * z)
    R[:, 0, 1] = 2 * (x * y - z * w)
    R[:, 0, 2] = 2 * (x * z + y * w)
    R[:, 1, 0] = 2 * (x * y + z * w)
    R[:, 1, 1] = 1 - 2 * (x * x + z * z)
    R[:, 1, 2] = 2 * (y * z - x * w)
    R[:, 2, 0] = 2 * (x * z - y * w)
    R[:, 2, 1] = 2 * (y * z + x * w)
    R[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def random_poses(
    n: int, radius: float = 1.0, *, center: ArrayLike = (0.0, 0.0, 0.0), seed: int | None = 0
) -> NDArray[np.float64]:
    """(n, 4, 4) poses: uniform random rotations, translations uniform in a ball of ``radius``
    about ``center``.

    ``seed``: NumPy's ``default_rng`` seed (default 0: the same poses every call, as
    ``Robot.random_configurations``; None: fresh entropy)."""
    rng = np.random.default_rng(seed)
    T = np.zeros((n, 4, 4))
    T[:, :3, :3] = random_rotations(n, rng)
    d = rng.normal(size=(n, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    r = radius * rng.random(n) ** (1 / 3)
    T[:, :3, 3] = d * r[:, None] + np.asarray(center, dtype=np.float64)
    T[:, 3, 3] = 1.0
    return T


def rpy_matrix(rpy: ArrayLike) -> NDArray[np.float64]:
    """(3, 3) rotation of URDF roll-pitch-yaw angles (radians): R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = np.asarray(rpy, dtype=np.float64).reshape(3)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def pose_from(translation: ArrayLike = (0.0, 0.0, 0.0), rpy: ArrayLike = (0.0, 0.0, 0.0)) -> NDArray[np.float64]:
    """(4, 4) pose from a translation (3,) and URDF roll-pitch-yaw angles (3,) in radians."""
    T = np.eye(4)
    T[:3, :3] = rpy_matrix(rpy)
    T[:3, 3] = np.asarray(translation, dtype=np.float64).reshape(3)
    return T
