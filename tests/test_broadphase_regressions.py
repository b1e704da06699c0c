"""Broad phases at any size spread (issue 18, item 3).

Regressions: a spatial hash with one object 5e6 times larger than the others
hung (its int64 cell count overflowed, so the big object was not treated as
oversize and ~1e20 cells were walked); a tiny ``cell_size`` did the same. Every
broad phase must return the brute-force pair set for size spreads of 1e12 and
for extreme cell sizes, and a World run over many frames must stop on Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import threading

import numpy as np
import pytest
from tests.test_broadphase import BoxShape, as_set, oracle

import collisionkit as ck
from collisionkit.world import BROADPHASES

ALL = sorted(BROADPHASES)


def spread_world(broadphase: str, spread: float, n: int, seed: int, **options) -> ck.World:
    """``n`` unit-ish boxes around the origin plus objects ``spread`` times larger and smaller."""
    rng = np.random.default_rng(seed)
    w = ck.World(broadphase, **options)
    for i in range(n):
        half = rng.uniform(0.2, 1.0, size=3)
        if i % 7 == 0:
            half = half * spread
        elif i % 7 == 1:
            half = half / spread
        T = np.eye(4)
        T[:3, 3] = rng.uniform(-3.0, 3.0, size=3) * (spread if i % 11 == 0 else 1.0)
        w.add(f"o{i}", BoxShape(half), T)
    return w


@pytest.mark.parametrize("broadphase", ALL)
@pytest.mark.parametrize("spread", [5e6, 1e12])
def test_size_spread_equals_brute_force(broadphase, spread):
    w = spread_world(broadphase, spread, 60, seed=int(spread) % 1000)
    ref = spread_world("brute", spread, 60, seed=int(spread) % 1000)
    want = oracle(w)
    assert as_set(ref.candidate_pairs()) == want
    assert as_set(w.candidate_pairs()) == want
    assert len(want) > 0  # the big objects overlap the small ones


def test_hash_one_huge_object_does_not_hang():
    # The reported case: one object 5e6 times larger than the others, default cell.
    w = ck.World(broadphase="hash")
    for i in range(20):
        T = ck.translation([float(i), 0.0, 0.0])
        w.add(f"small{i}", BoxShape([0.3, 0.3, 0.3]), T)
    w.add("huge", BoxShape([1.5e6, 1.5e6, 1.5e6]))
    pairs = as_set(w.candidate_pairs())
    assert pairs == oracle(w)
    assert {(i, 20) for i in range(20)} <= pairs
    assert w.broadphase_stats()["entries"] <= 20 * 8  # the huge object is oversize, not in the table


@pytest.mark.parametrize("broadphase", ["grid", "hash"])
@pytest.mark.parametrize("cell_size", [5e-324, 1e-300, 1e-12, 1e12, 1e300, 1.7e308])
def test_extreme_cell_size_equals_brute_force(broadphase, cell_size):
    w = spread_world(broadphase, 1e3, 40, seed=3, cell_size=cell_size)
    assert as_set(w.candidate_pairs()) == oracle(w)
    # a second frame with objects across the origin (the NaN cell of 0 * inf)
    poses = w.poses.copy()
    poses[:, :3, 3] -= poses[:1, :3, 3]
    w.set_poses(poses)
    assert as_set(w.candidate_pairs()) == oracle(w)


@pytest.mark.parametrize("broadphase", ALL)
def test_coordinates_near_float_range_equal_brute_force(broadphase):
    # Boxes at +-1e300: spans beyond float64 range must not loop forever in the grid.
    w = ck.World(broadphase)
    for i, x in enumerate([-1e300, -1e300, 0.0, 1e300, 1e300]):
        w.add(f"o{i}", BoxShape([1e299, 1.0, 1.0]), ck.translation([x, 0.0, 0.0]))
    want = oracle(w)
    assert as_set(w.candidate_pairs()) == want
    assert (0, 1) in want and (3, 4) in want


@pytest.mark.parametrize("broadphase", ["grid", "hash"])
def test_bad_cell_options_raise(broadphase):
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="cell_size"):
            ck.World(broadphase, cell_size=bad)
    with pytest.raises(ValueError, match="max_per_object"):
        ck.World(broadphase, max_per_object=0)


# Quarantined from the default run (2026-11-28): in full `make test` runs on this machine (2 pytest
# workers, the other one compiling) the SIGINT was not seen until the run had gone through all its
# 10^7 frames, at 960d3a1 and after, from an empty or a filled cache; alone, or with its file
# under -n 2, it passes. Tried without effect: a fresh interpreter for the run, the sending thread
# asking for the GIL until the run ends. Cause not found (issue 32's note of 2026-11-28); run it
# with `make test-slow` or `pytest -m slow -k sigint`. The next day it passed in four full runs
# (a filled and an empty cache, and at the last stop's 1d71c0a): whatever lost the signal was
# in those runs' surroundings. A failure now prints the signal state (`_sigint_state`).
def _sigint_state() -> str:
    """What decides where a SIGINT goes, for the failure message: Python's handler, the
    C-level one (``sigaction``: a native library may replace it behind Python's back) and
    each thread's blocked/ignored/caught signal masks (Linux; elsewhere Python's handler)."""
    lines = [f"Python handler {signal.getsignal(signal.SIGINT)!r}"]
    if not os.path.isdir("/proc/self/task"):
        return lines[0]
    import ctypes

    action = ctypes.create_string_buffer(256)  # struct sigaction: the handler comes first
    ctypes.CDLL(None).sigaction(signal.SIGINT, None, action)
    lines.append(f"C handler {int.from_bytes(action.raw[:8], 'little'):#x}")
    for tid in sorted(os.listdir("/proc/self/task")):
        with open(f"/proc/self/task/{tid}/status") as f:
            masks = [ln.replace("\t", " ") for ln in f.read().splitlines() if ln.startswith(("SigBlk", "SigIgn", "SigCgt"))]
        lines.append(f"thread {tid}: {'; '.join(masks)}")
    lines.append("Python threads: " + ", ".join(t.name for t in threading.enumerate()))
    return "\n".join(lines)


@pytest.mark.slow
def test_run_many_frames_stops_on_sigint():
    """Ctrl-C mid-run raises KeyboardInterrupt between bounded kernel calls."""
    if not hasattr(signal, "SIGINT") or threading.current_thread() is not threading.main_thread():
        pytest.skip("needs SIGINT delivered to the main thread")
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    w = ck.World("sap")
    for i in range(8):
        w.add(f"b{i}", box, ck.translation([0.5 * i, 0.0, 0.0]))
    base = w.poses
    frames_total = 10**7  # far more than can run before the signal lands
    started = threading.Event()
    seen = []

    def frames():
        for f in range(frames_total):
            if f == 2:
                started.set()
            seen.append(f)
            yield base

    def interrupt():
        started.wait()
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=interrupt, daemon=True)
    sender.start()
    before = _sigint_state()
    try:
        w.run(frames())
    except KeyboardInterrupt:
        pass
    else:
        pytest.fail(f"no KeyboardInterrupt after {len(seen)} frames\nbefore the run:\n{before}\nafter:\n{_sigint_state()}")
    sender.join()
    assert 2 <= len(seen) < frames_total


def test_run_returns_each_frame():
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    w = ck.World("hash")
    w.add("a", box)
    w.add("b", box, ck.translation([5.0, 0.0, 0.0]))
    frames = np.stack([w.poses, w.poses])
    frames[1, 1, 0, 3] = 0.5
    got = w.run(frames)
    assert [got.pairs(f).names for f in range(got.n_frames)] == [[], [("a", "b")]]
    assert got.rows.tolist() == [[1, 0, 1]]
    with pytest.raises(ValueError, match="frames"):
        w.run(np.zeros((2, 3, 4, 4)))
