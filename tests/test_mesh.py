"""Mesh: validation, read-only storage, file loading, shared geometry, lazy tree cache."""

from __future__ import annotations

import dataclasses
import threading
import time

import numpy as np
import pytest

import collisionkit as ck
import collisionkit.bvh.cache as tree_cache
from collisionkit import InvalidMeshError

TET_V = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
TET_F = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]
TRI_V = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


def test_arrays_are_read_only_copies_with_fixed_dtypes():
    v = np.array(TET_V, dtype=np.int64)
    f = np.array(TET_F, dtype=np.int64)
    m = ck.Mesh(v, f)
    assert m.vertices.dtype == np.float64 and m.vertices.shape == (4, 3)
    assert m.faces.dtype == np.int32 and m.faces.shape == (4, 3)
    assert m.surfaces.dtype == np.int32 and np.array_equal(m.surfaces, np.arange(4))  # segmented: 4 creased faces
    assert m.triangles.dtype == np.float64 and m.triangles.shape == (4, 3, 3)
    assert np.array_equal(m.triangles, np.asarray(TET_V, float)[np.asarray(TET_F)])
    for arr in (m.vertices, m.faces, m.surfaces, m.triangles):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = 0
    # copies: the caller's arrays stay writable and changing them changes nothing
    v[0, 0] = 99
    f[0, 0] = 3
    assert m.vertices[0, 0] == 0.0 and m.faces[0, 0] == 0
    assert m.n_faces == 4 and m.n_vertices == 4
    assert np.array_equal(m.bounds, [[0, 0, 0], [1, 1, 1]])


def test_surfaces_and_options_are_kept():
    opts = ck.BuildOptions(bv="obb", split="mean", leaf_size=2)
    m = ck.Mesh(TET_V, TET_F, surfaces=[3, 1, 4, 1], options=opts)
    assert np.array_equal(m.surfaces, [3, 1, 4, 1]) and m.surfaces.dtype == np.int32
    assert m.options == opts and ck.bvh_of(m).options == opts
    assert ck.Mesh(TET_V, TET_F).options == ck.BuildOptions()
    with pytest.raises(InvalidMeshError, match="surfaces"):
        ck.Mesh(TET_V, TET_F, surfaces=[0, 1])
    with pytest.raises(InvalidMeshError, match="surfaces"):
        ck.Mesh(TET_V, TET_F, surfaces=[0.5, 1, 2, 3])


@pytest.mark.parametrize(
    "vertices,faces,words",
    [
        ([[0, 0], [1, 0], [0, 1]], [[0, 1, 2]], ["vertices", "(3, 2)"]),
        ([0.0, 1.0, 2.0], [[0, 1, 2]], ["vertices", "shape"]),
        (np.zeros((2, 3, 3)), [[0, 1, 2]], ["vertices", "shape"]),
        ([["a", 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]], ["vertices", "numeric"]),
        (TRI_V, [[0, 1, 2, 0]], ["faces", "(1, 4)"]),
        (TRI_V, [0, 1, 2], ["faces", "shape"]),
        ([[0, 0, np.nan], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]], ["vertex 0", "finite"]),
        ([[0, 0, 0], [1, np.inf, 0], [0, 1, 0]], [[0, 1, 2]], ["vertex 1", "finite"]),
        ([[0, 0, 0], [1, 0, 0], [-np.inf, 1, 0]], [[0, 1, 2]], ["vertex 2", "finite"]),
        (TRI_V, [[0, 1, 2], [0, 1, 3]], ["face 1", "range"]),
        (TRI_V, [[0, 1, 2], [0, -1, 2]], ["face 1", "range"]),
        (TRI_V, [[0, 1, 2**40]], ["face 0", "range"]),
        (np.zeros((0, 3)), [[0, 1, 2]], ["range"]),
        (TRI_V, np.zeros((0, 3), np.int64), ["no faces"]),
        (TRI_V, [[0, 1, 2.5]], ["integer"]),
        (TRI_V, [[0, 1, np.nan]], ["integer"]),
        (TRI_V, [["a", "b", "c"]], ["integer"]),
        (TRI_V, [[True, False, True]], ["integer"]),
    ],
)
def test_invalid_meshes_raise_naming_the_problem(vertices, faces, words):
    with pytest.raises(InvalidMeshError) as info:
        ck.Mesh(vertices, faces)
    assert isinstance(info.value, ValueError)
    for w in words:
        assert w in str(info.value), f"{w!r} not in {str(info.value)!r}"


