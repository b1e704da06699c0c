"""Strategy "bfs" (seed 002's breadth-first traversal, serial and parallel) against the
default strategy and the brute-force oracle, including races under threads."""

from __future__ import annotations

import numpy as np
import pytest
from tests.brute import PARALLEL_BATCH, brute_colliding, brute_pairs, rows_of, scene

import collisionkit as ck
from collisionkit import strategies

SERIAL = ck.BFS(parallel=False)
FRONTIER = ck.BFS(parallel=True, min_frontier=1)  # every level parallel: the race-prone path
VARIANTS = [
    SERIAL,
    ck.BFS(),
    FRONTIER,
    ck.BFS(parallel=True),
    ck.BFS(volumes="aabb", parallel=True, min_frontier=1),
    ck.BFS(volumes="sphere"),
    ck.BFS(ratio_threshold=0.0, tri_spheres=False),
    ck.BFS(ratio_threshold=float("inf"), parallel=True, min_frontier=4),
    ck.BFS(tri_test="moller", parallel=False),
]
IDS = ["serial", "auto", "frontier1", "frontier", "aabb", "sphere", "allboxes", "noboxes", "moller"]


def _pair(pb_mesh, split="balanced"):
    a = pb_mesh("bunny.obj").with_options(split=split)
    b = pb_mesh("duck_vhacd.obj").with_options(split=split, leaf_size=2)
    return a, b


def test_registered():
    assert "bfs" in strategies.names()
    assert isinstance(strategies.resolve("bfs"), ck.BFS)


@pytest.mark.parametrize("kwargs", [
    {"parallel": 1}, {"volumes": "obb"}, {"ratio_threshold": -1.0}, {"ratio_threshold": float("nan")},
    {"tri_spheres": 1}, {"tri_test": "x"}, {"min_frontier": 0}, {"min_frontier": True},
])
def test_bad_options(kwargs):
    with pytest.raises(ValueError):
        ck.BFS(**kwargs)


@pytest.mark.parametrize("strat", VARIANTS, ids=IDS)
@pytest.mark.parametrize("threads", [1, 2])
def test_same_results_as_default(pb_mesh, strat, threads):
    a, b = _pair(pb_mesh)
    pa, pb = scene(a, b, 0.6, PARALLEL_BATCH, seed=7)
    want = ck.contacts(a, b, pa, pb)
    hits = ck.intersects(a, b, pa, pb)
    assert 0 < hits.sum() < len(hits)
    got = ck.contacts(a, b, pa, pb, strategy=strat, threads=threads)
    assert np.array_equal(rows_of(got), rows_of(want))
    assert np.array_equal(ck.intersects(a, b, pa, pb, strategy=strat, threads=threads), hits)
    # few poses: the frontier-parallel path for parallel=None too
    small = ck.contacts(a, b, pa[:5], pb[:5], strategy=strat, threads=threads)
    assert np.array_equal(rows_of(small), rows_of(ck.contacts(a, b, pa[:5], pb[:5])))
    st = ck.query_stats(a, b, pa, pb, mode="all", strategy=strat, threads=threads)
    assert np.array_equal(st.colliding, hits) and st.bv_updates.sum() == 0
    assert np.all(st.node_pairs >= 1) and np.all(st.bv_tests >= st.node_pairs)


@pytest.mark.parametrize("strat", [SERIAL, FRONTIER, ck.BFS()], ids=["serial", "frontier", "auto"])
def test_first_and_capped(pb_mesh, strat):
    a, b = _pair(pb_mesh)
    pa, pb = scene(a, b, 0.5, PARALLEL_BATCH, seed=8)
    full = ck.contacts(a, b, pa, pb)
    allrows = {tuple(r) for r in rows_of(full)}
    first = ck.contacts(a, b, pa, pb, mode="first", strategy=strat, threads=2)
    assert np.array_equal(first.counts, np.minimum(full.counts, 1))
    assert all(tuple(r) in allrows for r in rows_of(first))
    for cap in (1, 3, 50):
        want = ck.contacts(a, b, pa, pb, max_pairs=cap)
        got = ck.contacts(a, b, pa, pb, max_pairs=cap, strategy=strat, threads=2)
        assert np.array_equal(got.counts, want.counts) and np.array_equal(got.truncated, want.truncated)
        rows = rows_of(got)
        assert all(tuple(r) in allrows for r in rows)
        assert len({tuple(r) for r in rows}) == len(rows)
        # serial and parallel frontier keep the very same first pairs (same discovery order)
        ser = ck.contacts(a, b, pa, pb, max_pairs=cap, strategy=SERIAL)
        par = ck.contacts(a, b, pa, pb, max_pairs=cap, strategy=FRONTIER, threads=2)
        assert np.array_equal(rows_of(ser), rows_of(par))


