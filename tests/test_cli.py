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
