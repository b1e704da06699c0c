"""Every bounding-volume kind and build mode against the brute-force oracle on real meshes.

The triangle pairs (contacts), the booleans (intersects) and the colliding flags
of query_stats must equal the brute-force oracle's (tests/brute.py) bit for bit,
whatever the volume kind, split rule or build: only the counters may differ.
Default run: every kind with the default split on bunny-vs-bunny and a KUKA
link vs the duck, plus the build modes, OBB fits, refit, edge cases and the
volume kernels; the full kind x split x build x mesh matrix is marked slow.
"""

from __future__ import annotations

import numpy as np
import pytest
from tests.brute import brute_pairs, load_pb_mesh, rows_of, scene

import collisionkit as ck
from collisionkit.constants import BUILDS, BV_KINDS, SPLIT_RULES
from collisionkit.kernels.volumes import kdop as bv_kdop
from collisionkit.kernels.volumes import sphere as bv_sphere

KINDS = sorted(BV_KINDS)
MESH_PAIRS = [
    ("bunny.obj", "bunny.obj", 0.6),
    ("kuka_iiwa/meshes/link_3.obj", "duck_vhacd.obj", 0.5),
]


def check_against_brute(a: ck.Mesh, b: ck.Mesh, pa, pb, ref: np.ndarray) -> None:
    n = len(pa)
    c = ck.contacts(a, b, pa, pb)
    assert np.array_equal(rows_of(c), ref), f"{a.options}: pairs differ from the oracle"
    expected = np.bincount(ref[:, 0], minlength=n) > 0
    assert np.array_equal(ck.intersects(a, b, pa, pb), expected)
    assert np.array_equal(ck.intersects(a, b, pa, pb, threads=1), expected)
    st = ck.query_stats(a, b, pa, pb)
    assert np.array_equal(st.colliding, expected)
    # the per-call path (one pose pair) too
    for k in range(min(n, 4)):
        assert ck.intersects(a, b, pa[k], pb[k]) is bool(expected[k])
    first = ck.contacts(a, b, pa, pb, mode="first")
    assert np.array_equal(np.unique(first.pose_index), np.flatnonzero(expected))


_REFS: dict = {}


def _reference(name_a: str, name_b: str, factor: float, n: int, seed: int):
    key = (name_a, name_b, factor, n, seed)
    if key not in _REFS:
        a, b = load_pb_mesh(name_a), load_pb_mesh(name_b)
        pa, pb = scene(a, b, factor, n, seed=seed)
        _REFS[key] = (a, b, pa, pb, brute_pairs(a, b, pa, pb))
    return _REFS[key]


@pytest.mark.parametrize("bv", KINDS)
@pytest.mark.parametrize("pair", MESH_PAIRS, ids=lambda p: f"{p[0].split('/')[-1]}-{p[1]}")
def test_every_volume_kind_matches_brute_force(bv, pair):
    a, b, pa, pb, ref = _reference(*pair, n=16, seed=7)
    assert len(ref) > 0 and 0 < len(np.unique(ref[:, 0])) < 16
    a2 = a.with_options(bv=bv)
    ck.bvh_of(a2).validate(a.triangles)
    check_against_brute(a2, b.with_options(bv=bv), pa, pb, ref)


@pytest.mark.parametrize("build", ["bottomup", "incremental"])
@pytest.mark.parametrize("bv", ["aabb", "obb", "sphere", "kdop18"])
def test_build_modes_match_brute_force(build, bv):
    a, b, pa, pb, ref = _reference(*MESH_PAIRS[0], n=16, seed=7)
    opts = ck.BuildOptions(bv=bv, build=build, leaf_size=3)
    tree = ck.build_bvh(a, opts)
    tree.validate(a.triangles)
    assert max(_leaf_sizes(tree)) <= 3
    check_against_brute(a.with_options(opts), b.with_options(opts), pa, pb, ref)


def _leaf_sizes(tree) -> np.ndarray:
    topo = tree.topology
    return topo[(topo[:, 2] & 1) != 0, 1]


