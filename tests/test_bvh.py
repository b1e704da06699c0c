"""BuildOptions validation and BVH invariants (validate) on real and nasty meshes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from tests.brute import load_shared_mesh

import collisionkit as ck
from collisionkit.bvh import BVH
from collisionkit.constants import LEAF_FLAG

ALL_OPTIONS = [
    ck.BuildOptions(bv=bv, split=split, leaf_size=leaf)
    for bv in ("aabb", "obb")
    for split in ("sah", "median", "mean")
    for leaf in (1, 2, 4, 7)
]
OPTION_IDS = [f"{o.bv}-{o.split}-{o.leaf_size}" for o in ALL_OPTIONS]


def test_build_options_defaults_and_equality():
    o = ck.BuildOptions()
    assert (o.bv, o.split, o.leaf_size) == ("auto", "sah", 4)
    assert ck.BuildOptions(bv="obb", split="mean", leaf_size=2) == ck.BuildOptions("obb", "mean", 2)
    assert hash(ck.BuildOptions(leaf_size=3)) == hash(ck.BuildOptions(leaf_size=3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.leaf_size = 2


@pytest.mark.parametrize(
    "kwargs",
    [
        {"bv": "cylinder"},
        {"bv": "AABB"},
        {"bv": None},
        {"split": "spatial"},
        {"split": ""},
        {"leaf_size": 0},
        {"leaf_size": -1},
        {"leaf_size": 1.5},
        {"leaf_size": 2.0},
        {"leaf_size": "4"},
        {"leaf_size": True},
        {"leaf_size": None},
    ],
)
def test_build_options_reject_bad_values(kwargs):
    with pytest.raises(ValueError):
        ck.BuildOptions(**kwargs)


def _leaf_counts(tree: BVH) -> np.ndarray:
    topo = tree.topology
    return topo[(topo[:, 2] & LEAF_FLAG) != 0, 1]


def check_tree(mesh: ck.Mesh, opts: ck.BuildOptions) -> BVH:
    tree = ck.bvh_of(mesh, opts)
    assert tree.options == opts
    tree.validate(mesh.triangles)
    counts = _leaf_counts(tree)
    assert counts.sum() == mesh.n_faces
    assert counts.max() <= opts.leaf_size, f"a leaf holds {counts.max()} > leaf_size={opts.leaf_size} triangles"
    assert np.array_equal(np.sort(tree.leaf_faces), np.arange(mesh.n_faces))
    assert tree.n_leaves == counts.size and tree.n_nodes == tree.topology.shape[0]
    if mesh.n_faces > opts.leaf_size:
        assert tree.depth >= 1 and tree.n_nodes >= 3
    for view in (tree.topology, tree.volumes, tree.leaf_faces):
        assert not view.flags.writeable
    return tree


REAL = [
    "bunny.obj",
    "duck_vhacd.obj",
    "kuka_iiwa/meshes/link_3.stl",
    "franka_panda/meshes/collision/link0.obj",
    "franka_panda/meshes/collision/hand.obj",
]


@pytest.mark.parametrize("name", REAL, ids=lambda n: n.split("/")[-1])
def test_validate_real_meshes_every_option(pb_mesh, name):
    m = pb_mesh(name)
    for opts in ALL_OPTIONS:
        check_tree(m, opts)


def test_validate_env_and_rob_every_option(shared_data):
    for name in ("env.obj", "rob.obj"):
        m = load_shared_mesh(name)
        for opts in ALL_OPTIONS:
            check_tree(m, opts)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["duck.obj", "kiva_shelf/meshes/pod_lowres.stl", "kuka_iiwa/meshes/link_0.obj"])
def test_validate_large_real_meshes_every_option(pb_mesh, name):
    m = pb_mesh(name)
    for opts in ALL_OPTIONS:
        check_tree(m, opts)


def _soup(n=40, seed=0, scale=1.0, offset=0.0):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(3 * n, 3)) * scale + offset
    return ck.Mesh(v, np.arange(3 * n).reshape(n, 3))


def nasty_meshes() -> dict[str, ck.Mesh]:
    tri = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    line = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    rng = np.random.default_rng(1)
    degenerate = []
    for _ in range(30):  # segments, points and collinear triples
        p = rng.normal(size=3)
        d = rng.normal(size=3)
        kind = rng.integers(3)
        degenerate.append([p, p, p] if kind == 0 else [p, p + d, p + d] if kind == 1 else [p, p + d, p + 2 * d])
    degenerate = np.array(degenerate)
    sphere = ck.primitives.uv_sphere_mesh(1.0, 6, 10)
    return {
        "one triangle": ck.Mesh(tri, [[0, 1, 2]]),
        "two identical": ck.Mesh(np.vstack([tri, tri]), [[0, 1, 2], [3, 4, 5]]),
        "all identical": ck.Mesh(np.tile(tri, (50, 1)), np.arange(150).reshape(50, 3)),
        "all identical by index": ck.Mesh(tri, np.zeros((33, 3), int) + [0, 1, 2]),
        "all one point": ck.Mesh([[0.5, -2.0, 3.0]], np.zeros((20, 3), int)),
        "all degenerate": ck.Mesh(degenerate.reshape(-1, 3), np.arange(90).reshape(30, 3)),
        "collinear": ck.Mesh(
            np.tile(line, (9, 1)) * np.repeat(np.arange(1, 10), 3)[:, None], np.arange(27).reshape(9, 3)
        ),
        "huge 1e200": ck.Mesh(sphere.vertices * 1e200, sphere.faces),
        "huge soup 1e200": _soup(scale=1e200),
        "tiny 1e-200": ck.Mesh(sphere.vertices * 1e-200, sphere.faces),
        "tiny soup 1e-200": _soup(scale=1e-200),
        "far offset 1e8": ck.Mesh(sphere.vertices + 1e8, sphere.faces),
        "far soup 1e8": _soup(offset=np.array([1e8, -1e8, 3e8])),
        "mixed scales": ck.Mesh(
            np.vstack([sphere.vertices * 1e-6, sphere.vertices * 1e6]),
            np.vstack([sphere.faces, sphere.faces + sphere.n_vertices]),
        ),
        "flat": ck.Mesh(np.c_[rng.normal(size=(60, 2)), np.zeros(60)], rng.integers(0, 60, size=(40, 3))),
    }


NASTY = nasty_meshes()


NASTY_CASES = [
    pytest.param(name, opts, id=f"{name}-{oid}")
    for name in NASTY
    for opts, oid in zip(ALL_OPTIONS, OPTION_IDS, strict=True)
    # one leaf size per split rule is enough (regression: OBB overflow above ~1e77)
    if not (opts.bv == "obb" and "huge" in name and opts.leaf_size != 4)
]


@pytest.mark.parametrize("name,opts", NASTY_CASES)
def test_validate_nasty_meshes(name, opts):
    m = NASTY[name]
    tree = check_tree(m, opts)
    assert np.all(np.isfinite(tree.volumes)), "non-finite node volume"


@pytest.mark.parametrize("name", ["huge soup 1e200", "tiny soup 1e-200", "far soup 1e8", "all degenerate", "flat"])
def test_nasty_meshes_query_like_brute_force(name):
    """Trees of nasty meshes still answer queries exactly (self-collision at identity
    and against a shifted copy)."""
    from tests.brute import brute_pairs, rows_of

    m = NASTY[name]
    shift = np.eye(4)
    shift[:3, 3] = (m.bounds[1] - m.bounds[0]) * 0.25  # a quarter of the extent
    poses = np.stack([np.eye(4), shift])
    expected = brute_pairs(m, m, None, poses)
    assert len(expected) > 0
    for opts in (ck.BuildOptions(), ck.BuildOptions(bv="obb", split="mean", leaf_size=1)):
        mm = m.with_options(opts)
        assert np.array_equal(rows_of(ck.contacts(mm, mm, None, poses)), expected), opts


def _broken(tree: BVH, **changes) -> BVH:
    return BVH(tree.options, tree.arrays._replace(**changes), tree.depth, tree.fanout, 0.0)


@pytest.mark.parametrize("bv", ["aabb", "obb"])
def test_validate_detects_broken_trees(bv):
    """The validator is itself a test oracle: it must reject broken trees."""
    m = ck.primitives.uv_sphere_mesh(1.0, 8, 16)
    tree = ck.bvh_of(m, ck.BuildOptions(bv=bv, leaf_size=2))
    a = tree.arrays
    half = 3 if bv == "aabb" else 12
    leaf = int(np.flatnonzero(a.topo[:, 2] & LEAF_FLAG)[0])

    shrunk = a.bv.copy()
    shrunk[leaf, half : half + 3] *= 0.5  # a leaf volume that misses its triangles
    with pytest.raises(ck.InvalidBVHError, match="misses a vertex"):
        _broken(tree, bv=shrunk).validate()

    shrunk_root = a.bv.copy()
    shrunk_root[0, half : half + 3] *= 0.9
    with pytest.raises(ck.InvalidBVHError, match="misses a vertex"):
        _broken(tree, bv=shrunk_root).validate()

    ids = a.face_ids.copy()
    ids[[0, 1]] = ids[[1, 0]]  # leaf order no longer matches the triangles
    with pytest.raises(ck.InvalidBVHError, match="leaf triangles differ"):
        _broken(tree, face_ids=ids).validate(m.triangles)

    topo = a.topo.copy()
    topo[leaf, 1] += 1  # a triangle in two leaves
    with pytest.raises(ck.InvalidBVHError):
        _broken(tree, topo=topo).validate()
    with pytest.raises(ck.InvalidBVHError, match="leaf triangles differ"):
        ck.validate_bvh(tree, m.triangles[:-1])  # the wrong number of faces: an error, not an IndexError

    tree.validate(m.triangles)  # the original is fine


def test_validate_is_not_an_assert():
    """``validate_bvh`` raises under ``python -O`` too (it was built of ``assert``)."""
    import subprocess
    import sys

    code = (
        "import numpy as np, collisionkit as ck\n"
        "m = ck.primitives.box_mesh([1, 1, 1]); t = ck.bvh_of(m)\n"
        "bv = t.arrays.bv.copy(); bv[0, 3:6] *= 0.5\n"
        "try:\n"
        "    ck.validate_bvh(ck.BVH(t.options, t.arrays._replace(bv=bv), t.depth, t.fanout, 0.0))\n"
        "except ck.InvalidBVHError:\n"
        "    print('raised')\n"
    )
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, check=True, timeout=600)
    assert out.stdout.strip() == "raised", out.stderr


def test_volume_kind_changes_the_tree_not_the_answer(pb_mesh):
    m = pb_mesh("duck_vhacd.obj")
    aabb, obb = ck.bvh_of(m, ck.BuildOptions(bv="aabb")), ck.bvh_of(m, ck.BuildOptions(bv="obb"))
    assert aabb.volumes.shape[1] == 6 and obb.volumes.shape[1] == 15
    axes = obb.volumes[:, 3:12].reshape(-1, 3, 3)
    assert np.allclose(axes @ axes.transpose(0, 2, 1), np.eye(3), atol=1e-9)
    assert np.allclose(np.linalg.det(axes), 1.0), "OBB axes must form right-handed frames"
    assert np.all(obb.volumes[:, 12:15] >= 0) and np.all(aabb.volumes[:, 3:6] >= 0)
