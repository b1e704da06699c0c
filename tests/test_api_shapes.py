"""The README's "API shapes" table, row by row, against the code (ISSUE 14 step 5).

Every query runs on one pose pair and on a batch that starts with it, on two meshes
and on convex shapes (Box, Sphere, Capsule, Convex) wherever the query answers them:
each per-pose field is a Python scalar (or a (3,) / (4, 4) array) for the pose pair and
an (N, ...) array for the batch, equal to the batch's row 0; per-row fields are (M,)
arrays in both forms. The table's options are each entry point's keyword arguments,
its poses the positional pose arguments, and the record it names the type returned.
The "Tolerance" paragraph is held too: a tolerance is an absolute length.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from pathlib import Path

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.errors import UnsupportedOptionError
from collisionkit.query import registry
from collisionkit.query.shapes import UNSUPPORTED, pair_kind
from collisionkit.robot.check import check_configurations
from collisionkit.robot.checker import RobotChecker

README = Path(__file__).resolve().parents[1] / "README.md"


def _table() -> dict[str, list[str]]:
    """The "API shapes" table: entry point -> [poses, options, one pose, batch] cells."""
    text = README.read_text()
    start = text.index("## API shapes")
    head = text.index("| entry point |", start)
    block = text[head : text.index("\n\n", head)]
    rows = {}
    for line in block.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1:]
    return rows


def _names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


TABLE = _table()
QUERIES = sorted(registry.QUERY_OPTIONS) + ["contact_geometry"]
METHODS = {
    "World.colliding_pairs": ck.World.colliding_pairs,
    "World.contacts": ck.World.contacts,
    "World.first_colliding_pair": ck.World.first_colliding_pair,
    "Robot.check": ck.Robot.check,
    "Robot.check_detail": ck.Robot.check_detail,
}


def test_the_table_has_one_row_per_entry_point():
    assert set(TABLE) == set(QUERIES) | set(METHODS)


@pytest.mark.parametrize("query", QUERIES)
def test_options_and_poses_of_each_query_are_its_signature(query):
    poses, options, _, _ = TABLE[query]
    params = inspect.signature(getattr(ck, query)).parameters.values()
    keywords = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
    positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD][2:]  # after a, b
    assert _names(options) == keywords
    assert _names(poses) == positional
    assert "threads" in keywords  # every query takes threads=
    if query in registry.QUERY_OPTIONS:
        assert set(keywords) == set(registry.QUERY_OPTIONS[query])


def test_options_of_world_and_robot_rows():
    world = inspect.signature(ck.World).parameters
    assert set(_names(TABLE["World.colliding_pairs"][1])) <= set(world)
    assert "set_poses" in _names(TABLE["World.colliding_pairs"][0]) and hasattr(ck.World, "set_poses")
    contacts = inspect.signature(ck.World.contacts).parameters.values()
    assert _names(TABLE["World.contacts"][1]) == [p.name for p in contacts if p.kind is p.KEYWORD_ONLY]
    # Robot.check's options: explicit keywords, the prepared checker's (robot/checker.py),
    # then threads (and margin for check)
    # (``listed`` is the library's own: clearance, margins and edges ask for every self pair)
    check = [p.name for p in inspect.signature(RobotChecker).parameters.values() if p.kind is p.KEYWORD_ONLY and p.name != "listed"]
    check.append("threads")
    reference = [p.name for p in inspect.signature(check_configurations).parameters.values() if p.kind is p.KEYWORD_ONLY]
    assert set(reference) == set(check) - {"bv"}  # the per-pair path takes them all but bv
    for row, extra in (("Robot.check", ["margin"]), ("Robot.check_detail", [])):
        params = inspect.signature(METHODS[row]).parameters.values()
        assert not any(p.kind is p.VAR_KEYWORD for p in params), f"{row} takes loose keywords"
        assert [p.name for p in params if p.kind is p.KEYWORD_ONLY] == check + extra
        assert _names(TABLE[row][1]) == check + extra
        assert _names(TABLE[row][0]) == ["q"]
    assert not any(p.kind is p.VAR_KEYWORD for p in world.values()), "World takes loose keywords"


# -- the forms, on every shape pair a query answers ---------------------------------------

PAIRS = {
    "Mesh-Mesh": lambda: (ck.primitives.box_mesh([1.0, 1.0, 1.0]), ck.primitives.uv_sphere_mesh(0.5, 8, 12)),
    "Box-Box": lambda: (ck.Box([1.0, 1.0, 1.0]), ck.Box([0.8, 1.2, 0.6])),
    "Sphere-Capsule": lambda: (ck.Sphere(0.5), ck.Capsule(0.3, 0.8)),
    "Convex-Box": lambda: (
        ck.Convex.from_points(np.random.default_rng(1).normal(size=(24, 3)) * 0.4),
        ck.Box([1, 1, 1]),
    ),
    "Box-Mesh": lambda: (ck.Box([1.0, 1.0, 1.0]), ck.primitives.torus_mesh(0.6, 0.15, 12, 8)),
    "Mesh-Sphere": lambda: (ck.primitives.box_mesh([1.0, 1.0, 1.0]), ck.Sphere(0.4)),
}
_ROT = ck.rotation([0.3, 1.0, 0.2], 0.4)
#: b along +x from a: overlap, near miss, far
POSES_B = np.stack([ck.translation([x, 0.05, 0.02]) @ _ROT for x in (0.6, 1.35, 4.0)])


def _shift(poses, dx):
    out = np.array(poses, copy=True)
    out[..., 0, 3] += dx
    return out


def _run(query, a, b, pose_b):
    """``query`` with a at the identity and b at ``pose_b`` ((4, 4) or (N, 4, 4))."""
    if query == "time_of_impact":  # b sweeps along x through where pose_b puts it
        return ck.time_of_impact(a, b, None, None, _shift(pose_b, -3.0), _shift(pose_b, 3.0))
    if query == "check_motion":  # b sweeps along x through where pose_b puts it
        return ck.check_motion(a, b, start_b=_shift(pose_b, -3.0), end_b=_shift(pose_b, 3.0))
    return getattr(ck, query)(a, b, None, pose_b)


#: Per-row fields of each record ((M,) arrays in both forms), and fields about the whole call.
PER_ROW = {
    "Contacts": ("pose_index", "face_a", "face_b"),
    "ContactGeometry": ("pose_index", "face_a", "face_b", "segments", "points", "normals", "kinds"),
    "SurfaceContacts": ("pose_index", "surface_a", "surface_b"),
}
WHOLE_CALL = {
    "Classification": ("names",),
    "SurfaceContacts": ("triangles",),
    "NodeVisits": ("visits_a", "visits_b", "surface_nodes_a", "surface_nodes_b", "n_poses"),
}
SCALAR = {"b": bool, "i": int, "u": int, "f": float, "U": str, "O": str}


def _check_field(one, batch, n, where):
    """``one`` is the single-pose form of the column ``batch`` ((n, ...)) at row 0."""
    if isinstance(batch, dict):
        assert one.keys() == batch.keys(), where
        for k in batch:
            _check_field(one[k], batch[k], n, f"{where}[{k!r}]")
        return
    assert isinstance(batch, np.ndarray) and batch.shape[0] == n, (where, batch)
    if batch.ndim == 1:
        assert type(one) is SCALAR[batch.dtype.kind], (where, type(one), batch.dtype)
    else:
        assert isinstance(one, np.ndarray) and one.shape == batch.shape[1:], (where, one)
        assert not one.flags.writeable, where
    np.testing.assert_array_equal(one, batch[0], err_msg=where)


def _check_forms(one, batch, n, where):
    """Single-pose record ``one`` against batch record ``batch`` of ``n`` poses (row 0 = ``one``'s pose)."""
    if isinstance(batch, np.ndarray):  # intersects: a bool or an (N,) bool array
        assert type(one) is bool and batch.shape == (n,) and batch.dtype == bool, where
        assert one == batch[0], where
        return
    assert type(one) is type(batch), where
    name = type(one).__name__
    per_pose = getattr(type(one), "PER_POSE", ())
    fields = {f.name for f in dataclasses.fields(one)}
    # every field has its form: per pose, per row, or about the whole call
    assert fields == set(per_pose) | set(PER_ROW.get(name, ())) | set(WHOLE_CALL.get(name, ())), name
    for f in per_pose:
        _check_field(getattr(one, f), getattr(batch, f), n, f"{where}: {name}.{f}")
    if name in PER_ROW:
        rows = batch.pose_index == 0
        assert np.all(one.pose_index == 0), where
        for f in PER_ROW[name]:
            r1, rb = getattr(one, f), getattr(batch, f)
            assert isinstance(r1, np.ndarray) and r1.shape[0] == one.pose_index.shape[0], (where, f)
            assert isinstance(rb, np.ndarray) and rb.shape[0] == batch.pose_index.shape[0], (where, f)
            if f != "pose_index":
                np.testing.assert_array_equal(r1, rb[rows], err_msg=f"{where}: {name}.{f}")
    if name == "SurfaceContacts":
        assert (one.triangles is None) == (batch.triangles is None)
    if name == "NodeVisits":
        assert one.n_poses == 1 and batch.n_poses == n
        assert one.visits_a.shape == batch.visits_a.shape


def _answers(query, a, b) -> bool:
    return (query, pair_kind(a, b)) not in UNSUPPORTED


@pytest.mark.parametrize("pair", sorted(PAIRS))
@pytest.mark.parametrize("query", QUERIES)
def test_one_pose_gives_scalars_a_batch_gives_arrays(query, pair):
    a, b = PAIRS[pair]()
    if not _answers(query, a, b):
        with pytest.raises(ck.UnsupportedQueryError):
            _run(query, a, b, POSES_B[0])
        return
    one = _run(query, a, b, POSES_B[0])
    batch = _run(query, a, b, POSES_B)
    _check_forms(one, batch, len(POSES_B), f"{query} {pair}")
    # a batch of one is still a batch
    _check_forms(one, _run(query, a, b, POSES_B[:1]), 1, f"{query} {pair} N=1")
    _check_cells(query, one, batch, len(POSES_B))


def _check_cells(row, one, batch, n):
    """The table's "one pose" cell names the type returned and fields it has; the "batch"
    cell names fields that are arrays over the batch."""
    _, _, single_cell, batch_cell = TABLE[row]
    first, *more = _names(single_cell)
    assert first == type(one).__name__, (row, first)
    for name in more:  # fields, or record types the answer is or holds
        assert hasattr(one, name) or name in {c.__name__ for c in type(one).__mro__} | {"Contacts"}, (row, name)
    for name in _names(batch_cell):
        value = getattr(batch, name)
        assert isinstance(value, np.ndarray) and (name not in type(batch).PER_POSE or value.shape[0] == n), (row, name)


def test_one_pose_broadcasts_on_either_side():
    """(4, 4) x (N, 4, 4) and (N, 4, 4) x (4, 4) are both batches."""
    a, b = PAIRS["Mesh-Mesh"]()
    left = ck.distance(b, a, ck.translation([0.0, 0.0, 0.0]), np.linalg.inv(POSES_B))
    right = ck.distance(a, b, None, POSES_B)
    assert left.distance.shape == right.distance.shape == (len(POSES_B),)
    np.testing.assert_allclose(left.distance, right.distance, rtol=1e-12, atol=1e-12)
    assert ck.classify(a, b, POSES_B, np.eye(4)).codes.shape == (len(POSES_B),)


def test_time_of_impact_batch_on_any_pose_argument():
    a, b = PAIRS["Box-Box"]()
    start, end = _shift(POSES_B, -3.0), _shift(POSES_B, 3.0)
    one = ck.time_of_impact(a, b, None, None, start[0], end[0])
    mixed = ck.time_of_impact(a, b, None, np.stack([np.eye(4)] * 3), start, end[0])  # end_b broadcasts
    assert type(one.t) is float and mixed.t.shape == (3,)


# -- World and Robot rows ------------------------------------------------------------------


def test_world_rows_are_per_row_arrays():
    w = ck.World()
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    w.add("a", box)
    w.add("b", box, ck.translation([0.9, 0.0, 0.0]))
    w.add("c", ck.Sphere(0.5), ck.translation([1.7, 0.0, 0.0]))
    w.add("d", box, ck.translation([9.0, 0.0, 0.0]))
    pairs = w.colliding_pairs()
    assert type(pairs).__name__ == _names(TABLE["World.colliding_pairs"][2])[0]
    assert pairs.rows.shape == (2, 2) and pairs.names == [("a", "b"), ("b", "c")]
    c = w.contacts()
    assert type(c).__name__ == _names(TABLE["World.contacts"][2])[0]
    assert c.object_a.shape == c.object_b.shape == c.counts.shape == c.truncated.shape == (2,)
    assert c.face_a.shape == c.face_b.shape == c.pair_index.shape == (len(c),)


ARM = """<robot name="arm">
  <link name="base"><collision><geometry><box size="1 1 0.2"/></geometry></collision></link>
  <link name="upper"><collision><origin xyz="0 0 0.6"/><geometry><box size="0.2 0.2 1"/></geometry></collision></link>
  <link name="hand"><collision><origin xyz="0 0 0.3"/><geometry><sphere radius="0.2"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="upper"/><origin xyz="0 0 0.1"/>
    <axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="upper"/><child link="hand"/><origin xyz="0 0 1.1"/>
    <axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


def test_robot_rows(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(ARM)
    robot = ck.Robot.load(path)
    world = ck.World()
    world.add("post", ck.Box([0.2, 0.2, 2.0]), ck.translation([0.0, 0.9, 1.0]))
    q = np.array([[0.0, 0.0], [-1.2, 0.0], [-1.0, 0.5]])  # free, then the upper arm in the post
    batch = robot.check(q, world)
    assert batch.dtype == bool and batch.shape == (3,)
    for k in range(3):
        one = robot.check(q[k], world)
        assert type(one) is bool and one == batch[k]
    assert batch.tolist()[:2] == [False, True]
    detail = robot.check_detail(q, world)
    assert type(detail).__name__ == _names(TABLE["Robot.check_detail"][2])[0]
    one = robot.check_detail(q[1], world)
    _check_forms(one, robot.check_detail(q[1:], world), 2, "check_detail")
    assert one.link_hits.shape == (len(robot.links),)
    np.testing.assert_array_equal(detail.colliding, batch)


# -- strategy= -----------------------------------------------------------------------------

STRATEGY_QUERIES = [q for q in QUERIES if "strategy" in inspect.signature(getattr(ck, q)).parameters]


def test_strategy_is_taken_where_there_is_more_than_one():
    assert set(STRATEGY_QUERIES) == {
        "intersects", "contacts", "contact_geometry", "query_stats", "surface_contacts", "node_visits",
    }  # fmt: skip
    for query in set(QUERIES) - set(STRATEGY_QUERIES):  # one algorithm each: refused by Python
        a, b = PAIRS["Mesh-Mesh"]()
        with pytest.raises(TypeError, match="strategy"):
            getattr(ck, query)(a, b, strategy="descent")


def _rows(c):
    return np.stack([c.pose_index, c.face_a, c.face_b], axis=1)


@pytest.mark.parametrize("query", ["intersects", "contacts", "query_stats", "contact_geometry"])
def test_every_strategy_answers_the_same_or_is_refused_by_name(query):
    """Meshes: bvh, bfs, oaabb; two polyhedra: gjk, double-box (and bvh = gjk); a mesh and a
    convex shape: BVH records only. Every other combination names the strategy."""
    takes = {
        "Mesh-Mesh": ("descent", "bfs", "oaabb"),
        "Box-Box": ("descent", "gjk", "double-box"),
        "Box-Mesh": ("descent",),
    }
    for pair, accepted in takes.items():
        a, b = PAIRS[pair]()
        answers = []
        for name in ck.strategies.names():
            if name in accepted:
                answers.append(getattr(ck, query)(a, b, None, POSES_B, strategy=name))
                continue
            with pytest.raises(UnsupportedOptionError, match=name):
                getattr(ck, query)(a, b, None, POSES_B, strategy=name)
        for got in answers[1:]:
            if query == "intersects":
                np.testing.assert_array_equal(got, answers[0])
            elif query == "query_stats":
                np.testing.assert_array_equal(got.colliding, answers[0].colliding)
            else:
                np.testing.assert_array_equal(_rows(got), _rows(answers[0]))


def test_surface_contacts_and_node_visits_take_mesh_strategies_only():
    """surface_contacts walks triangle surfaces (any shape kind) with a mesh strategy;
    node_visits counts OAABB walks. The rest is refused by name."""
    a, b = PAIRS["Box-Box"]()
    ref = ck.surface_contacts(a, b, None, POSES_B)
    for name in ("descent", "bfs", ck.OAABB(use_overlap_box=False)):
        got = ck.surface_contacts(a, b, None, POSES_B, strategy=name)
        np.testing.assert_array_equal(got.surface_a, ref.surface_a)
        np.testing.assert_array_equal(got.counts, ref.counts)
    for name in ("gjk", "double-box"):
        with pytest.raises(UnsupportedOptionError, match=name):
            ck.surface_contacts(a, b, None, POSES_B, strategy=name)
    for name in ("descent", "gjk"):
        with pytest.raises(UnsupportedOptionError, match=f"strategy='{name}'"):
            ck.node_visits(a, b, None, POSES_B, strategy=name)


# -- tolerance: one meaning, an absolute length -----------------------------------------------

BOX = ck.primitives.box_mesh([1.0, 1.0, 1.0])


def _scaled(mesh, k):
    return ck.Mesh(np.asarray(mesh.vertices) * k, mesh.faces)


def test_classify_tolerance_is_an_absolute_length():
    """A gap of 0.3 is "touching" at tolerance 0.35; the same scene ten times larger (gap 3) is
    "disjoint" at the same tolerance. A tolerance relative to the shapes' size would say
    "touching" in both."""
    gap = ck.translation([1.3, 0.0, 0.0])
    assert ck.classify(BOX, BOX, None, gap, tolerance=0.25).labels == "disjoint"
    assert ck.classify(BOX, BOX, None, gap, tolerance=0.35).labels == "touching"
    big = _scaled(BOX, 10.0)
    assert ck.classify(big, big, None, ck.translation([13.0, 0.0, 0.0]), tolerance=0.35).labels == "disjoint"
    assert ck.classify(big, big, None, ck.translation([13.0, 0.0, 0.0]), tolerance=3.5).labels == "touching"


def test_time_of_impact_tolerance_is_an_absolute_length():
    """b passes a at a lateral gap of 0.2: within tolerance / 2 = 0.25 it must hit; at
    tolerance 0.1 it cannot (a hit means within tolerance). Ten times larger (gap 2), the
    same tolerance 0.5 cannot hit; a relative tolerance (5.0) would have to."""

    def passing(mesh, k, tol):
        start, end = ck.translation([-3.0 * k, 1.2 * k, 0.0]), ck.translation([3.0 * k, 1.2 * k, 0.0])
        return ck.time_of_impact(mesh, mesh, None, None, start, end, tolerance=tol)

    hit = passing(BOX, 1.0, 0.5)
    assert hit.colliding and hit.distance <= 0.5
    assert not passing(BOX, 1.0, 0.1).colliding
    assert not passing(_scaled(BOX, 10.0), 10.0, 0.5).colliding
    assert passing(_scaled(BOX, 10.0), 10.0, 5.0).colliding


def test_every_tolerance_like_parameter_is_tolerance_or_relative_by_name():
    """The public signatures: a parameter about a tolerance, epsilon or margin is called
    ``tolerance`` (an absolute length), ``margin`` (an absolute length: poses at most that
    far apart collide, issue 30) or starts with ``rel_`` (a fraction)."""
    from collisionkit.world import broadphases

    found = {}
    callables = [getattr(ck, n) for n in ck.__all__ if callable(getattr(ck, n))]
    callables += [c for c in vars(ck.World).values() if callable(c)] + list(broadphases.BROADPHASES.values())
    for fn in callables:
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        for name in params:
            if re.search(r"tol|eps|margin", name):
                found[f"{getattr(fn, '__qualname__', fn)}.{name}"] = name
    assert found, "the scan found nothing: it is broken"
    bad = {k: v for k, v in found.items() if not (v in ("tolerance", "margin") or v.startswith("rel_"))}
    assert not bad, bad
    assert {"classify.tolerance", "time_of_impact.tolerance", "DynamicTree.rel_margin", "intersects.margin"} <= {
        k.replace(".__init__", "") for k in found
    }
    with pytest.raises(TypeError, match="margin"):  # not a keyword of World (a fraction is rel_margin)
        ck.World("tree", margin=0.2)  # type: ignore[call-arg]
    assert math.isfinite(inspect.signature(broadphases.DynamicTree).parameters["rel_margin"].default)
