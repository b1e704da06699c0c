"""Robots with thousands of links (issue 31 item 6): the self pairs are never listed in
Python nor tested all per call.

Before: ``check.self_collision_pairs`` built every link pair in Python and the checker tested
each one per configuration (a 5,000-link robot: 308 s and 6.3 GB for 2 configurations).
Now: past ``robot.checker.SWEEP_MIN_LINKS`` links with geometry the compiled checker finds the
self pairs per configuration by a sort-and-sweep of the link boxes, filtered by the sorted
keys of the adjacent and allowed pairs. Every answer here is refereed by an independent
brute force: link boxes overlapping (numpy over every pair), then ``collisionkit.intersects``
per candidate pair, with the adjacent and allowed pairs skipped by name.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.robot import check as reference
from collisionkit.robot import checker as checker_mod
from collisionkit.robot import motion


def _urdf(n: int, kind: str = "chain", bare_every: int = 0) -> str:
    """n box links 0.04 x 0.04 x 0.1, each on a revolute joint at its parent's tip (axes
    alternating x and y). chain: a serial chain (straight at q = 0: only adjacent boxes
    touch, face to face). tree: link k hangs from (k - 1) // 2, children tilted +-0.6 rad."""
    parts = [f'<robot name="many_{kind}_{n}">']
    for k in range(n):
        if bare_every and k % bare_every == bare_every - 1:
            parts.append(f'<link name="l{k}"/>')  # a frame without geometry
            continue
        parts.append(
            f'<link name="l{k}"><collision><origin xyz="0 0 0.05"/>'
            f'<geometry><box size="0.04 0.04 0.1"/></geometry></collision></link>'
        )
    for k in range(1, n):
        parent = k - 1 if kind == "chain" else (k - 1) // 2
        tilt = 0.0 if kind == "chain" else (0.6 if k % 2 else -0.6)
        parts.append(
            f'<joint name="j{k}" type="revolute"><parent link="l{parent}"/><child link="l{k}"/>'
            f'<origin xyz="0 0 0.1" rpy="{tilt} 0 0"/><axis xyz="{"1 0 0" if k % 2 else "0 1 0"}"/>'
            f'<limit lower="-3" upper="3" effort="1" velocity="1"/></joint>'
        )
    parts.append("</robot>")
    return "\n".join(parts)


def _fold(dof: int, joints: int = 40) -> np.ndarray:
    """The chain straight but for its last ``joints`` joints, bent 1.2 rad each: the tip
    coils onto itself (a few hundred touching pairs, most of the chain free)."""
    q = np.zeros(dof)
    q[-joints:] = 1.2
    return q


def _load(tmp_path_factory, n: int, kind: str = "chain") -> ck.Robot:
    path = os.path.join(tmp_path_factory.mktemp(f"{kind}{n}"), "robot.urdf")
    with open(path, "w") as f:
        f.write(_urdf(n, kind))
    return ck.Robot.load(path)


@pytest.fixture(scope="module")
def chain2000(tmp_path_factory) -> ck.Robot:
    return _load(tmp_path_factory, 2000)


@pytest.fixture(scope="module")
def tree2000(tmp_path_factory) -> ck.Robot:
    return _load(tmp_path_factory, 2000, "tree")


@pytest.fixture(scope="module")
def chain200(tmp_path_factory) -> ck.Robot:
    return _load(tmp_path_factory, 200)


def _brute_hits(robot: ck.Robot, q: np.ndarray, allowed=(), world=None) -> tuple[set, dict]:
    """(colliding self pairs {(name, name)}, {object: colliding links}) at one configuration:
    every link pair's padded world boxes (numpy), ``intersects`` on the overlapping ones not
    adjacent or allowed (by name, sorted); each link against each world object likewise."""
    ids = np.array([i for i, n in enumerate(robot.links) if n in robot.link_meshes])
    T, box = robot.poses_and_boxes(q[None], boxed=ids)
    b = box[:, :, 0]  # (M, 6)
    near = np.all(b[:, None, :3] <= b[None, :, 3:], axis=2) & np.all(b[None, :, :3] <= b[:, None, 3:], axis=2)
    skip = set(robot.adjacent_pairs) | set(robot.allowed_pairs) | {tuple(sorted(p)) for p in allowed}
    hits = set()
    for r, s in zip(*np.nonzero(np.triu(near, 1)), strict=True):
        i, j = int(ids[r]), int(ids[s])
        a, c = robot.links[i], robot.links[j]
        if tuple(sorted((a, c))) in skip:
            continue
        if ck.intersects(robot.link_meshes[a], robot.link_meshes[c], T[i, 0], T[j, 0]):
            hits.add((a, c))
    objects = {}
    for name in world.names if world is not None else ():
        objects[name] = {
            robot.links[i] for i in ids
            if ck.intersects(robot.link_meshes[robot.links[i]], world.shape(name), T[i, 0], world.pose(name))
        }  # fmt: skip
    return hits, objects


