"""Build hooks: a platform wheel carrying precompiled kernels (issue 16; see ``collisionkit/_shipped.py``).

Everything static lives in pyproject.toml. This file adds two things, and only when
``COLLISIONKIT_SHIP_DIR`` names a folder made by ``collisionkit warmup --ship DIR``
(``make wheel`` does both steps):

* the folder is copied into the wheel as ``collisionkit/_compiled``, and the wheel is
  tagged for this Python and platform (``cp311-none-linux_x86_64`` here), since the
  compiled code is only valid there;
* numba is pinned to the version the code was compiled with (numba refuses cache
  entries of another version, so any other numba would compile everything again).

A relative ``COLLISIONKIT_SHIP_DIR`` is taken from this file's folder, and a folder
compiled by another Python is refused (the release workflow, .github/workflows/release.yml,
builds one wheel per Python and platform this way; CONTRIBUTING.md).

Without it (``pip install .``, ``pip install -e .``, an sdist) the wheel is pure
Python and the kernels compile on first use.
"""

import json
import os
import shutil
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 has its own
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover
    from wheel.bdist_wheel import bdist_wheel

# The runtime dependencies (pyproject.toml marks them dynamic so the numba pin can change).
DEPENDENCIES = [
    "numpy>=1.24",
    "numba>=0.59",
    "scipy>=1.10",
    "trimesh>=4.0",
    # Robots (URDF kinematics), scene files, charts and rendered pictures.
    "yourdfpy>=0.0.56",
    "pyyaml>=6.0",
    "matplotlib>=3.7",
    # TBB is numba's fork-safe and thread-safe threading layer (see _numba.py).
    "tbb>=2021.6; platform_machine == 'x86_64' or platform_machine == 'AMD64'",
]

HERE = Path(__file__).resolve().parent


def _ship_dir() -> str | None:
    """``$COLLISIONKIT_SHIP_DIR`` as an absolute path (a relative one is taken from this
    folder: the release workflow sets ``build/compiled`` on every platform)."""
    ship = os.environ.get("COLLISIONKIT_SHIP_DIR")
    if not ship:
        return None
    path = Path(ship)
    return str(path if path.is_absolute() else HERE / path)


def _manifest(ship: str | None) -> dict | None:
    """The shipped folder's manifest, refused when it was compiled by another Python: its
    cache files would never load (``collisionkit/_shipped.py`` checks the same tag)."""
    if ship is None:
        return None
    manifest = json.loads((Path(ship) / "manifest.json").read_text())
    if manifest.get("cache_tag") != sys.implementation.cache_tag:
        raise SystemExit(
            f"COLLISIONKIT_SHIP_DIR={ship} holds kernels compiled by {manifest.get('cache_tag')!r}, "
            f"this build runs {sys.implementation.cache_tag!r}: run `collisionkit warmup --ship` with this Python"
        )
    return manifest


SHIP = _ship_dir()
MANIFEST = _manifest(SHIP)


def dependencies():
    if MANIFEST is None:
        return DEPENDENCIES
    return [f"numba=={MANIFEST['numba']}" if d.startswith("numba") else d for d in DEPENDENCIES]


class BuildPyWithKernels(build_py):
    def run(self):
        super().run()
        if SHIP:
            dest = Path(self.build_lib) / "collisionkit" / "_compiled"
            if dest.exists():
                shutil.rmtree(dest)
            shutil.copytree(SHIP, dest)


class KernelDistribution(Distribution):
    def has_ext_modules(self):  # platform-specific content: built into platlib, wheel not pure
        return bool(SHIP)


class PlatformWheel(bdist_wheel):
    def get_tag(self):
        python, abi, platform = super().get_tag()
        if SHIP:  # compiled code, no extension module: any ABI of this exact Python
            python, abi = f"cp{sys.version_info[0]}{sys.version_info[1]}", "none"
        return python, abi, platform


setup(install_requires=dependencies(), distclass=KernelDistribution, cmdclass={"build_py": BuildPyWithKernels, "bdist_wheel": PlatformWheel})
