"""Seeded fuzzing of the surfaces hardened by issue 31 (item 7): Dask chunkings and
broadcasting beside numpy batches, bad poses inside chunks, hostile URDF joint fields,
odd configurations and malformed meshes. Only a clear error (a ``CollisionKitError``,
or a ``ValueError``/``TypeError`` with a message) or the numpy path's own answer passes.

Seeded (``derandomize=True``) and bounded: well under a minute in the default run.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.distributed_cases import assert_same

import collisionkit as ck
from collisionkit.errors import CollisionKitError

da = pytest.importorskip("dask.array")

FUZZ = settings(derandomize=True, max_examples=60, deadline=None, suppress_health_check=list(HealthCheck),
                database=None)  # fmt: skip

A = ck.primitives.box_mesh([1.0, 1.0, 1.0])
B = ck.primitives.box_mesh([0.6, 0.7, 0.8])
POOL = ck.random_poses(64, 1.3, seed=21)


def clear(exc: BaseException) -> bool:
    """An error a user can act on: ours, or ValueError/TypeError with a message."""
    return isinstance(exc, (CollisionKitError, ValueError, TypeError)) and bool(str(exc).strip())


def outcome(fn):
    """("ok", value) or ("error", exception): anything else fails the test."""
    try:
        return "ok", fn()
    except Exception as exc:  # noqa: BLE001
        assert clear(exc), f"unclear error {type(exc).__name__}: {exc!r}"
        return "error", exc


@st.composite
def chunked(draw, n):
    """A Dask array of POOL[:n] with random chunk sizes along N."""
    sizes = []
    left = n
    while left > 0:
        c = draw(st.integers(1, max(1, left)))
        sizes.append(c)
        left -= c
    return da.from_array(POOL[:n], chunks=(tuple(sizes) or (0,), 4, 4))


@st.composite
def pose_arg(draw):
    """(numpy value, Dask-or-numpy value given to the lazy call)."""
    kind = draw(st.sampled_from(["none", "single", "batch", "dask", "dask1"]))
    if kind == "none":
        return None, None
    if kind == "single":
        return POOL[5], POOL[5]
    n = draw(st.sampled_from([1, 2, 7, 12, 13]))
    if kind == "batch":
        return POOL[:n], POOL[:n]
    if kind == "dask1":
        return POOL[:1], da.from_array(POOL[:1], chunks=(1, 4, 4))
    return POOL[:n], draw(chunked(n))


@FUZZ
@given(pa=pose_arg(), pb=pose_arg(), query=st.sampled_from(["intersects", "contacts", "distance"]))
def test_dask_broadcasting_matches_numpy(pa, pb, query):
    """Whatever the mix of single poses, numpy and Dask batches and chunkings: the lazy call
    refuses exactly when numpy refuses (at the call), else computes numpy's answer."""
    fn = getattr(ck, query)
    want = outcome(lambda: fn(A, B, pa[0], pb[0]))
    lazy = any(hasattr(x, "__dask_graph__") for x in (pa[1], pb[1]))
    got = outcome(lambda: fn(A, B, pa[1], pb[1]))  # the call itself
    if want[0] == "error":
        assert got[0] == "error", "numpy refused this; the lazy call must refuse at the call"
        return
    assert got[0] == "ok", got[1]
    if not lazy:
        return  # the same numpy call twice
    value = got[1].compute()
    assert_same(np.asarray(value) if isinstance(want[1], np.ndarray) else value, want[1])


@FUZZ
@given(n=st.integers(2, 60), data=st.data())
def test_a_bad_pose_in_any_chunking_names_its_global_index(n, data):
    k = data.draw(st.integers(0, n - 1))
    how = data.draw(st.sampled_from(["nan", "inf", "scale", "last row"]))
    P = POOL[:n].copy()
    if how == "nan":
        P[k, 1, 3] = np.nan
    elif how == "inf":
        P[k, 0, 0] = np.inf
    elif how == "scale":
        P[k, :3, :3] *= 1.5
    else:
        P[k, 3, 0] = 0.25
    lazy = data.draw(chunked(n))
    lazy = da.from_array(P, chunks=lazy.chunks)
    side = data.draw(st.sampled_from(["a", "b"]))
    args = (lazy, None) if side == "a" else (None, lazy)
    with pytest.raises(ck.InvalidPoseError, match=rf"^pose_{side}\[{k}\] ") as err:
        ck.intersects(A, B, *args).compute()
    assert err.value.index == k
    with pytest.raises(ck.InvalidPoseError, match=rf"^pose_{side}\[{k}\] "):  # as numpy names it
        ck.intersects(A, B, *((P, None) if side == "a" else (None, P)))


