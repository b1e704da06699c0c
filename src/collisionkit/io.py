"""Reading meshes from files and from trimesh objects (the edge where files enter).

>>> import collisionkit as ck
>>> mesh = ck.load_mesh("part.stl")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .errors import InvalidMeshError
from .geometry.mesh import Mesh
from .options import BuildOptions


def load_mesh(path: str | os.PathLike[str], options: BuildOptions | None = None) -> Mesh:
    """Read any mesh file trimesh reads (STL, OBJ, PLY, OFF, GLB, ...).

    Faces keep the file's order (``process=False``). A file holding several
    objects or groups (an OBJ's ``o``/``g``, a GLB's nodes) becomes one
    mesh whose ``surfaces`` label each face with its object's index, in the
    file's order, with the scene graph's transforms applied. A file with
    one object or group (or none) is segmented like ``Mesh(v, f)``.

    Raises
    ------
    InvalidMeshError
        Missing or unreadable file, or a file with no triangles.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise InvalidMeshError(f"{path}: no such file")
    import trimesh

    if path.lower().endswith(".obj"):
        _check_obj_faces(path)
    try:
        loaded = trimesh.load(path, process=False, maintain_order=True)
    except Exception as exc:  # trimesh raises many types on bad files
        raise InvalidMeshError(f"{path}: cannot read mesh ({type(exc).__name__}: {exc})") from None
    try:
        mesh = _mesh_from_loaded(loaded, options)
    except InvalidMeshError as exc:
        raise InvalidMeshError(f"{path}: {exc}") from None
    if path.lower().endswith(".obj") and isinstance(loaded, trimesh.Trimesh):
        # trimesh merges an OBJ's objects and groups into one mesh (faces in
        # file order); the file's o/g lines give the surfaces back.
        labels = _obj_surface_labels(path, mesh.n_faces)
        if labels is not None and int(labels.max()) > 0:
            mesh = Mesh(mesh.vertices, mesh.faces, labels, options=options)
    mesh.name = os.path.basename(path)
    return mesh


def mesh_from_trimesh(tm: Any, options: BuildOptions | None = None) -> Mesh:
    """Wrap a ``trimesh.Trimesh`` (or a ``trimesh.Scene``: one surface per geometry)."""
    return _mesh_from_loaded(tm, options)


def _mesh_from_loaded(loaded: Any, options: BuildOptions | None) -> Mesh:
    import trimesh

    if isinstance(loaded, trimesh.Trimesh):
        return Mesh(loaded.vertices, loaded.faces, options=options)
    if isinstance(loaded, trimesh.Scene):
        verts, faces, surf = [], [], []
        offset = 0
        surface = 0
        # Geometry in the file's order (the scene graph lists nodes in no fixed
        # order), each instance with its node's transform.
        instances = []
        for geom_name, geom in loaded.geometry.items():
            for node in loaded.graph.geometry_nodes.get(geom_name, []):
                instances.append((loaded.graph[node][0], geom))
        for transform, geom in instances:
            if not isinstance(geom, trimesh.Trimesh) or len(geom.faces) == 0:
                continue
            v = np.asarray(geom.vertices, dtype=np.float64)
            if not np.allclose(transform, np.eye(4)):
                v = v @ np.asarray(transform)[:3, :3].T + np.asarray(transform)[:3, 3]
            verts.append(v)
            faces.append(np.asarray(geom.faces) + offset)
            surf.append(np.full(len(geom.faces), surface, np.int32))
            offset += len(v)
            surface += 1
        if not faces:
            raise InvalidMeshError("file holds no triangles")
        labels = np.concatenate(surf) if surface > 1 else None  # one geometry: segment it
        return Mesh(np.vstack(verts), np.vstack(faces), labels, options=options)
    raise InvalidMeshError(f"file holds {type(loaded).__name__}, not a triangle mesh")


def _check_obj_faces(path: str) -> None:
    """Refuse OBJ face indices trimesh would silently reinterpret.

    OBJ vertex indices start at 1 and may only name vertices defined above
    the face (negative indices count back from the last one, -1 being the
    latest). trimesh read ``f 0 1 2`` as a different face and wraps indices
    beyond the vertices, so the ``f`` lines are checked here first.

    Raises
    ------
    InvalidMeshError
        Naming the file and line of the first bad index.
    """
    n_vertices = 0
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, start=1):
                parts = line.split()
                if not parts:
                    continue
                if parts[0] == "v":
                    n_vertices += 1
                elif parts[0] == "f":
                    for token in parts[1:]:
                        head = token.split("/", 1)[0]
                        try:
                            k = int(head)
                        except ValueError:
                            raise InvalidMeshError(f"{path}:{lineno}: face index {token[:30]!r} is not an integer") from None
                        if k == 0:
                            raise InvalidMeshError(f"{path}:{lineno}: face index 0 is invalid (OBJ indices start at 1)")
                        if k > n_vertices or -k > n_vertices:
                            raise InvalidMeshError(
                                f"{path}:{lineno}: face index {k} but only {n_vertices} vertices are defined above it"
                            )
    except OSError as exc:
        raise InvalidMeshError(f"{path}: cannot read ({exc})") from None


def _obj_surface_labels(path: str, n_faces: int) -> NDArray[np.int32] | None:
    """Per-triangle surface labels of an OBJ file: each ``o`` or ``g`` line that is
    followed by faces starts a new surface; a polygon of n vertices is n - 2
    triangles (trimesh fans it). None if the count disagrees with the mesh."""
    labels: list[int] = []
    current = -1
    new_surface = True
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                head = line[:2]
                if head in ("o ", "g ") or line.strip() in ("o", "g"):
                    new_surface = True
                elif head == "f ":
                    if new_surface:
                        current += 1
                        new_surface = False
                    labels.extend([current] * max(len(line.split()) - 3, 0))
    except OSError:
        return None
    if len(labels) != n_faces:
        return None
    return np.asarray(labels, dtype=np.int32)
