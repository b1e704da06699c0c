"""The public query functions are typed tightly enough for mypy to catch a wrong argument
type at the call (issue 29): a mesh or convex shape is accepted, a path or a number is not.

mypy reads only the modules that type the public calls (``collisionkit``'s names resolve
through them; every other collisionkit module is skipped, as Any), with its cache in a
temporary folder: a few seconds. ``make test`` type-checks the whole package separately.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

import collisionkit  # noqa: E402

# the modules that define the public call signatures and the types they name
_FOLLOWED = [
    "collisionkit",
    "collisionkit.query",
    "collisionkit.query.pair",
    "collisionkit.query.distance",
    "collisionkit.query.shapes",
    "collisionkit.geometry",
    "collisionkit.geometry.mesh",
    "collisionkit.convex",
    "collisionkit.convex.shapes",
]

_RIGHT = """
import numpy as np
import collisionkit as ck

box = ck.Box([1.0, 1.0, 1.0])
mesh = ck.primitives.box_mesh([1.0, 1.0, 1.0])
T = np.eye(4)
ck.intersects(mesh, box, None, T)
ck.intersects(ck.Sphere(0.5), mesh)
ck.distance(box, mesh, T, None)
"""

_WRONG = """
import collisionkit as ck

mesh = ck.primitives.box_mesh([1.0, 1.0, 1.0])
ck.intersects("a.stl", 3)
ck.distance(mesh, 2.5)
"""


def _mypy(tmp_path: Path, source: str) -> tuple[int, list[str]]:
    """(exit status, error lines about the snippet) of mypy on ``source``."""
    snippet = tmp_path / "snippet.py"
    snippet.write_text(textwrap.dedent(source))
    config = tmp_path / "mypy.ini"
    config.write_text(
        "[mypy]\nfollow_imports = skip\nignore_missing_imports = true\n"
        f"[mypy-{','.join(_FOLLOWED)}]\nfollow_imports = silent\n"
    )
    # the collisionkit that the tests import (this checkout's src/ under PYTHONPATH)
    src = str(Path(collisionkit.__file__).resolve().parents[1])
    old = os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = src
    try:
        out, err, status = mypy_api.run(
            ["--config-file", str(config), "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", str(snippet)]
        )
    finally:
        if old is None:
            del os.environ["MYPYPATH"]
        else:
            os.environ["MYPYPATH"] = old
    assert not err.strip(), err
    return status, [line for line in out.splitlines() if line.startswith(str(snippet)) and ": error:" in line]


def test_right_public_calls_pass_mypy(tmp_path):
    status, errors = _mypy(tmp_path, _RIGHT)
    assert errors == [] and status == 0


def test_wrong_argument_type_at_a_public_call_is_flagged(tmp_path):
    status, errors = _mypy(tmp_path, _WRONG)
    assert status == 1
    text = "\n".join(errors)
    # each wrong argument at its line: "a.stl" and 3 to intersects (line 5), 2.5 to distance (line 6)
    assert ':5: error: Argument 1 to "intersects" has incompatible type "str"' in text, text
    assert ':5: error: Argument 2 to "intersects" has incompatible type "int"' in text, text
    assert ':6: error: Argument 2 to "distance" has incompatible type "float"' in text, text
