"""A warm process's start (issue 32 item 3): what ``import collisionkit`` and the first query
leave for later, and that what is left still works when asked for."""

from __future__ import annotations

import subprocess
import sys

import collisionkit as ck
from collisionkit import _numba


def _python(code: str) -> str:
    """Run ``code`` in a fresh interpreter (what a process imported is per process); its stdout."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


_FIRST_QUERY = """
import sys
import collisionkit as ck
loaded = lambda: sorted(m for m in ("collisionkit.robot", "collisionkit.world", "scipy.linalg") if m in sys.modules)
print(loaded())
a = ck.primitives.box_mesh([1.0, 1.0, 1.0])
assert ck.intersects(a, a, None, ck.translation([0.5, 0.2, 0.1]))
assert not ck.intersects(a, a, None, ck.translation([1.5, 0.2, 0.1]))
print(loaded())
from collisionkit import Robot  # imported on first use
world = ck.World()
print(loaded(), Robot.__module__, type(world).__module__)
"""


def test_import_and_the_first_query_leave_the_robot_the_scene_and_scipy_linalg_for_later():
    lines = _python(_FIRST_QUERY).splitlines()
    assert lines[0] == "[]"
    assert lines[1] == "[]"  # numba's BLAS probe answered without importing scipy.linalg
    assert lines[2] == "['collisionkit.robot', 'collisionkit.world'] collisionkit.robot.robot collisionkit.world.world"


def test_names_imported_on_first_use_are_the_package_names():
    assert ck.Robot is __import__("collisionkit.robot", fromlist=["Robot"]).Robot
    assert ck.World is __import__("collisionkit.world", fromlist=["World"]).World
    assert {"Robot", "World"} <= set(dir(ck)) and {"Robot", "World"} <= set(ck.__all__)
    try:
        ck.NoSuchName  # noqa: B018
    except AttributeError as e:
        assert "NoSuchName" in str(e)
    else:  # pragma: no cover
        raise AssertionError("an unknown name must raise AttributeError")


_BLAS_AFTER = """
import sys
import numpy as np
import collisionkit as ck
a = ck.primitives.box_mesh([1.0, 1.0, 1.0])
ck.distance(a, a, None, ck.translation([2.0, 0.0, 0.0]))
import numba.np.arraymath
from numba import njit

@njit
def product(x, y):
    return np.dot(x, y)

x = np.arange(6.0).reshape(2, 3)
assert np.array_equal(product(x, x.T), x @ x.T)
print(numba.np.arraymath._HAVE_BLAS, "scipy.linalg" in sys.modules)
"""


def test_numba_linear_algebra_still_works_after_the_deferred_probe():
    """The probe said yes from scipy's files; a kernel that does use BLAS compiles and runs
    (numba imports scipy.linalg's BLAS then)."""
    assert _python(_BLAS_AFTER).split() == ["True", "True"]


def test_the_probe_reads_scipys_installed_files():
    assert _numba._cython_blas_installed()  # scipy is a dependency
