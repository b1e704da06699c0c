"""Kernels called through slots, compiled on their first call (``kernels/core/lazy.njit_lazy``,
issue 32 item 2): the cold paths, and the hot per-task kernels many callers share."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from numba import njit, prange, types
from numba.core.errors import TypingError
from tests.test_dispatch import kernel_dispatchers

from collisionkit.kernels.core import lazy
from collisionkit.kernels.core.lazy import LazyKernel, njit_lazy


def _python(code: str) -> str:
    """Run ``code`` in a fresh interpreter (its own process state: which entries compiled);
    return its stdout, failing the test on an error."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


@njit_lazy(types.float64(types.float64, types.int64), nogil=True)
def _scaled(x, k):
    if k < 0:
        raise ValueError("k must not be negative")
    return x * k


@njit(nogil=True)
def _maybe_scaled(x, k, cold):
    if cold:
        return _scaled(x, k)
    return x


@njit_lazy(types.float64(types.float64), nogil=True)
def _squared(x):
    return x * x


@njit(parallel=True, nogil=True)
def _all_squared(xs):
    out = np.empty_like(xs)
    for i in prange(xs.shape[0]):
        out[i] = _squared(xs[i])
    return out


def test_a_caller_compiles_without_the_cold_path_and_calls_it_when_needed():
    assert not _scaled.compiled()
    assert _maybe_scaled(1.5, 2, False) == 1.5
    assert not _scaled.compiled()  # the caller compiled, and ran, without it
    assert _maybe_scaled(1.5, np.int32(2), True) == 3.0  # arguments converted to the declared types
    assert _scaled.compiled()
    assert _maybe_scaled(2.5, 4, True) == 10.0
    with pytest.raises(ValueError, match="must not be negative"):  # the entry's exception, propagated
        _maybe_scaled(1.0, -1, True)


def test_a_cold_path_first_met_by_parallel_threads_compiles_once():
    xs = np.linspace(-3.0, 3.0, 4096)
    assert not _squared.compiled()
    assert np.array_equal(_all_squared(xs), xs * xs)
    assert _squared.compiled()
    assert len(_squared.dispatcher.overloads) == 1


def test_a_call_that_does_not_match_the_declared_signature_is_a_typing_error():
    @njit
    def bad(a):
        return _scaled(a, 1)

    with pytest.raises(TypingError, match=r"_scaled: called with \(array.*declared"):
        bad(np.zeros(3))


@njit_lazy(types.float64(types.float64, types.none), types.float64(types.float64, types.int64), cold=False, nogil=True)
def _offset(x, k):
    if k is None:
        return x
    return x + k


@njit(nogil=True)
def _offsets(x):
    return _offset(x, None), _offset(x, 2), _offset(x, np.int32(3))


def test_an_entry_of_several_signatures_takes_the_one_its_arguments_match():
    """Options by type (``collide_task``'s triangle test None or a code): each call compiles
    and calls the entry for its own signature; a call matching none is a typing error."""
    assert _offsets(1.5) == (1.5, 3.5, 4.5)
    assert len(_offset.dispatcher.overloads) == 2
    assert all(slot.value for slot in _offset.slots)

    @njit
    def bad(x):
        return _offset(x, x)

    with pytest.raises(TypingError, match=r"_offset: called with .* declared .* or "):
        bad(np.zeros(2))
    with pytest.raises(TypeError, match="at least one signature"):
        njit_lazy()


def test_python_calls_run_the_entry():
    assert _scaled(2.0, 3) == 6.0
    assert _scaled.py_func(2.0, 3) == 6.0
    assert "lazy kernel _scaled" in repr(_scaled)


def test_every_parallel_kernel_releases_the_gil():
    """A cold path met inside a ``prange`` compiles in a callback that takes the GIL; a
    parallel kernel that held it would wait for its workers while they wait for it."""
    parallel = {n: d for n, d in kernel_dispatchers().items() if d.targetoptions.get("parallel")}
    assert len(parallel) >= 10, sorted(parallel)  # the walk finds them
    assert not [n for n, d in parallel.items() if not d.targetoptions.get("nogil")]


def test_the_package_declares_its_cold_paths_and_the_warmup_compiles_them():
    from collisionkit import warmup

    kernel_dispatchers()  # imports every kernel module
    names = {k.__name__ for k in lazy.ENTRIES}
    assert {
        "_orient3d_fallback", "_orient2d_fallback", "orient3d_sides_settle", "_coplanar_on_axis",
        "_tri_vs_degenerate", "_intersect_degenerate", "_in_tri_2d", "_in_plane_crossings",
    } <= names  # fmt: skip
    assert all(isinstance(k, LazyKernel) for k in lazy.ENTRIES)
    hot = {k.__name__ for k in lazy.ENTRIES if not k.cold and k.__module__.startswith("collisionkit.")}
    assert hot == {"collide_task", "distance_task", "tri_tri_segment"}
    warmup.GROUPS["exact"]()
    ours = [k for k in lazy.ENTRIES if k.__module__.startswith("collisionkit.")]
    assert all(slot.value for k in ours if k.cold for slot in k.slots)  # every signature of every cold entry


