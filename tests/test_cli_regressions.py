"""Errors that are errors (issue 18, item 1): every command, every bad option.

Regressions: tracebacks with exit code 1 (also the "collision found" code) for
mismatched --pose-a/--pose-b batches, a .npy of strings, deeply nested JSON
poses, --max-pairs 0, an unknown --broadphase, render -o out.txt and negative
--poses. Now every error is exit 2 with one line on stderr naming the option,
file or line; --debug adds the traceback; render, bv-report and demo exit 0.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import collisionkit as ck
from collisionkit.cli import BROADPHASE_NAMES, main

DATA = Path(__file__).resolve().parents[1] / "examples" / "data"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two overlapping box meshes, the example cell, and assorted bad inputs."""
    import trimesh

    d = tmp_path_factory.mktemp("clireg")
    for name, size in [("a.stl", [1, 1, 1]), ("b.stl", [0.5, 0.5, 0.5])]:
        m = ck.primitives.box_mesh(size)
        trimesh.Trimesh(np.asarray(m.vertices), np.asarray(m.faces), process=False).export(d / name)
    for name in ("cell.yaml", "arm.urdf", "ring.obj", "plate.stl", "path.csv"):
        shutil.copy(DATA / name, d / name)
    np.save(d / "two.npy", np.stack([np.eye(4)] * 2))
    np.save(d / "three.npy", np.stack([np.eye(4)] * 3))
    np.save(d / "strings.npy", np.array([["1", "0", "0", "0"]] * 4))
    (d / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "ragged.json").write_text(json.dumps([[1, 0, 0, 0], [0, 1, 0]]))
    (d / "tag.yaml").write_text("objects: !!python/object/apply:os.system ['echo hi']\n")
    (d / "dup.csv").write_text("yaw,yaw,yaw\n0,0,0\n")
    (d / "zero.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n")
    return d


