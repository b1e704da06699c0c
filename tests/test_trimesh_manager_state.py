"""``collisionkit.trimesh``: the drop-in holds no user data and survives failed calls (issue 31 item 5).

* The conversion cache (``as_mesh``) is keyed weakly and bounded in bytes: deleted user
  meshes are freed with their trees, live ones beyond the budget are let go.
* A manager keeps a conversion only while one of its objects uses it.
* A failed ``add_object`` (an unhashable name, a name whose ``__eq__`` raises, a bad pose,
  a bad mesh) leaves the manager exactly as it was and usable, as trimesh's manager is.
"""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest
import trimesh

import collisionkit as ck
from collisionkit import trimesh as ckt
from collisionkit.trimesh import CollisionManager

BOX = trimesh.creation.box([1, 1, 1])


def T(x=0.0, y=0.0, z=0.0):
    return trimesh.transformations.translation_matrix([x, y, z])


def _live_meshes(n_faces: int) -> int:
    """collisionkit Meshes alive with ``n_faces`` faces (an unusual count marks a test's meshes)."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, ck.Mesh) and o.n_faces == n_faces)


def _cylinder(k: int) -> trimesh.Trimesh:
    # 4 * 61 faces: a count no other test's mesh has; k moves it so every one is new
    return trimesh.creation.cylinder(radius=0.5 + 0.01 * k, height=1.0, sections=61)


def test_deleted_user_meshes_are_freed_with_their_trees():
    n_faces = len(_cylinder(0).faces)
    before = _live_meshes(n_faces)
    c = CollisionManager()
    meshes = [_cylinder(k) for k in range(20)]
    for k, m in enumerate(meshes):
        c.add_object(k, m, T(3.0 * k))
    probe = _cylinder(99)
    assert c.in_collision_single(probe, T(0.2)) and c.min_distance_single(probe, T(1.5)) < 0  # trees built
    assert ck.bvh_of(c._objs[0].mesh) is not None
    assert _live_meshes(n_faces) == before + 21
    for k in range(20):
        c.remove_object(k)
    assert not c._meshes and not c._uses  # the manager holds no conversion without an object
    del meshes, m, probe
    # the old cache kept every converted mesh (up to 4,096 of them) and its trees alive
    assert _live_meshes(n_faces) == before
    assert c.min_distance_internal() == math.inf and len(c) == 0


def test_live_probe_meshes_beyond_the_byte_budget_are_let_go(monkeypatch):
    monkeypatch.setattr(ckt, "MESH_CACHE_BYTES", 2 * 2**20)
    ckt._MESHES.clear()
    c = CollisionManager()
    c.add_object("box", BOX)
    probes = [trimesh.creation.icosphere(3, 0.3 + 0.001 * k) for k in range(12)]  # kept alive by the test
    one = ckt.mesh_nbytes(ckt.as_mesh(probes[0]))
    for k, p in enumerate(probes):
        assert c.in_collision_single(p, T(0.6)) is True
        assert c.min_distance_single(p, T(3.0)) == pytest.approx(3.0 - 0.5 - (0.3 + 0.001 * k), rel=1e-2)
    # queries build trees after the conversion: found again, an entry is measured again
    grown = ckt.mesh_nbytes(ckt.as_mesh(probes[-1]))
    assert grown > 2 * one
    assert 1 <= len(ckt._MESHES) <= ckt.MESH_CACHE_ENTRIES and len(ckt._MESHES) < len(probes)
    assert ckt._MESHES.nbytes() <= max(ckt.MESH_CACHE_BYTES, grown)


def test_the_conversion_cache_is_keyed_weakly_and_by_content():
    gc.collect()
    ckt._MESHES.clear()
    keep = trimesh.creation.icosphere(1, 0.5)
    ckt.as_mesh(keep)
    m = trimesh.creation.icosphere(2, 0.5)
    a = ckt.as_mesh(m)
    assert ckt.as_mesh(m) is a  # asked again: the same conversion (and tree)
    m.vertices = m.vertices * 2.0  # changed in place: converted again
    b = ckt.as_mesh(m)
    assert b is not a and np.allclose(b.vertices, 2.0 * np.asarray(a.vertices))
    assert len(ckt._MESHES) == 2  # one entry per trimesh object
    del m
    gc.collect()
    assert len(ckt._MESHES) == 1 and ckt.as_mesh(keep) is ckt.as_mesh(keep)  # its entry went with it


def test_scene_instances_share_one_conversion_without_the_global_cache():
    ring = trimesh.creation.annulus(0.5, 1.0, 1.0, sections=16)
    c = CollisionManager()
    objs = []
    for k in range(3):
        ckt._MESHES.clear()  # the manager shares its objects' conversions on its own
        objs.append(c.add_object(f"r{k}", ring, T(3.0 * k)))
    assert objs[0].mesh is objs[1].mesh is objs[2].mesh
    c.remove_object("r0")
    c.remove_object("r1")
    assert len(c._meshes) == 1
    c.remove_object("r2")
    assert not c._meshes


class _Clash:
    """A name that hashes like "a" and whose comparison raises."""

    def __hash__(self) -> int:
        return hash("a")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparing me")


def _scene(m) -> None:
    m.add_object("a", BOX)
    m.add_object("b", BOX, T(0.5))
    m.add_object("c", BOX, T(5.0))


@pytest.mark.parametrize(
    "name, error",
    [(["unhashable"], TypeError), ({"a": 1}, TypeError), (_Clash(), RuntimeError)],
    ids=["list", "dict", "eq-raises"],
)
def test_failed_add_object_leaves_the_manager_usable_as_trimesh(name, error):
    from trimesh import collision as tc

    pytest.importorskip("fcl")
    f, c = tc.CollisionManager(), CollisionManager()
    for m in (f, c):
        _scene(m)
        with pytest.raises(error):
            m.add_object(name, BOX, T(0.25))
    # both managers answer as before the failed call (the old one raised KeyError here)
    assert len(c) == 3 and len(c.world.names) == 3 and len(c._meshes) == 1 and len(c._uses) == 3
    assert c.in_collision_internal(return_names=True) == f.in_collision_internal(return_names=True)
    assert c.in_collision_single(BOX, T(4.5), return_names=True) == f.in_collision_single(BOX, T(4.5), return_names=True)
    got, want = c.min_distance_single(BOX, T(0, 3.0), return_name=True), f.min_distance_single(BOX, T(0, 3.0), return_name=True)
    assert got[0] == pytest.approx(want[0], rel=1e-6) and got[1] == want[1]
    assert c.min_distance_internal("c", return_names=True)[1] == ("b", "c")
    c.remove_object("a")
    c.add_object("d", BOX, T(5.5))
    assert len(c) == 3 and c.in_collision_internal(return_names=True) == (True, {("c", "d")})


def test_failed_add_object_with_a_bad_pose_or_mesh_changes_nothing():
    c = CollisionManager()
    _scene(c)
    state = (dict(c._objs), dict(c._key), dict(c._name), dict(c._meshes), dict(c._uses), c.world.names)
    fresh = trimesh.creation.icosphere(1, 0.2)
    for args in ((fresh, np.diag([2.0, 1, 1, 1])), (fresh, np.full((4, 4), np.nan)), ("mesh.stl", None)):
        with pytest.raises((ValueError, TypeError)):
            c.add_object("a", *args)  # replacing "a": nothing replaced
    assert (dict(c._objs), dict(c._key), dict(c._name), dict(c._meshes), dict(c._uses), c.world.names) == state
    assert c.in_collision_internal(return_names=True) == (True, {("a", "b")})
