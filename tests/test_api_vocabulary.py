"""One name per concept across the public API (issue 29 item 4).

Pins the vocabulary so a new record, query or error cannot bring a second name back: pair
columns come in ``<thing>_a`` / ``<thing>_b`` pairs, the boolean answer is ``colliding``,
work counters share ``Stats``' names, ``mode`` takes one vocabulary, every pose argument is
optional as a keyword, every error is exported under ``CollisionKitError``, a strategy
record is named like its strategy, and two public functions never share a name.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
import re
import typing

import numpy as np
import pytest

import collisionkit as ck
from collisionkit import errors, planning
from collisionkit.query import registry
from collisionkit.query.spec import MODE_NAMES, SPECS
from collisionkit.robot.check import RobotCheck
from collisionkit.robot.motion import MotionCheck, RobotClearance
from collisionkit.world import FramePairs, NearestPair, Pairs, WorldContacts

#: Every result record of the public API.
RECORDS = [
    ck.Contacts, ck.ContactGeometry, ck.Stats, ck.Distance, ck.Penetration, ck.Classification, ck.TimeOfImpact,
    ck.SurfaceContacts, ck.NodeVisits, Pairs, FramePairs, WorldContacts, NearestPair, RobotCheck, RobotClearance,
    MotionCheck,
]  # fmt: skip
#: Names retired for one concept each (old -> the name that stayed).
RETIRED = {
    "hit": "colliding", "intersecting": "colliding", "tri_pairs": "tri_tests", "index": "object_a, object_b",
    "a": "object_a", "b": "object_b", "pair_row": "pair_index",
}  # fmt: skip
#: Work counters: the cost model's names (``Stats``).
COUNTERS = {"bv_tests", "tri_tests", "node_pairs", "bv_updates"}
#: Every pairwise query and its pose arguments.
PAIR_QUERIES = sorted(registry.QUERY_OPTIONS) + ["contact_geometry"]


def _fields(record: type) -> list[str]:
    return [f.name for f in dataclasses.fields(record)]


def _swap(name: str) -> str:
    """``name`` with the sides a and b exchanged (``face_a`` -> ``face_b``, ``a_inside_b`` -> ``b_inside_a``)."""
    return "_".join({"a": "b", "b": "a"}.get(t, t) for t in name.split("_"))


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__name__)
def test_record_fields_use_one_name_per_concept(record):
    names = _fields(record)
    members = set(names) | {n for n, _ in inspect.getmembers(record) if not n.startswith("_")}
    old = sorted(members & set(RETIRED))
    assert not old, f"{record.__name__} uses retired names {old}: use {[RETIRED[n] for n in old]}"
    for n in names:  # every side-a column has its side-b twin
        if "a" in n.split("_") or "b" in n.split("_"):
            assert _swap(n) in names, f"{record.__name__}.{n} has no {_swap(n)}"
    counters = {n for n in names if re.search(r"_(tests|pairs|updates)$", n)}
    assert counters <= COUNTERS, f"{record.__name__}: counters {sorted(counters - COUNTERS)} are not Stats' names"


def test_pair_rows_are_grouped_by_one_index_name():
    """Rows of pairs name their group ``pose_index`` (``frame`` for frames, ``pair_index`` for
    the triangle rows of object pairs)."""
    groups = {"pose_index", "frame", "pair_index"}
    for record in RECORDS:
        names = _fields(record)
        if "face_a" in names and "pose_a" not in names and "distance" not in names:
            assert groups & set(names), record.__name__
    assert {"pose_index", "face_a", "face_b"} <= set(_fields(ck.Contacts))
    assert {"pose_index", "surface_a", "surface_b"} <= set(_fields(ck.SurfaceContacts))
    assert {"frame", "object_a", "object_b"} <= set(_fields(FramePairs))
    assert {"object_a", "object_b", "pair_index", "face_a", "face_b"} <= set(_fields(WorldContacts))
    assert {"object_a", "object_b"} <= set(_fields(Pairs)) and {"object_a", "object_b"} <= set(_fields(NearestPair))


def test_the_boolean_answer_is_colliding_everywhere():
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    P = np.stack([ck.translation([0.5, 0.0, 0.0]), ck.translation([3.0, 0.0, 0.0])])
    want = [True, False]
    assert ck.intersects(box, box, pose_b=P).tolist() == want
    assert ck.contacts(box, box, pose_b=P).colliding.tolist() == want
    assert ck.query_stats(box, box, pose_b=P).colliding.tolist() == want
    assert ck.distance(box, box, pose_b=P).colliding.tolist() == want
    assert ck.surface_contacts(box, box, pose_b=P).colliding.tolist() == want
    moving = ck.time_of_impact(box, box, start_b=P, end_b=P)
    assert moving.colliding.tolist() == want
    w = ck.World()
    w.add("x", box)
    w.add("y", box, ck.translation([0.5, 0.0, 0.0]))
    assert w.run(np.stack([w.poses, w.poses])).colliding.tolist() == [True, True]
    # the records of the World and the robot checker say it the same way
    assert "colliding" in _fields(RobotCheck) and "colliding" in _fields(ck.Stats)


def test_counters_of_stats_and_distance_agree():
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    T = ck.translation([1.5, 0.2, 0.1])
    s, d = ck.query_stats(box, box, pose_b=T), ck.distance(box, box, pose_b=T)
    assert isinstance(s.tri_tests, int) and isinstance(d.tri_tests, int) and d.tri_tests > 0
    assert isinstance(d.node_pairs, int) and d.node_pairs > 0


# -- one mode vocabulary -------------------------------------------------------------------


@pytest.mark.parametrize("query", sorted(q for q, spec in SPECS.items() if "mode" in spec.options))
def test_mode_takes_one_vocabulary(query):
    option = SPECS[query].options["mode"]
    taken = []
    for value in MODE_NAMES:
        try:
            option.validated(value)
            taken.append(value)
        except ValueError as exc:
            assert "mode must be" in str(exc)
    assert taken and option.default in taken
    with pytest.raises(ValueError, match="mode must be") as exc:
        option.validated("surfaces")  # node_visits' old extra mode: now surfaces=True
    words = set(re.findall(r"'(\w+)'", str(exc.value).split(", got")[0]))
    assert words == set(taken), f"{query}: the error names {words}, the option takes {taken}"
    # the signature's default is the spec's, and its type names the values taken
    fn = getattr(ck, query)
    assert inspect.signature(fn).parameters["mode"].default == option.default
    assert set(typing.get_args(typing.get_type_hints(fn)["mode"])) == set(taken)


def test_node_visits_counts_the_surface_walk_by_a_flag():
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    T = ck.translation([0.5, 0.3, 0.1])
    tri = ck.node_visits(box, box, pose_b=T, mode="all")
    surf = ck.node_visits(box, box, pose_b=T, mode="all", surfaces=True)
    # surface pairs settle at their first triangle pair: the surface walk visits no more
    assert 0 < surf.visits_a.sum() + surf.visits_b.sum() <= tri.visits_a.sum() + tri.visits_b.sum()
    first = ck.node_visits(box, box, pose_b=T, mode="first")
    np.testing.assert_array_equal(ck.node_visits(box, box, pose_b=T, mode="first", surfaces=True).visits_a, first.visits_a)
    with pytest.raises(ValueError, match="surfaces must be a bool"):
        ck.node_visits(box, box, pose_b=T, surfaces="yes")  # type: ignore[arg-type]


# -- poses: optional keywords, typed ---------------------------------------------------------


@pytest.mark.parametrize("query", PAIR_QUERIES)
def test_every_pose_argument_is_an_optional_keyword(query):
    params = list(inspect.signature(getattr(ck, query)).parameters.values())
    assert [p.name for p in params[:2]] == ["a", "b"]
    poses = [p for p in params[2:] if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert poses, query
    for p in poses:
        assert p.default is None, f"{query}({p.name}=...) has no default"
        assert p.annotation == "PoseLike", f"{query}: {p.name} is typed {p.annotation}"
    for p in params[:2]:
        assert p.annotation == "Shape", f"{query}: {p.name} is typed {p.annotation}"


def _answer(rec):
    if isinstance(rec, np.ndarray):
        return rec.tolist()
    out = {}
    for f in dataclasses.fields(rec):
        v = getattr(rec, f.name)
        out[f.name] = v.tolist() if isinstance(v, np.ndarray) else v
    return out


@pytest.mark.parametrize("query", PAIR_QUERIES)
def test_pose_b_alone_equals_the_placeholder_call(query):
    ring, plate = ck.primitives.torus_mesh(1.0, 0.2, 16, 8), ck.primitives.box_mesh([2.0, 2.0, 0.1])
    poses = np.stack([ck.translation([0.0, 0.0, z]) for z in (0.0, 0.15, 0.5)])
    fn = getattr(ck, query)
    if query in ("time_of_impact", "check_motion"):  # start and end poses, a's first
        ends = np.stack([ck.translation([0.0, 0.0, -z]) for z in (0.0, 0.15, 0.5)])
        got, want = fn(ring, plate, start_b=poses, end_b=ends), fn(ring, plate, None, None, poses, ends)
    elif query == "node_visits":
        got, want = fn(ring, plate, pose_b=poses[1]), fn(ring, plate, None, poses[1])
    else:
        got, want = fn(ring, plate, pose_b=poses), fn(ring, plate, None, poses)
    a, b = _answer(got), _answer(want)
    if isinstance(a, dict):  # every field, NaN where NaN
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_array_equal(np.asarray(a[k]), np.asarray(b[k]), err_msg=k)
    else:
        assert a == b


def test_seed_defaults_are_alike():
    poses = inspect.signature(ck.random_poses).parameters["seed"]
    configs = inspect.signature(ck.Robot.random_configurations).parameters["seed"]
    assert poses.default == configs.default == 0
    assert poses.kind is configs.kind is inspect.Parameter.KEYWORD_ONLY
    np.testing.assert_array_equal(ck.random_poses(3), ck.random_poses(3))


# -- errors ----------------------------------------------------------------------------------


def _error_classes() -> list[type]:
    return [c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, Exception)]


def test_every_error_is_exported_under_one_base():
    found = _error_classes()
    assert len(found) >= 10
    for cls in found:
        assert getattr(ck, cls.__name__) is cls, f"ck.{cls.__name__} is not exported"
        assert cls.__name__ in ck.__all__
        assert issubclass(cls, ck.CollisionKitError)
        if cls not in (ck.CollisionKitError, ck.UnsupportedError):
            assert issubclass(cls, (ValueError, TypeError)), f"{cls.__name__} has no standard-library base"
    exported = [getattr(ck, n) for n in ck.__all__ if n.endswith("Error")]
    assert set(exported) == set(found)
    assert issubclass(ck.UnsupportedOptionError, ValueError) and issubclass(ck.UnsupportedPairError, TypeError)
    assert issubclass(ck.UnsupportedQueryError, ck.UnsupportedPairError)
    for cls in (ck.UnsupportedPairError, ck.UnsupportedQueryError, ck.UnsupportedOptionError):
        assert issubclass(cls, ck.UnsupportedError)


def test_no_error_class_is_defined_outside_errors():
    """Errors raised at the API edge live in ``errors.py``. The internal ones never reach a
    caller: the CLI's (turned into exit code 2 and one line), the compile cache's damaged
    entry (healed: removed and compiled again) and the SRDF reader's (re-raised as
    ``InvalidRobotError`` naming the file and line)."""
    import pkgutil

    stray = []
    for info in pkgutil.walk_packages(ck.__path__, "collisionkit."):
        if ".kernels" in info.name or info.name.endswith(("__main__", "planning", "trimesh")):
            continue
        mod = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(mod, inspect.isclass):
            if issubclass(cls, Exception) and cls.__module__ == info.name and info.name != "collisionkit.errors":
                stray.append(f"{info.name}.{name}")
    internal = ["collisionkit._numba.DamagedCacheEntry", "collisionkit.cli.CliError", "collisionkit.robot.srdf._Refused"]
    assert stray == internal, stray


def test_no_bare_base_error_is_raised():
    """A caller's mistake raises a specific error (with its standard-library base), never the
    bare base; only the batch engine's internal-error guard raises the base."""
    from pathlib import Path

    root = Path(ck.__file__).parent
    bare = [
        str(p.relative_to(root))
        for p in sorted(root.rglob("*.py"))
        for line in p.read_text().splitlines()
        if re.search(r"raise (CollisionKitError|UnsupportedError)\(", line)
    ]
    assert bare == ["query/batch.py"], bare


