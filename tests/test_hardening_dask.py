"""Dask batches broadcast exactly as numpy batches do (issue 31, item 1).

Checked at the call, not at compute time; a bad pose is named by its index in the whole
batch (``pose_b[987]``, never its index inside a chunk), in the API, the CLI ``sweep``
and on a cluster (``test_distributed_cluster.py``).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tests.distributed_cases import assert_same

import collisionkit as ck
from collisionkit.cli import main
from collisionkit.errors import InvalidPoseError

da = pytest.importorskip("dask.array")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def shapes():
    return ck.primitives.box_mesh([1.0, 1.0, 1.0]), ck.primitives.box_mesh([0.6, 0.7, 0.8])


P1000 = ck.random_poses(1000, 1.5, seed=11)


def lazy(x, chunk=100):
    return da.from_array(x, chunks=(chunk,) + x.shape[1:])


@pytest.mark.parametrize("numpy_poses", [100, 7, 999, 1001])
def test_numpy_batch_beside_a_dask_batch_of_another_length_is_refused_at_the_call(shapes, numpy_poses):
    """Before: 100 numpy poses beside 1000 Dask poses were answered as the numpy batch
    tiled 10 times; 7 were accepted and failed at compute time with a wrong count."""
    a, b = shapes
    P = ck.random_poses(numpy_poses, 1.0, seed=1)
    with pytest.raises(ValueError, match=f"do not broadcast: pose_a has {numpy_poses} poses, pose_b has 1000"):
        ck.intersects(a, b, P, lazy(P1000))  # refused before any graph is built
    with pytest.raises(ValueError, match=f"do not broadcast: pose_a has 1000 poses, pose_b has {numpy_poses}"):
        ck.distance(a, b, lazy(P1000), P)
    with pytest.raises(ValueError, match="do not broadcast"):  # as the numpy path refuses it
        ck.intersects(a, b, P, P1000)


@pytest.mark.parametrize("one", ["(4, 4)", "(1, 4, 4)", "dask (1, 4, 4)"])
def test_one_pose_broadcasts_to_a_dask_batch(shapes, one):
    a, b = shapes
    T = ck.translation([0.3, 0.1, 0.0])
    single = {"(4, 4)": T, "(1, 4, 4)": T[None], "dask (1, 4, 4)": da.from_array(T[None], chunks=(1, 4, 4))}[one]
    P = P1000[:230]
    for query in ("intersects", "contacts", "distance"):
        fn = getattr(ck, query)
        got = fn(a, b, single, lazy(P, 64)).compute()
        assert_same(got, fn(a, b, T[None], P))


def test_dask_batch_of_one_pose_beside_a_numpy_batch(shapes):
    a, b = shapes
    T = ck.translation([0.3, 0.1, 0.0])
    P = P1000[:50]
    got = ck.contacts(a, b, da.from_array(T[None], chunks=(1, 4, 4)), P).compute()
    assert_same(got, ck.contacts(a, b, T[None], P))


def test_time_of_impact_motions_are_checked_at_the_call(shapes):
    a, b = shapes
    with pytest.raises(ValueError, match="start_a has 1000 poses, end_a has 10"):
        ck.time_of_impact(a, b, lazy(P1000), P1000[:10], None, None)
    with pytest.raises(ValueError, match="a moves 1000 times, b 10 times"):
        ck.time_of_impact(a, b, lazy(P1000), None, P1000[:10], None)
    S, E = P1000[:40], P1000[40:80]
    got = ck.time_of_impact(a, b, None, None, lazy(S, 16), E).compute()
    assert_same(got, ck.time_of_impact(a, b, None, None, S, E))


def _bad(P, k):
    P = P.copy()
    P[k, 0, 3] = np.nan
    return P


@pytest.mark.parametrize("chunk", [100, 37, 1000])
def test_a_bad_pose_is_named_by_its_global_index(shapes, chunk):
    """Before: ``pose_b[87]`` for pose 987 (its index inside its chunk)."""
    a, b = shapes
    lazy_rec = ck.intersects(a, b, None, lazy(_bad(P1000, 987), chunk))
    with pytest.raises(InvalidPoseError, match=r"^pose_b\[987\] is not finite") as err:
        lazy_rec.compute()
    assert err.value.index == 987
    # a numpy batch cut per chunk beside a Dask one: its index is global too
    with pytest.raises(InvalidPoseError, match=r"^pose_a\[987\]"):
        ck.contacts(a, b, _bad(P1000, 987), lazy(P1000, chunk)).compute()
    # a bad single pose is refused at the call, named as the numpy path names it
    with pytest.raises(InvalidPoseError, match=r"^pose_a\[0\] is not finite"):
        ck.intersects(a, b, _bad(P1000, 3)[3], P1000)
    with pytest.raises(InvalidPoseError, match=r"^pose_a\[0\] is not finite"):
        ck.intersects(a, b, _bad(P1000, 3)[3], lazy(P1000, chunk))


def test_invalid_pose_error_pickles_with_its_index():
    e = pickle.loads(pickle.dumps(InvalidPoseError("pose_b[987] is not finite", 987)))
    assert isinstance(e, InvalidPoseError) and e.index == 987 and str(e) == "pose_b[987] is not finite"


def test_robot_and_world_errors_name_the_global_row(shapes):
    pybullet_data = pytest.importorskip("pybullet_data")
    robot = ck.Robot.load(os.path.join(pybullet_data.getDataPath(), "kuka_iiwa/model.urdf"))
    Q = robot.random_configurations(120, seed=2)
    Q[57, 3] = np.inf
    with pytest.raises(ValueError, match=r"^q\[57\] holds non-finite values"):
        robot.check(da.from_array(Q, chunks=(10, robot.dof))).compute()
    with pytest.raises(ValueError, match="complex"):
        robot.check(da.from_array(Q.astype(complex), chunks=(10, robot.dof)))
    a, b = shapes
    w = ck.World("sap")
    w.add("a", a)
    w.add("b", b, ck.translation([2.0, 0.0, 0.0]))
    F = np.stack([w.poses] * 60)
    F[33, 1, 0, 0] = 2.0  # frame 33: object 1 not rigid
    with pytest.raises(InvalidPoseError, match=r"^frames\[33\]: ") as err:
        w.run(da.from_array(F, chunks=(8, 2, 4, 4))).compute()
    assert err.value.index == 33


@pytest.fixture
def pair_files(tmp_path):
    paths = []
    for name, size in (("a", [1.0, 1.0, 1.0]), ("b", [0.6, 0.7, 0.8])):
        m = ck.primitives.box_mesh(size)
        lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in m.vertices.tolist()]
        lines += [f"f {i + 1} {j + 1} {k + 1}" for i, j, k in m.faces.tolist()]
        (tmp_path / f"{name}.obj").write_text("\n".join(lines) + "\n")
        paths.append(str(tmp_path / f"{name}.obj"))
    np.save(tmp_path / "poses.npy", _bad(P1000, 987))
    return paths, tmp_path


@pytest.mark.parametrize("chunk", ["100", "64"])
def test_sweep_names_the_global_pose_index(pair_files, capsys, chunk):
    (pa, pb), tmp = pair_files
    code = main(["sweep", str(tmp / "poses.npy"), "--pair", pa, pb, "--chunk", chunk])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err == ["error: pose_b[987] is not finite"]


def test_sweep_on_workers_prints_one_line_and_no_worker_traceback(pair_files):
    pytest.importorskip("distributed")
    (pa, pb), tmp = pair_files
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run(
        [sys.executable, "-m", "collisionkit", "sweep", str(tmp / "poses.npy"), "--pair", pa, pb, "--chunk", "100",
         "--workers", "2"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip() and not line.startswith("collisionkit: compiling")]
    assert lines == ["error: pose_b[987] is not finite"], r.stderr
