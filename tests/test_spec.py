"""A question is declared once (query/spec.py): one new option, no other edit.

The option is added to ``distance``'s spec at run time; it must then be validated, reach
the handler that honours it, be refused (``UnsupportedOptionError``) by every handler that
does not, and be offered by the CLI's ``distance`` command.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.cli import build_parser, main
from collisionkit.errors import UnsupportedOptionError
from collisionkit.query import registry
from collisionkit.query import strategies as strategy_caps
from collisionkit.query.distance import DISTANCE
from collisionkit.query.driver import ask
from collisionkit.query.spec import QUERY_OPTIONS, SPECS, Option, int_text, positive_int
from collisionkit.query.strategies import Capabilities, capabilities, descent


class Probe:
    """A shape kind the library does not know: its distance handler honours the new option."""


SEEN: list[dict] = []


def _probe_distance(req):
    SEEN.append(dict(req.options))
    k = req.options["probe"]
    n = req.n
    return ck.Distance(
        distance=np.full(n, float(k)) if req.batched else float(k),
        point_a=np.zeros((n, 3)) if req.batched else np.zeros(3),
        point_b=np.zeros((n, 3)) if req.batched else np.zeros(3),
        face_a=np.full(n, -1) if req.batched else -1,
        face_b=np.full(n, -1) if req.batched else -1,
        node_pairs=np.zeros(n, np.int64) if req.batched else 0,
        tri_tests=np.zeros(n, np.int64) if req.batched else 0,
    )


@pytest.fixture
def probe_option(monkeypatch):
    """``distance`` gains ``probe`` (an int >= 1, default 1, offered by the CLI); one handler honours it."""
    DISTANCE.add("probe", Option(1, positive_int("probe"), "a test option", cli=True, text=int_text(1)))
    handlers = list(registry._HANDLERS["distance"])
    monkeypatch.setitem(registry._HANDLERS, "distance", handlers)
    registry._CACHE.clear()
    registry.register("distance", Probe, Probe, _probe_distance, honours=("probe", "upper_bound", "threads"))
    SEEN.clear()
    try:
        yield
    finally:
        DISTANCE.remove("probe")
        registry._CACHE.clear()


def test_the_option_is_declared_once_and_read_everywhere(probe_option):
    assert QUERY_OPTIONS["distance"]["probe"] == 1
    assert "probe" in dict(SPECS["distance"].cli_options())


def test_the_new_option_is_validated(probe_option):
    for bad in (0, -3, 1.5, True, "2"):
        with pytest.raises(ValueError, match="probe must be a positive int"):
            ask(DISTANCE, Probe(), Probe(), None, None, probe=bad)
    with pytest.raises(TypeError, match="unexpected keyword argument 'probes'"):
        ask(DISTANCE, Probe(), Probe(), None, None, probes=2)


def test_the_new_option_reaches_the_handler_that_honours_it(probe_option):
    d = ask(DISTANCE, Probe(), Probe(), None, ck.translation([1.0, 0, 0]), probe=7)
    assert d.distance == 7.0 and SEEN[-1]["probe"] == 7
    d = ask(DISTANCE, Probe(), Probe(), None, np.stack([np.eye(4)] * 3))  # default, batch form
    assert d.distance.tolist() == [1.0, 1.0, 1.0] and SEEN[-1]["probe"] == 1


@pytest.mark.parametrize(
    "pair",
    [
        (ck.primitives.box_mesh([1, 1, 1]), ck.primitives.box_mesh([1, 1, 1])),
        (ck.Box([1, 1, 1]), ck.Sphere(0.5)),
        (ck.Sphere(0.5), ck.primitives.box_mesh([1, 1, 1])),
    ],
    ids=["Mesh-Mesh", "Box-Sphere", "Sphere-Mesh"],
)
def test_the_new_option_is_refused_by_every_other_handler(probe_option, pair):
    a, b = pair
    T = ck.translation([3.0, 0, 0])
    with pytest.raises(UnsupportedOptionError, match="probe=2"):
        ask(DISTANCE, a, b, None, T, probe=2)
    # left at its default it is not "set": the handler answers as before
    assert ask(DISTANCE, a, b, None, T).distance == pytest.approx(ck.distance(a, b, None, T).distance)


def test_the_cli_offers_the_new_option(probe_option, tmp_path, monkeypatch, capsys):
    parser = build_parser()
    assert parser.parse_args(["distance", "A", "B", "--probe", "4"]).probe == 4
    assert parser.parse_args(["distance", "A", "B"]).probe == 1
    with pytest.raises(SystemExit):
        parser.parse_args(["distance", "A", "B", "--probe", "0"])
    assert "must be >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # only distance has it
        build_parser().parse_args(["classify", "A", "B", "--probe", "4"])
    capsys.readouterr()

    import trimesh

    for name in ("a.stl", "b.stl"):
        m = ck.primitives.box_mesh([1, 1, 1])
        trimesh.Trimesh(np.asarray(m.vertices), np.asarray(m.faces), process=False).export(tmp_path / name)
    a, b = str(tmp_path / "a.stl"), str(tmp_path / "b.stl")
    # two meshes: their handler does not honour it, a one-line error naming it (exit 2)
    assert main(["distance", a, b, "--pose-b", "3,0,0", "--probe", "2"]) == 2
    assert "probe=2" in capsys.readouterr().err
    # the shape kind whose handler honours it: the value arrives
    import collisionkit.cli as cli

    monkeypatch.setattr(cli, "_pair_meshes", lambda args: (Probe(), Probe()))
    assert main(["distance", a, b, "--probe", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["results"][0]["distance"] == 5.0 and SEEN[-1]["probe"] == 5


def test_every_public_question_has_a_spec_matching_its_keywords():
    import inspect

    for name, spec in SPECS.items():
        params = inspect.signature(getattr(ck, name)).parameters.values()
        keywords = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
        assert keywords == list(spec.options), name
        for k, opt in spec.options.items():
            assert inspect.signature(getattr(ck, name)).parameters[k].default == opt.default, (name, k)


# -- strategies are chosen by what they declare (query/strategies/__init__.py) -------------------

CALLS: list[int] = []


@dataclass(frozen=True)
class Recorder:
    """A new strategy: walks triangle meshes (by the descent) and counts its requests."""

    def run(self, req):
        CALLS.append(req.n)
        return descent.run(req._replace(strategy=ck.Descent()))


@pytest.fixture
def recorder(monkeypatch):
    from collisionkit import strategies as records

    monkeypatch.setitem(records._BY_NAME, "recorder", Recorder())
    monkeypatch.setattr(records, "_RECORD_TYPES", [*records._RECORD_TYPES, Recorder])
    caps = Capabilities(walks="surfaces", pairs=frozenset({"mesh"}), questions=frozenset({"intersects", "contacts"}))
    monkeypatch.setitem(strategy_caps._CAPS, Recorder, caps)
    monkeypatch.setitem(strategy_caps.RUNNERS, Recorder, lambda req, record: record.run(req))
    CALLS.clear()


def test_every_strategy_declares_what_it_serves():
    for name in ck.strategies.names():
        caps = capabilities(ck.strategies.resolve(name))
        assert caps.walks in ("surfaces", "solids") and caps.pairs and "intersects" in caps.questions, name
    assert capabilities(ck.strategies.resolve("descent")).on_solids == "gjk"
    assert capabilities(ck.strategies.resolve("oaabb")).counts_visits


def test_a_new_strategy_is_chosen_by_its_declaration(recorder):
    """Declared once: it answers the pairs and questions it names, the rest is refused by name."""
    a, b = ck.primitives.box_mesh([1, 1, 1]), ck.primitives.uv_sphere_mesh(0.6, 8, 12)
    poses = np.stack([ck.translation([x, 0.1, 0.0]) for x in (0.2, 0.9, 3.0)])
    want = ck.intersects(a, b, None, poses)
    assert np.array_equal(ck.intersects(a, b, None, poses, strategy="recorder"), want) and CALLS
    c = ck.contacts(a, b, None, poses, strategy="recorder")
    ref = ck.contacts(a, b, None, poses)
    assert np.array_equal(c.face_a, ref.face_a) and np.array_equal(c.face_b, ref.face_b)
    # a surface walker without native surface pairs: surface_contacts reduces its triangle pairs
    got = ck.surface_contacts(a, b, None, poses, strategy="recorder")
    assert np.array_equal(got.counts, ck.surface_contacts(a, b, None, poses).counts)
    for x, y in ((ck.Box([1, 1, 1]), ck.Sphere(0.5)), (ck.Box([1, 1, 1]), b)):
        with pytest.raises(UnsupportedOptionError, match="strategy='recorder'"):
            ck.intersects(x, y, None, poses, strategy="recorder")
    with pytest.raises(UnsupportedOptionError, match="strategy='recorder'"):
        ck.node_visits(a, b, None, poses, strategy="recorder")


# -- the driver's pieces ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind_a", ["auto", "aabb", "obb", "sphere", "kdop14", "saabb"])
@pytest.mark.parametrize("kind_b", ["auto", "aabb", "obb"])
def test_pair_trees_follow_pair_volume(kind_a, kind_b):
    """bvh.pair_trees (the one way to a pair's trees) inlines pair_volume's rule: they agree."""
    from collisionkit.bvh import pair_trees, pair_volume, tree_for

    flat = ck.primitives.box_mesh([4.0, 4.0, 0.05])  # auto picks obb for thin parts, aabb else
    for x, y in ((flat, ck.primitives.box_mesh([1, 1, 1])), (ck.primitives.box_mesh([1, 1, 1]), flat)):
        a = x.with_options(ck.BuildOptions(bv=kind_a))
        b = y.with_options(ck.BuildOptions(bv=kind_b))
        ta, tb = pair_trees(a, b)
        bv = pair_volume(a, b)
        assert ta is tree_for(a, bv) and tb is tree_for(b, bv)


def test_pose_codes_are_decoded_in_one_place():
    from collisionkit.errors import InvalidPoseError
    from collisionkit.query.driver import raise_pose_code

    for r, side in ((-1 - 2, "pose_a"), (-11 - 2, "pose_b")):
        with pytest.raises(InvalidPoseError, match=f"^{side} is not a rigid"):
            raise_pose_code(r)
