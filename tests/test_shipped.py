"""Precompiled kernels (collisionkit/_shipped.py): found by content, loaded without compiling,
refused cleanly when they do not match, and invisible to users' own numba code.

The fast tests ship one tiny kernel (``kernels/core/runtime_probe.py``) through the same
``compile_into`` that ``make wheel`` uses; the wheel itself, installed into a fresh venv,
is tested in ``test_wheel_in_a_fresh_venv_compiles_nothing`` (slow).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from collisionkit import _shipped

ROOT = Path(__file__).resolve().parents[1]

#: Calls the probe kernel, then a user's own cached njit function from a file outside the
#: package; prints what was compiled and for which CPU, as JSON.
RUN_PROBE = textwrap.dedent(
    """
    import json, sys, importlib.util
    import collisionkit
    from collisionkit import _shipped
    from collisionkit.kernels.core.runtime_probe import probe
    from numba.core.registry import cpu_target
    assert probe(10) == 45.0
    spec = importlib.util.spec_from_file_location("user_mod", sys.argv[1])
    user = importlib.util.module_from_spec(spec); spec.loader.exec_module(user)
    assert user.twice(2.0) == 4.0
    lib = lambda d: next(iter(d.overloads.values())).library
    print(json.dumps({
        "status": _shipped.status(),
        "probe_misses": len(probe.stats.cache_misses), "probe_hits": len(probe.stats.cache_hits),
        "probe_cache": probe._cache.cache_path,
        "user_locator": type(user.twice._cache._impl.locator).__name__,
        "user_cpu": lib(user.twice).codegen.magic_tuple()[1],
        "host_cpu": cpu_target.target_context.codegen().magic_tuple()[1],
    }))
    """
)

USER_MODULE = "from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return 2.0 * x\n"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CPU")}
    env.update(PYTHONPATH=str(ROOT / "src"), **extra)
    return env


@pytest.fixture(scope="module")
def shipped_probe(tmp_path_factory) -> Path:
    """A shipped folder holding only the probe kernel, compiled for the generic CPU."""
    out = tmp_path_factory.mktemp("ship") / "compiled"
    cmd = [sys.executable, "-c", "from collisionkit.kernels.core.runtime_probe import probe; probe(10)"]
    manifest = _shipped.compile_into(out, cmd, groups=["probe"])
    assert manifest["magic_tuple"][1] == "generic" and manifest["files"] >= 2
    return out


def _edited_copy(shipped: Path, dest: Path, **fields) -> Path:
    """A copy of a shipped folder whose manifest has ``fields`` replaced."""
    shutil.copytree(shipped, dest)
    m = json.loads((dest / "manifest.json").read_text())
    (dest / "manifest.json").write_text(json.dumps({**m, **fields}))
    return dest


def _run_probe(tmp_path: Path, compiled: Path | str) -> dict:
    user = tmp_path / "user_mod.py"
    user.write_text(USER_MODULE)
    env = _env(COLLISIONKIT_CACHE_DIR=str(tmp_path / "cache"), COLLISIONKIT_COMPILED_DIR=str(compiled),
               NUMBA_CACHE_DIR=str(tmp_path / "user-cache"))  # fmt: skip
    r = subprocess.run([sys.executable, "-c", RUN_PROBE, str(user)], env=env, capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_shipped_kernel_loads_without_compiling_and_users_code_still_targets_the_host(tmp_path, shipped_probe):
    got = _run_probe(tmp_path, shipped_probe)
    assert got["status"].startswith("precompiled kernels in")
    assert (got["probe_misses"], got["probe_hits"]) == (0, 1)
    # users' functions: numba's own locator, compiled for this CPU (the shipped code is generic)
    assert got["user_locator"] != "KernelLocator"
    assert got["user_cpu"] == got["host_cpu"]
    # nothing compiled was written into the shipped folder
    assert not list(shipped_probe.rglob("*.tmp.*")) and not list(shipped_probe.rglob("*.lock"))


def test_kernel_cache_is_keyed_by_content_not_install_path(tmp_path):
    got = _run_probe(tmp_path, "none")
    assert (got["probe_misses"], got["probe_hits"]) == (1, 0)
    cache = Path(got["probe_cache"])
    assert cache.parts[-2:] == ("kernels", "core")  # no hash of the install folder in the path
    assert cache.parent.parent.parent == tmp_path / "cache"
    assert "turned off" in got["status"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("kernel_hash", "0000000000000000"), ("numba", "0.1.0"), ("cache_tag", "cpython-39")],
)
def test_a_manifest_that_does_not_match_is_refused_with_the_reason(tmp_path, monkeypatch, shipped_probe, field, value):
    monkeypatch.setenv("COLLISIONKIT_COMPILED_DIR", str(_edited_copy(shipped_probe, tmp_path / "same")))
    assert _shipped._find_shipped()[0] is not None  # the untouched copy is accepted
    monkeypatch.setenv("COLLISIONKIT_COMPILED_DIR", str(_edited_copy(shipped_probe, tmp_path / "edited", **{field: value})))
    found, why = _shipped._find_shipped()
    assert found is None and field in why and value in why


def test_code_for_another_platform_is_refused_at_first_load_and_compiled_instead(tmp_path, shipped_probe):
    magic = json.loads((shipped_probe / "manifest.json").read_text())["magic_tuple"]
    copy = _edited_copy(shipped_probe, tmp_path / "compiled", magic_tuple=["aarch64-unknown-linux-gnu", *magic[1:]])
    got = _run_probe(tmp_path, copy)
    assert "aarch64-unknown-linux-gnu" in got["status"] and "this machine is" in got["status"]
    assert (got["probe_misses"], got["probe_hits"]) == (1, 0)


def test_unreadable_manifest_is_reported(tmp_path, monkeypatch):
    (tmp_path / "manifest.json").write_text("{not json")
    monkeypatch.setenv("COLLISIONKIT_COMPILED_DIR", str(tmp_path))
    found, why = _shipped._find_shipped()
    assert found is None and "unreadable" in why
    monkeypatch.setenv("COLLISIONKIT_COMPILED_DIR", str(tmp_path / "absent"))
    found, why = _shipped._find_shipped()
    assert found is None and "no precompiled kernels" in why


@pytest.mark.slow
def test_wheel_in_a_fresh_venv_compiles_nothing(tmp_path):
    """The platform wheel (``make wheel``; or ``$COLLISIONKIT_WHEEL``) in a new venv, no
    cache anywhere, outside the repository: every query's dispatchers load, none compiles."""
    from benchmarks import cold_start

    wheel = cold_start.wheel_path(build=True)
    venv = cold_start.fresh_venv(tmp_path / "venv", wheel)
    for name, result in cold_start.first_calls(venv, tmp_path / "work").items():
        assert result["ok"], (name, result)
        assert result["cache_misses"] == [], (name, result["cache_misses"])
        if name.startswith("collisionkit check"):
            continue  # a CLI process: checked by its stderr (no compile notice), no dispatcher count
        assert result["dispatchers"] > 0, name
