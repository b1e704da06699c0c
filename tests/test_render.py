"""render_scene: a headless PNG of meshes with highlighted parts and triangles."""

from __future__ import annotations

import numpy as np
import pytest

import collisionkit as ck


def test_writes_a_png_with_highlights(tmp_path):
    pytest.importorskip("matplotlib")
    box = ck.primitives.box_mesh()
    sphere = ck.primitives.uv_sphere_mesh(0.5, 8, 16)
    out = ck.render_scene(
        [box, sphere], [None, ck.translation([0.8, 0, 0])], highlight={0: [0, 1, 2], 1: True},
        path=tmp_path / "sub" / "scene.png", title="two parts", edges=True,
    )  # fmt: skip
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000
    import matplotlib.image as mpimg

    img = mpimg.imread(out)
    # the highlight colours are in the picture: strongly red pixels exist
    red = (img[..., 0] > 0.6) & (img[..., 1] < 0.2) & (img[..., 2] < 0.2)
    assert red.sum() > 20
    ck.render_scene([box], highlight=[0], path=tmp_path / "whole.png")


def test_bad_arguments(tmp_path):
    box = ck.primitives.box_mesh()
    with pytest.raises(ValueError, match="poses"):
        ck.render_scene([box], [None, None], path=tmp_path / "x.png")
    with pytest.raises(ValueError, match="highlight"):
        ck.render_scene([box], highlight=[3], path=tmp_path / "x.png")
    with pytest.raises(TypeError):
        ck.render_scene(["box"], path=tmp_path / "x.png")
    with pytest.raises(ValueError, match="shape"):
        ck.render_scene([box], [np.eye(3)], path=tmp_path / "x.png")


def test_triangles_and_segments(tmp_path):
    """render A B's pieces: red triangles without an orange part, and a blue segment."""
    pytest.importorskip("matplotlib")
    import matplotlib.image as mpimg

    box = ck.primitives.box_mesh()
    far = ck.translation([3.0, 0, 0])
    out = ck.render_scene([box, box], [None, far], triangles={0: [0, 1], 1: []},
                          segments=[[[0.5, 0, 0], [2.5, 0, 0]]], path=tmp_path / "s.png")  # fmt: skip
    img = mpimg.imread(out)
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    assert ((b > 0.7) & (r < 0.3) & (g < 0.5)).sum() > 10  # the segment
    orange = (r > 0.8) & (g > 0.45) & (g < 0.75) & (b < 0.3)
    assert orange.sum() == 0  # no part is coloured as a whole
    with pytest.raises(ValueError, match="segments"):
        ck.render_scene([box], segments=[[0, 0, 0]], path=tmp_path / "x.png")
    with pytest.raises(ValueError, match="segments"):
        ck.render_scene([box], segments=[[[0, 0, np.nan], [1, 0, 0]]], path=tmp_path / "x.png")
    with pytest.raises(ValueError, match="face ids"):
        ck.render_scene([box], triangles={0: [12]}, path=tmp_path / "x.png")
    with pytest.raises(ValueError, match="triangles names shape 2"):
        ck.render_scene([box], triangles={2: [0]}, path=tmp_path / "x.png")
