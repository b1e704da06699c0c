"""Numba set-up done once, before any kernel module is imported.

Two things must happen before the first ``@njit`` decorator runs:

* **Cache folder keyed by the kernel sources.** numba invalidates a cached
  kernel only when *its own* file changes, not when a kernel it calls from
  another file does, so a stale cache could silently run old code. Unless the
  user set ``NUMBA_CACHE_DIR``, kernels are cached under
  ``~/.cache/collisionkit/numba/<hash>`` where the hash covers every file of
  ``collisionkit/kernels`` (subfolders included), ``constants.py`` and the numba version. (The Makefile sets the same
  kind of folder explicitly.)
* **Threading layer.** Batched queries run under numba's parallel backend. The
  default OpenMP layer kills a fork-started child that touches it, and the
  ``workqueue`` layer aborts when two Python threads enter it at once. TBB
  survives both, so we ask for it (``THREADING_LAYER = "safe"``). The PyPI
  ``tbb`` wheel installs ``libtbb.so.12`` into ``<prefix>/lib``, which is not
  on the loader path of a virtualenv; we preload it so numba finds it. Without
  TBB numba falls back to a thread-safe layer (``"threadsafe"``: OpenMP), and
  :func:`threading_layer` reports which one runs.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import sys
from pathlib import Path

_KERNEL_DIR = Path(__file__).resolve().parent / "kernels"


def kernel_source_hash() -> str:
    """Hash of the kernel sources and the numba version (names the cache folder).

    Imports nothing heavy (not even numba), so the test configuration can load
    this file on its own and set ``NUMBA_CACHE_DIR`` before numba starts.
    """
    from importlib.metadata import version

    h = hashlib.sha256(version("numba").encode())
    # constants.py too: kernels read its codes as compile-time globals
    for path in [*sorted(_KERNEL_DIR.rglob("*.py")), _KERNEL_DIR.parent / "constants.py"]:
        h.update(path.relative_to(_KERNEL_DIR.parent).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _preload_tbb() -> bool:
    names = ("libtbb.so.12", "libtbb.12.dylib", "tbb12.dll")
    for prefix in {sys.prefix, sys.base_prefix}:
        for sub in ("lib", "Library/bin", "bin"):
            for name in names:
                path = Path(prefix) / sub / name
                if path.exists():
                    try:
                        ctypes.CDLL(str(path), mode=getattr(ctypes, "RTLD_GLOBAL", 0))
                        return True
                    except OSError:
                        pass
    return False


def configure() -> None:
    """Point numba at the keyed cache folder and choose the threading layer.

    Called once by ``collisionkit/__init__.py`` before any kernel module loads.
    """
    import numba

    if not os.environ.get("NUMBA_CACHE_DIR"):
        base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
        numba.config.CACHE_DIR = str(base / "collisionkit" / "numba" / kernel_source_hash())
    if _preload_tbb():
        try:
            from numba.np.ufunc import tbbpool  # noqa: F401  (raises if TBB is unusable)

            numba.config.THREADING_LAYER = "safe"
            return
        except ImportError:
            pass
    numba.config.THREADING_LAYER = "threadsafe"