def test_repeated_parallel_runs_agree(pb_mesh):
    """Early exit and all-pairs collection under threads, many times (races would show)."""
    a, b = _pair(pb_mesh, split="sah")
    pa, pb = scene(a, b, 0.55, 24, seed=9)
    hits = ck.intersects(a, b, pa, pb)
    rows = rows_of(ck.contacts(a, b, pa, pb))
    assert 0 < hits.sum() < len(hits)
    for rep in range(40):
        strat = FRONTIER if rep % 2 == 0 else ck.BFS(parallel=True, min_frontier=2 + rep)
        assert np.array_equal(ck.intersects(a, b, pa, pb, strategy=strat, threads=2), hits), rep
        for k in range(0, 24, 6):
            assert ck.intersects(a, b, pa[k], pb[k], strategy=strat, threads=2) == bool(hits[k])
        if rep % 4 == 0:
            assert np.array_equal(rows_of(ck.contacts(a, b, pa, pb, strategy=strat, threads=2)), rows), rep


def test_deep_contact_many_leaf_pairs(pb_mesh):
    """Coincident meshes: every level wide, many leaf pairs per chunk, the overflow rerun."""
    m = pb_mesh("soccerball.obj").with_options(bv="saabb", split="balanced")
    pose = ck.rotation([0.0, 0.0, 1.0], 0.3)
    want = ck.contacts(m, m, None, pose)
    assert len(want) > 1000
    for strat in (SERIAL, FRONTIER, ck.BFS(parallel=True)):
        got = ck.contacts(m, m, None, pose, strategy=strat, threads=2)
        assert np.array_equal(rows_of(got), rows_of(want))
        assert ck.intersects(m, m, None, pose, strategy=strat, threads=2)


def test_against_brute(pb_mesh):
    a = pb_mesh("cube.obj").with_options(leaf_size=1)
    b = pb_mesh("teddy2_VHACD_CHs.obj")
    pa, pb = scene(a, b, 0.5, 16, seed=4)
    want = brute_pairs(a, b, pa, pb)
    for strat in (SERIAL, FRONTIER, ck.BFS(volumes="sphere", parallel=True, min_frontier=1)):
        assert np.array_equal(rows_of(ck.contacts(a, b, pa, pb, strategy=strat, threads=2)), want)
        assert np.array_equal(ck.intersects(a, b, pa, pb, strategy=strat, threads=2), brute_colliding(a, b, pa, pb))


def test_touching_and_edge_cases():
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    touching = ck.translation([1.0, 0.0, 0.0])  # faces share a plane: exact touch
    apart = ck.translation([1.0 + 2**-40, 0.0, 0.0])
    for strat in (SERIAL, FRONTIER):
        assert ck.intersects(box, box, None, touching, strategy=strat) is True
        assert ck.intersects(box, box, None, apart, strategy=strat) is False
        assert np.array_equal(
            rows_of(ck.contacts(box, box, None, touching, strategy=strat, threads=2)),
            rows_of(ck.contacts(box, box, None, touching)),
        )
        empty = ck.contacts(box, box, None, np.zeros((0, 4, 4)), strategy=strat)
        assert len(empty) == 0 and empty.counts.shape == (0,)
        assert ck.intersects(box, box, None, np.zeros((0, 4, 4)), strategy="bfs").shape == (0,)
    huge = ck.primitives.box_mesh([1e150, 1e150, 1e150])
    assert ck.intersects(huge, huge, None, ck.translation([1.5e150, 0, 0]), strategy=FRONTIER) is False
    assert ck.intersects(huge, huge, None, ck.translation([0.5e150, 0, 0]), strategy=FRONTIER) is True
    with pytest.raises(ck.InvalidPoseError):
        ck.intersects(box, box, None, np.full((4, 4), np.nan), strategy="bfs")
    with pytest.raises(ValueError):
        ck.intersects(box, box, strategy="bfs", threads=0)


def test_set_num_threads_honoured(pb_mesh):
    a, b = _pair(pb_mesh)
    pa, pb = scene(a, b, 0.6, 8, seed=12)
    want = rows_of(ck.contacts(a, b, pa, pb))
    import numba

    before = numba.get_num_threads()
    try:
        ck.set_num_threads(1)
        assert np.array_equal(rows_of(ck.contacts(a, b, pa, pb, strategy=FRONTIER)), want)
    finally:
        ck.set_num_threads(before)
    assert numba.get_num_threads() == before