@pytest.mark.parametrize("fit", ["hull_points", "hull_triangles", "best"])
def test_obb_hull_fits(fit):
    a, b, pa, pb, ref = _reference(*MESH_PAIRS[0], n=16, seed=7)
    opts = ck.BuildOptions(bv="obb", obb_fit=fit)
    tree = ck.build_bvh(a, opts)
    tree.validate(a.triangles)
    check_against_brute(a.with_options(opts), b.with_options(opts), pa, pb, ref)
    if fit == "best":
        base = ck.build_bvh(a, ck.BuildOptions(bv="obb"))
        vol = np.prod(2 * tree.volumes[:, 12:15], axis=1)
        vol0 = np.prod(2 * base.volumes[:, 12:15], axis=1)
        assert np.all(vol <= vol0 * (1 + 1e-12))  # same topology, each node at most as large
        assert vol.sum() < vol0.sum()


@pytest.mark.parametrize("bv", ["sphere", "kdop14", "kdop26"])
def test_pure_translations_skip_kdop_updates(bv):
    """A static (translation-only) scene: k-DOP intervals just shift (n_u = 0)."""
    a = load_pb_mesh("bunny.obj").with_options(bv=bv)
    rng = np.random.default_rng(3)
    lo, hi = a.bounds
    poses = np.repeat(np.eye(4)[None], 12, axis=0)
    poses[:, :3, 3] = rng.uniform(-0.6, 0.6, (12, 3)) * (hi - lo)
    ref = brute_pairs(a, a, None, poses)
    c = ck.contacts(a, a, None, poses)
    assert np.array_equal(rows_of(c), ref)
    st = ck.query_stats(a, a, None, poses)
    assert np.all(st.bv_updates == 0)
    rot = poses.copy()
    rot[:, :3, :3] = ck.rotation([0, 0, 1], 0.3)[:3, :3]
    st = ck.query_stats(a, a, None, rot)
    if bv.startswith("kdop"):
        assert np.all(st.bv_updates == st.bv_tests)


def test_sphere_fits_known_answers():
    # cube corners: the minimal sphere has radius sqrt(3); Ritter's is no smaller
    pts = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])
    c = bv_sphere.minimal_sphere(pts.copy(), np.int64(8))
    assert np.allclose(c[:3], 0, atol=1e-12) and abs(c[3] - np.sqrt(3)) < 1e-12
    r = bv_sphere.ritter_sphere(pts.copy(), np.int64(8))
    assert r[3] >= c[3] * (1 - 1e-15)
    # a segment's endpoints plus interior points: the diametral sphere
    seg = np.array([[0.0, 0, 0], [2.0, 0, 0], [1.0, 0.5, 0], [0.5, 0, 0.3]])
    c = bv_sphere.minimal_sphere(seg.copy(), np.int64(4))
    assert abs(c[3] - 1.0) < 1e-12 and np.allclose(c[:3], [1, 0, 0])


@pytest.mark.parametrize("seed", range(6))
def test_minimal_sphere_contains_and_is_minimal(seed):
    rng = np.random.default_rng(seed)
    pts = rng.normal(size=(200, 3)) * rng.uniform(0.1, 3.0, 3)
    if seed % 2:
        pts[:, 2] = 0.0  # coplanar
    c = bv_sphere.minimal_sphere(pts.copy(), np.int64(len(pts)))
    centre, r = np.array(c[:3]), c[3]
    d = np.linalg.norm(pts - centre, axis=1)
    assert d.max() <= r
    rit = bv_sphere.ritter_sphere(pts.copy(), np.int64(len(pts)))
    assert r <= rit[3] * (1 + 1e-12)
    # optimality: at least two points on the boundary, and the centre in their hull
    # is implied by no descent direction: moving the centre never lowers the max distance
    for direction in rng.normal(size=(20, 3)):
        direction *= 1e-4 * r / np.linalg.norm(direction)
        assert np.linalg.norm(pts - (centre + direction), axis=1).max() >= d.max() - 1e-9 * r


def test_sphere_merge_and_transform():
    m = bv_sphere.merge_spheres(0.0, 0.0, 0.0, 1.0, 3.0, 0.0, 0.0, 0.5)
    assert abs(m[3] - 2.25) < 1e-12 and abs(m[0] - 1.25) < 1e-12
    inner = bv_sphere.merge_spheres(0.0, 0.0, 0.0, 2.0, 0.5, 0.0, 0.0, 0.5)
    assert inner == (0.0, 0.0, 0.0, 2.0)
    R = tuple(ck.rotation([0, 0, 1], np.pi / 2)[:3, :3].reshape(-1))
    moved = bv_sphere.transform_sphere(R, (1.0, 2.0, 3.0), 1.0, 0.0, 0.0, 0.5)
    assert np.allclose(moved, (1.0, 3.0, 3.0, 0.5))


