"""A real cluster of separate processes on loopback (issue 17): ``dask scheduler`` and two
``dask worker`` processes, reached by address as a remote cluster would be
(``collisionkit.distributed.connect("tcp://host:port")``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from tests.distributed_cases import POSES, assert_same, lazy, trajectory_world

import collisionkit as ck
from collisionkit._numba import cache_dir
from collisionkit.distributed import kernel_cache_misses

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

TIMEOUT = 120


@pytest.fixture(scope="module")
def address(tmp_path_factory):
    """Start the scheduler and two workers; yield the scheduler's address; stop them."""
    folder = tmp_path_factory.mktemp("dask-cluster")
    scheduler_file = folder / "scheduler.json"
    env = {**os.environ, "COLLISIONKIT_CACHE_DIR": str(cache_dir().parent)}
    common = ["--no-dashboard"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
             "--scheduler-file", str(scheduler_file), *common],
            env=env, stdout=subprocess.DEVNULL, stderr=open(folder / "scheduler.log", "w"),
        )
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + TIMEOUT
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert scheduler_file.exists(), (folder / "scheduler.log").read_text()
        for k in range(2):
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(scheduler_file),
                     "--nthreads", "1", "--nworkers", "1", "--host", "127.0.0.1", *common],
                    env=env, stdout=subprocess.DEVNULL, stderr=open(folder / f"worker{k}.log", "w"),
                )
            )  # fmt: skip
        yield json.loads(scheduler_file.read_text())["address"]
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def test_queries_by_scheduler_address(address):
    assert address.startswith("tcp://127.0.0.1:")
    client = ck.distributed.connect(address)
    try:
        client.wait_for_workers(2, timeout=TIMEOUT)
        assert ck.distributed.connect(client) is client
        assert ck.distributed.active_client() is client
        a, b = ck.primitives.box_mesh([1.0, 1.0, 1.0]), ck.primitives.box_mesh([0.6, 0.7, 0.8])
        assert_same(ck.contacts(a, b, None, lazy(POSES)).compute(), ck.contacts(a, b, None, POSES))
        assert_same(ck.distance(a, b, None, lazy(POSES)).compute(), ck.distance(a, b, None, POSES))
        np.testing.assert_array_equal(
            ck.intersects(a, b, lazy(POSES), None).compute(), ck.intersects(a, b, POSES, None)
        )
        w, F = trajectory_world((a, b))
        assert_same(w.run(da.from_array(F, chunks=(9, 3, 4, 4))).compute(), w.run(F))
        misses = client.run(kernel_cache_misses)
        assert len(misses) == 2 and all(m == {} for m in misses.values()), misses
    finally:
        client.close(timeout=30)
    assert ck.distributed.active_client() is None