def test_degenerate_and_duplicate_geometry_is_accepted():
    v = [[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 0, 0], [0, 1, 0]]
    f = [[0, 1, 2], [0, 0, 0], [0, 3, 4], [1, 1, 4], [0, 1, 4]]  # segment, point, dup vertex, ...
    m = ck.Mesh(v, f)
    assert m.n_faces == 5
    ck.bvh_of(m).validate(m.triangles)
    # integral float faces are indices too
    assert np.array_equal(ck.Mesh(TRI_V, [[0.0, 1.0, 2.0]]).faces, [[0, 1, 2]])
    # the segment (face 0) and point (face 1) intersect a triangle through them
    wall = ck.Mesh([[0.5, -1, -1], [0.5, 1, -1], [0.5, 0, 1]], [[0, 1, 2]])
    c = ck.contacts(m, wall)
    assert (0, 0) in set(map(tuple, c.pairs(0)))
    point_wall = ck.Mesh([[0, -1, -1], [0, 1, -1], [0, 0, 1]], [[0, 1, 2]])
    assert (1, 0) in set(map(tuple, ck.contacts(m, point_wall).pairs(0)))


# --- files -----------------------------------------------------------------------------


def _shuffled_sphere():
    trimesh = pytest.importorskip("trimesh")
    ico = trimesh.creation.icosphere(subdivisions=1)
    v = np.round(ico.vertices * 64) / 64  # exact in float32 (STL) and in text
    f = np.random.default_rng(0).permutation(ico.faces)  # a face order no loader would pick
    f = np.roll(f, 1, axis=1)
    return trimesh.Trimesh(v, f, process=False), v, f


@pytest.mark.parametrize("ext", ["stl", "obj", "ply", "off", "glb"])
def test_load_keeps_the_files_face_order(tmp_path, ext):
    tm, v, f = _shuffled_sphere()
    path = tmp_path / f"sphere.{ext}"
    tm.export(path)
    m = ck.load_mesh(path)
    assert m.n_faces == len(f)
    assert np.array_equal(m.triangles, v[f]), "faces were reordered or vertices changed"
    assert np.array_equal(m.surfaces, np.zeros(len(f)))
    assert m.name == f"sphere.{ext}"
    m2 = ck.load_mesh(str(path), options=ck.BuildOptions(bv="obb"))
    assert m2.options.bv == "obb" and np.array_equal(m2.triangles, m.triangles)


def test_load_handwritten_obj_keeps_order(tmp_path):
    path = tmp_path / "quad.obj"
    path.write_text("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 3 4 1\nf 1 2 3\nf 2 4 3\n")
    m = ck.load_mesh(path)
    expected = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], float)[[[2, 3, 0], [0, 1, 2], [1, 3, 2]]]
    assert np.array_equal(m.triangles, expected)


MULTI_OBJ = """\
o first
v 0 0 0
v 1 0 0
v 0 1 0
v 0 0 1
f 1 2 3
f 1 3 4
o second
v 2 0 0
v 3 0 0
v 2 1 0
f 5 6 7
f 7 6 5
f 5 7 6
"""
MULTI_OBJ_X = [[0, 1, 0], [0, 0, 0], [2, 3, 2], [2, 3, 2], [2, 2, 3]]


def test_load_multi_object_obj_keeps_face_order(tmp_path):
    path = tmp_path / "multi.obj"
    path.write_text(MULTI_OBJ)
    m = ck.load_mesh(path)
    assert m.n_faces == 5
    assert np.array_equal(m.triangles[:, :, 0], MULTI_OBJ_X)


