"""Every batched query on a real dask.distributed scheduler on loopback (issue 17): a
LocalCluster of 2 worker processes, started once for this module.

The workers inherit the kernel cache folder (``make test`` runs ``collisionkit warmup``
first), so a worker that compiles a kernel fails a test here.
"""

from __future__ import annotations

import concurrent.futures
import os
import pickle
import sys

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.distributed import kernel_cache_misses, kernel_signatures, shipped_bytes

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
cloudpickle = pytest.importorskip("cloudpickle")

from tests.distributed_cases import ENDS, POSES, assert_same, lazy, trajectory_world  # noqa: E402

# the worker processes cannot import this test module: ship its functions by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])

#: No test may hang CI: every computation has this long (a cold worker start included).
TIMEOUT = 240


def within(fn, seconds: float = TIMEOUT):
    """``fn()``, or a failure after ``seconds`` (a hung cluster fails instead of stalling)."""
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        return pool.submit(fn).result(timeout=seconds)
    finally:
        pool.shutdown(wait=False)


@pytest.fixture(scope="module")
def client():
    c = within(lambda: ck.distributed.local_cluster(2, threads_per_worker=1, timeout="60s"))
    assert ck.distributed.active_client() is c
    yield c
    c.close(timeout=30)


@pytest.fixture(scope="module")
def shapes():
    return ck.primitives.box_mesh([1.0, 1.0, 1.0]), ck.primitives.box_mesh([0.6, 0.7, 0.8])


@pytest.fixture(scope="module")
def robot():
    pybullet_data = pytest.importorskip("pybullet_data")
    return ck.Robot.load(os.path.join(pybullet_data.getDataPath(), "kuka_iiwa/model.urdf"))


def run_every_query(a, b, robot=None) -> None:
    """Every batched query on the cluster against its local answer."""
    s = ck.Sphere(0.4)
    assert_same(within(ck.intersects(a, b, None, lazy(POSES)).compute), ck.intersects(a, b, None, POSES))
    assert_same(within(ck.intersects(a, s, lazy(POSES), None).compute), ck.intersects(a, s, POSES, None))
    for query in ("contacts", "query_stats", "distance", "penetration", "classify"):
        fn = getattr(ck, query)
        assert_same(within(fn(a, b, None, lazy(POSES)).compute), fn(a, b, None, POSES))
    assert_same(within(ck.distance(s, a, lazy(POSES), None).compute), ck.distance(s, a, POSES, None))
    got = within(ck.time_of_impact(a, b, None, None, lazy(POSES), lazy(ENDS)).compute)
    assert_same(got, ck.time_of_impact(a, b, None, None, POSES, ENDS))
    if robot is not None:
        Q = robot.random_configurations(24, seed=5)
        assert_same(within(robot.check(da.from_array(Q, chunks=(7, 7))).compute), robot.check(Q))


def test_every_query_equals_local(client, shapes, robot):
    a, b = shapes
    run_every_query(a, b, robot)
    frames = ck.contacts(a, b, None, lazy(POSES)).to_dataframe()
    got = within(frames.compute)
    np.testing.assert_array_equal(got.to_numpy(), ck.contacts(a, b, None, POSES).to_dataframe().to_numpy())


def test_world_run_on_cluster(client, shapes):
    w, F = trajectory_world(shapes)
    got = within(w.run(da.from_array(F, chunks=(6, 3, 4, 4))).compute)
    assert_same(got, w.run(F))


def test_a_bad_pose_on_a_worker_is_named_by_its_global_index(client, shapes):
    """Issue 31: the worker's error names pose 987 of the batch (not 87 of its chunk), and
    the index survives the trip back (``InvalidPoseError`` pickles with it)."""
    a, b = shapes
    P = ck.random_poses(1000, 1.5, seed=11)
    P[987, 0, 3] = np.nan
    with pytest.raises(ck.InvalidPoseError, match=r"^pose_b\[987\] is not finite") as err:
        within(ck.intersects(a, b, None, da.from_array(P, chunks=(100, 4, 4))).compute)
    assert err.value.index == 987


def test_workers_compile_nothing_and_gain_no_signature(client, shapes, robot):
    """Workers load every kernel from the inherited cache, and geometry that arrived
    pickled runs the kernels' one signature (a read-only array where the kernel was
    compiled for a writable one, or the reverse, would add a second)."""
    a, b = shapes
    warmed = within(lambda: ck.distributed.warm_workers(client))
    assert len(warmed) == 2 and all(w["seconds"] >= 0 for w in warmed.values())
    run_every_query(a, b, robot)
    misses = within(lambda: client.run(kernel_cache_misses))
    assert len(misses) == 2
    assert all(m == {} for m in misses.values()), f"workers compiled kernels: {misses}"
    for worker, sigs in within(lambda: client.run(kernel_signatures)).items():
        assert sigs, f"{worker} ran no kernel"
        several = {k: v for k, v in sigs.items() if len(v) > 1}
        assert not several, f"{worker}: kernels with a second signature after the trip: {several}"


def test_geometry_is_shipped_once_not_per_chunk(client, robot):
    """The graph holds a reference to the scattered robot, not a copy per chunk."""
    Q = robot.random_configurations(64, seed=1)
    lazy_hits = robot.check(da.from_array(Q, chunks=(8, 7)))
    graph = dict(lazy_hits.__dask_graph__())
    graph_bytes = len(cloudpickle.dumps(graph, protocol=5))
    robot_bytes = shipped_bytes(robot)
    assert robot_bytes > 1_000_000  # the robot travels with its built trees
    assert graph_bytes < robot_bytes / 20, (graph_bytes, robot_bytes)
    assert_same(within(lazy_hits.compute), robot.check(Q))
    # unpickling ships the trees: a worker never rebuilds them
    copy = pickle.loads(pickle.dumps(robot, protocol=5))
    mesh = next(iter(copy.link_meshes.values()))
    assert any(k[0] == "bvh" for k in mesh._geom._cache)


def _die_once(block, marker):
    """Kill this worker process the first time any chunk gets here (the marker file decides)."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return block
    os.close(fd)
    os._exit(1)


def test_killed_worker_loses_nothing(client, shapes, tmp_path):
    """A chunk kills its worker on its first attempt: Dask reruns it (and whatever the
    dead worker held) on the survivors and the restarted worker; the answer is complete."""
    a, b = shapes
    marker = str(tmp_path / "died")
    P = ck.random_poses(60, 1.2, seed=11)
    # meta given: map_blocks would otherwise call _die_once here, in the test process
    poses = da.from_array(P, chunks=(6, 4, 4)).map_blocks(_die_once, marker, dtype=np.float64, meta=np.empty((0, 4, 4)))
    got = within(ck.contacts(a, b, None, poses).compute)
    assert os.path.exists(marker), "no chunk ran the kill"
    assert_same(got, ck.contacts(a, b, None, P))
    hits = within(ck.intersects(a, b, None, poses).compute)
    np.testing.assert_array_equal(hits, ck.intersects(a, b, None, P))
