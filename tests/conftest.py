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
