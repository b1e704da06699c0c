"""Surfaces from segmentation (geometry/segmentation.py) and their place in Mesh."""

from __future__ import annotations

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.geometry.segmentation import connected_components, face_adjacency, segment_surfaces


def _unwelded(mesh):
    """The same triangles with every face on its own three vertices (as OBJ exports with normals do)."""
    tris = mesh.triangles.reshape(-1, 3)
    return ck.Mesh(tris, np.arange(tris.shape[0]).reshape(-1, 3))


def test_box_has_six_sides_numbered_by_first_face():
    box = ck.primitives.box_mesh([1, 2, 3])
    assert box.surfaces.tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    # welding by exact coordinates: an unwelded copy segments the same way
    assert np.array_equal(_unwelded(box).surfaces, box.surfaces)


def test_smooth_sphere_is_one_surface_and_crease_angle_splits_it():
    sphere = ck.primitives.uv_sphere_mesh(1.0, 16, 32)
    assert np.unique(sphere.surfaces).tolist() == [0]
    # neighbouring quads differ by about 11 degrees: a 5 degree rule keeps only each
    # planar quad's two triangles (and the flatter faces near the poles) together
    fine = segment_surfaces(sphere.vertices, sphere.faces, feature_angle=5.0)
    assert 300 < np.unique(fine).size < sphere.n_faces
    quads = sphere.faces[32:-32].reshape(-1, 2, 3)
    first = fine[32:-32].reshape(-1, 2)
    assert quads.shape[0] == first.shape[0] and np.all(first[:, 0] == first[:, 1])


def test_cylinder_is_mantle_and_two_caps():
    trimesh = pytest.importorskip("trimesh")
    cyl = trimesh.creation.cylinder(radius=1.0, height=2.0, sections=48)
    labels = segment_surfaces(cyl.vertices, cyl.faces)
    assert np.unique(labels).size == 3
    normals_z = np.abs(cyl.face_normals[:, 2])
    for s in np.unique(labels):
        nz = normals_z[labels == s]
        assert np.all(nz > 0.99) or np.all(nz < 0.01), "a surface mixes cap and mantle faces"


def test_components_never_share_a_surface():
    a = ck.primitives.box_mesh([1, 1, 1])
    v = np.vstack([a.vertices, a.vertices + [0.5, 0.5, 0.5]])  # overlapping but not connected
    f = np.vstack([a.faces, a.faces + 8])
    m = ck.Mesh(v, f)
    assert np.unique(m.surfaces).size == 12
    assert connected_components(v, f).tolist() == [0] * 12 + [1] * 12
    # feature angle 180: every edge-connected component is one surface
    assert np.array_equal(segment_surfaces(v, f, 180.0), connected_components(v, f))


def test_faces_sharing_only_a_vertex_are_separate():
    v = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0]]
    f = [[0, 1, 2], [0, 3, 4]]  # coplanar, one common vertex
    assert segment_surfaces(np.array(v, float), np.array(f)).tolist() == [0, 1]
    assert face_adjacency(np.array(v, float), np.array(f)).shape == (0, 2)


def test_zero_area_face_joins_its_first_neighbour_and_does_not_bridge():
    # two perpendicular squares (a crease) joined through a zero-area sliver on the crease edge
    v = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 0, 1], [0, 0, 1], [0.5, 0, 0]], float)
    f = np.array([[0, 1, 2], [0, 2, 3], [0, 5, 4], [0, 4, 1], [0, 6, 1]])  # last: degenerate (collinear)
    labels = segment_surfaces(v, f)
    assert labels[0] == labels[1] and labels[2] == labels[3] and labels[0] != labels[2]
    assert labels[4] in (labels[0], labels[2])


def test_labels_do_not_depend_on_vertex_order():
    rng = np.random.default_rng(3)
    sphere = ck.primitives.torus_mesh(1.0, 0.3, 24, 12)
    box = ck.primitives.box_mesh()
    v = np.vstack([sphere.vertices, box.vertices + 3])
    f = np.vstack([sphere.faces, box.faces + sphere.n_vertices])
    perm = rng.permutation(v.shape[0])
    inv = np.argsort(perm)
    assert np.array_equal(segment_surfaces(v, f), segment_surfaces(v[perm], inv[f]))


def test_explicit_surfaces_and_file_groups_keep_priority(tmp_path):
    box = ck.primitives.box_mesh()
    m = ck.Mesh(box.vertices, box.faces, surfaces=np.arange(12) // 4)
    assert m.surfaces.tolist() == [0] * 4 + [1] * 4 + [2] * 4
    obj = tmp_path / "two.obj"
    lines = [f"v {x} {y} {z}" for x, y, z in box.vertices]
    lines.append("o first")
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in box.faces[:5]]
    lines.append("o second")
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in box.faces[5:]]
    obj.write_text("\n".join(lines) + "\n")
    assert ck.load_mesh(obj).surfaces.tolist() == [0] * 5 + [1] * 7
    # one group (or none) carries no surface information: segmented
    single = tmp_path / "one.obj"
    single.write_text("\n".join([*lines[:8], "o only", *[ln for ln in lines[8:] if ln.startswith("f")]]) + "\n")
    assert ck.load_mesh(single).surfaces.tolist() == box.surfaces.tolist()


def test_surfaces_are_read_only_and_shared_by_views():
    box = ck.primitives.box_mesh()
    s = box.surfaces
    assert not s.flags.writeable and s.dtype == np.int32
    assert box.with_options(bv="obb").surfaces is s


def test_bad_feature_angle():
    box = ck.primitives.box_mesh()
    with pytest.raises(ValueError, match="feature_angle"):
        segment_surfaces(box.vertices, box.faces, feature_angle=200.0)


def test_real_mesh_segments(pb_mesh):
    duck = pb_mesh("duck_vhacd.obj")
    labels = duck.surfaces
    assert labels.shape == (duck.n_faces,) and labels.min() == 0
    # numbered by first face: the first occurrences are increasing
    _, first = np.unique(labels, return_index=True)
    assert np.all(np.diff(first) > 0)


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_scale_does_not_change_the_segmentation(scale):
    box = ck.primitives.box_mesh([1, 2, 3])
    assert np.array_equal(segment_surfaces(box.vertices * scale, box.faces), box.surfaces)