def test_the_warm_up_groups_compile_every_signature_of_the_hot_entries():
    """The shared hot entries are left out of the ``exact`` group (each query group compiles
    what it calls); the groups together still reach every declared signature, so shipped
    wheels hold them (here loaded from the cache ``make test`` filled)."""
    code = (
        "from collisionkit import warmup\n"
        "from collisionkit.kernels.core import lazy\n"
        "for g in ('intersects', 'distance', 'volume_kinds'):\n"
        "    warmup.GROUPS[g]()\n"
        "print(sorted(f'{k.__name__}:{i}' for k in lazy.ENTRIES if not k.cold for i, s in enumerate(k.slots) if not s.value))\n"
    )
    assert _python(code).split()[-1] == "[]"


_COLD_QUERIES = """
import numpy as np, collisionkit as ck
from collisionkit.kernels.core import lazy
from collisionkit.kernels.triangle import tri_tri
from collisionkit.kernels.core import predicates
box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
generic = ck.random_poses(64, radius=1.5, seed=4)
hits = ck.intersects(box, ck.primitives.uv_sphere_mesh(0.6, 8, 12), None, generic)
assert 0 < hits.sum() < 64
cold = [k for k in lazy.ENTRIES if k.cold]
assert not any(k.compiled() for k in cold), [k.__name__ for k in cold if k.compiled()]
# face to face (exactly touching), then 2**-40 apart
for threads in (1, 2):
    T = np.tile(ck.translation([1.0, 0.25, 0.0]), (64, 1, 1))
    assert ck.intersects(box, box, None, T, threads=threads).all()
    T[:, 0, 3] += 2.0 ** -40
    assert not ck.intersects(box, box, None, T, threads=threads).any()
# a vertex exactly in a slanted face's plane (y = z): the float filter cannot sign it
face = ck.Mesh([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 1.0]], [[0, 1, 2]])
tip = ck.Mesh([[0.2, 0.3, 0.3], [0.2, 0.3, -1.0], [0.25, 1.0, -0.3]], [[0, 1, 2]])  # one vertex in it
assert not predicates._orient3d_fallback.compiled()
assert ck.intersects(face, tip, None, None)
assert not ck.intersects(face, tip, None, ck.translation([0.0, 2.0 ** -30, -(2.0 ** -30)]))
assert predicates._orient3d_fallback.compiled()
# a segment (a degenerate triangle) through a face, and a point on one
seg = ck.Mesh([[0.3, 0.1, 0.2], [0.3, 0.1, 0.2], [0.7, 0.13, 0.21]], [[0, 1, 2]])
pt = ck.Mesh([[0.5, 0.1, 0.2]] * 3, [[0, 1, 2]])
assert ck.intersects(box, seg, None, None) and not ck.intersects(box, seg, None, ck.translation([0.3, 0.0, 0.0]))
assert ck.intersects(box, pt, None, None) and not ck.intersects(box, pt, None, ck.translation([1e-12, 0, 0]))
assert tri_tri._tri_vs_degenerate.compiled() and tri_tri._coplanar_on_axis.compiled()
print("ok")
"""


def test_a_fresh_process_meets_the_cold_paths_only_where_the_input_needs_them():
    """Generic poses compile (or load) none of the cold entries; a vertex in a slanted face's
    plane, a segment through a face and a point on one reach them, with the exact answers."""
    assert _python(_COLD_QUERIES).strip().endswith("ok")


def test_the_warm_up_groups_at_turned_poses_still_reach_the_containment_test():
    """The groups' poses are turned off the axes (no coplanar faces, so no cold path); the
    classify group still compiles the winding numbers, which shipped wheels need for the
    first ``classify`` or ``penetration`` of meshes apart (found missing by
    ``benchmarks.cold_start`` once)."""
    code = (
        "from collisionkit import warmup\n"
        "from collisionkit.kernels.core import lazy\n"
        "from collisionkit.kernels.triangle import point_in_mesh\n"
        "warmup.GROUPS['classify']()\n"
        "print(len(point_in_mesh.winding_numbers_posed.signatures), sum(k.compiled() for k in lazy.ENTRIES if k.cold))\n"
    )
    assert _python(code).split() == ["1", "0"]


def test_the_warm_up_reaches_the_robot_checkers_sweep():
    """Robots of ``SWEEP_MIN_LINKS`` meshed links or more find self pairs by a sweep, whose
    kernels no group reached (a platform wheel's user compiled them on a first check); the
    robot_sweep group runs them on the two-link arm with the threshold lowered, then restores it."""
    code = (
        "from collisionkit import warmup\n"
        "from collisionkit.robot import checker\n"
        "from collisionkit.kernels.robot import checker as k\n"
        "saved = checker.SWEEP_MIN_LINKS\n"
        "warmup.GROUPS['robot_sweep']()\n"
        "print(checker.SWEEP_MIN_LINKS == saved, [len(getattr(k, n).signatures) for n in "
        "('check_one_sweep', 'check_sweep_serial', 'check_sweep_parallel')])\n"
    )
    assert _python(code).strip() == "True [1, 1, 1]"