def test_load_multi_object_obj_gives_per_face_surfaces(tmp_path):
    path = tmp_path / "multi.obj"
    path.write_text(MULTI_OBJ)
    m = ck.load_mesh(path)
    assert np.array_equal(m.triangles[:, :, 0], MULTI_OBJ_X)
    assert np.array_equal(m.surfaces, [0, 0, 1, 1, 1])


def test_load_obj_groups_give_surfaces(tmp_path):
    path = tmp_path / "groups.obj"
    path.write_text(MULTI_OBJ + "g third\nv 4 0 0\nv 5 0 0\nv 4 1 0\nf 8 9 10\n")
    m = ck.load_mesh(path)
    assert np.array_equal(m.triangles[:, :, 0], MULTI_OBJ_X + [[4, 5, 4]])
    assert np.array_equal(m.surfaces, [0, 0, 1, 1, 1, 2])


def test_load_glb_with_two_nodes_in_file_order(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    tm, v, f = _shuffled_sphere()
    small = trimesh.Trimesh(v + 3.0, f[:10], process=False)
    scene = trimesh.Scene()
    scene.add_geometry(tm, geom_name="first", node_name="first")
    scene.add_geometry(small, geom_name="second", node_name="second")
    path = tmp_path / "two.glb"
    scene.export(path)
    m = ck.load_mesh(path)
    assert m.n_faces == len(f) + 10
    assert np.array_equal(np.bincount(m.surfaces), [len(f), 10])
    assert np.array_equal(m.triangles, np.concatenate([v[f], v[f[:10]] + 3.0]))
    assert np.array_equal(m.surfaces, np.repeat([0, 1], [len(f), 10]))


def test_load_errors(tmp_path):
    with pytest.raises(InvalidMeshError, match="no such file"):
        ck.load_mesh(tmp_path / "missing.obj")
    with pytest.raises(InvalidMeshError, match="no such file"):
        ck.load_mesh(tmp_path)  # a folder
    bad = tmp_path / "bad.stl"
    bad.write_bytes(b"garbage" * 3)
    with pytest.raises(InvalidMeshError, match="bad.stl"):
        ck.load_mesh(bad)
    ply = tmp_path / "bad.ply"
    ply.write_text("ply\nformat ascii 1.0\nelement vertex 3\nend_header\n0 0\n")
    with pytest.raises(InvalidMeshError, match="bad.ply"):
        ck.load_mesh(ply)
    points = tmp_path / "points.obj"
    points.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\n")
    with pytest.raises(InvalidMeshError, match="points.obj"):
        ck.load_mesh(points)


def test_from_trimesh():
    trimesh = pytest.importorskip("trimesh")
    tm, v, f = _shuffled_sphere()
    m = ck.mesh_from_trimesh(tm)
    assert np.array_equal(m.vertices, v) and np.array_equal(m.faces, f)
    assert ck.mesh_from_trimesh(tm, options=ck.BuildOptions(leaf_size=1)).options.leaf_size == 1
    box = trimesh.creation.box()
    scene = trimesh.Scene()
    scene.add_geometry(box, geom_name="box")
    scene.add_geometry(tm, geom_name="sphere", transform=trimesh.transformations.translation_matrix([4, 0, 0]))
    m = ck.mesh_from_trimesh(scene)
    assert m.n_faces == 12 + len(f)
    assert np.array_equal(m.surfaces, np.repeat([0, 1], [12, len(f)]))
    assert np.allclose(m.triangles[12:], v[f] + [4, 0, 0])
    with pytest.raises(InvalidMeshError):
        ck.mesh_from_trimesh(trimesh.PointCloud(v))


# --- shared geometry and the tree cache -----------------------------------------------------


def test_with_options_shares_geometry_and_tree_cache():
    m = ck.primitives.uv_sphere_mesh(1.0, 8, 16)
    obb = m.with_options(ck.BuildOptions(bv="obb"))
    med = m.with_options(split="median", leaf_size=2)
    assert obb.options == ck.BuildOptions(bv="obb")
    assert med.options == ck.BuildOptions(split="median", leaf_size=2)
    assert m.options == ck.BuildOptions()  # unchanged
    for other in (obb, med):
        assert m.shares_geometry(other) and other.shares_geometry(m)
        assert other.vertices is m.vertices and other.faces is m.faces and other.triangles is m.triangles
    # one tree per options, whichever view asks
    assert ck.bvh_of(obb) is ck.bvh_of(m, ck.BuildOptions(bv="obb"))
    assert ck.bvh_of(med) is ck.bvh_of(m, ck.BuildOptions(split="median", leaf_size=2))
    assert ck.bvh_of(m) is ck.bvh_of(obb, ck.BuildOptions())
    assert ck.bvh_of(m) is not ck.bvh_of(obb)
    # the same arrays given twice are not the same geometry
    assert not ck.Mesh(m.vertices, m.faces).shares_geometry(m)
    with pytest.raises(TypeError):
        m.with_options(ck.BuildOptions(), leaf_size=2)
    with pytest.raises(ValueError):
        m.with_options(bv="cylinder")
    with pytest.raises(TypeError):
        ck.Mesh(TET_V, TET_F, options={"bv": "obb"})


def test_bvh_is_cached_and_fresh_build_is_not():
    m = ck.primitives.torus_mesh()
    t = ck.bvh_of(m)
    assert ck.bvh_of(m) is t and ck.bvh_of(m, ck.BuildOptions()) is t
    fresh = ck.build_bvh(m)
    assert fresh is not t
    assert np.array_equal(fresh.topology, t.topology) and np.array_equal(fresh.volumes, t.volumes)


def test_lazy_tree_is_built_once_under_concurrent_first_use(monkeypatch):
    calls = []
    real_build = tree_cache.build_tree

    def slow_counting_build(triangles, options):
        calls.append(options)
        time.sleep(0.2)  # widen the window in which other threads ask too
        return real_build(triangles, options)

    monkeypatch.setattr(tree_cache, "build_tree", slow_counting_build)
    m = ck.primitives.uv_sphere_mesh(1.0, 12, 24)
    views = [m, m.with_options(leaf_size=4)] * 4  # 8 views, same options, same geometry
    barrier = threading.Barrier(8)
    results = [None] * 8

    def ask(k):
        barrier.wait()
        results[k] = ck.bvh_of(views[k])

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert all(r is results[0] for r in results), "threads got different trees"
    assert len(calls) == 1, f"the tree was built {len(calls)} times"
    assert ck.bvh_of(m) is results[0]

    # different options asked at once: each built exactly once
    calls.clear()
    opts = [ck.BuildOptions(leaf_size=k) for k in (1, 2, 3, 5)] * 2
    barrier = threading.Barrier(8)

    def ask_opts(k):
        barrier.wait()
        results[k] = ck.bvh_of(m, opts[k])

    threads = [threading.Thread(target=ask_opts, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(o.leaf_size for o in calls) == [1, 2, 3, 5]
    for k in range(4):
        # "auto" builds the kind it picks for the mesh; the tree's options name it
        resolved = dataclasses.replace(opts[k], bv=ck.bvh.choose_volume(m).bv)
        assert results[k] is results[k + 4] and results[k].options == resolved


def test_concurrent_first_queries_build_once(monkeypatch):
    calls = []
    real_build = tree_cache.build_tree

    def counting_build(triangles, options):
        calls.append(options)
        time.sleep(0.1)
        return real_build(triangles, options)

    monkeypatch.setattr(tree_cache, "build_tree", counting_build)
    a = ck.primitives.torus_mesh(rings=20, segments=10)
    b = ck.primitives.box_mesh([0.5, 0.5, 0.5])
    poses = ck.random_poses(16, radius=1.0, seed=1)
    barrier = threading.Barrier(8)
    out = [None] * 8

    def query(k):
        barrier.wait()
        out[k] = ck.intersects(a, b, None, poses)

    threads = [threading.Thread(target=query, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert all(np.array_equal(o, out[0]) for o in out)
    assert len(calls) == 2  # one tree per mesh
