"""The command line: exit codes, tables, JSON, and one-line errors on bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.cli import CliError, main, parse_pose


@pytest.fixture(scope="module")
def stl_pair(tmp_path_factory):
    """Two box meshes written as STL files: overlapping at identity."""
    import trimesh

    d = tmp_path_factory.mktemp("cli")
    paths = []
    for name, size in [("a.stl", [1, 1, 1]), ("b.stl", [0.5, 0.5, 0.5])]:
        m = ck.primitives.box_mesh(size)
        trimesh.Trimesh(np.asarray(m.vertices), np.asarray(m.faces), process=False).export(d / name)
        paths.append(str(d / name))
    return paths


def test_check_exit_codes(stl_pair, capsys):
    a, b = stl_pair
    assert main(["check", a, b, "--pose-b", "0.6,0,0"]) == 1
    assert "COLLIDING" in capsys.readouterr().out
    assert main(["check", a, b, "--pose-b", "5,0,0"]) == 0
    assert "no collision" in capsys.readouterr().out


def test_check_batch_file_and_json(stl_pair, tmp_path, capsys):
    a, b = stl_pair
    poses = np.stack([ck.translation([x, 0, 0]) for x in (0.6, 5.0, 0.74, 0.76)])
    np.save(tmp_path / "poses.npy", poses)
    code = main(["check", a, b, "--pose-b", str(tmp_path / "poses.npy"), "--json"])
    out = json.loads(capsys.readouterr().out)
    # the boxes' half sizes sum to 0.75: 0.74 overlaps, 0.76 does not
    assert out["colliding"] == [True, False, True, False]
    assert out["n_colliding"] == 2 and code == 1


def test_contacts_json_matches_library(stl_pair, capsys):
    a, b = stl_pair
    main(["contacts", a, b, "--pose-b", "0.6,0.1,0.05,0.1,0.2,0.3", "--json"])
    out = json.loads(capsys.readouterr().out)
    ma, mb = ck.load_mesh(a), ck.load_mesh(b)
    c = ck.contacts(ma, mb, None, parse_pose("0.6,0.1,0.05,0.1,0.2,0.3", "p"))
    assert [(r["face_a"], r["face_b"]) for r in out["pairs"]] == list(zip(c.face_a.tolist(), c.face_b.tolist(), strict=True))
    assert len(out["pairs"]) > 0


@pytest.mark.parametrize(
    "argv_tail, message",
    [
        (["missing.stl"], "file not found"),
        (["BAD"], "no triangles"),
        (["B", "--pose-b", "1,2"], "expected 3, 6 or 16 numbers"),
        (["B", "--pose-b", "a,b,c"], "expected numbers"),
        (["B", "--pose-b", "nope.npy"], "file not found"),
        (["B", "--pose-b", "1,0,0,0, 0,2,0,0, 0,0,1,0, 0,0,0,1"], "not a rigid transform"),
    ],
)
def test_bad_input_is_one_line_exit_2(stl_pair, tmp_path, capsys, argv_tail, message):
    a, b = stl_pair
    bad = tmp_path / "bad.stl"
    bad.write_bytes(b"garbage\x00\x01")
    tail = [b if x == "B" else str(bad) if x == "BAD" else str(tmp_path / x) if x.endswith(".stl") else x for x in argv_tail]
    assert main(["check", a, *tail]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and message in err and "Traceback" not in err
    assert err.count("\n") == 1


def test_parse_pose_forms():
    T = parse_pose("1,2,3,0,0,1.5707963267948966", "p")
    assert np.allclose(T[:3, 3], [1, 2, 3]) and np.allclose(T[:3, :3] @ [1, 0, 0], [0, 1, 0])
    assert parse_pose(None, "p") is None
    with pytest.raises(CliError):
        parse_pose("1 2", "p")


def test_help_for_every_command(capsys):
    from collisionkit.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in sub.choices:
        with pytest.raises(SystemExit) as e:
            main([name, "--help"])
        assert e.value.code == 0
        assert "usage:" in capsys.readouterr().out


# -- distance, penetration, classify, render A B (issue 18, item 7) ----------------------
# a is the unit box, b the half box: their half sizes sum to 0.75 along x.


@pytest.fixture(scope="module")
def meshes(stl_pair):
    return ck.load_mesh(stl_pair[0]), ck.load_mesh(stl_pair[1])


def _poses_file(tmp_path, xs):
    poses = np.stack([ck.translation([x, 0.1, 0.0]) for x in xs])
    np.save(tmp_path / "poses.npy", poses)
    return str(tmp_path / "poses.npy"), poses


def test_distance_json_matches_library(stl_pair, meshes, tmp_path, capsys):
    a, b = stl_pair
    path, poses = _poses_file(tmp_path, [0.6, 2.0, 0.0])  # overlap, apart, b inside a
    code = main(["distance", a, b, "--pose-b", path, "--json"])
    out = json.loads(capsys.readouterr().out)
    d = ck.distance(*meshes, None, poses)
    assert code == 1 and out["poses"] == 3 and out["n_colliding"] == 1
    rows = out["results"]
    assert [r["distance"] for r in rows] == d.distance.tolist()
    assert [r["point_a"] for r in rows] == d.point_a.tolist() and [r["point_b"] for r in rows] == d.point_b.tolist()
    assert [(r["face_a"], r["face_b"]) for r in rows] == list(zip(d.face_a.tolist(), d.face_b.tolist(), strict=True))
    assert [r["colliding"] for r in rows] == [True, False, False]
    assert rows[1]["distance"] == 1.25 and abs(rows[2]["distance"] - 0.15) < 1e-12  # inside: 0.25 - 0.1 (y offset)


def test_distance_exit_codes_and_table(stl_pair, capsys):
    a, b = stl_pair
    assert main(["distance", a, b, "--pose-b", "2,0,0"]) == 0
    text = capsys.readouterr().out
    assert "distance 1.25 (apart)" in text and "closest point on a: (0.5," in text
    assert main(["distance", a, b, "--pose-a", "0,0,0,0,0,0.3", "--pose-b", "0.5,0,0"]) == 1
    assert "surfaces INTERSECT" in capsys.readouterr().out


def test_distance_batch_table_is_capped_by_show(stl_pair, tmp_path, capsys):
    a, b = stl_pair
    path, _ = _poses_file(tmp_path, np.linspace(1.0, 3.0, 30))
    assert main(["distance", a, b, "--pose-b", path, "--show", "4"]) == 0
    text = capsys.readouterr().out
    assert "30 poses, 0 with intersecting surfaces, min distance 0.25" in text
    assert "... 26 more poses" in text and len(text.strip().splitlines()) == 1 + 2 + 4 + 1


def test_penetration_json_matches_library(stl_pair, meshes, tmp_path, capsys):
    a, b = stl_pair
    path, poses = _poses_file(tmp_path, [0.6, 3.0, 0.0])
    code = main(["penetration", a, b, "--pose-b", path, "--json"])
    out = json.loads(capsys.readouterr().out)
    p = ck.penetration(*meshes, None, poses)
    rows = out["results"]
    assert code == 1 and out["n_colliding"] == 1
    assert [r["depth"] for r in rows] == p.depth.tolist()
    assert rows[0]["direction"] == p.direction[0].tolist() and rows[1]["direction"] is None  # NaN: no direction
    assert [r["exact"] for r in rows] == p.exact.tolist() and [r["method"] for r in rows] == list(p.method)
    assert abs(rows[0]["depth"] - 0.15) < 1e-12 and rows[1]["depth"] == 0.0
    # b inside a: the surfaces do not meet (exit 0), yet the hulls overlap by a depth
    assert rows[2]["colliding"] is False and rows[2]["depth"] > 0
    assert main(["penetration", a, b, "--pose-b", "3,0,0"]) == 0
    assert main(["penetration", a, b, "--pose-b", "0.6,0,0", "--method", "sampled"]) == 1
    assert "penetration depth" in capsys.readouterr().out


def test_classify_json_matches_library_and_exit_codes(stl_pair, meshes, tmp_path, capsys):
    a, b = stl_pair
    path, poses = _poses_file(tmp_path, [0.6, 2.0, 0.0, 0.75])
    code = main(["classify", a, b, "--pose-b", path, "--json"])
    out = json.loads(capsys.readouterr().out)
    c = ck.classify(*meshes, None, poses)
    labels = [r["label"] for r in out["results"]]
    assert labels == c.labels.tolist() == ["penetrating", "disjoint", "contained", "touching"]
    assert [r["distance"] for r in out["results"]] == c.distance.tolist()
    assert out["results"][2]["b_inside_a"] is True and out["counts"]["contained"] == 1
    assert code == 1
    assert main(["classify", a, b, "--pose-b", "0.75,0,0"]) == 0  # touching: exit 0
    assert "TOUCHING" in capsys.readouterr().out
    assert main(["classify", a, b, "--pose-b", "2,0,0", "--tolerance", "1.5"]) == 0
    assert "TOUCHING" in capsys.readouterr().out  # 1.25 apart, within the tolerance
    assert main(["classify", a, b]) == 1
    assert "CONTAINED (b inside a)" in capsys.readouterr().out


def _pixels(path, rgb_test):
    import matplotlib.image as mpimg

    img = mpimg.imread(path)
    return int(rgb_test(img[..., 0], img[..., 1], img[..., 2]).sum())


def test_render_two_meshes(stl_pair, meshes, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    a, b = stl_pair
    apart = tmp_path / "apart.png"
    assert main(["render", a, b, "--pose-b", "2,0,0.3", "-o", str(apart), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    d = ck.distance(*meshes, None, ck.translation([2, 0, 0.3]))
    assert out["colliding"] is False and out["pairs"] == 0
    assert out["distance"] == float(d.distance) and out["point_b"] == d.point_b.tolist()
    assert apart.read_bytes()[:4] == b"\x89PNG"
    assert _pixels(apart, lambda r, g, b: (b > 0.7) & (r < 0.3) & (g < 0.5)) > 10  # the blue segment
    cut = tmp_path / "cut.png"
    assert main(["render", a, b, "--pose-b", "0.6,0,0", "-o", str(cut), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["colliding"] is True and out["pairs"] == len(ck.contacts(*meshes, None, ck.translation([0.6, 0, 0])))
    assert _pixels(cut, lambda r, g, b: (r > 0.6) & (g < 0.2) & (b < 0.2)) > 20  # red triangles
    assert _pixels(cut, lambda r, g, b: (b > 0.7) & (r < 0.3) & (g < 0.5)) == 0  # no segment


@pytest.mark.parametrize("command", ["distance", "penetration", "classify"])
def test_empty_batch_is_exit_0(stl_pair, tmp_path, capsys, command):
    a, b = stl_pair
    np.save(tmp_path / "none.npy", np.zeros((0, 4, 4)))
    assert main([command, a, b, "--pose-b", str(tmp_path / "none.npy")]) == 0
    assert "0 poses" in capsys.readouterr().out
    assert main([command, a, b, "--pose-b", str(tmp_path / "none.npy"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"] == []


def test_warmup_runs_each_group_in_its_own_process_with_progress():
    """`collisionkit warmup` (make test runs it first): one fresh process per group, a
    record each (an unknown group is an error record, not a crash), and a progress line
    at least every `heartbeat` seconds while a group runs. Uses the suite's cache, which
    the warm-up of `make test` has filled, so the robot group only loads."""
    from collisionkit.warmup import run

    lines: list[str] = []
    recs = run(["robot", "no-such-group"], jobs=1, out=lines.append, heartbeat=0.2)
    assert [r["group"] for r in recs] == ["robot", "no-such-group"]
    assert recs[0]["error"] is None and recs[0]["seconds"] > 0
    assert recs[1]["error"].startswith("KeyError")
    assert any("still running: robot (" in line for line in lines), lines
    assert any(line.startswith("[####################] 2/2 ") for line in lines), lines
