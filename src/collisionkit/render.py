"""Headless pictures of triangle-mesh scenes (matplotlib, Agg backend: no display needed).

``render_scene(shapes, poses, highlight=..., path=...)`` draws every triangle
of every shape at its pose, flat-shaded by a fixed light, with highlighted
parts and triangles in colour, and optional segments (closest points) on top,
into a PNG. It is meant for documentation and
debugging pictures (tens of thousands of triangles take a few seconds), not
for interactive viewing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .geometry.mesh import Mesh

#: RGB of parts that are not highlighted (a muted palette, cycled by part index).
_PALETTE = np.array(
    [[0.62, 0.66, 0.72], [0.70, 0.68, 0.60], [0.58, 0.68, 0.62], [0.68, 0.62, 0.70], [0.72, 0.70, 0.66]]
)
#: Highlighted part (every triangle) and highlighted triangle colours.
PART_COLOUR = np.array([1.0, 0.65, 0.15])
TRIANGLE_COLOUR = np.array([0.90, 0.05, 0.05])
#: Segments (for example between two closest points) and their end points.
SEGMENT_COLOUR = np.array([0.05, 0.25, 0.95])


def _world_triangles(mesh: Mesh, pose: NDArray[np.float64]) -> NDArray[np.float64]:
    t = mesh.triangles
    return t @ pose[:3, :3].T + pose[:3, 3]


def render_scene(
    shapes: Sequence[Mesh],
    poses: ArrayLike | Sequence[ArrayLike | None] | None = None,
    *,
    highlight: Mapping[int, Any] | Sequence[int] | None = None,
    triangles: Mapping[int, Sequence[int]] | None = None,
    segments: ArrayLike | None = None,
    path: str | os.PathLike[str] = "scene.png",
    colours: Sequence[ArrayLike] | None = None,
    title: str | None = None,
    elev: float = 25.0,
    azim: float = -60.0,
    size: tuple[float, float] = (8.0, 6.0),
    dpi: int = 120,
    edges: bool = False,
) -> Path:
    """Draw meshes at poses into a PNG file.

    Parameters
    ----------
    shapes : sequence of Mesh
    poses : (K, 4, 4) array_like or sequence of (4, 4) / None, optional
        World-from-object pose per shape (None: identity).
    highlight : mapping or sequence, optional
        Which parts to colour: a sequence of shape indices (whole parts, orange),
        or a mapping ``{shape index: True | face ids}``; face ids are drawn red
        and the rest of that part orange.
    triangles : mapping, optional
        ``{shape index: face ids}`` drawn red while the rest of the part keeps
        its colour (``highlight`` also colours the part).
    segments : (K, 2, 3) array_like, optional
        World-frame segments drawn in blue over the meshes, with dots at
        their ends (e.g. ``[[d.point_a, d.point_b]]`` of a ``ck.distance``).
    path : path of the PNG to write (folders are created).
    colours : per-shape RGB, optional (default: a muted palette).
    title, elev, azim, size, dpi : picture settings (view angles in degrees).
    edges : draw thin triangle edges.

    Returns
    -------
    pathlib.Path of the written file.

    Examples
    --------
    >>> import collisionkit as ck, tempfile, os
    >>> box = ck.primitives.box_mesh()
    >>> out = ck.render_scene([box, box], [None, ck.translation([0.5, 0, 0])], highlight={1: [0, 1]},
    ...                       path=os.path.join(tempfile.mkdtemp(), "boxes.png"))
    >>> out.suffix
    '.png'
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    shapes = list(shapes)
    k = len(shapes)
    if poses is None:
        pose_list = [np.eye(4)] * k
    elif not isinstance(poses, Iterable):
        raise TypeError(f"poses must be a (K, 4, 4) array or a sequence of (4, 4) poses / None, got {type(poses).__name__}")
    else:
        pose_list = [np.eye(4) if p is None else np.asarray(p, np.float64) for p in poses]
    if len(pose_list) != k:
        raise ValueError(f"{k} shapes but {len(pose_list)} poses")
    for i, (s, p) in enumerate(zip(shapes, pose_list, strict=True)):
        if not isinstance(s, Mesh):
            raise TypeError(f"shape {i} is a {type(s).__name__}, not a Mesh")
        if p.shape != (4, 4):
            raise ValueError(f"pose {i} must have shape (4, 4), got {p.shape}")
    marks: dict[int, Any] = {}
    if highlight is not None:
        marks = dict(highlight) if isinstance(highlight, Mapping) else {int(i): True for i in highlight}
    for i in marks:
        if not 0 <= int(i) < k:
            raise ValueError(f"highlight names shape {i}, but there are {k} shapes")
    red = {} if triangles is None else dict(triangles)
    for i, faces in red.items():
        if not 0 <= int(i) < k:
            raise ValueError(f"triangles names shape {i}, but there are {k} shapes")
        f = np.asarray(faces, np.int64).reshape(-1)
        if f.size and not (0 <= f.min() and f.max() < shapes[int(i)].n_faces):
            raise ValueError(f"triangles of shape {i}: face ids must be in [0, {shapes[int(i)].n_faces})")
    segs = np.zeros((0, 2, 3)) if segments is None else np.asarray(segments, dtype=np.float64)
    if segs.ndim != 3 or segs.shape[1:] != (2, 3) or not np.all(np.isfinite(segs)):
        raise ValueError(f"segments must be finite, of shape (K, 2, 3); got shape {segs.shape}")

    tris, face_rgb = [], []
    for i, (mesh, pose) in enumerate(zip(shapes, pose_list, strict=True)):
        w = _world_triangles(mesh, pose)
        base = np.asarray(colours[i], float)[:3] if colours is not None else _PALETTE[i % len(_PALETTE)]
        rgb = np.tile(base, (mesh.n_faces, 1))
        mark = marks.get(i)
        if mark is not None and mark is not False:
            rgb[:] = PART_COLOUR
            if mark is not True:
                rgb[np.asarray(mark, np.int64)] = TRIANGLE_COLOUR
        if i in red:
            rgb[np.asarray(red[i], np.int64).reshape(-1)] = TRIANGLE_COLOUR
        tris.append(w)
        face_rgb.append(rgb)
    allt = np.concatenate(tris) if tris else np.zeros((0, 3, 3))
    rgb = np.concatenate(face_rgb) if face_rgb else np.zeros((0, 3))
    # flat shading: a fixed light from the viewer's upper left, plus ambient
    n = np.cross(allt[:, 1] - allt[:, 0], allt[:, 2] - allt[:, 0])
    norm = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.divide(n, norm, out=np.zeros_like(n), where=norm > 0)
    light = np.array([-0.4, -0.5, 0.75])
    light /= np.linalg.norm(light)
    shade = 0.45 + 0.55 * np.abs(n @ light)
    face_colour = np.clip(rgb * shade[:, None], 0.0, 1.0)

    fig = plt.figure(figsize=size, dpi=dpi)
    ax = fig.add_subplot(111, projection="3d")
    coll = Poly3DCollection(allt, facecolors=face_colour, linewidths=0.1 if edges else 0.0, edgecolors="k" if edges else face_colour)
    ax.add_collection3d(coll)
    if segs.shape[0]:
        # NOTE: drawn in zorder, not depth order, so a segment inside or behind a mesh stays visible
        ax.computed_zorder = False
        coll.set_zorder(1)
        for p, q in segs:
            ax.plot(*zip(p, q, strict=True), color=SEGMENT_COLOUR, linewidth=2.0, marker="o", markersize=4, zorder=2)
    if allt.shape[0] or segs.shape[0]:
        pts = np.concatenate([allt.reshape(-1, 3), segs.reshape(-1, 3)])
        lo, hi = pts.min(axis=0), pts.max(axis=0)
        centre, half = (lo + hi) / 2, max(float((hi - lo).max()) / 2, 1e-9)
        ax.set_xlim(centre[0] - half, centre[0] + half)
        ax.set_ylim(centre[1] - half, centre[1] + half)
        ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1, 1, 1))
    ax.view_init(elev=elev, azim=azim)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")
    if title:
        ax.set_title(title)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, bbox_inches="tight")
    plt.close(fig)
    return out


__all__ = ["render_scene"]
