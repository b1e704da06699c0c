"""Mesh files and arrays that must not surprise (issue 18, item 5).

Regressions: an OBJ face ``f 0 1 2`` loaded silently as a different face;
``surfaces`` ids beyond int32 wrapped to 0; complex vertices lost their
imaginary part with only a warning; a Mesh's read-only arrays could be made
writable again and changed behind its back.
"""

from __future__ import annotations

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.errors import InvalidMeshError

TET_V = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
TET_F = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]
OBJ_V = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"


def write(tmp_path, text: str, name: str = "m.obj"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "faces, line, what",
    [
        ("f 0 1 2\n", 5, "index 0 is invalid"),
        ("f 1 2 3\nf 1 2 5\n", 6, "face index 5 but only 4 vertices"),
        ("f 1/1/1 2/2/2 0/3/3\n", 5, "index 0"),
        ("f -1 -2 -5\n", 5, "face index -5 but only 4"),
        ("f 1 2 x\n", 5, "not an integer"),
    ],
)
def test_obj_bad_face_index_names_file_and_line(tmp_path, faces, line, what):
    p = write(tmp_path, OBJ_V + faces)
    with pytest.raises(InvalidMeshError, match=what) as info:
        ck.load_mesh(p)
    assert f"{p}:{line}:" in str(info.value)


def test_obj_face_before_its_vertices(tmp_path):
    # index 4 is beyond the vertices read so far, though the file defines it later
    p = write(tmp_path, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\nv 0 0 1\n")
    with pytest.raises(InvalidMeshError, match=r":4: face index 4 but only 3"):
        ck.load_mesh(p)


def test_obj_negative_relative_indices_stay_valid(tmp_path):
    p = write(tmp_path, OBJ_V + "f -4 -2 -3\nf 1 2 4\n")
    m = ck.load_mesh(p)
    assert m.faces.tolist() == [[0, 2, 1], [0, 1, 3]]


def test_surfaces_beyond_int32_rejected():
    with pytest.raises(InvalidMeshError, match="surface id 4294967296 of face 2 does not fit int32"):
        ck.Mesh(TET_V, TET_F, np.array([0, 1, 2**32, 3], dtype=np.int64))
    with pytest.raises(InvalidMeshError, match="does not fit int32"):
        ck.Mesh(TET_V, TET_F, np.array([0, 1, -(2**31) - 1, 3], dtype=np.int64))
    m = ck.Mesh(TET_V, TET_F, np.array([0, 1, 2**31 - 1, 3], dtype=np.int64))
    assert m.surfaces.tolist() == [0, 1, 2**31 - 1, 3]


@pytest.mark.parametrize(
    "vertices",
    [
        np.array(TET_V, dtype=np.complex128) + 1e-3j,
        np.array(TET_V, dtype=np.complex128),  # even a zero imaginary part: the dtype is the error
        np.array(TET_V, dtype=object),
        np.array(TET_V).astype(str),
        np.array(TET_V, dtype=bool),
    ],
    ids=["complex", "complex-real", "object", "str", "bool"],
)
def test_non_real_vertices_rejected(vertices):
    with pytest.raises(InvalidMeshError, match="vertices must be real numeric values"):
        ck.Mesh(vertices, TET_F)


@pytest.mark.parametrize("attr", ["vertices", "faces", "surfaces", "triangles"])
def test_mesh_arrays_cannot_be_made_writable(attr):
    m = ck.Mesh(TET_V, TET_F)
    a = getattr(m, attr)
    before = a.copy()
    with pytest.raises(ValueError):
        a.flags.writeable = True
    base = a
    while base.base is not None and isinstance(base.base, np.ndarray):
        base = base.base
        with pytest.raises(ValueError):
            base.flags.writeable = True
    with pytest.raises(ValueError):
        a[...] = 0
    assert np.array_equal(getattr(m, attr), before)


def test_mesh_copies_its_input():
    v = np.array(TET_V, dtype=np.float64)
    m = ck.Mesh(v, TET_F)
    v[0] = 99.0
    assert m.vertices[0].tolist() == [0.0, 0.0, 0.0]
