"""The hard-case benchmark scenes (``benchmarks/hard_scenes.py``) and the quick path of
``benchmarks/hard_cases.py`` on their miniatures (issue 15, item 8).

Generators are deterministic, every mesh is a valid ``ck.Mesh`` and closed (every edge
shared by exactly two faces, in opposite directions) with positive volume and no
zero-area faces, and the nominal poses really are near contacts.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("shapely")
pytest.importorskip("mapbox_earcut")

from benchmarks import hard_scenes as H  # noqa: E402

import collisionkit as ck  # noqa: E402

NAMES = list(H.HARD_SCENES)


def _closed(m) -> bool:
    f = np.asarray(m.faces, dtype=np.int64)
    e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    key = e[:, 0] * (1 << 32) + e[:, 1]
    rev = e[:, 1] * (1 << 32) + e[:, 0]
    return len(np.unique(key)) == len(key) and bool(np.isin(rev, key).all())


def _volume(m) -> float:
    t = m.vertices[m.faces]
    return float(np.einsum("ij,ij->i", t[:, 0], np.cross(t[:, 1], t[:, 2])).sum() / 6)


@pytest.mark.parametrize("name", NAMES)
def test_generators_are_deterministic_closed_and_near_contact(name):
    s1 = H.make_hard_scene(name, res="tiny", n=12)
    s2 = H.make_hard_scene(name, res="tiny", n=12)
    for m1, m2 in ((s1.mesh_a, s2.mesh_a), (s1.mesh_b, s2.mesh_b)):
        assert np.array_equal(m1.vertices, m2.vertices) and np.array_equal(m1.faces, m2.faces)
        ck.Mesh(m1.vertices, m1.faces)  # validates shapes, indices, finiteness
        assert _closed(m1), f"{m1.name} is not closed"
        assert _volume(m1) > 0, f"{m1.name} is inside out"
        t = m1.vertices[m1.faces]
        assert np.linalg.norm(np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0]), axis=1).min() > 0
    assert np.array_equal(s1.poses_b, s2.poses_b)
    # the first poses do not depend on the batch size
    assert np.array_equal(H.make_hard_scene(name, res="tiny", n=5).poses_b, s1.poses_b[:5])
    a = ck.Mesh(s1.mesh_a.vertices, s1.mesh_a.faces)
    b = ck.Mesh(s1.mesh_b.vertices, s1.mesh_b.faces)
    size = float(np.ptp(s1.mesh_a.vertices, axis=0).max())
    d = np.asarray(ck.distance(a, b, s1.poses_a, s1.poses_b).distance)
    spec = H.SPECS[name]
    # every pose within a few clearances (rotation + shift bound), the nominal one closest
    assert d.max() <= 0.02 * size
    assert d[0] <= max(3 * spec.clearance, 0.01 * size)


@pytest.mark.parametrize("name", ["gears-15k", "flange", "press-fit", "thin-links"])
def test_full_size_scenes_touch_on_a_fair_share_of_poses(name):
    sc = H.make_hard_scene(name, n=24)
    a = ck.Mesh(sc.mesh_a.vertices, sc.mesh_a.faces)
    b = ck.Mesh(sc.mesh_b.vertices, sc.mesh_b.faces)
    hit = np.asarray(ck.intersects(a, b, sc.poses_a, sc.poses_b))
    assert 0.1 <= hit.mean() <= 0.9
    d = np.asarray(ck.distance(a, b, sc.poses_a[:1], sc.poses_b[:1]).distance)[0]
    assert d <= 3 * H.SPECS[name].clearance  # nominal: a near contact (flange: touching)


def test_gear_sizes_and_meshing():
    (_, g0, T0), (_, g1, T1), (_, g2, T2) = H.gear_train("15k", gears=3)
    assert 10_000 <= g0.n_faces <= 20_000 and 10_000 <= g1.n_faces <= 20_000
    (_, h0, _), (_, h1, _) = H.gear_train("60k", gears=2)
    assert 40_000 <= h0.n_faces and 50_000 <= h1.n_faces
    # the third gear meshes with the second as the second with the first: near, not touching
    m1, m2 = ck.Mesh(g1.vertices, g1.faces), ck.Mesh(g2.vertices, g2.faces)
    d = ck.distance(m1, m2, T1, T2).distance
    assert 0 < d < 5e-3


def test_quick_benchmark_runs_on_tiny_scenes_and_its_referee_passes(tmp_path, capsys):
    pytest.importorskip("coal")
    from benchmarks import hard_cases

    rc = hard_cases.main(
        ["--quick", "--res", "tiny", "--rounds", "1", "--poses", "4", "--scenes", "gears-15k,thin-links",
         "--peers", "coal-obbrss,fcl,parry3d", "--out", str(tmp_path)]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0, out[-3000:]
    assert (tmp_path / "hard_cases.md").exists() and (tmp_path / "hard_cases.json").exists()
    assert "Provenance: commit" in out and "UNEXPLAINED" not in out
    assert "| gears-15k |" in out and "AABB/OBB tri tests" in out


def test_referee_explains_fcl_coplanar_pairs_only_when_exactly_coplanar():
    from types import SimpleNamespace

    from benchmarks import referee as R

    tri = SimpleNamespace(vertices=np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]), faces=np.array([[0, 1, 2]]))
    eye = np.eye(4)[None]
    beside = np.eye(4)[None].copy()
    beside[0, :3, 3] = [1.5, 0.0, 0.0]  # same plane, disjoint
    above = beside.copy()
    above[0, 2, 3] = 1e-3  # parallel plane, disjoint
    for Pb, want in ((beside, "explained"), (above, "FAIL")):
        sets = {"collisionkit": [set()], "fcl": [{(0, 0)}], "trueform": [{(0, 0)}]}
        out = R.referee_pairs(tri, tri, eye, Pb, sets, sample=0)
        assert out["engines"]["collisionkit"]["status"] == "exact"
        assert out["engines"]["fcl"]["status"] == want
        assert out["engines"]["trueform"]["status"] == "FAIL"  # no such explanation for it