def run(argv, capsys):
    """(exit code, stderr) of main(argv); argparse's exits count as returns."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def assert_one_line_error(code, err, *words):
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, f"{w!r} not in {err!r}"


CASES = [
    # check / contacts: poses
    (["check", "A", "B", "--pose-a", "two.npy", "--pose-b", "three.npy"], ["--pose-a holds 2 poses", "--pose-b 3"]),
    (["check", "A", "B", "--pose-b", "strings.npy"], ["--pose-b", "strings.npy", "expected numbers"]),
    (["check", "A", "B", "--pose-b", "deep.json"], ["--pose-b", "nested too deeply"]),
    (["check", "A", "B", "--pose-b", "ragged.json"], ["--pose-b", "ragged.json"]),
    (["check", "A", "B", "--pose-b", "nan,0,0"], ["pose"]),
    (["check", "A", "B", "--bogus"], ["unrecognized arguments: --bogus"]),
    (["check", "A", "zero.obj"], ["zero.obj:4:", "index 0"]),
    (["contacts", "A", "B", "--max-pairs", "0"], ["--max-pairs", "must be >= 1"]),
    (["contacts", "A", "B", "--max-pairs", "-3"], ["--max-pairs"]),
    (["contacts", "A", "B", "--max-pairs", "x"], ["--max-pairs", "expected an integer"]),
    (["contacts", "A", "B", "--show", "-1"], ["--show", "must be >= 0"]),
    # distance, penetration, classify (issue 18, item 7): the pose options of check, and their own
    (["distance", "A", "B", "--pose-a", "two.npy", "--pose-b", "three.npy"], ["--pose-a holds 2 poses", "--pose-b 3"]),
    (["distance", "A", "B", "--pose-b", "1,2"], ["--pose-b", "expected 3, 6 or 16 numbers"]),
    (["distance", "A", "missing.stl"], ["missing.stl", "file not found"]),
    (["distance", "A", "zero.obj"], ["zero.obj:4:", "index 0"]),
    (["distance", "A", "B", "--show", "-1"], ["--show", "must be >= 0"]),
    (["distance", "A", "B", "--max-pairs", "3"], ["unrecognized arguments: --max-pairs"]),
    (["penetration", "A", "B", "--pose-b", "strings.npy"], ["--pose-b", "expected numbers"]),
    (["penetration", "A", "B", "--pose-b", "deep.json"], ["--pose-b", "nested too deeply"]),
    (["penetration", "A", "B", "--method", "exact"], ["--method", "'exact'"]),
    (["penetration", "A"], ["required: b"]),
    (["classify", "A", "B", "--tolerance", "-1"], ["--tolerance", "must be a finite number >= 0"]),
    (["classify", "A", "B", "--tolerance", "nan"], ["--tolerance", "must be a finite number >= 0"]),
    (["classify", "A", "B", "--tolerance", "wide"], ["--tolerance", "expected a number"]),
    (["classify", "A", "B", "--pose-a", "1,0,0,0, 0,2,0,0, 0,0,1,0, 0,0,0,1"], ["not a rigid transform"]),
    (["classify", "A", "B", "--bogus"], ["unrecognized arguments: --bogus"]),
    # render A B
    (["render", "A", "B", "--pose-b", "two.npy", "-o", "x.png"], ["--pose-b holds 2 poses", "one pose pair"]),
    (["render", "A", "B", "--pose-a", "1,2", "-o", "x.png"], ["--pose-a", "expected 3, 6 or 16 numbers"]),
    (["render", "A", "B", "--step", "3", "-o", "x.png"], ["--step is for a scene file"]),
    (["render", "A", "B", "--trajectory", "path.csv", "-o", "x.png"], ["--trajectory is for a scene file"]),
    (["render", "A", "B", "--broadphase", "sap", "-o", "x.png"], ["--broadphase is for a scene file"]),
    (["render", "A", "B", "cell.yaml", "-o", "x.png"], ["a scene file or two mesh files, got 3"]),
    (["render", "A", "missing.stl", "-o", "x.png"], ["missing.stl", "file not found"]),
    (["render", "A", "B", "-o", "out.txt"], ["--output", "must name a .png file"]),
    (["render", "cell.yaml", "--pose-b", "1,0,0", "-o", "x.png"], ["--pose-b is for two mesh files"]),
    # scene
    (["scene", "cell.yaml", "--broadphase", "quadtree"], ["--broadphase", "quadtree"]),
    (["scene", "tag.yaml"], ["tag.yaml:1:", "tags are not allowed"]),
    (["scene", "missing.yaml"], ["missing.yaml", "file not found"]),
    # trajectory
    (["trajectory", "cell.yaml", "path.csv", "--chunk", "0"], ["--chunk", "must be >= 1"]),
    (["trajectory", "cell.yaml", "path.csv", "--show", "-2"], ["--show"]),
    (["trajectory", "cell.yaml", "path.csv", "--broadphase", "x"], ["--broadphase"]),
    (["trajectory", "cell.yaml", "dup.csv"], ["dup.csv:1:", "'yaw' named more than once"]),
    # render
    (["render", "cell.yaml", "-o", "out.txt"], ["--output", "must name a .png file"]),
    (["render", "cell.yaml", "--step", "-1", "-o", "x.png"], ["--step", "must be >= 0"]),
    (["render", "cell.yaml", "--broadphase", "nope", "-o", "x.png"], ["--broadphase"]),
    # demo, bench, bv-report
    (["demo", "--poses", "-5"], ["--poses", "must be >= 1"]),
    (["demo", "--poses", "0"], ["--poses"]),
    (["demo", "--poses", "many"], ["--poses", "expected an integer"]),
    (["bench", "nosuch"], ["unknown benchmark 'nosuch'"]),
    (["bv-report", "A", "--poses", "0"], ["--poses", "must be >= 1"]),
    (["bv-report", "A", "--repeats", "-1"], ["--repeats"]),
    (["bv-report", "A", "--kinds", "cylinder"], ["--kinds", "'cylinder'"]),
    (["bv-report", "A", "--builds", "sideways"], ["--builds", "'sideways'"]),
    (["bv-report", "A", "--png", "chart.txt"], ["--png", ".png"]),
    (["bv-report", "zero.obj"], ["zero.obj:4:"]),
    ([], ["required"]),
    (["frobnicate"], ["invalid choice"]),
]


@pytest.mark.parametrize("argv, words", CASES, ids=[" ".join(c[0])[:60] for c in CASES])
def test_bad_option_is_one_line_exit_2(files, capsys, monkeypatch, argv, words):
    monkeypatch.chdir(files)
    argv = [str(files / "a.stl") if x == "A" else str(files / "b.stl") if x == "B" else x for x in argv]
    code, err = run(argv, capsys)
    assert_one_line_error(code, err, *words)
    assert not (files / "x.png").exists()  # validated before any work


def test_broadphase_names_match_the_world():
    from collisionkit.world import BROADPHASES

    assert tuple(sorted(BROADPHASES)) == BROADPHASE_NAMES


def test_render_exits_0_even_when_parts_collide(files, capsys, monkeypatch):
    monkeypatch.chdir(files)
    assert main(["scene", "cell.yaml"]) == 1  # the cell collides
    capsys.readouterr()
    assert main(["render", "cell.yaml", "-o", "cell.png", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["colliding_pairs"] > 0 and (files / "cell.png").read_bytes()[:4] == b"\x89PNG"


def test_unexpected_error_is_exit_2_and_debug_shows_traceback(files, capsys, monkeypatch):
    import collisionkit.query.pair as pair

    def broken(*args, **kwargs):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(pair, "intersects", broken)
    argv = ["check", str(files / "a.stl"), str(files / "b.stl")]
    code, err = run(argv, capsys)
    assert_one_line_error(code, err, "RuntimeError: boom second line", "--debug")
    code, err = run(["--debug", *argv], capsys)
    assert code == 2 and "Traceback" in err and "RuntimeError" in err
    code, err = run([*argv, "--debug"], capsys)  # after the command too
    assert code == 2 and "Traceback" in err


def test_module_entry_point_exit_codes(files):
    """``python -m collisionkit``: a bad option is 2, never 1 (the collision code)."""
    base = [sys.executable, "-m", "collisionkit"]
    bad = subprocess.run([*base, "contacts", str(files / "a.stl"), str(files / "b.stl"), "--max-pairs", "0"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and bad.stderr.count("\n") == 1
    deep = subprocess.run([*base, "check", str(files / "a.stl"), str(files / "b.stl"), "--pose-b", str(files / "deep.json")],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert deep.returncode == 2 and "Traceback" not in deep.stderr