ARM = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision></link>
  <link name="upper"><collision><origin xyz="{link_xyz}"/><geometry><box size="1.0 0.1 0.1"/></geometry></collision></link>
  <joint name="shoulder" type="{type}">
    <parent link="base"/><child link="upper"/>
    <origin xyz="{xyz}" rpy="{rpy}"/>
    <axis xyz="{axis}"/>
    <limit lower="{lower}" upper="{upper}" effort="1" velocity="1"/>
  </joint>
</robot>
"""

NUMBER = st.sampled_from(["0", "1", "-1", "0.5", "nan", "inf", "-inf", "1e308", "-1e-320", "1e400", "x", "", "0x10"])


@st.composite
def triple(draw):
    return " ".join(draw(st.lists(NUMBER, min_size=draw(st.sampled_from([3, 3, 3, 2, 4])),
                                  max_size=4)))  # fmt: skip


@FUZZ
@given(
    link_xyz=triple(), xyz=triple(), rpy=triple(), axis=triple(), lower=NUMBER, upper=NUMBER,
    type=st.sampled_from(["revolute", "prismatic", "continuous", "fixed", "floating", "planar", "<"]),
    cut=st.one_of(st.none(), st.integers(0, 600)),
)  # fmt: skip
def test_hostile_urdf_fields(tmp_path_factory, link_xyz, xyz, rpy, axis, lower, upper, type, cut):
    text = ARM.format(link_xyz=link_xyz, xyz=xyz, rpy=rpy, axis=axis, lower=lower, upper=upper, type=type)
    if cut is not None:
        text = text[:cut]
    path = tmp_path_factory.mktemp("urdf") / "arm.urdf"
    path.write_text(text)
    status, robot = outcome(lambda: ck.Robot.load(path))
    if status == "error":
        return
    # loaded: every joint and link pose is finite and rigid, and a check answers
    for j in robot.joints:
        assert np.isfinite(j.origin).all() and np.isfinite(j.axis).all()
        assert not j.lower > j.upper
    q = robot.random_configurations(3, seed=0) if robot.dof else np.zeros((3, 0))
    T = robot.link_poses(q)
    assert np.isfinite(T).all()
    assert robot.check(q).shape == (3,)


ODD_Q = st.sampled_from([
    np.zeros((2, 1)), np.zeros(1), np.zeros((2, 2)), np.zeros((2, 1)) + 1j, np.array([[np.nan]]), np.array([["a"]]),
    [[0.1], [0.2]], [[0.1, 0.2]], np.zeros((0, 1)), np.zeros((2, 1, 1)), np.array([[True]]), np.array([[1e308]]),
])  # fmt: skip


@FUZZ
@given(q=ODD_Q, method=st.sampled_from(["link_poses", "within_limits", "check"]))
def test_odd_configurations(tmp_path_factory, q, method):
    path = tmp_path_factory.mktemp("arm") / "arm.urdf"
    path.write_text(ARM.format(link_xyz="0.5 0 0", xyz="0 0 0.2", rpy="0 0 0", axis="0 0 1", lower="-1", upper="1",
                               type="revolute"))  # fmt: skip
    robot = ck.Robot.load(path)
    status, value = outcome(lambda: getattr(robot, method)(q))
    qa = np.asarray(q)
    if np.iscomplexobj(qa) or qa.dtype.kind not in "biuf":
        assert status == "error"
    if status == "ok" and method == "link_poses":
        assert np.isfinite(value).all()


@FUZZ
@given(
    nv=st.integers(0, 6), nf=st.integers(0, 5), data=st.data(),
    poison=st.sampled_from(["none", "nan", "inf", "index", "negative", "float faces", "complex", "shape"]),
)  # fmt: skip
def test_malformed_meshes_then_frozen(nv, nf, data, poison):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    v = rng.normal(size=(nv, 3))
    f = rng.integers(0, max(nv, 1), size=(nf, 3))
    if poison == "nan" and nv:
        v[0, 1] = np.nan
    elif poison == "inf" and nv:
        v[-1, 0] = np.inf
    elif poison == "index":
        f = f + nv
    elif poison == "negative" and nf:
        f[0, 0] = -1
    elif poison == "float faces":
        f = f + 0.5
    elif poison == "complex":
        v = v + 1j
    elif poison == "shape":
        v = v.reshape(-1)
    status, mesh = outcome(lambda: ck.Mesh(v, f))
    if status == "error":
        return
    assert np.isfinite(mesh.vertices).all()
    for arr in (mesh.vertices, mesh.faces, mesh.bounds):
        with pytest.raises(ValueError):
            arr.flags.writeable = True
