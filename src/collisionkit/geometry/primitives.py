"""Built-in triangle meshes made in code (no files): boxes, spheres, tori."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .mesh import Mesh


def box_mesh(extents: ArrayLike = (1.0, 1.0, 1.0), *, name: str | None = "box") -> Mesh:
    """A closed box of the given full extents centred at the origin (12 triangles, outward normals)."""
    e = np.asarray(extents, dtype=np.float64).reshape(3) / 2.0
    v = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64) * e
    f = [
        [0, 1, 3], [0, 3, 2],  # -x
        [4, 6, 7], [4, 7, 5],  # +x
        [0, 4, 5], [0, 5, 1],  # -y
        [2, 3, 7], [2, 7, 6],  # +y
        [0, 2, 6], [0, 6, 4],  # -z
        [1, 5, 7], [1, 7, 3],  # +z
    ]
    return Mesh(v, f, name=name)


def uv_sphere_mesh(radius: float = 1.0, rings: int = 16, segments: int = 32, *, name: str | None = "sphere") -> Mesh:
    """A closed UV sphere (poles shared; 2 * segments * (rings - 1) triangles)."""
    if rings < 2 or segments < 3:
        raise ValueError("need rings >= 2 and segments >= 3")
    verts = [[0.0, 0.0, radius]]
    for i in range(1, rings):
        th = np.pi * i / rings
        for j in range(segments):
            ph = 2 * np.pi * j / segments
            verts.append([radius * np.sin(th) * np.cos(ph), radius * np.sin(th) * np.sin(ph), radius * np.cos(th)])
    verts.append([0.0, 0.0, -radius])
    south = len(verts) - 1
    faces = []
    for j in range(segments):
        faces.append([0, 1 + j, 1 + (j + 1) % segments])
    for i in range(rings - 2):
        r0 = 1 + i * segments
        r1 = r0 + segments
        for j in range(segments):
            j1 = (j + 1) % segments
            faces.append([r0 + j, r1 + j, r1 + j1])
            faces.append([r0 + j, r1 + j1, r0 + j1])
    last = 1 + (rings - 2) * segments
    for j in range(segments):
        faces.append([last + j, south, last + (j + 1) % segments])
    return Mesh(np.array(verts), np.array(faces), name=name)


def torus_mesh(
    major: float = 1.0, minor: float = 0.25, rings: int = 32, segments: int = 16, *, name: str | None = "torus"
) -> Mesh:
    """A closed torus around the z axis (2 * rings * segments triangles)."""
    verts = []
    for i in range(rings):
        u = 2 * np.pi * i / rings
        for j in range(segments):
            v = 2 * np.pi * j / segments
            r = major + minor * np.cos(v)
            verts.append([r * np.cos(u), r * np.sin(u), minor * np.sin(v)])
    faces = []
    for i in range(rings):
        i1 = (i + 1) % rings
        for j in range(segments):
            j1 = (j + 1) % segments
            a, b, c, d = i * segments + j, i1 * segments + j, i1 * segments + j1, i * segments + j1
            faces.append([a, b, c])
            faces.append([a, c, d])
    return Mesh(np.array(verts), np.array(faces), name=name)