@pytest.mark.parametrize(
    "error",
    [
        ck.InvalidPoseError("pose_b[3] is not rigid", 3),
        ck.SceneError("cell.yaml", 4, "unknown key"),
        ck.UnsupportedOptionError("no"),
        ck.InvalidBVHError("node 2"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_survive_pickling(error):
    """Dask workers send errors back pickled: the type, message and fields survive."""
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error)
    for field in ("index", "path", "line"):
        assert getattr(back, field, None) == getattr(error, field, None)


def test_strategy_on_shapes_it_does_not_walk_is_an_option_error():
    box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    with pytest.raises(ck.UnsupportedOptionError, match="gjk"):
        ck.intersects(box, box, strategy="gjk")
    with pytest.raises(ck.UnsupportedOptionError, match="double-box"):
        ck.intersects(ck.Sphere(0.5), ck.Box([1.0, 1.0, 1.0]), strategy="double-box")
    with pytest.raises(ck.UnsupportedPairError):
        ck.intersects(box, "box")  # type: ignore[arg-type]


def test_validate_bvh_raises_a_real_error():
    m = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    tree = ck.build_bvh(m)
    ck.validate_bvh(tree, m.triangles)
    bad = tree.arrays.bv.copy()
    bad[0, 3:6] *= 0.5
    with pytest.raises(ck.InvalidBVHError, match="misses a vertex") as exc:
        ck.validate_bvh(ck.BVH(tree.options, tree.arrays._replace(bv=bad), tree.depth, tree.fanout, 0.0))
    assert isinstance(exc.value, ValueError)


# -- names ---------------------------------------------------------------------------------


def test_a_strategy_record_is_named_like_its_strategy():
    """``ck.BVH`` is the tree; the strategy that walks two trees is ``Descent`` ("descent")."""
    assert ck.BVH is ck.bvh.BVH and "bvh" not in ck.strategies.names()
    for name in ck.strategies.names():
        record = ck.strategies.resolve(name)
        cls = type(record).__name__
        assert re.sub(r"(?<=[a-z])(?=[A-Z])", "-", cls).lower() == name, (cls, name)
        assert getattr(ck, cls) is type(record), f"ck.{cls} is not exported"
    assert ck.strategies.resolve("descent") == ck.Descent()


def test_public_functions_have_distinct_names():
    """Two different public functions never share a name (``build_bvh`` builds a mesh's tree,
    ``build_tree`` a tree over triangles)."""
    seen: dict[str, object] = {}
    for modname in ("collisionkit", "collisionkit.bvh", "collisionkit.query", "collisionkit.world",
                    "collisionkit.robot", "collisionkit.geometry", "collisionkit.convex"):  # fmt: skip
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if not inspect.isfunction(obj):
                continue
            other = seen.setdefault(name, obj)
            assert other is obj, f"{name}: {other.__module__}.{name} and {obj.__module__}.{name}"
    assert ck.build_bvh is ck.bvh.build_bvh and ck.bvh.build_tree is not ck.bvh.build_bvh
    m = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    a, b = ck.build_bvh(m, ck.BuildOptions(bv="obb")), ck.bvh.build_tree(m.triangles, ck.BuildOptions(bv="obb"))
    np.testing.assert_array_equal(a.arrays.bv, b.arrays.bv)


# -- options as explicit keywords ------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [ck.World, ck.Robot.check, ck.Robot.check_detail, ck.Robot.checker, planning.plan, planning.planning_setup],
    ids=lambda f: f.__qualname__,
)
def test_no_loose_keywords(fn):
    params = inspect.signature(fn).parameters.values()
    assert not any(p.kind is p.VAR_KEYWORD for p in params), f"{fn.__qualname__} takes **options"


def test_world_refuses_options_its_broad_phase_does_not_take():
    with pytest.raises(ck.UnsupportedOptionError, match="'sap' does not take rel_margin"):
        ck.World("sap", rel_margin=0.1)
    with pytest.raises(TypeError):
        ck.World("grid", cellsize=1.0)  # type: ignore[call-arg]  # a misspelt option is a TypeError at the call
    w = ck.World("grid", cell_size=2.0, max_per_object=8)
    assert w._bp_options == {"cell_size": 2.0, "max_per_object": 8}


# -- the command line speaks the records' names ------------------------------------------------


def test_cli_json_uses_the_record_names(capsys):
    import json
    from pathlib import Path

    from collisionkit.cli import main

    data = Path(__file__).resolve().parents[1] / "examples" / "data"
    ring, plate = str(data / "ring.obj"), str(data / "plate.stl")
    assert main(["contacts", ring, plate, "--max-pairs", "3", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["pairs"] and {tuple(sorted(r)) for r in out["pairs"]} == {("face_a", "face_b", "pose_index")}
    for command in ("distance", "penetration"):
        assert main([command, ring, plate, "--json"]) == 1
        out = json.loads(capsys.readouterr().out)
        assert out["n_colliding"] == 1 and out["results"][0]["colliding"] is True
        assert out["results"][0]["pose_index"] == 0
        assert not {"pose", "intersecting", "hit", "n_intersecting"} & (set(out) | set(out["results"][0]))
    assert main(["classify", ring, plate, "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["results"][0]["pose_index"] == 0