def _assert_detail_is_brute(robot, Q, chk, allowed=(), world=None) -> None:
    """check_detail, check (batch and one at a time) and first_colliding of the checker equal
    the brute force on each configuration of Q."""
    det = chk.check_detail(Q)
    got_any = chk.check(Q)
    for k, q in enumerate(Q):
        hits, objects = _brute_hits(robot, q, allowed, world)
        colliding = bool(hits) or any(objects.values())
        assert bool(det.colliding[k]) == colliding == bool(got_any[k]) == chk.check(q), k
        assert {p for p, v in det.self_hits.items() if v[k]} == hits, k
        touched = {n for p in hits for n in p} | {n for links in objects.values() for n in links}
        assert {robot.links[i] for i in np.flatnonzero(det.link_hits[k])} == touched, k
        for name, links in objects.items():
            assert bool(det.object_hits[name][k]) == bool(links), (k, name)
    want = np.flatnonzero(det.colliding)
    assert chk.first_colliding(Q) == (int(want[0]) if want.size else -1)


def test_sweep_self_pairs_equal_brute_force_on_a_2000_link_chain(chain2000):
    robot = chain2000
    chk = robot.checker()
    assert chk._sweep and chk._pairs.shape[0] == 0  # no self pair listed
    rng = np.random.default_rng(3)
    Q = np.stack(
        [np.zeros(robot.dof), _fold(robot.dof), rng.uniform(-0.3, 0.3, robot.dof), rng.uniform(-2, 2, robot.dof)]
    )
    _assert_detail_is_brute(robot, Q, chk)
    assert not chk.check(Q[0]) and chk.check(Q[1])  # straight: free; folded: collides
    # the folded chain touches itself in more pairs than the first detail pass has room for
    assert sum(bool(v[1]) for v in chk.check_detail(Q).self_hits.values()) > 4 * len(Q) + 64


def test_adjacent_links_that_touch_are_never_checked_on_a_2000_link_chain(chain2000):
    robot = chain2000
    T = robot.link_poses(np.zeros(robot.dof))
    a, b = robot.link_meshes["l10"], robot.link_meshes["l11"]
    assert ck.intersects(a, b, T[10], T[11])  # face to face: they do touch
    assert not robot.check(np.zeros(robot.dof))
    assert robot.check(np.zeros(robot.dof), self_collision=True, allowed=()) is False


