"""Frozen means frozen (issue 31, item 3).

Every array a shape, tree, robot or record hands out stays read-only when a user sets
``flags.writeable = True`` (numpy refuses: each is a view of read-only storage, or a
copy over immutable bytes); what the kernels use cannot be edited through them; and
a World still reports the collision ``intersects`` reports after the attempt.

Before: ``Mesh.bounds``, ``Convex``/``Box`` ``bounds`` and ``halfspaces`` could be made
writable and rewritten (a World then missed a collision); ``Convex.kernel_args()``
handed out the live GJK arrays (editing them took the hits of 500 poses from 174 to 0);
``Robot.limits`` could be made writable; ``robot.link_meshes[...] = ...`` was accepted
and ignored.
"""

from __future__ import annotations

import numpy as np
import pytest

import collisionkit as ck


def _flip_refused(a: np.ndarray) -> None:
    assert isinstance(a, np.ndarray)
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a.flags.writeable = True
    with pytest.raises(ValueError):
        a[...] = 0


def _world_sees(a, b, T) -> bool:
    w = ck.World()
    w.add("a", a)
    w.add("b", b, T)
    return len(w.colliding_pairs()) == 1


SHAPES = {
    "mesh": lambda: ck.primitives.box_mesh([1.0, 1.0, 1.0]),
    "box": lambda: ck.Box([1.0, 1.0, 1.0]),
    "convex": lambda: ck.Convex(ck.primitives.box_mesh([1.0, 1.0, 1.0]).vertices),
    "sphere": lambda: ck.Sphere(0.5),
}


@pytest.mark.parametrize("kind", list(SHAPES))
def test_shape_arrays_cannot_be_made_writable_and_the_world_still_sees_the_collision(kind):
    a = SHAPES[kind]()
    b = ck.Sphere(0.3)
    T = ck.translation([0.7, 0.0, 0.0])
    assert ck.intersects(a, b, None, T)
    exposed = [a.bounds]
    if hasattr(a, "halfspaces"):
        exposed += list(a.halfspaces)
    if isinstance(a, ck.Mesh):
        exposed += [a.vertices, a.faces, a.triangles, a.surfaces]
        tree = ck.bvh_of(a)
        exposed += [tree.topology, tree.volumes, tree.leaf_faces]
    else:
        exposed += [a.mesh.vertices, a.mesh.bounds]
    for arr in exposed:
        _flip_refused(arr)
        if arr.base is not None and isinstance(arr.base, np.ndarray):
            with pytest.raises(ValueError):  # not through its base either
                arr.base.flags.writeable = True
    assert ck.intersects(a, b, None, T)
    assert _world_sees(a, b, T)


def test_kernel_args_are_copies():
    """Editing what ``kernel_args()`` returns changes no answer (before: 174 hits -> 0)."""
    c = SHAPES["convex"]()
    s = ck.Sphere(0.4)
    P = ck.random_poses(500, 1.2, seed=4)
    before = np.asarray(ck.intersects(c, s, None, P))
    kind_code, core, params, tris, scale = c.kernel_args()
    core[:] = 1e6
    tris[:] = 1e6
    params[:] = 0.0
    np.testing.assert_array_equal(np.asarray(ck.intersects(c, s, None, P)), before)
    assert before.sum() > 0


def test_mesh_geometry_and_options_cannot_be_assigned():
    m = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    for name, value in (("options", ck.BuildOptions(bv="obb")), ("vertices", np.zeros((3, 3))), ("_geom", None)):
        with pytest.raises(AttributeError):
            setattr(m, name, value)
    m.name = "label"  # a label only: io.load_mesh names meshes after their files
    assert m.name == "label"


@pytest.mark.parametrize(
    "query",
    ["contacts", "distance", "penetration", "classify", "query_stats", "surface_contacts", "node_visits",
     "contact_geometry", "time_of_impact"],
)  # fmt: skip
def test_record_arrays_cannot_be_made_writable(query):
    a = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    P = ck.random_poses(20, 0.8, seed=2)
    if query == "time_of_impact":
        rec = ck.time_of_impact(a, a, None, None, P, ck.random_poses(20, 0.8, seed=3))
    else:
        rec = getattr(ck, query)(a, a, None, P)
    arrays = [v for v in vars(rec).values() if isinstance(v, np.ndarray)]
    assert arrays
    for arr in arrays:
        _flip_refused(arr)


def test_world_records_cannot_be_made_writable():
    w = ck.World()
    w.add("a", ck.primitives.box_mesh([1.0, 1.0, 1.0]))
    w.add("b", ck.Sphere(0.5), ck.translation([0.6, 0.0, 0.0]))
    F = np.stack([w.poses] * 4)
    rows = w.run(F)
    for arr in (rows.frame, rows.object_a, rows.object_b, rows.counts):
        _flip_refused(arr)


def test_robot_limits_and_meshes_are_read_only():
    pybullet_data = pytest.importorskip("pybullet_data")
    import os

    robot = ck.Robot.load(os.path.join(pybullet_data.getDataPath(), "kuka_iiwa/model.urdf"))
    _flip_refused(robot.limits)
    for j in robot.joints:
        _flip_refused(j.origin)
        _flip_refused(j.axis)
    name = next(iter(robot.link_meshes))
    with pytest.raises(TypeError):
        robot.link_meshes[name] = ck.primitives.box_mesh([5.0, 5.0, 5.0])
    import pickle

    again = pickle.loads(pickle.dumps(robot, protocol=5))  # shipped to a Dask worker
    _flip_refused(again.limits)
    _flip_refused(again.joints[0].origin)
    with pytest.raises(TypeError):
        again.link_meshes[name] = None
