"""Shared cases of the Dask tests (test_distributed.py, test_distributed_cluster.py,
test_distributed_processes.py)."""

from __future__ import annotations

import dataclasses

import numpy as np

import collisionkit as ck


def assert_same(lazy_or_local, local) -> None:
    """Equal answers: arrays exactly (NaN where NaN), other fields equal."""
    if isinstance(local, np.ndarray):
        np.testing.assert_array_equal(lazy_or_local, local)
        assert lazy_or_local.dtype == local.dtype
        return
    assert type(lazy_or_local) is type(local)
    for f in dataclasses.fields(local):
        got, want = getattr(lazy_or_local, f.name), getattr(local, f.name)
        if isinstance(want, np.ndarray):
            assert isinstance(got, np.ndarray), f.name
            assert got.shape == want.shape, f.name
            np.testing.assert_array_equal(got, want, err_msg=f.name)
        else:
            assert got == want, f.name


POSES = ck.random_poses(23, 1.2, seed=3)
ENDS = ck.random_poses(23, 1.2, seed=4)


def lazy(x, chunk=6):
    import dask.array as da

    return da.from_array(x, chunks=(chunk,) + x.shape[1:])


def trajectory_world(shapes):
    a, b = shapes
    w = ck.World("sap")
    w.add("a", a)
    w.add("b", b, ck.translation([2.0, 0.0, 0.0]))
    w.add("s", ck.Sphere(0.5), ck.translation([0.0, 2.0, 0.0]))
    F = np.stack([w.poses] * 40)
    F[:, 1, 0, 3] = np.linspace(-2.0, 2.0, 40)
    F[:, 2, 1, 3] = np.linspace(2.0, -2.0, 40)
    return w, F
