"""Dask inputs on the local threaded scheduler, pickling of geometry, and World.run rows
(issue 17). The cluster tests are in test_distributed_cluster.py."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from tests.distributed_cases import ENDS, POSES, assert_same, lazy, trajectory_world

import collisionkit as ck
from collisionkit.distributed import kernel_signatures

da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def shapes():
    a = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    b = ck.primitives.box_mesh([0.6, 0.7, 0.8])
    return a, b


QUERIES = ["contacts", "query_stats", "distance", "penetration", "classify"]


def test_import_does_not_import_dask():
    code = "import sys, collisionkit; print(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=os.environ)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_intersects_returns_a_dask_array(shapes):
    a, b = shapes
    got = ck.intersects(a, b, None, lazy(POSES))
    assert isinstance(got, da.Array) and got.chunks == ((6, 6, 6, 5),)
    assert_same(got.compute(scheduler="threads"), ck.intersects(a, b, None, POSES))
    # either side, and two Dask batches with different chunks
    assert_same(ck.intersects(a, b, lazy(POSES), None).compute(), ck.intersects(a, b, POSES, None))
    got = ck.intersects(a, b, lazy(ENDS, 5), lazy(POSES, 7)).compute()
    assert_same(got, ck.intersects(a, b, ENDS, POSES))


@pytest.mark.parametrize("query", QUERIES)
def test_records_equal_local(shapes, query):
    a, b = shapes
    fn = getattr(ck, query)
    rec = fn(a, b, None, lazy(POSES))
    assert type(rec) is type(fn(a, b, None, POSES[:1]))
    assert rec.lazy
    if query not in ("penetration", "classify"):  # their reprs show the fields
        assert "lazy" in repr(rec)
    assert rec.n_poses == len(POSES)
    assert_same(rec.compute(), fn(a, b, None, POSES))


def test_contacts_rows_carry_global_pose_indices(shapes):
    a, b = shapes
    rec = ck.contacts(a, b, None, lazy(POSES, 4))
    assert np.isnan(rec.pose_index.chunks[0][0])  # rows per chunk are unknown until computed
    assert rec.counts.chunks == ((4,) * 5 + (3,),)
    got = rec.compute()
    local = ck.contacts(a, b, None, POSES)
    assert got.pose_index.max() > 4 and got.pose_index.max() == local.pose_index.max()
    assert_same(got, local)
    assert_same(
        ck.contacts(a, b, None, lazy(POSES), max_pairs=3).compute(), ck.contacts(a, b, None, POSES, max_pairs=3)
    )


def test_to_dataframe(shapes):
    a, b = shapes
    dd = pytest.importorskip("dask.dataframe")
    local = ck.contacts(a, b, None, POSES)
    frame = ck.contacts(a, b, None, lazy(POSES)).to_dataframe()
    assert isinstance(frame, dd.DataFrame) and frame.npartitions == 4
    got = frame.compute()
    assert list(got.columns) == ["pose_index", "face_a", "face_b"]
    want = local.to_dataframe()
    np.testing.assert_array_equal(got.to_numpy(), want.to_numpy())
    assert len(want) == len(local)


def test_convex_shapes_and_time_of_impact(shapes):
    a, _ = shapes
    s = ck.Sphere(0.4)
    assert_same(ck.intersects(a, s, None, lazy(POSES)).compute(), ck.intersects(a, s, None, POSES))
    assert_same(ck.distance(a, s, None, lazy(POSES)).compute(), ck.distance(a, s, None, POSES))
    got = ck.time_of_impact(a, a, None, None, lazy(POSES), lazy(ENDS, 9)).compute()
    assert_same(got, ck.time_of_impact(a, a, None, None, POSES, ENDS))
    # a numpy batch beside a Dask batch is sliced per chunk
    got = ck.time_of_impact(a, a, None, None, lazy(POSES), ENDS).compute()
    assert_same(got, ck.time_of_impact(a, a, None, None, POSES, ENDS))


def test_errors_at_the_call(shapes):
    a, b = shapes
    with pytest.raises(ValueError, match="mode"):
        ck.contacts(a, b, None, lazy(POSES), mode="some")
    with pytest.raises(ValueError, match=r"\(N, 4, 4\)"):
        ck.intersects(a, b, None, da.from_array(np.eye(4)))
    with pytest.raises(ValueError, match="broadcast"):
        ck.intersects(a, b, lazy(POSES[:5]), lazy(POSES))
    with pytest.raises(ValueError, match="unknown"):
        P = lazy(POSES)
        ck.intersects(a, b, None, P[P[:, 0, 3] > 0])


def test_chunks_run_single_threaded_unless_asked(shapes, monkeypatch):
    from collisionkit.query import driver

    seen = []
    real = driver.prepare

    def spy(*args):
        seen.append(args[7])  # threads, as the request path resolves it
        return real(*args)

    monkeypatch.setattr(driver, "prepare", spy)
    a, b = shapes
    ck.intersects(a, b, None, lazy(POSES)).compute(scheduler="sync")
    assert seen and set(seen) == {1}
    seen.clear()
    ck.intersects(a, b, None, lazy(POSES), threads=2).compute(scheduler="sync")
    assert set(seen) == {2}


# -- pickling: geometry ships with its built trees ------------------------------------------------
def test_mesh_pickles_with_its_trees_and_read_only_arrays(shapes, monkeypatch):
    a, b = shapes
    ck.contacts(a, b, None, POSES)  # builds both trees
    data = pickle.dumps(a, protocol=5)
    from collisionkit.bvh import cache

    def no_build(*args, **kwargs):
        raise AssertionError("a tree was rebuilt after unpickling")

    monkeypatch.setattr(cache, "build_tree", no_build)
    m = pickle.loads(data)
    assert not m.vertices.flags.writeable and not m.faces.flags.writeable
    with pytest.raises(ValueError):
        m.vertices.flags.writeable = True
    assert_same(ck.contacts(m, b, None, POSES), ck.contacts(a, b, None, POSES))
    # views that share geometry share it again; an older protocol still gives read-only arrays
    c = a.with_options(leaf_size=2)
    x, y = pickle.loads(pickle.dumps((a, c), protocol=5))
    assert x.shares_geometry(y) and y.options.leaf_size == 2
    old = pickle.loads(pickle.dumps(a, protocol=2))
    assert not old.vertices.flags.writeable


def test_no_new_kernel_signature_after_pickle(shapes):
    """Unpickled geometry runs the kernels compiled for the original (same array types)."""
    a, b = shapes
    s = ck.Sphere(0.4)
    robot_free = (a, b, s)
    for x in robot_free:
        for y in robot_free:
            ck.intersects(x, y, None, POSES)
            ck.distance(x, y, None, POSES)
    ck.contacts(a, b, None, POSES)
    before = kernel_signatures()
    a2, b2, s2 = pickle.loads(pickle.dumps(robot_free, protocol=5))
    for x in (a2, b2, s2):
        for y in (a2, b2, s2):
            ck.intersects(x, y, None, POSES)
            ck.distance(x, y, None, POSES)
    ck.contacts(a2, b2, None, POSES)
    assert kernel_signatures() == before


def test_world_and_robot_pickle(shapes, robot):
    a, b = shapes
    w = ck.World("tree", rel_margin=0.1)
    w.add("a", a)
    w.add("b", b, ck.translation([0.7, 0.0, 0.0]))
    w.add("s", ck.Sphere(0.3), ck.translation([0.0, 0.7, 0.0]))
    w.exclude("a", "s")
    w2 = pickle.loads(pickle.dumps(w, protocol=5))
    assert w2.colliding_pairs().names == w.colliding_pairs().names == [("a", "b")]
    Q = robot.random_configurations(20, seed=1)
    r2 = pickle.loads(pickle.dumps(robot, protocol=5))
    np.testing.assert_array_equal(r2.check(Q), robot.check(Q))


@pytest.fixture(scope="module")
def robot():
    pybullet_data = pytest.importorskip("pybullet_data")
    return ck.Robot.load(os.path.join(pybullet_data.getDataPath(), "kuka_iiwa/model.urdf"))


def test_robot_check_with_a_dask_array(robot, shapes):
    a, _ = shapes
    Q = robot.random_configurations(30, seed=2)
    got = robot.check(da.from_array(Q, chunks=(8, 7)))
    assert isinstance(got, da.Array) and got.chunks == ((8, 8, 8, 6),)
    np.testing.assert_array_equal(got.compute(), robot.check(Q))
    w = ck.World()
    w.add("table", a, ck.translation([0.6, 0.0, 0.5]))
    got = robot.check(da.from_array(Q, chunks=(8, 7)), w, self_collision=False)
    np.testing.assert_array_equal(got.compute(), robot.check(Q, w, self_collision=False))


# -- World.run: rows (frame, object_a, object_b), locally and on Dask ------------------------------------------------
def test_world_run_rows(shapes):
    w, F = trajectory_world(shapes)
    expected = []
    probe = pickle.loads(pickle.dumps(w, protocol=5))
    for f, T in enumerate(F):
        expected += [[f, i, j] for i, j in probe.step(T).rows.tolist()]
    got = w.run(F)
    assert isinstance(got, ck.world.FramePairs) and got.n_frames == 40
    assert got.rows.tolist() == expected
    assert got.counts.sum() == len(got) == len(expected)
    assert got.pairs(20).names == [(w.names[i], w.names[j]) for f, i, j in expected if f == 20]
    np.testing.assert_array_equal(w.poses, F[-1])  # left at the last frame, as step does
    assert list(got.to_dataframe().columns) == ["frame", "object_a", "object_b"]
    assert w.run(F[:0]).rows.shape == (0, 3)


def test_world_run_on_dask_equals_local(shapes):
    w, F = trajectory_world(shapes)
    before = w.poses.copy()
    lazy_rows = w.run(da.from_array(F, chunks=(7, 3, 4, 4)))
    np.testing.assert_array_equal(w.poses, before)  # the world itself is untouched
    assert lazy_rows.lazy and lazy_rows.counts.chunks[0] == (7, 7, 7, 7, 7, 5)
    got = lazy_rows.compute()
    assert_same(got, w.run(F))
    assert len(got) > 0 and got.frame.max() > 7


def test_from_npy_reads_each_chunk_in_its_task(tmp_path, shapes):
    a, b = shapes
    np.save(tmp_path / "poses.npy", POSES)
    P = ck.distributed.from_npy(tmp_path / "poses.npy", 5, row_shape=(4, 4))
    assert P.chunks == ((5, 5, 5, 5, 3), (4,), (4,))
    assert len(dict(P.__dask_graph__())) < 20 and all(
        not isinstance(v, np.ndarray) or v.size < 16 for v in dict(P.__dask_graph__()).values()
    )  # no pose data in the graph
    assert_same(ck.contacts(a, b, None, P).compute(), ck.contacts(a, b, None, POSES))
    with pytest.raises(ValueError, match=r"expected \(N, 7\)"):
        ck.distributed.from_npy(tmp_path / "poses.npy", 5, row_shape=(7,))
    with pytest.raises(FileNotFoundError):
        ck.distributed.from_npy(tmp_path / "missing.npy", 5)
