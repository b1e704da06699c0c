"""Shared fixtures: kernel warm-up, hypothesis profile, real meshes.

* The numba kernels are compiled once per session (cold cache: ~30-60 s) by an
  autouse fixture, before any hypothesis test could charge the compile to one
  example.
* ``pb_mesh(name)`` loads a mesh from ``pybullet_data`` (skips visibly when the
  package or the file is missing); meshes are cached for the session, so trees
  built by one test are reused by the next. The loaders and other shared
  helpers live in ``tests/brute.py`` (imported once, as ``tests.brute``).
* ``shared_data`` is the folder of shared test meshes beside the checkout
  (``../shared/data``), skipped visibly when absent.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `from tests.brute import ...` under plain `pytest` too
    sys.path.insert(0, str(ROOT))

# No cache set-up here: collisionkit._numba.cache_dir() picks the one folder that
# `make demo`, the activated venv and the CLI share (COLLISIONKIT_CACHE_DIR moves it).

from tests.brute import PARALLEL_BATCH, SHARED_DATA, load_pb_mesh  # noqa: E402

import collisionkit as ck  # noqa: E402

settings.register_profile("collisionkit", deadline=None, max_examples=50, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "collisionkit-slow", deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "collisionkit"))


@pytest.fixture(scope="session")
def pb_mesh():
    """``pb_mesh("bunny.obj")`` -> Mesh from pybullet_data, or a visible skip."""
    return load_pb_mesh


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test data folder {SHARED_DATA} is absent")
    return SHARED_DATA


@pytest.fixture(scope="session", autouse=True)
def _compile_kernels():
    """Compile the query kernels once (single and batched, serial and parallel)."""
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    shifted = ck.translation([0.75, 0.0, 0.0])
    assert ck.intersects(box, box, None, shifted) is True
    n = PARALLEL_BATCH  # long enough for the parallel kernel
    poses = np.repeat(shifted[None], n, axis=0)
    for threads in (1, None):
        assert ck.intersects(box, box, None, poses, threads=threads).all()
        assert len(ck.contacts(box, box, None, poses, threads=threads)) > 0
        assert len(ck.contacts(box, box, None, poses, mode="first", threads=threads)) == n
        assert ck.query_stats(box, box, None, poses, threads=threads).colliding.all()
    assert len(ck.contacts(box, box, None, shifted)) > 0
    from tests.brute import brute_pairs

    assert len(brute_pairs(box, box, None, shifted)) > 0
    yield


# -- progress under xdist ------------------------------------------------------------------
#: Seconds without a finished test after which the controller names what is still running.
HEARTBEAT_S = float(os.environ.get("COLLISIONKIT_TEST_HEARTBEAT", "30"))


class _Heartbeat:
    """Under ``-n``, the controller prints one line when no test has finished for
    ``HEARTBEAT_S`` seconds (and every ``HEARTBEAT_S`` after), naming the oldest running
    tests, so ``make test`` never goes silent while a worker compiles or runs a long test
    (the workers' own output, the compile notice included, never reaches the terminal)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.running: dict[str, float] = {}  # nodeid -> start time
        self.quiet_since = self.last_line = time.monotonic()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="collisionkit-heartbeat", daemon=True)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        with self.lock:
            self.running[nodeid] = time.monotonic()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        with self.lock:
            self.quiet_since = time.monotonic()
            if report.when == "teardown" or (report.when == "setup" and not report.passed):
                self.running.pop(report.nodeid, None)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self):
        self.thread.start()
        try:
            return (yield)
        finally:
            self.stop.set()

    def _loop(self) -> None:
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        while tr is not None and not self.stop.wait(1.0):
            now = time.monotonic()
            with self.lock:
                quiet = now - self.quiet_since
                if min(quiet, now - self.last_line) < HEARTBEAT_S:
                    continue
                self.last_line = now
                oldest = sorted(self.running.items(), key=lambda kv: kv[1])[:2]
            if oldest:
                what = "running " + ", ".join(f"{nodeid} ({now - t0:.0f} s)" for nodeid, t0 in oldest)
            else:
                what = "the workers are starting or collecting"
            if getattr(getattr(tr, "_tw", None), "width_of_current_line", 0):  # after a row of dots
                tr.write("\n")
            tr.write_line(f"[no test finished for {quiet:.0f} s; {what}]")


def pytest_configure(config: pytest.Config) -> None:
    # the xdist controller only: a worker has `workerinput`; without -n, `dist` is "no"
    distributed = getattr(config.option, "dist", "no") != "no"
    if HEARTBEAT_S > 0 and distributed and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Heartbeat(config), "collisionkit-heartbeat")


@pytest.fixture(scope="module")
def panda():
    """The Franka Panda of pybullet_data (8 dof: 7 arm joints and a mimicked finger pair)."""
    from tests.robots import load_robot

    return load_robot("franka_panda", "panda.urdf")


@pytest.fixture(scope="module")
def iiwa():
    """The KUKA iiwa of pybullet_data (7 dof)."""
    from tests.robots import load_robot

    return load_robot("kuka_iiwa", "model.urdf")
