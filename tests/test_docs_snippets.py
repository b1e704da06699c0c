"""README.md and docs/guide.md work as written, from the repository root after ``make demo``.

* Every ```python block runs in a fresh namespace (cwd: a temporary folder holding a copy
  of ``examples/data``, so pictures land there). Every ``print(...)`` line states what it
  prints as a trailing comment ``# ... -> value``, and the test checks it (the first value a
  line prints, whitespace normalised), so a snippet cannot drift from what it shows.
* Every ``collisionkit ...`` line of a ```bash block runs through the CLI's ``main`` and
  exits with the code its comment documents (``# exit N``); output is not empty, files it
  writes exist. Other shell lines may only be ``make ...`` or ``source ...``.
* The guide's scene YAML is the shipped ``examples/data/cell.yaml``; the CLI synopsis
  (a ```text block) names commands that exist.
* Every fence names its language, so a block that is not run is marked as such.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from collisionkit.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "docs/guide.md")
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
LANGUAGES = {"python", "bash", "yaml", "text"}  # text: synopses, deliberately not run
SHELL_OK = ("make ", "source ")


def _blocks() -> list[tuple[str, int, str, str]]:
    """(doc, line of the opening fence, language, body) of every fenced block."""
    out = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            out.append((doc, text.count("\n", 0, m.start()) + 1, m.group(1).strip(), m.group(2)))
    return out


BLOCKS = _blocks()
PYTHON = [b for b in BLOCKS if b[2] == "python"]
SHELL = [(doc, line + 1 + k, s.strip()) for doc, line, lang, body in BLOCKS if lang == "bash"
         for k, s in enumerate(body.splitlines()) if s.strip() and not s.strip().startswith("#")]  # fmt: skip
COMMANDS = [c for c in SHELL if c[2].startswith("collisionkit ")]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A scratch cwd where the docs' relative paths (examples/data/...) resolve."""
    shutil.copytree(ROOT / "examples" / "data", tmp_path / "examples" / "data")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_block_is_marked():
    assert len(PYTHON) >= 10 and len(COMMANDS) >= 7  # the extraction finds the docs' blocks
    for doc, line, lang, _ in BLOCKS:
        assert lang in LANGUAGES, f"{doc}:{line}: fence without a known language ({lang!r})"
    text_blocks = [b for b in BLOCKS if b[2] == "text"]
    assert len(text_blocks) <= 2, [f"{d}:{n}" for d, n, _, _ in text_blocks]


@pytest.mark.parametrize("block", PYTHON, ids=[f"{d}:{n}" for d, n, _, _ in PYTHON])
def test_python_block_runs(block, workdir):
    doc, line, _, code = block
    if "pybullet_data" in code:
        pytest.importorskip("pybullet_data")
    printed: dict[int, list[str]] = {}

    def record(*args, sep=" ", end="\n", file=None, flush=False):
        if file is not None:
            return print(*args, sep=sep, end=end, file=file, flush=flush)
        printed.setdefault(sys._getframe(1).f_lineno, []).append(sep.join(map(str, args)))

    namespace: dict = {"__name__": "__main__", "print": record}
    exec(compile(code, f"{doc}:{line}", "exec"), namespace)  # raises on any failure
    assert "ck" in namespace  # each block imports what it uses
    for k, src in enumerate(code.splitlines(), start=1):
        if not src.lstrip().startswith("print("):
            continue
        m = re.search(r"#.*->\s*(.+?)\s*$", src)
        assert m, f"{doc}:{line + k}: a printing line must state its value as '# -> value'"
        assert printed.get(k), f"{doc}:{line + k}: never printed"
        assert " ".join(printed[k][0].split()) == " ".join(m.group(1).split()), f"{doc}:{line + k}: printed {printed[k][0]!r}"


def test_shell_lines_are_known():
    for doc, line, cmd in SHELL:
        assert cmd.startswith(("collisionkit ",) + SHELL_OK), f"{doc}:{line}: untested shell line {cmd!r}"


def _expected_exit(doc: str, line: int, cmd: str) -> int:
    m = re.search(r"#\s*exit (\d)\b", cmd)
    assert m, f"{doc}:{line}: document the exit code as '# exit N'"
    return int(m.group(1))


@pytest.mark.parametrize("command", COMMANDS, ids=[f"{d}:{n}" for d, n, _ in COMMANDS])
def test_cli_line(command, workdir, capsys):
    doc, line, cmd = command
    expected = _expected_exit(doc, line, cmd)
    argv = shlex.split(cmd, comments=True)[1:]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == expected, f"{doc}:{line}: exit {code}, documented {expected}\n{out}\n{err}"
    if expected == 2:
        assert err.startswith("error: ") and err.count("\n") == 1  # one line, no traceback
        assert any(a in err for a in argv if "/" in a)  # names the file
    else:
        assert out.strip()
    for flag in ("-o", "--png"):
        if flag in argv:
            assert (workdir / argv[argv.index(flag) + 1]).stat().st_size > 0
    if argv[0] == "bv-report":
        assert (workdir / "bv-report.png").stat().st_size > 0


def test_cli_entry_point_exit_code(workdir):
    """The first documented ``check`` through ``python -m collisionkit``: the real process exit code."""
    doc, line, cmd = next(c for c in COMMANDS if c[2].startswith("collisionkit check "))
    run = subprocess.run([sys.executable, "-m", "collisionkit", *shlex.split(cmd, comments=True)[1:]],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert run.returncode == _expected_exit(doc, line, cmd), run.stderr
    assert run.stdout.strip()


def test_guide_scene_is_the_example_file():
    yaml_blocks = [body for doc, _, lang, body in BLOCKS if lang == "yaml" and doc == "docs/guide.md"]
    assert yaml_blocks == [(ROOT / "examples" / "data" / "cell.yaml").read_text(encoding="utf-8")]


def test_guide_synopsis_names_real_commands(capsys):
    synopsis = [body for doc, _, lang, body in BLOCKS if doc == "docs/guide.md" and lang == "text"]
    assert len(synopsis) == 1
    commands = {s.split()[1] for s in synopsis[0].splitlines() if s.startswith("collisionkit ")}
    assert {"check", "contacts", "scene", "trajectory", "render", "bv-report", "demo", "bench"} <= commands
    for name in sorted(commands):
        with pytest.raises(SystemExit) as exc:
            main([name, "--help"])
        assert exc.value.code == 0, name
        assert "usage:" in capsys.readouterr().out
