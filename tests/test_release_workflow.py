"""The release workflow (.github/workflows/release.yml) builds what the README promises.

Static checks (the workflow runs on GitHub, not here): the file parses; its matrix covers
CPython 3.10-3.14 on Linux x86-64 and aarch64, macOS arm64 and x86-64 and Windows x86-64
(25 wheels, each job one Python on one platform, natively); cibuildwheel's shared settings
(pyproject.toml [tool.cibuildwheel]) compile the kernels before each build, pack them
(``COLLISIONKIT_SHIP_DIR``), check and tag the wheel and run ``tools/check_wheel.py`` in a
fresh environment; the sdist is built and published with the wheels. The tools the workflow
runs are checked on a small wheel-like archive here; the full Linux x86-64 wheel was built
and checked end to end (CONTRIBUTING.md).
"""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
PYTHONS = ["cp310", "cp311", "cp312", "cp313", "cp314"]
#: (cibuildwheel platform, architecture) -> the wheel identifier's platform part
TARGETS = {
    ("linux", "x86_64"): "manylinux_x86_64",
    ("linux", "aarch64"): "manylinux_aarch64",
    ("macos", "arm64"): "macosx_arm64",
    ("macos", "x86_64"): "macosx_x86_64",
    ("windows", "AMD64"): "win_amd64",
}

yaml = pytest.importorskip("yaml")
try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def cibw() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["cibuildwheel"]


def _fnmatch_any(identifier: str, patterns: str) -> bool:
    from fnmatch import fnmatch

    return any(fnmatch(identifier, p) for p in patterns.split())


def test_the_workflow_parses_and_runs_on_tags(workflow):
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert "v*" in on["push"]["tags"] and "workflow_dispatch" in on
    assert set(workflow["jobs"]) >= {"wheels", "sdist", "publish"}


def test_the_matrix_covers_every_python_and_platform_natively(workflow):
    job = workflow["jobs"]["wheels"]
    matrix = job["strategy"]["matrix"]
    assert matrix["python"] == PYTHONS
    targets = {(t["platform"], t["arch"]): t["runner"] for t in matrix["target"]}
    assert set(targets) == set(TARGETS)
    # compiled on the machine they are for: no emulated aarch64, an Intel mac for x86-64
    assert "arm" in targets[("linux", "aarch64")] and targets[("linux", "x86_64")].startswith("ubuntu")
    assert "intel" in targets[("macos", "x86_64")] and targets[("windows", "AMD64")].startswith("windows")
    step = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("pypa/cibuildwheel@"))
    env = step["env"]
    assert env["CIBW_BUILD"] == "${{ matrix.python }}-*"
    assert env["CIBW_PLATFORM"] == "${{ matrix.target.platform }}" and env["CIBW_ARCHS"] == "${{ matrix.target.arch }}"
    assert job["strategy"]["fail-fast"] is False and job["timeout-minutes"] >= 60


def test_every_job_builds_one_wheel_of_the_25(workflow, cibw):
    """What `cibuildwheel --print-build-identifiers` lists per job (checked with cibuildwheel
    4.3.5, CONTRIBUTING.md): the shared build / skip selectors keep exactly one identifier."""
    every = set()
    for python in PYTHONS:
        for (platform, arch), tag in TARGETS.items():
            ident = f"{python}-{tag}"
            assert _fnmatch_any(ident, cibw["build"]) and not _fnmatch_any(ident, cibw["skip"]), ident
            assert arch in cibw[platform]["archs"]
            every.add(ident)
    assert len(every) == 25
    for dropped in ("cp314t-manylinux_x86_64", "cp312-musllinux_x86_64", "cp312-win32", "cp39-manylinux_x86_64",
                    "cp315-manylinux_x86_64"):  # fmt: skip
        assert not _fnmatch_any(dropped, cibw["build"]) or _fnmatch_any(dropped, cibw["skip"]), dropped


def test_each_wheel_ships_kernels_and_is_checked_in_a_fresh_environment(cibw):
    assert "tools/ship_kernels.py" in cibw["before-build"]
    assert cibw["environment"]["COLLISIONKIT_SHIP_DIR"] == "build/compiled"
    assert "tools/retag_wheel.py {wheel} {dest_dir}" in cibw["repair-wheel-command"]
    assert cibw["test-command"] == "python {project}/tools/check_wheel.py"
    for script in ("ship_kernels.py", "retag_wheel.py", "check_wheel.py"):
        assert (ROOT / "tools" / script).is_file()
    # the Linux tag matches the image the wheel was built in
    linux = cibw["linux"]
    assert linux["manylinux-x86_64-image"] == linux["manylinux-aarch64-image"] == "manylinux_2_28"


def test_the_sdist_is_built_and_everything_published(workflow):
    sdist = "\n".join(s.get("run", "") for s in workflow["jobs"]["sdist"]["steps"])
    assert "build --sdist" in sdist and "twine check" in sdist and "pip install dist/*.tar.gz" in sdist
    publish = workflow["jobs"]["publish"]
    assert set(publish["needs"]) == {"wheels", "sdist"}
    assert "refs/tags/v" in publish["if"] and publish["permissions"]["id-token"] == "write"
    count = "\n".join(s.get("run", "") for s in publish["steps"])
    assert "-eq 25" in count


