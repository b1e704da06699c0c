"""Poses at the API edge: array-likes -> (N, 4, 4) float64 stacks, broadcast."""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: What a pose argument accepts: a (4, 4) or (N, 4, 4) array-like of world-from-object
#: rigid transforms (a Dask array of a batch too), or None for the identity.
PoseLike: TypeAlias = ArrayLike | None

IDENTITY: NDArray[np.float64] = np.eye(4)
_IDENTITY_STACK = np.eye(4).reshape(1, 4, 4)


def as_poses(pose: Any, name: str) -> tuple[NDArray[np.float64], bool]:
    """Convert one pose argument.

    Returns ``(stack, batched)``: a C-contiguous writable (N, 4, 4) float64
    array (a view when the input already is one) and whether the caller gave a
    batch (a 3-D array, even with N = 1). ``None`` is the identity.
    """
    if pose is None:
        return _IDENTITY_STACK, False
    if type(pose) is np.ndarray and pose.dtype == np.float64 and pose.flags.c_contiguous and pose.flags.writeable:
        arr = pose
    else:
        try:
            arr = np.array(pose, dtype=np.float64, order="C")
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} is not a numeric array: {exc}") from None
    if arr.shape == (4, 4):
        return arr.reshape(1, 4, 4), False
    if arr.ndim == 3 and arr.shape[1:] == (4, 4):
        return arr, True
    raise ValueError(f"{name} must have shape (4, 4) or (N, 4, 4), got {arr.shape}")


def broadcast_poses(
    pa: NDArray[np.float64], pb: NDArray[np.float64]
) -> tuple[int, NDArray[np.int64], NDArray[np.int64]]:
    """N and the pose index of a and b for each of the N queries.

    (4,4) x (N,4,4), (N,4,4) x (4,4) and equal N broadcast; else ValueError.
    """
    na, nb = pa.shape[0], pb.shape[0]
    if na == nb:
        idx = np.arange(na, dtype=np.int64)
        return na, idx, idx
    if na == 1:
        return nb, np.zeros(nb, np.int64), np.arange(nb, dtype=np.int64)
    if nb == 1:
        return na, np.arange(na, dtype=np.int64), np.zeros(na, np.int64)
    raise ValueError(f"pose batches do not broadcast: pose_a has {na} poses, pose_b has {nb}")
