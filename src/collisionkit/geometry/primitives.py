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


def gear_mesh(
    teeth: int = 24,
    outer_radius: float = 1.0,
    root_radius: float = 0.85,
    bore_radius: float = 0.3,
    thickness: float = 0.3,
    samples: int = 16,
    layers: int = 1,
    *,
    name: str | None = "gear",
) -> Mesh:
    """A closed, non-convex spur gear around the z axis, with a round bore.

    The outline is polar: r(phi) is ``outer_radius`` on the top land of each
    tooth, ``root_radius`` between teeth, with straight flanks between (a
    trapezoidal tooth, each a quarter of the pitch). ``samples`` points per
    tooth pitch sample the outline; the bore has as many points, so the caps
    are strips of quads. ``layers`` splits the side walls in z, to make large
    meshes (4 * teeth * samples * (layers + 1) triangles).

    Parameters
    ----------
    teeth : int
        Number of teeth (>= 3).
    outer_radius, root_radius, bore_radius : float
        Tip, root and bore radii, ``outer_radius > root_radius > bore_radius > 0``.
    thickness : float
        Extent in z, centred on z = 0.
    samples : int
        Outline points per tooth (>= 4).
    layers : int
        Wall segments in z (>= 1).

    Examples
    --------
    >>> import collisionkit as ck
    >>> ck.primitives.gear_mesh(teeth=10, samples=8).n_faces
    640
    """
    if teeth < 3 or samples < 4 or layers < 1:
        raise ValueError("need teeth >= 3, samples >= 4 and layers >= 1")
    if not outer_radius > root_radius > bore_radius > 0 or not thickness > 0:
        raise ValueError("need outer_radius > root_radius > bore_radius > 0 and thickness > 0")
    n = teeth * samples
    phi = 2 * np.pi * np.arange(n) / n
    # position within a pitch, 0..1: flank up, land, flank down, root (a quarter each)
    s = (np.arange(n) % samples) / samples
    lift = np.clip(np.minimum(4 * s, 3 - 4 * s), 0.0, 1.0)
    r = root_radius + (outer_radius - root_radius) * lift
    z = np.linspace(-thickness / 2, thickness / 2, layers + 1)
    outer = np.stack([np.repeat(r[None] * np.cos(phi)[None], layers + 1, 0),
                      np.repeat(r[None] * np.sin(phi)[None], layers + 1, 0),
                      np.repeat(z[:, None], n, 1)], axis=-1).reshape(-1, 3)  # fmt: skip
    inner = np.stack([np.repeat(bore_radius * np.cos(phi)[None], layers + 1, 0),
                      np.repeat(bore_radius * np.sin(phi)[None], layers + 1, 0),
                      np.repeat(z[:, None], n, 1)], axis=-1).reshape(-1, 3)  # fmt: skip
    verts = np.concatenate([outer, inner])
    j = np.arange(n)
    j1 = (j + 1) % n
    m = (layers + 1) * n  # offset of the bore's vertices
    faces = []
    for k in range(layers):
        lo, hi = k * n, (k + 1) * n
        # outer wall faces outwards, bore wall inwards (towards the axis)
        faces += [np.stack([lo + j, lo + j1, hi + j1], 1), np.stack([lo + j, hi + j1, hi + j], 1)]
        inner_lo, inner_hi = m + lo, m + hi
        faces += [np.stack([inner_lo + j, inner_hi + j1, inner_lo + j1], 1)]
        faces += [np.stack([inner_lo + j, inner_hi + j, inner_hi + j1], 1)]
    top, bot = layers * n, 0
    faces += [np.stack([top + j, top + j1, m + top + j1], 1), np.stack([top + j, m + top + j1, m + top + j], 1)]
    faces += [np.stack([bot + j, m + bot + j1, bot + j1], 1), np.stack([bot + j, m + bot + j, m + bot + j1], 1)]
    return Mesh(verts, np.concatenate(faces), name=name)
