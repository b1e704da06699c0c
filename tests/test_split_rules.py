"""Split rules (seed 001's k-DOP-tree rules and the core ones): valid trees, oracle-exact
queries, and each rule choosing the axis it is defined to choose."""

from __future__ import annotations

import numpy as np
import pytest
from tests.brute import brute_pairs, load_pb_mesh, rows_of, scene

import collisionkit as ck
from collisionkit.constants import SPLIT_LONGEST, SPLIT_MINMAX, SPLIT_MINSUM, SPLIT_RULES, SPLIT_SPLATTER
from collisionkit.kernels.build.split import split_axis_value

RULES = sorted(SPLIT_RULES)


@pytest.mark.parametrize("split", RULES)
@pytest.mark.parametrize("bv", ["aabb", "obb", "kdop14", "sphere"])
def test_split_rules_match_brute_force(split, bv):
    a = load_pb_mesh("bunny.obj")
    pa, pb = scene(a, a, 0.6, 10, seed=5)
    ref = brute_pairs(a, a, pa, pb)
    opts = ck.BuildOptions(bv=bv, split=split, leaf_size=2)
    tree = ck.build_bvh(a, opts)
    tree.validate(a.triangles)
    # every rule halves somewhere: the depth stays logarithmic-ish on a scanned mesh
    assert tree.depth <= 4 * int(np.ceil(np.log2(a.n_faces)))
    m = a.with_options(opts)
    assert np.array_equal(rows_of(ck.contacts(m, m, pa, pb)), ref)
    assert np.array_equal(ck.intersects(m, m, pa, pb), np.bincount(ref[:, 0], minlength=10) > 0)


@pytest.mark.parametrize("split", RULES)
def test_degenerate_input_all_centroids_equal(split):
    # 20 copies of one triangle plus zero-area ones: no cut separates the centroids
    v = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    faces = [[0, 1, 2]] * 20 + [[0, 0, 0]]
    m = ck.Mesh(v, faces, options=ck.BuildOptions(split=split, leaf_size=1))
    tree = ck.bvh_of(m)
    tree.validate(m.triangles)
    assert tree.depth <= 6
    assert ck.intersects(m, m) is True


def _segment_rows(centroids: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    key = np.ascontiguousarray(centroids, dtype=np.float64)
    flo = np.ascontiguousarray(lo, dtype=np.float64)
    fhi = np.ascontiguousarray(hi, dtype=np.float64)
    cmin = key.min(axis=0).copy()
    cmax = key.max(axis=0).copy()
    return key, flo, fhi, cmin, cmax


def _choose(rule, key, flo, fhi, cmin, cmax):
    axis, value = split_axis_value(key, flo, fhi, np.int64(0), np.int64(len(key)), np.int64(rule), cmin, cmax)
    return int(axis), float(value)


def test_rules_pick_their_axes():
    rng = np.random.default_rng(0)
    # two tight clusters far apart along x, each spread over a long range in y:
    # the box is longest in y, but cutting x separates the clusters (min sum / min max)
    n = 40
    c = np.zeros((n, 3))
    c[: n // 2, 0] = -5.0
    c[n // 2 :, 0] = 5.0
    c[:, 1] = np.linspace(-20, 20, n)
    c[:, 2] = rng.uniform(-0.1, 0.1, n)
    half = 0.5
    key, flo, fhi, cmin, cmax = _segment_rows(c, c - half, c + half)
    assert _choose(SPLIT_LONGEST, key, flo, fhi, cmin, cmax)[0] == 1
    assert _choose(SPLIT_MINSUM, key, flo, fhi, cmin, cmax) == (0, 0.0)
    assert _choose(SPLIT_MINMAX, key, flo, fhi, cmin, cmax)[0] == 0
    # splatter: largest variance of the centroids. y spread linspace(-20, 20) has
    # variance ~ 140, x (+-5) 25: y
    assert _choose(SPLIT_SPLATTER, key, flo, fhi, cmin, cmax)[0] == 1


def test_splatter_prefers_variance_over_extent():
    # x: one outlier far away (large extent, small variance); y: two equal halves
    n = 41
    c = np.zeros((n, 3))
    c[:, 1] = np.where(np.arange(n) % 2, -3.0, 3.0)
    c[0, 0] = 10.0
    key, flo, fhi, cmin, cmax = _segment_rows(c, c - 0.1, c + 0.1)
    assert _choose(SPLIT_SPLATTER, key, flo, fhi, cmin, cmax)[0] == 1
    assert _choose(SPLIT_LONGEST, key, flo, fhi, cmin, cmax)[0] == 0


def test_minmax_and_minsum_can_differ():
    # along x: a 3:1 cut (mean pulled by a cluster) ; along y: an even cut with more overlap
    rng = np.random.default_rng(2)
    c = np.column_stack([rng.uniform(0, 1, 60) ** 3 * 10, rng.uniform(0, 4, 60), np.zeros(60)])
    key, flo, fhi, cmin, cmax = _segment_rows(c, c - 0.2, c + 0.2)
    s = _choose(SPLIT_MINSUM, key, flo, fhi, cmin, cmax)
    m = _choose(SPLIT_MINMAX, key, flo, fhi, cmin, cmax)
    for axis, value in (s, m):
        assert axis in (0, 1)
        assert cmin[axis] < value < cmax[axis]  # cuts at the mean, inside the spread
    # and here they do differ: min-sum takes the skewed x cut, min-max the even y cut
    assert (s[0], m[0]) == (0, 1)
    assert s[1] == pytest.approx(c[:, 0].mean()) and m[1] == pytest.approx(c[:, 1].mean())