def test_allowed_pairs_are_honoured_by_the_sweep(chain2000):
    robot = chain2000
    q = _fold(robot.dof)
    hits, _ = _brute_hits(robot, q)
    assert hits
    assert robot.check(q, allowed=sorted(hits)) is False  # per call
    kept = robot.with_allowed_pairs(hits)
    assert kept.check(q) is False  # on the robot
    some = sorted(hits)[: len(hits) // 2]
    chk = robot.checker(allowed=some)
    _assert_detail_is_brute(robot, q[None], chk, allowed=some)
    assert not any(p in chk.check_detail(q).self_hits for p in some)


def test_sweep_equals_brute_force_on_a_2000_link_tree(tree2000):
    robot = tree2000
    rng = np.random.default_rng(5)
    Q = np.stack([np.zeros(robot.dof), rng.uniform(-1, 1, robot.dof), rng.uniform(-3, 3, robot.dof)])
    chk = robot.checker()
    assert chk._sweep
    _assert_detail_is_brute(robot, Q, chk)


def test_sweep_checker_memory_is_linear_in_the_links(chain2000):
    """The prepared arrays hold no per-pair row for the ~2 million self pairs."""
    chk = chain2000.checker()
    fb, wb, ib, topo = chk._args
    n = len(chain2000.links)
    assert ib.nbytes + fb.nbytes + topo.nbytes < 4000 * n  # bytes; a listed pair alone is 72
    assert chk._self_pairs.shape[0] == 0 and chk._n_checks == 0


@pytest.mark.parametrize("bv", ["auto", "aabb", "obb", "sphere", "kdop14", "saabb"])
def test_sweep_equals_listed_pairs_in_every_volume_kind(chain200, bv):
    """The sweep's pairs (their kinds and trees) equal the listed checker's, in the ``bv=``
    option's kind and in each link mesh's own kind (cycled over the links: pair_volume's rule
    per pair)."""
    robot = chain200
    world = ck.World()
    world.add("slab", ck.primitives.box_mesh([0.6, 0.6, 0.05]), ck.translation([0.0, 0.0, 2.0]))
    world.add("ball", ck.Sphere(0.2), ck.translation([0.3, 0.0, 1.0]))  # a convex shape: routed
    rng = np.random.default_rng(11)
    Q = np.concatenate([np.zeros((1, robot.dof)), _fold(robot.dof)[None], rng.uniform(-1.5, 1.5, (6, robot.dof))])
    kinds = ["aabb", "obb", "sphere", "kdop14", "saabb", "auto"]
    own = {n: m.with_options(bv=kinds[k % len(kinds)]) for k, (n, m) in enumerate(robot.link_meshes.items())}
    mixed = ck.Robot(robot.name, robot.links, robot.joints, own, robot.path, robot.allowed_pairs)
    for r in (robot, mixed):
        sweep = checker_mod.RobotChecker(r, world, bv=bv)
        listed = checker_mod.RobotChecker(r, world, bv=bv, listed=True)
        assert sweep._sweep and not listed._sweep
        want = listed.check_detail(Q)
        got = sweep.check_detail(Q)
        np.testing.assert_array_equal(got.colliding, want.colliding)
        np.testing.assert_array_equal(got.link_hits, want.link_hits)
        for k in want.object_hits:
            np.testing.assert_array_equal(got.object_hits[k], want.object_hits[k])
        assert got.self_hits.keys() == {p for p, v in want.self_hits.items() if v.any()}
        for p, v in got.self_hits.items():
            np.testing.assert_array_equal(v, want.self_hits[p])
        np.testing.assert_array_equal(sweep.check(Q), want.colliding)
        np.testing.assert_array_equal(sweep.check(Q, threads=1), want.colliding)
        assert [sweep.check(q) for q in Q] == want.colliding.tolist()
        assert sweep.first_colliding(Q[2:]) == listed.first_colliding(Q[2:])
    assert want.colliding.any() and not want.colliding.all()


def test_sweep_on_real_meshes_equals_the_per_pair_path(panda, monkeypatch):
    """The Panda (its meshes' own "auto" choices) with the sweep forced on: the per-pair path's
    answers, objects and self pairs alike."""
    world = ck.World()
    world.add("table", ck.primitives.box_mesh([0.3, 0.3, 0.3]), ck.translation([0.5, 0, 0.4]))
    monkeypatch.setattr(checker_mod, "SWEEP_MIN_LINKS", 2)
    chk = checker_mod.RobotChecker(panda, world)
    assert chk._sweep
    Q = np.concatenate([np.zeros((1, panda.dof)), panda.random_configurations(60, seed=2)])
    want = reference.check_detail(panda, Q, world)
    got = chk.check_detail(Q)
    np.testing.assert_array_equal(got.colliding, want.colliding)
    np.testing.assert_array_equal(got.link_hits, want.link_hits)
    np.testing.assert_array_equal(got.object_hits["table"], want.object_hits["table"])
    assert got.self_hits.keys() == {p for p, v in want.self_hits.items() if v.any()}
    for p, v in got.self_hits.items():
        np.testing.assert_array_equal(v, want.self_hits[p])
    np.testing.assert_array_equal(chk.check(Q), want.colliding)
    assert want.colliding.any() and not want.colliding.all() and want.object_hits["table"].any()
    assert any(v.any() for v in want.self_hits.values())


def test_self_pair_array_equals_every_pair_less_the_excluded(chain200):
    robot = chain200.with_allowed_pairs([("l3", "l40"), ("l7", "l199")])
    allowed = [("l0", "l2"), ("l50", "l9")]
    got = reference.self_pair_array(robot, allowed)
    skip = set(robot.adjacent_pairs) | set(robot.allowed_pairs) | {tuple(sorted(p)) for p in allowed}
    names = robot.links
    want = [
        (i, j)
        for i in range(len(names))
        for j in range(i + 1, len(names))
        if tuple(sorted((names[i], names[j]))) not in skip
    ]
    assert got.tolist() == [list(p) for p in want]
    assert reference.self_collision_pairs(robot, allowed=allowed) == want
    keys = reference.excluded_keys(robot, allowed)
    assert np.all(np.diff(keys) > 0) and keys.size == len(skip)
    with pytest.raises(ValueError, match="ghost"):
        reference.self_pair_array(robot, [("l0", "ghost")])


def test_clearance_pairs_of_a_sweeping_robot_are_all_compiled(chain200):
    """clearance and check_motion read the listed checker's pairs by row: every pair of
    their pair set is one of its rows (none left to the per-pair Python path)."""
    robot = chain200
    assert checker_mod.sweeps(robot)
    ps = motion._PairSet(robot, None, self_collision=True, allowed=(), ignore=(), base=None)
    assert ps.n == len(reference.self_collision_pairs(robot))
    assert (ps.kernel_pairs() >= 0).all()
    q = np.full(robot.dof, 0.3)
    c = robot.clearance(q)
    T = robot.link_poses(q)
    a, b = robot.links.index(c.link), robot.links.index(c.other)
    d = ck.distance(robot.link_meshes[c.link], robot.link_meshes[c.other], T[a], T[b]).distance
    assert c.distance == pytest.approx(d, rel=1e-12, abs=1e-15)


def test_sweep_batches_on_threads_equal_one_configuration_at_a_time(chain200):
    """A batch past PARALLEL_MIN_POSES on two threads (each worker claims configurations for
    the listed pairs, then for the sweep): check, check_detail and first_colliding equal
    the serial answers and the answers one configuration at a time."""
    robot = chain200
    world = ck.World()
    world.add("slab", ck.primitives.box_mesh([0.6, 0.6, 0.05]), ck.translation([0.0, 0.0, 2.0]))
    rng = np.random.default_rng(17)
    Q = rng.uniform(-1.2, 1.2, (80, robot.dof)) * rng.uniform(0.0, 1.0, (80, 1))
    chk = robot.checker(world)
    assert chk._sweep
    one = np.array([chk.check(q) for q in Q])
    assert one.any() and not one.all()
    np.testing.assert_array_equal(chk.check(Q, threads=2), one)
    np.testing.assert_array_equal(chk.check(Q, threads=1), one)
    serial, threaded = chk.check_detail(Q, threads=1), chk.check_detail(Q, threads=2)
    np.testing.assert_array_equal(threaded.colliding, one)
    np.testing.assert_array_equal(threaded.link_hits, serial.link_hits)
    assert threaded.self_hits.keys() == serial.self_hits.keys()
    for p, v in serial.self_hits.items():
        np.testing.assert_array_equal(threaded.self_hits[p], v)
    for start in (0, 10, 40):
        hit = np.flatnonzero(one[start:])
        want = int(hit[0]) if hit.size else -1
        assert chk.first_colliding(Q[start:], threads=2) == want == chk.first_colliding(Q[start:], threads=1)


def test_allowed_pairs_from_samples_of_a_sweeping_robot_equal_brute_force(chain200):
    """Pairs touching in every sample, allowed pairs sampled too (one compiled check_detail,
    no intersects call per pair from Python)."""
    for n in (1, 2):
        samples = chain200.random_configurations(n, seed=4)
        want = set.intersection(*[_brute_hits(chain200, q)[0] for q in samples])
        assert want
        some = sorted(want)[:3]
        robot = chain200.with_allowed_pairs(some)
        assert checker_mod.sweeps(robot)
        got = robot.allowed_pairs_from_samples(n, seed=4)
        assert got == {tuple(sorted(p)) for p in want}


def test_sweep_checker_follows_the_world_after_a_pose_change_and_a_new_object(chain200):
    """A pose-only change repacks the arrays (the sweep's section kept); a new object
    rebuilds them: answers stay the brute force's."""
    robot = chain200
    world = ck.World()
    world.add("slab", ck.primitives.box_mesh([0.3, 0.3, 0.05]), ck.translation([5.0, 0.0, 0.0]))
    q = _fold(robot.dof, 30)
    chk = robot.checker(world)
    _assert_detail_is_brute(robot, q[None], chk, world=world)
    tip = robot.link_poses(q)[len(robot.links) - 1]
    world.set_pose("slab", ck.translation(tip[:3, 3]))
    _assert_detail_is_brute(robot, q[None], chk, world=world)
    assert chk.check_detail(q).object_hits["slab"]
    world.add("post", ck.primitives.box_mesh([0.1, 0.1, 30.0]), ck.translation([0.0, 0.0, 10.0]))
    _assert_detail_is_brute(robot, np.stack([q, np.zeros(robot.dof)]), chk, world=world)
    assert chk._sweep and robot.check(np.zeros(robot.dof), world)


def test_sweep_maps_box_rows_to_link_indices_with_links_without_geometry(tmp_path):
    """Every third link a bare frame: box rows and link indices differ, and adjacency spans
    the bare links (l0-l1, l1-l3, ...): the sweep's pairs, keys and poses by link index."""
    path = tmp_path / "bare.urdf"
    path.write_text(_urdf(300, bare_every=3))
    robot = ck.Robot.load(str(path))
    assert len(robot.links_without_geometry) == 100 and ("l1", "l3") in robot.adjacent_pairs
    chk = robot.checker()
    assert chk._sweep
    rng = np.random.default_rng(23)
    Q = np.stack(
        [np.zeros(robot.dof), _fold(robot.dof), rng.uniform(-2, 2, robot.dof), rng.uniform(-0.5, 0.5, robot.dof)]
    )
    _assert_detail_is_brute(robot, Q, chk)
    assert not chk.check(Q[0]) and chk.check(Q[1])
