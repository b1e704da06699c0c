"""The package's shape: the import-layer contract and the kernel-source cache key."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from collisionkit import _numba

ROOT = Path(__file__).resolve().parents[1]


def test_import_layers_contract_is_kept():
    """Data flows one way (pyproject's [tool.importlinter]); imports inside functions count too."""
    pytest.importorskip("importlinter")
    lint = Path(sys.executable).with_name("lint-imports")
    cmd = [str(lint)] if lint.exists() else [sys.executable, "-m", "importlinter.cli"]
    out = subprocess.run(cmd + ["--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert f"{len(contracts)} kept, 0 broken" in out.stdout


def test_contracts_forbid_cycles_and_keep_query_in_three_levels():
    """No import cycles anywhere; query/ reads as questions -> strategies -> driver and specs."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    by_type = {c["type"]: c for c in contracts}
    assert by_type["acyclic_siblings"]["ancestors"] == ["collisionkit"]
    query = next(c for c in contracts if c.get("containers") == ["collisionkit.query"])
    layers = [m.strip() for layer in query["layers"] for m in layer.replace("|", ":").split(":")]
    assert layers.index("pair") < layers.index("strategies") < layers.index("driver") < layers.index("spec")
    # every module and package of query/ sits in a level
    pkg = ROOT / "src" / "collisionkit" / "query"
    present = {p.stem for p in pkg.glob("*.py")} | {p.name for p in pkg.iterdir() if (p / "__init__.py").exists()}
    assert present - {"__init__"} <= set(layers), f"not in any level: {sorted(present - {'__init__'} - set(layers))}"


def test_layers_contract_names_every_package():
    """A new top-level module or package must be placed in a layer, not slip past the contract."""
    import tomllib

    layers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]["layers"]
    named = {m.strip().removeprefix("collisionkit.") for layer in layers for m in layer.replace("|", ":").split(":")}
    pkg = ROOT / "src" / "collisionkit"
    present = {p.stem for p in pkg.glob("*.py")} | {p.name for p in pkg.iterdir() if (p / "__init__.py").exists()}
    # the package's own entry points sit above every layer
    present -= {"__init__", "__main__", "_numba", "_shipped"}  # numba set-up, before any layer loads
    assert present <= named, f"not in any layer: {sorted(present - named)}"


def test_kernel_hash_covers_kernel_subfolders(tmp_path, monkeypatch):
    """Editing a kernel in any subfolder (or constants.py) changes the cache key."""
    src = Path(_numba.__file__).resolve().parent
    copy = tmp_path / "collisionkit"
    shutil.copytree(src / "kernels", copy / "kernels", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(src / "constants.py", copy / "constants.py")
    monkeypatch.setattr(_numba, "_KERNEL_DIR", copy / "kernels")
    before = _numba.kernel_source_hash()
    assert before == _numba.kernel_source_hash()  # deterministic
    kernel = copy / "kernels" / "triangle" / "tri_tri.py"
    kernel.write_text(kernel.read_text() + "\n# edited\n")
    edited = _numba.kernel_source_hash()
    assert edited != before
    (copy / "constants.py").write_text((copy / "constants.py").read_text() + "\n# edited\n")
    assert _numba.kernel_source_hash() not in (before, edited)
    # moving a file between subfolders is a change too (the key hashes relative paths)
    (copy / "kernels" / "core" / "moved.py").write_text("x = 1\n")
    h1 = _numba.kernel_source_hash()
    (copy / "kernels" / "core" / "moved.py").rename(copy / "kernels" / "volumes" / "moved.py")
    assert _numba.kernel_source_hash() != h1