def _wheel(tmp_path: Path, name: str, manifest: dict | None, numba_pin: str | None, kernels: bool = True) -> Path:
    """A small archive laid out like a shipped-kernel wheel."""
    path = tmp_path / name
    dist = "collisionkit-0.1.0.dist-info"
    tag = name[: -len(".whl")].split("-", 2)[2]
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("collisionkit/__init__.py", "")
        if manifest is not None:
            z.writestr("collisionkit/_compiled/manifest.json", json.dumps(manifest))
        if kernels:
            z.writestr("collisionkit/_compiled/kernels/core/probe.probe-1.py311.nbi", b"index")
        meta = "Metadata-Version: 2.1\nName: collisionkit\nVersion: 0.1.0\n"
        if numba_pin:
            meta += f"Requires-Dist: {numba_pin}\n"
        z.writestr(f"{dist}/METADATA", meta)
        z.writestr(f"{dist}/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n")
        z.writestr(f"{dist}/RECORD", "")
    return path


MANIFEST = {"kernel_hash": "0" * 16, "numba": "0.68.1", "cache_tag": "cpython-311",
            "magic_tuple": ["x86_64-unknown-linux-gnu", "generic", ""], "files": 2}  # fmt: skip


def test_retag_wheel_tags_a_linux_wheel_manylinux_and_keeps_its_record_true(tmp_path):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import retag_wheel
    finally:
        sys.path.pop(0)
    src = _wheel(tmp_path, "collisionkit-0.1.0-cp311-none-linux_x86_64.whl", MANIFEST, "numba==0.68.1")
    assert retag_wheel.main([str(src), str(tmp_path / "out")]) == 0
    out = tmp_path / "out" / "collisionkit-0.1.0-cp311-none-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(out) as z:
        assert "Tag: cp311-none-manylinux_2_28_x86_64" in z.read("collisionkit-0.1.0.dist-info/WHEEL").decode()
        record = z.read("collisionkit-0.1.0.dist-info/RECORD").decode().splitlines()
        assert len(record) == len(z.namelist())
        import base64
        import hashlib

        for line in record:
            name, digest, size = line.split(",")
            if name.endswith("RECORD"):
                continue
            data = z.read(name)
            assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert int(size) == len(data)
    # what it refuses: no kernels, another Python's kernels, numba not pinned to theirs
    bad = [
        ("collisionkit-0.1.0-cp311-none-linux_x86_64.whl", None, "numba==0.68.1", "manifest.json"),
        ("collisionkit-0.1.0-cp312-none-linux_x86_64.whl", MANIFEST, "numba==0.68.1", "kernels are for cpython-311"),
        ("collisionkit-0.1.0-cp311-none-linux_x86_64.whl", MANIFEST, "numba>=0.59", "numba pinned"),
        ("collisionkit-0.1.0-cp311-none-linux_x86_64.whl", MANIFEST, "numba==0.60.0", "numba pinned"),
    ]
    for k, (name, manifest, pin, why) in enumerate(bad):
        d = tmp_path / f"bad{k}"
        d.mkdir()
        with pytest.raises(SystemExit, match=re.escape(why)):
            retag_wheel.main([str(_wheel(d, name, manifest, pin)), str(d / "out")])


def test_shipped_code_is_used_on_the_same_target_only():
    from collisionkit._shipped import same_target

    assert same_target("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu")
    assert not same_target("x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu")
    assert not same_target("x86_64-pc-windows-msvc", "x86_64-unknown-linux-gnu")
    # macOS names its kernel version: the build runner's or a newer system
    assert same_target("arm64-apple-darwin23.6.0", "arm64-apple-darwin24.1.0")
    assert same_target("arm64-apple-darwin23.6.0", "arm64-apple-darwin23.6.0")
    assert not same_target("arm64-apple-darwin23.6.0", "arm64-apple-darwin22.1.0")
    assert not same_target("arm64-apple-darwin23.6.0", "x86_64-apple-darwin24.1.0")


def _setup_functions() -> dict:
    """setup.py's ``_ship_dir`` and ``_manifest`` (its setup() call needs a build environment)."""
    import ast
    import os

    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    keep = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ("_ship_dir", "_manifest")]
    ns = {"os": os, "json": json, "sys": sys, "Path": Path, "HERE": ROOT}
    exec(compile(ast.Module(body=keep, type_ignores=[]), "setup.py", "exec"), ns)  # noqa: S102
    return ns


def test_setup_refuses_kernels_of_another_python_and_reads_a_relative_folder(tmp_path, monkeypatch):
    ns = _setup_functions()
    ship = tmp_path / "compiled"
    ship.mkdir()
    monkeypatch.delenv("COLLISIONKIT_SHIP_DIR", raising=False)
    assert ns["_ship_dir"]() is None and ns["_manifest"](None) is None  # pure: sdist, git, editable
    monkeypatch.setenv("COLLISIONKIT_SHIP_DIR", str(ship))
    assert ns["_ship_dir"]() == str(ship)
    (ship / "manifest.json").write_text(json.dumps(dict(MANIFEST, cache_tag="cpython-99")))
    with pytest.raises(SystemExit, match="compiled by 'cpython-99'"):
        ns["_manifest"](str(ship))
    (ship / "manifest.json").write_text(json.dumps(dict(MANIFEST, cache_tag=sys.implementation.cache_tag)))
    assert ns["_manifest"](str(ship))["numba"] == "0.68.1"
    # a relative folder is taken from setup.py's own folder, not the working directory
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLLISIONKIT_SHIP_DIR", "build/compiled")
    assert ns["_ship_dir"]() == str(ROOT / "build" / "compiled")