@pytest.mark.parametrize("k", [6, 14, 18, 26])
def test_kdop_vertices_and_recompute(k):
    rng = np.random.default_rng(k)
    pts = rng.normal(size=(60, 3))
    N = np.array(bv_kdop.NORMALS[bv_kdop._SETS[{6: 0, 14: 1, 18: 2, 26: 3}[k], : k // 2]])
    proj = pts @ N.T
    lo, hi = proj.min(axis=0).copy(), proj.max(axis=0).copy()
    verts = np.empty((48, 3))
    count = bv_kdop.kdop_vertices(lo, hi, np.int64(k), verts)
    assert 4 <= count <= 2 * k - 4
    v = verts[:count]
    # the vertices span the k-DOP: their projections reach every slab (within the widening)
    vp = v @ N.T
    size = np.abs(np.concatenate([lo, hi])).max()
    assert np.all(vp.min(axis=0) <= lo + 1e-9 * size) and np.all(vp.max(axis=0) >= hi - 1e-9 * size)
    assert np.all(vp.min(axis=0) >= lo - 1e-6 * size) and np.all(vp.max(axis=0) <= hi + 1e-6 * size)
    # after a rotation the k-DOP recomputed from the vertices contains the rotated points
    Rm = ck.rotation([1, 2, 3], 0.7)[:3, :3]
    row = np.zeros(bv_kdop.kdop_width(np.int64(k)))
    row[: k // 2], row[k // 2 : k], row[k] = lo, hi, count
    row[k + 1 : k + 1 + 3 * count] = v.reshape(-1)
    out = np.empty(k)
    bv_kdop.transform_kdop(np.int64(k), tuple(Rm.reshape(-1)), (0.5, -1.0, 2.0), row, out)
    moved = (pts @ Rm.T + [0.5, -1.0, 2.0]) @ N.T
    assert np.all(moved.min(axis=0) >= out[: k // 2] - 1e-12) and np.all(moved.max(axis=0) <= out[k // 2 :] + 1e-12)
    merged = np.empty(k)
    bv_kdop.merge_kdops(np.int64(k), out.copy(), np.concatenate([lo, hi]), merged)
    assert np.all(merged[: k // 2] <= np.minimum(lo, out[: k // 2])) and np.all(merged[k // 2 :] >= hi)


@pytest.mark.parametrize("bv", KINDS)
def test_refit_matches_a_fresh_mesh(bv):
    base = load_pb_mesh("bunny.obj").with_options(bv=bv)
    ck.bvh_of(base)  # built, so refit has a tree to refit
    rng = np.random.default_rng(1)
    lo, hi = base.bounds
    # a smooth deformation: bend and scale
    v = base.vertices.copy()
    v = v * [1.1, 0.9, 1.0] + 0.05 * (hi - lo) * np.sin(v[:, [1, 2, 0]] / (hi - lo) * 3)
    moved = ck.refit(base, v)
    tree = ck.bvh_of(moved)
    assert np.array_equal(tree.topology, ck.bvh_of(base).topology)  # refitted, not rebuilt
    tree.validate(moved.triangles)
    fresh = ck.Mesh(v, base.faces, options=base.options)
    pa, pb = scene(fresh, fresh, 0.6, 12, seed=int(rng.integers(1000)))
    ref = brute_pairs(fresh, fresh, pa, pb)
    check_against_brute(moved, moved, pa, pb, ref)


def test_refit_errors():
    box = ck.primitives.box_mesh([1, 1, 1])
    with pytest.raises(ck.InvalidMeshError):
        ck.refit(box, box.vertices[:-1])
    with pytest.raises(ck.InvalidMeshError):
        ck.refit(box, np.full_like(box.vertices, np.nan))
    with pytest.raises(TypeError):
        ck.refit(box.vertices, box.vertices)


@pytest.mark.parametrize("bv", KINDS)
@pytest.mark.parametrize("scale", [1e-30, 1.0, 1e30])
def test_edge_cases_every_kind(bv, scale):
    """One triangle, flat meshes, zero-area triangles, tiny and huge coordinates."""
    opts = ck.BuildOptions(bv=bv, leaf_size=1)
    tri = ck.Mesh(np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]) * scale, [[0, 1, 2]], options=opts)
    assert ck.intersects(tri, tri, None, ck.translation([0.25 * scale, 0.25 * scale, 0.0])) is True
    assert ck.intersects(tri, tri, None, ck.translation([0.0, 0.0, 1e-3 * scale])) is False
    # a flat grid (every k-DOP and OBB degenerate in z) with zero-area triangles mixed in
    g = np.stack(np.meshgrid(np.arange(6.0), np.arange(6.0)), -1).reshape(-1, 2)
    verts = np.column_stack([g, np.zeros(len(g))]) * scale
    faces = [[i + 6 * j, i + 1 + 6 * j, i + 6 * (j + 1)] for i in range(5) for j in range(5)]
    faces += [[0, 1, 2], [7, 7, 7]]  # collinear, point
    flat = ck.Mesh(verts, faces, options=opts)
    ck.bvh_of(flat).validate(flat.triangles)
    poses = np.stack(
        [ck.rotation([1, 0, 0], a) @ ck.translation([0.3 * scale, 0.3 * scale, 0.0]) for a in (0.0, 0.5, 1.5)]
    )
    poses[:, 2, 3] = [0.0, 0.0, 1e-6 * scale]
    ref = brute_pairs(flat, flat, None, poses)
    assert np.array_equal(rows_of(ck.contacts(flat, flat, None, poses)), ref)


def test_build_options_new_fields():
    o = ck.BuildOptions(bv="kdop18", split="minsum", build="bottomup", obb_fit="best", sphere_fit="ritter")
    assert (o.build_code, o.fit_code) == (BUILDS["bottomup"], 1)
    for kwargs in ({"build": "sideways"}, {"obb_fit": "pca"}, {"sphere_fit": "welzl"}, {"bv": "kdop8"}):
        with pytest.raises(ValueError):
            ck.BuildOptions(**kwargs)


def test_ritter_sphere_trees_are_valid_and_looser():
    a = load_pb_mesh("bunny.obj")
    tight = ck.build_bvh(a, ck.BuildOptions(bv="sphere"))
    loose = ck.build_bvh(a, ck.BuildOptions(bv="sphere", sphere_fit="ritter"))
    loose.validate(a.triangles)
    assert np.array_equal(tight.topology, loose.topology)
    assert np.all(tight.volumes[:, 3] <= loose.volumes[:, 3] * (1 + 1e-9))
    assert tight.volumes[:, 3].sum() < loose.volumes[:, 3].sum()


# --- the full matrix (slow) ---------------------------------------------------------------

SLOW_PAIRS = MESH_PAIRS + [
    ("duck_vhacd.obj", "kuka_iiwa/meshes/link_5.obj", 0.5),
    ("kuka_iiwa/meshes/link_2.obj", "kiva_shelf/meshes/pod_lowres.stl", 0.3),
]


@pytest.mark.slow
@pytest.mark.parametrize("build", sorted(BUILDS))
@pytest.mark.parametrize("split", sorted(SPLIT_RULES))
@pytest.mark.parametrize("bv", KINDS)
@pytest.mark.parametrize("pair", SLOW_PAIRS, ids=lambda p: f"{p[0].split('/')[-1]}-{p[1].split('/')[-1]}")
def test_full_matrix_matches_brute_force(bv, split, build, pair):
    if build != "topdown" and split != "sah":
        pytest.skip("split rules only steer top-down builds")
    a, b, pa, pb, ref = _reference(*pair, n=12, seed=17)
    opts = ck.BuildOptions(bv=bv, split=split, build=build)
    ck.build_bvh(a, opts).validate(a.triangles)
    check_against_brute(a.with_options(opts), b.with_options(opts), pa, pb, ref)


# --- quality metrics, unit costs, the report ------------------------------------------------


def test_tightness_of_one_triangle():
    """The axis-aligned box of the right triangle (0,0,0), (1,0,0), (0,1,0) sticks out by the
    distance from its corner (1, 1, 0) to the hypotenuse: tau = 1/sqrt(2), d = sqrt(2), rho = 1/2."""
    from collisionkit.bvh.quality import tree_quality

    tri = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    for bv in ("aabb", "kdop6", "obb", "sphere"):
        m = ck.Mesh(tri, [[0, 1, 2]], options=ck.BuildOptions(bv=bv))
        q = tree_quality(ck.bvh_of(m))
        (level,) = q.levels
        assert abs(level.diameter - np.sqrt(2)) < 1e-12
        if bv in ("aabb", "kdop6"):
            assert abs(level.tau - 1 / np.sqrt(2)) < 1e-9 and abs(q.rho_mean - 0.5) < 1e-9
        elif bv == "obb":
            # the box along the hypotenuse (sqrt 2 x 1/sqrt 2): its far corners are 1/2 from the legs
            assert abs(level.tau - 0.5) < 1e-9
        else:  # sampled sup: never above the true one (1/sqrt(2) for the circumsphere too)
            assert 0.6 < level.tau <= 1 / np.sqrt(2) + 1e-9


def test_quality_ranks_volumes_on_the_bunny():
    from collisionkit.bvh.quality import tree_quality

    a = load_pb_mesh("bunny.obj")
    rho = {
        bv: tree_quality(ck.build_bvh(a, ck.BuildOptions(bv=bv)), max_nodes_per_level=6).rho_mean
        for bv in ("sphere", "aabb", "kdop18")
    }
    assert rho["kdop18"] < rho["aabb"] < rho["sphere"]


def test_unit_costs_and_cost_model():
    from collisionkit.bvh.quality import unit_costs

    a = load_pb_mesh("bunny.obj")
    for bv in ("aabb", "obb", "sphere", "kdop14"):
        c = unit_costs(ck.build_bvh(a, ck.BuildOptions(bv=bv)), n=512)
        # measured durations: no bound on how fast (no wall-clock assertions), only that each
        # was measured (finite, positive) and that the model is the stated linear form
        assert np.isfinite([c.c_v, c.c_p, c.c_u]).all() and c.c_v > 0 and c.c_p > 0 and c.c_u >= 0
        assert c.model(10, 2, 0) == 10 * c.c_v + 2 * c.c_p + 0 * c.c_u
        np.testing.assert_array_equal(c.model([1, 0], [0, 1], [0, 0]), [c.c_v, c.c_p])


def test_bv_report_runs_and_cli(tmp_path):
    from collisionkit import bv_report
    from collisionkit.cli import main

    box = ck.primitives.box_mesh([1.0, 2.0, 0.5])
    rep = bv_report.evaluate(
        box,
        box,
        n_poses=8,
        kinds=["aabb", "kdop14"],
        splits=["sah", "minmax"],
        builds=["topdown", "bottomup"],
        repeats=1,
    )
    assert {(r["bv"], r["split"], r["build"]) for r in rep["rows"]} == {
        ("aabb", "sah", "topdown"), ("aabb", "minmax", "topdown"), ("kdop14", "sah", "topdown"),
        ("kdop14", "minmax", "topdown"), ("aabb", "sah", "bottomup"), ("kdop14", "sah", "bottomup"),
    }  # fmt: skip
    assert 0.0 < rep["colliding_fraction"] < 1.0
    png = tmp_path / "r.png"
    bv_report.chart(rep, png)
    assert png.stat().st_size > 1000
    assert "Fastest all-pairs" in bv_report.to_markdown(rep)
    assert rep["auto"]["pair"] in ("aabb", "obb") and "Default bv=\"auto\": a -> " in bv_report.to_markdown(rep)
    obj = tmp_path / "box.obj"
    obj.write_text(
        "".join(f"v {x} {y} {z}\n" for x, y, z in box.vertices)
        + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in box.faces)
    )
    out = tmp_path / "cli.png"
    args = ["bv-report", str(obj), "--poses", "4", "--kinds", "sphere", "--splits", "sah", "--builds", "topdown"]
    assert main([*args, "--repeats", "1", "--png", str(out)]) == 0
    assert out.stat().st_size > 1000
    assert main(["bv-report", str(obj), "--kinds", "cylinder"]) == 2
    assert main(["bv-report", str(tmp_path / "missing.obj")]) == 2
