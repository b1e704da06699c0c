"""Numba set-up done once, before any kernel module is imported.

Two things must happen before the first ``@njit`` decorator runs:

* **One cache folder, keyed by the kernel sources.** numba invalidates a
  cached kernel only when *its own* file changes, not when a kernel it calls
  from another file does, so a stale cache could silently run old code.
  :func:`cache_dir` picks the folder, the same for ``make demo``, ``make test``,
  an activated venv and the CLI: ``$COLLISIONKIT_CACHE_DIR`` if set, else
  ``$NUMBA_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME`` (``~/.cache``)
  ``/collisionkit/numba``, always followed by ``/<hash>``, a hash of every file
  of ``collisionkit/kernels``, ``constants.py`` and the numba version (inside
  it, each kernel folder at ``kernels/<group>``, not keyed by the install path,
  so two venvs share it; a platform wheel's precompiled kernels are read first:
  ``_shipped``). When
  that folder is not writable, a temporary folder is used with a one-line
  warning (numba would otherwise fall back to ``__pycache__`` inside
  site-packages). numba writes every cache file through a temporary file and
  ``os.replace``; :func:`_lock_cache_writes` also serialises the writes of one
  function's index across processes, so processes compiling at once into one
  folder never leave a half-written or mismatched entry.
* **Compile notice.** The first real compile (a cache miss, not a cache load)
  of a collisionkit kernel logs one line on the ``collisionkit`` logger
  (:func:`announce_compile`); the CLI prints it on stderr.
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

import contextlib
import ctypes
import hashlib
import logging
import os
import sys
import tempfile
from pathlib import Path

_KERNEL_DIR = Path(__file__).resolve().parent / "kernels"


def kernel_source_hash() -> str:
    """Hash of the kernel sources and the numba version (names the cache folder).

    Imports nothing heavy (not even numba).
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


log = logging.getLogger("collisionkit")

_CACHE_DIR: Path | None = None


def default_cache_root() -> Path:
    """The folder that holds one ``<hash>`` subfolder per kernel version."""
    for var in ("COLLISIONKIT_CACHE_DIR", "NUMBA_CACHE_DIR"):
        if os.environ.get(var):
            return Path(os.environ[var]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "collisionkit" / "numba"


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        return True
    except OSError:
        return False


def cache_dir() -> Path:
    """The numba cache folder of this process (chosen once; see the module doc)."""
    global _CACHE_DIR
    if _CACHE_DIR is None:
        wanted = default_cache_root() / kernel_source_hash()
        if _writable(wanted):
            _CACHE_DIR = wanted
        else:
            uid = os.getuid() if hasattr(os, "getuid") else os.getpid()
            _CACHE_DIR = Path(tempfile.gettempdir()) / f"collisionkit-{uid}" / "numba" / wanted.name
            log.warning(
                "collisionkit: cache folder %s is not writable; compiling into %s instead "
                "(set COLLISIONKIT_CACHE_DIR to choose)",
                wanted,
                _CACHE_DIR,
            )
    return _CACHE_DIR


# -- compile notice ----------------------------------------------------------------------
#: What compiles, by kernel package, and roughly how long on 2 cores (issue 16): the
#: distance family compiles apart from (and after) the collision kernels.
_GROUPS = {
    "proximity": ("distance / penetration / time-of-impact", 100),
}
_DEFAULT_GROUP = ("collision (intersects, contacts, tree build)", 40)
_announced: set[str] = set()
_compile_depth = 0


def announce_compile(what: str, seconds_estimate: float) -> None:
    """Log once per process and ``what``: a compile of ``what`` is starting."""
    if what in _announced:
        return
    _announced.add(what)
    from ._shipped import status

    log.info(
        "collisionkit: compiling %s kernels (first use with this cache; about %d s on 2 cores; "
        "cached in %s; `collisionkit warmup` compiles everything up front; %s)",
        what,
        seconds_estimate,
        cache_dir(),
        status(),
    )


def _kernel_group(module: str) -> str | None:
    """``collisionkit.kernels.proximity.distance`` -> ``proximity``; None for other code."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[0] == "collisionkit" and parts[1] == "kernels":
        return parts[2]
    return None


def _install_compile_listener() -> None:
    """Announce the outermost collisionkit compile (numba fires ``numba:compile`` only on a
    cache miss, never on a cache load or a call), so queries pay nothing per call."""
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            global _compile_depth
            _compile_depth += 1
            if _compile_depth == 1:
                disp = ev.data.get("dispatcher")
                group = _kernel_group(getattr(getattr(disp, "py_func", None), "__module__", "") or "")
                if group is not None:
                    announce_compile(*_GROUPS.get(group, _DEFAULT_GROUP))

        def on_end(self, ev: event.Event) -> None:
            global _compile_depth
            _compile_depth -= 1

    event.register("numba:compile", _Listener())


# -- concurrent writers ------------------------------------------------------------------
@contextlib.contextmanager
def _file_lock(path: str):
    try:
        import fcntl
    except ImportError:  # Windows: numba's os.replace still keeps each file whole
        yield
        return
    with open(path, "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _lock_cache_writes() -> None:
    """Make numba's per-function cache save safe for processes writing at once.

    numba writes each file through ``<file>.tmp.<uuid>`` + ``os.replace`` (no torn
    files), but its ``save`` reads the index, picks a free data-file number and
    writes the index *before* the data: two processes saving different
    signatures of one function at once could pick the same number, and a reader
    could follow the new index entry to an old data file. Under a per-function
    lock file, this save re-reads the index, writes the data first, then the
    index.
    """
    from numba.core import caching

    cls = caching.IndexDataCacheFile
    needed = ("save", "_load_index", "_save_index", "_save_data", "_data_name")
    if getattr(cls, "_collisionkit_locked", False) or not all(hasattr(cls, n) for n in needed):
        return

    def save(self, key, data):  # noqa: ANN001  (numba's signature)
        with _file_lock(self._index_path + ".lock"):
            overloads = self._load_index()
            data_name = overloads.get(key)
            new = data_name is None
            if new:
                existing = set(overloads.values())
                i = 1
                while self._data_name(i) in existing:
                    i += 1
                data_name = self._data_name(i)
            self._save_data(data_name, data)
            if new:
                overloads[key] = data_name
                self._save_index(overloads)

    cls.save = save
    cls._collisionkit_locked = True


def configure() -> None:
    """Point numba at the keyed cache folder and choose the threading layer.

    Called once by ``collisionkit/__init__.py`` before any kernel module loads.
    """
    import numba

    from . import _shipped

    numba.config.CACHE_DIR = str(cache_dir())
    _shipped.install()  # our kernels: install-path-free cache folders, shipped code first
    _lock_cache_writes()
    _install_compile_listener()
    if _preload_tbb():
        try:
            from numba.np.ufunc import tbbpool  # noqa: F401  (raises if TBB is unusable)

            numba.config.THREADING_LAYER = "safe"
            return
        except ImportError:
            pass
    numba.config.THREADING_LAYER = "threadsafe"
