"""``Robot.check`` with a margin or a padded robot, on the prepared checker (issue 30 item 2).

A pair (link a, object or link b) collides when its exact distance is at most
``margin + pad_a + pad_b`` (``Robot.with_padding``): an offset by a ball, not a vertex
inflation. The checker's arrays (``robot/checker.py``: kinematics, link boxes, every mesh
pair and its trees, ordered cheapest hit first) answer it in one compiled call per
configuration or batch (``kernels.robot.proximity.margin_one``; batches by
``motion.margin_batch``): per pair the widened world-box and oriented-box tests, then the
threshold descent (``kernels.proximity.threshold``), which stops at the first triangle pair
within the threshold or as soon as every open node pair is farther; a pair with a zero
threshold takes the checker's own exact test. The thresholds are made once per checker,
margin and padding. Its trees are oriented boxes unless the caller names a volume kind
(``MARGIN_VOLUME``; answers never depend on it).

What the kernel does not answer goes to ``motion.check_with_margin`` (the per-pair path):
worlds with convex-shape obstacles and pairs outside the kernel's band of scales.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..kernels.robot import checker as ckernel
from ..kernels.robot import proximity as pkernel
from ..query import batch
from .checker import _Cache, _configurations, _non_finite, checker_for
from .motion import check_margin, check_with_margin, margin_batch

_F64 = np.dtype(np.float64)
_I64 = np.int64
#: the per-call kernel without numba's per-call dispatch (``query.batch.Pinned``): its
#: arguments are the checker's arrays, a thresholds array this module builds and q checked
#: as a writable C-contiguous (dof,) float64 array
_MARGIN_ONE = batch.Pinned(pkernel.margin_one)
#: threshold arrays kept per checker (one per margin and padding in use)
_THRESHOLDS = 8


def thresholds(chk: Any, robot: Any, margin: float) -> NDArray[np.float64]:
    """(P,) float64: ``margin + pad_a + pad_b`` per row of the checker's ``pairs`` (its
    current order), the pads ``robot``'s (NOTE: not ``chk.robot``'s: a padded copy of a
    robot shares its checkers), cached on the checker per (pairs array, margin, padding
    object: ``with_padding`` makes a new one)."""
    cache = chk.__dict__.setdefault("_margin_thresholds", {})
    padding = robot.padding
    key = (margin, id(padding))
    thr = cache.get(key)
    if thr is None or thr[0] is not chk._pairs or thr[1] is not padding:
        pairs = chk._pairs
        pad = np.array([padding.get(n, 0.0) for n in robot.links] + [0.0])  # index -1: no pad
        b = np.where(pairs[:, ckernel.PAIR_SELF] != 0, pairs[:, ckernel.PAIR_B], -1)
        values = np.ascontiguousarray(margin + pad[pairs[:, ckernel.PAIR_A]] + pad[b], dtype=np.float64)
        if len(cache) >= _THRESHOLDS:
            cache.pop(next(iter(cache)))
        thr = cache[key] = (pairs, padding, values)
    return thr[2]


#: the volume kind of a margin check's trees unless the caller names one (``bv=``). PERF:
#: proving a pair farther than a margin descends until the boxes are that far apart; the
#: tighter oriented boxes get there sooner (Panda among boxes, margin 0.01, free
#: configurations: kernel 6.8 us a configuration with OBB trees, 11.1 with the AABB trees
#: ``pair_volume`` picks; plain checks 3.5 and 4.4)
MARGIN_VOLUME = "obb"


def _checker(robot: Any, world: Any, options: dict[str, Any]) -> Any:
    """The robot's prepared checker for a margin check: ``checker_for`` with ``bv`` defaulting
    to ``MARGIN_VOLUME``; the checker of the common call (no options) cached per world on the
    robot (PERF: ``checker_for``'s key of a non-empty options dict costs microseconds)."""
    if not options:
        cache = robot.__dict__.get("_margin_checkers")
        if cache is None:
            cache = robot.__dict__["_margin_checkers"] = _Cache()
        chk = cache.get(id(world))
        if chk is None or chk.world is not world:
            if len(cache) >= _THRESHOLDS:
                cache.pop(next(iter(cache)))
            chk = cache[id(world)] = checker_for(robot, world, {"bv": MARGIN_VOLUME, "listed": True})
        return chk
    # listed: every self pair in the checker's arrays, which the margin kernels read (a
    # robot past checker.SWEEP_MIN_LINKS links would otherwise find them by a sweep)
    options = {**options, "listed": True}
    if options.get("bv") is None:
        options["bv"] = MARGIN_VOLUME
    return checker_for(robot, world, options)


def check(robot: Any, q: ArrayLike, world: Any, margin: float, options: dict[str, Any]) -> bool | NDArray[np.bool_]:
    """``Robot.check(q, world, margin=..., **options)`` of a robot with a margin or padding:
    a bool for one (dof,) configuration, an (N,) bool array for a batch.

    Raises
    ------
    ValueError
        A negative, NaN, infinite or non-numeric margin; q of the wrong shape or with
        non-finite values; the checker's bad options.
    """
    # PERF: a plain positive float skips the checks' conversions
    m = margin if type(margin) is float and 0.0 <= margin < math.inf else check_margin(margin)
    threads = options.pop("threads", None)
    chk = _checker(robot, world, options)
    if world is not None and world.version != chk._version:
        chk._current()
    if chk._order_pending:  # before the thresholds: they follow the pairs' order
        chk.order_pairs_once(lambda: thresholds(chk, robot, m))  # by the margin kernel's hits
    if chk._external:  # convex-shape obstacles: the per-pair path (options less the volume kind)
        rest = {k: v for k, v in options.items() if k != "bv"}
        return check_with_margin(robot, q, world, margin=m, threads=threads, **rest)
    thr = thresholds(chk, robot, m)
    # PERF: one writable C-contiguous (dof,) float64 array goes straight to the per-call kernel
    if type(q) is np.ndarray and q.dtype is _F64 and q.shape == chk._shape1 and q.flags.c_contiguous and q.flags.writeable:
        if threads is not None:
            batch.thread_count(threads)  # validated, though one configuration runs serially
        r = _MARGIN_ONE.call(q, *chk._args, thr)
        if r == -2:
            raise _non_finite(q, "q")
        if r >= 0:
            return r == 1
        Q, single = q.reshape(1, -1), True
    else:
        qa = _configurations(q, chk._dof)
        single = qa.ndim == 1
        Q = qa.reshape(1, -1) if single else qa
        if not np.isfinite(Q).all():
            raise _non_finite(qa, "q")
    got = margin_batch(chk._args, Q, thr, threads)
    hit = got == 1
    undecided = np.flatnonzero(got < 0)
    if undecided.size:  # a pair outside the kernel's band of scales: the per-pair path decides
        rest = {k: v for k, v in options.items() if k != "bv"}
        hit[undecided] = check_with_margin(robot, Q[undecided], world, margin=m, threads=threads, **rest)
    return bool(hit[0]) if single else hit


__all__ = ["check", "thresholds"]
