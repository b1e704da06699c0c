"""The driver: what every question does around its handler, written once.

A public question function is its per-call fast path (when it has one) and then one
call of ``ask``: the options validated against the question's ``Spec`` (once), a Dask
input handed to ``query/deferred.py``, the handler found (``registry.checked``: pair
kinds, refused cells, options it honours), the poses parsed, broadcast and validated
once (``prepare``; the kernels take them as given), and the handler run on the request.

The per-call pieces live here too:

* ``single_pose``: a pose as the per-call kernels take it ((4, 4) C-contiguous writable
  float64), or None for anything the batch path must parse (``single_poses``: both sides);
* ``FAST``: the single-pose fast paths, keyed by (question, type of a, type of b), each
  answering as the registered handler does (``register_fast``);
* ``raise_pose_code``: the one decoding of a per-call kernel's negative pose code;
* ``bvh.pair_trees`` (re-exported as ``trees``): both shapes' trees in the pair's
  volume kind, the one public way to a mesh's tree for a query.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NoReturn

import numpy as np
from numpy.typing import NDArray

from ..bvh import pair_trees
from ..errors import InvalidPoseError, UnsupportedPairError
from ..geometry.mesh import Mesh
from ..geometry.pose import IDENTITY, as_poses, broadcast_poses
from ..kernels.core.linalg import POSE_BAD_LAST_ROW, POSE_NOT_FINITE, POSE_NOT_RIGID
from ..kernels.traverse.descent import validate_poses
from ..strategies import resolve
from . import deferred, registry
from .batch import thread_count
from .registry import Request
from .spec import Spec

trees = pair_trees

_POSE_REASON = {
    POSE_NOT_FINITE: "is not finite",
    POSE_NOT_RIGID: "is not a rigid transform (rotation block not orthonormal with det +1)",
    POSE_BAD_LAST_ROW: "has a last row other than [0, 0, 0, 1]",
}
_F64 = np.dtype(np.float64)


def pose_error(side: str, index: int, code: int, batched: bool) -> InvalidPoseError:
    """The error for a kernel's pose ``code`` (``kernels/core/linalg``) on ``side``[``index``]."""
    where = f"{side}[{index}]" if batched else side
    return InvalidPoseError(f"{where} {_POSE_REASON.get(code, 'is invalid')}", index)


def raise_pose_code(r: int) -> NoReturn:
    """Raise for a per-call kernel's negative return: -1 - code for ``pose_a``, -11 - code for ``pose_b``."""
    side, code = ("pose_a", -r - 1) if r > -11 else ("pose_b", -r - 11)
    raise pose_error(side, 0, code, False)


def single_pose(pose: Any) -> NDArray[np.float64] | None:
    """The pose as the per-call kernels take it when it is one (4, 4) pose; None otherwise
    (a batch, or an array the batch path must convert). The kernels check its values."""
    if pose is None:
        return IDENTITY
    if type(pose) is np.ndarray:
        if pose.dtype is _F64 and pose.shape == (4, 4):
            flags = pose.flags
            if flags.c_contiguous and flags.writeable:
                return pose
        return None
    if isinstance(pose, (list, tuple)):
        stack, batched = as_poses(pose, "pose")
        return None if batched else stack[0]
    return None


def single_poses(pose_a: Any, pose_b: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """(Ta, Tb), both poses as the per-call kernels take them (``single_pose``), when each
    is one (4, 4) pose; None when either takes the batch path.

    PERF: ~40 ns more than two inline ``single_pose`` calls; the ~2 us boolean paths of
    ``intersects`` keep them inline."""
    Ta = single_pose(pose_a)
    Tb = single_pose(pose_b)
    return None if Ta is None or Tb is None else (Ta, Tb)


def check_mesh(x: Any, name: str) -> Mesh:
    if not isinstance(x, Mesh):
        raise UnsupportedPairError(f"{name} must be a collisionkit.Mesh, got {type(x).__name__}")
    return x


#: Single-pose fast paths: (question, exact type of a, exact type of b) -> fn. What ``fn``
#: takes and returns is the question's (its module says); None from ``fn`` means "take the
#: request path".
FAST: dict[tuple[str, type, type], Callable[..., Any]] = {}


def register_fast(question: str, type_a: type, type_b: type, fn: Callable[..., Any]) -> None:
    """Answer ``question`` on one pose pair of exactly these types with ``fn``, as the handler would."""
    FAST[(question, type_a, type_b)] = fn


_NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})


def prepare(
    a: Any, b: Any, pose_a: Any, pose_b: Any, mode: int, max_pairs: int, strategy: Any, threads: int | None,
    query: str = "", options: Mapping[str, Any] = _NO_OPTIONS,
) -> Request:  # fmt: skip
    """Parse, broadcast and validate the poses of a query (once); resolve its strategy and threads.

    ``query`` and ``options`` (every option of the query, validated) travel with the
    request to the handler (``query/registry.py``).
    """
    strat = resolve(strategy)
    nthreads = thread_count(threads)
    pa, batched_a = as_poses(pose_a, "pose_a")
    pb, batched_b = as_poses(pose_b, "pose_b")
    n, ia, ib = broadcast_poses(pa, pb)
    side, index, code = validate_poses(pa, pb)
    if side >= 0:
        raise pose_error("pose_a" if side == 0 else "pose_b", int(index), int(code), batched_a or batched_b)
    return Request(
        a, b, pa, pb, ia, ib, n, batched_a or batched_b, mode, max_pairs, strat, nthreads,
        query, MappingProxyType(dict(options)),
    )  # fmt: skip


def ask(spec: Spec, a: Any, b: Any, *poses: Any, **given: Any) -> Any:
    """Answer question ``spec`` on ``a`` and ``b`` at ``poses`` with the options ``given``.

    The request path of every question: options validated (unknown names are a
    TypeError), a lazy input handed to Dask, the handler checked against the options
    set, the poses prepared once (or by the spec's own ``prepare`` for other pose
    layouts: ``time_of_impact``), the handler run.
    """
    options = spec.validate(given)
    if spec.lazy and deferred.is_lazy(*poses):
        return deferred.run(spec.name, a, b, *poses, **given)
    handler = registry.checked(spec.name, a, b, options)
    if len(poses) == 2 and spec.view is not None:  # PERF: request() inlined for the pair questions
        mode, cap, strategy = spec.view(options)
        return handler(prepare(a, b, poses[0], poses[1], mode, cap, strategy, options["threads"], spec.name, options))
    return handler(request(spec, a, b, poses, options))


#: question -> its own request builder (poses other than one pose per side)
PREPARE: dict[str, Callable[[Any, Any, tuple, Mapping[str, Any]], Request]] = {}


def request(spec: Spec, a: Any, b: Any, poses: tuple, options: Mapping[str, Any]) -> Request:
    """The prepared request of a validated call."""
    own = PREPARE.get(spec.name)
    if own is not None:
        return own(a, b, poses, options)
    pose_a, pose_b = (*poses, None, None)[:2]
    mode, cap, strategy = spec.engine_view(options)
    return prepare(a, b, pose_a, pose_b, mode, cap, strategy, options.get("threads"), spec.name, options)


__all__ = [
    "FAST", "PREPARE", "ask", "check_mesh", "pose_error", "prepare", "raise_pose_code", "register_fast", "request",
    "single_pose", "single_poses", "trees",
]  # fmt: skip
