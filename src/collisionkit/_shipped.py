"""Precompiled kernels shipped inside a platform wheel, and where numba caches ours.

A wheel built by ``make wheel`` carries ``collisionkit/_compiled/``: numba's cache
files for every kernel the warm-up runs (``collisionkit warmup``), compiled for the
platform's baseline CPU (``NUMBA_CPU_NAME=generic``; on x86-64: SSE2, no AVX), and
``manifest.json`` naming what they were built from. A process uses them only when
the manifest matches it exactly:

* the kernel sources: ``_numba.kernel_source_hash`` (every file of
  ``collisionkit/kernels``, ``constants.py`` and the numba version), so a cache is
  found by *what* the kernels are, never by where they are installed;
* the numba version (numba's own index check refuses entries of another version;
  the platform wheel pins ``numba==`` the version it was built with);
* the Python implementation and version (``sys.implementation.cache_tag``: numba
  keys entries by the function's bytecode and pickles them);
* the LLVM target triple (operating system and architecture; on macOS the
  system version it names, or a newer one: :func:`same_target`).

Anything else (a source checkout, another numba, another platform) compiles on
first use into the user cache (``_numba.cache_dir``), with one line on the
``collisionkit`` logger saying why the shipped code was not used.

How numba is hooked (see ``numba/core/caching.py``). A cached dispatcher asks its
``CacheImpl`` for a *locator* (the folder of its index and data files) and looks
entries up by ``(signature, codegen.magic_tuple(), bytecode hash)``; the magic
tuple names the CPU and its features. :func:`install` puts :class:`KernelLocator`
first among numba's locators. It answers only for files under
``collisionkit/kernels`` (every other function, users' own included, gets numba's
usual locators) and puts the cache at ``<cache_dir>/kernels/<group>``, relative to
the package, so two installs of the same sources share one cache. ``install`` also
wraps ``Cache._load_overload``: for our kernels it first looks in the shipped folder
under the shipped magic tuple, then in the user cache under the host's, as numba
would. A miss compiles for the host CPU into the user cache; the shipped folder is
only ever read. Code compiled for the generic CPU runs on every CPU of its triple,
and nothing process-wide changes (``numba.config.CPU_NAME`` stays unset), so users'
own numba code in the same process still compiles for the host CPU.

Answers do not depend on which copy runs: no kernel uses fastmath, so LLVM never
fuses or reorders floating-point operations, on any CPU.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

_PACKAGE_DIR = Path(__file__).resolve().parent
_KERNEL_DIR = _PACKAGE_DIR / "kernels"
#: Where a platform wheel keeps its compiled kernels (inside the installed package).
SHIPPED_DIRNAME = "_compiled"
MANIFEST = "manifest.json"
#: The CPU the shipped code is compiled for: LLVM's baseline for the triple.
SHIPPED_CPU = "generic"


class Shipped(NamedTuple):
    root: Path
    magic_tuple: tuple[str, str, str]


_shipped: Shipped | None = None
_status = "not looked for yet"
_triple_checked = False


def shipped_root() -> Path | None:
    """The folder searched for shipped kernels: ``$COLLISIONKIT_COMPILED_DIR`` if set
    (``none`` turns shipped kernels off), else ``collisionkit/_compiled``."""
    env = os.environ.get("COLLISIONKIT_COMPILED_DIR")
    if env is not None:
        return None if env.strip().lower() in ("", "none", "off", "0") else Path(env).expanduser()
    return _PACKAGE_DIR / SHIPPED_DIRNAME


def status() -> str:
    """One line: whether this process loads shipped kernels, and if not, why."""
    return _status


def _find_shipped() -> tuple[Shipped | None, str]:
    import numba

    from ._numba import kernel_source_hash

    root = shipped_root()
    if root is None:
        return None, "shipped kernels turned off (COLLISIONKIT_COMPILED_DIR=none)"
    path = root / MANIFEST
    if not path.exists():
        return None, "no precompiled kernels (a source or editable install)"
    try:
        m = json.loads(path.read_text())
        wanted = {
            "kernel_hash": kernel_source_hash(),
            "numba": numba.__version__,
            "cache_tag": sys.implementation.cache_tag,
        }
        for key, value in wanted.items():
            if m.get(key) != value:
                return None, f"precompiled kernels are for {key} {m.get(key)!r}, this process has {value!r}"
        magic = tuple(m["magic_tuple"])
        if len(magic) != 3:
            raise ValueError("magic_tuple must have 3 entries")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"unreadable {path}: {exc}"
    return Shipped(root, magic), f"precompiled kernels in {root} ({magic[0]}, cpu {magic[1]})"


# -- numba hooks -------------------------------------------------------------------------
def _relative_kernel_dir(py_file: str) -> Path | None:
    """``.../collisionkit/kernels/proximity/gjk.py`` -> ``kernels/proximity``; None for other files."""
    try:
        folder = Path(py_file).resolve().parent
        folder.relative_to(_KERNEL_DIR)
    except (OSError, ValueError):
        return None
    return folder.relative_to(_PACKAGE_DIR)


def _locator_class() -> type[Any]:
    from numba.core import caching

    from ._numba import cache_dir

    class KernelLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """Caches a collisionkit kernel at ``<cache_dir>/kernels/<group>`` (install-path free)."""

        def __init__(self, py_func: Any, py_file: str) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            relative = _relative_kernel_dir(py_file)
            if relative is None:  # from_function builds one for kernel files only
                raise ValueError(f"not a collisionkit kernel file: {py_file}")
            self.relative_dir: Path = relative
            self._cache_path = str(cache_dir() / relative)

        def get_cache_path(self) -> str:
            return self._cache_path

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if _relative_kernel_dir(py_file) is None:
                return None  # not ours: numba's own locators decide
            return super().from_function(py_func, py_file)

    return KernelLocator


KernelLocator: type[Any] | None = None


def _darwin(triple: str) -> tuple[str, tuple[int, ...]] | None:
    """``arm64-apple-darwin23.4.0`` -> (``arm64-apple-darwin``, (23, 4, 0)); None for other systems."""
    head, sep, version = triple.rpartition("darwin")
    if not sep or not version or not all(p.isdigit() for p in version.split(".")):
        return None
    return head + sep, tuple(int(p) for p in version.split("."))


def same_target(shipped: str, host: str) -> bool:
    """Can code compiled for the LLVM triple ``shipped`` run on ``host``?

    Equal triples; on macOS, whose triple names the kernel version it was built on
    (``arm64-apple-darwin23.4.0``), the same architecture on that version or a newer one
    (the release workflow builds on the oldest macOS runner; LLVM may pick library calls
    of the version it targets, so an older system compiles instead).
    """
    if shipped == host:
        return True
    s, h = _darwin(shipped), _darwin(host)
    return s is not None and h is not None and s[0] == h[0] and h[1] >= s[1]


def _load_shipped(cache: Any, sig: Any, target_context: Any) -> Any:
    """The shipped entry of ``sig`` for this dispatcher's cache, rebuilt; None if absent."""
    global _shipped, _status, _triple_checked
    from numba.core import caching

    shipped = _shipped  # NOTE: one read: another thread may drop it (a foreign target) meanwhile
    if shipped is None:
        return None
    codegen = target_context.codegen()
    host = codegen.magic_tuple()
    if not _triple_checked:
        _triple_checked = True
        if not same_target(shipped.magic_tuple[0], host[0]):
            _status = f"precompiled kernels are for {shipped.magic_tuple[0]}, this machine is {host[0]}"
            _shipped = None
            from ._numba import log

            log.info("collisionkit: %s; compiling instead", _status)
            return None
    files = getattr(cache, "_collisionkit_shipped", None)
    if files is None:
        locator = cache._impl.locator
        files = caching.IndexDataCacheFile(
            cache_path=str(shipped.root / locator.relative_dir),
            filename_base=cache._impl.filename_base,
            source_stamp=locator.get_source_stamp(),
        )
        cache._collisionkit_shipped = files
    sig_key, _, code_key = cache._index_key(sig, codegen)
    data = files.load((sig_key, shipped.magic_tuple, code_key))
    return None if data is None else cache._impl.rebuild(target_context, data)


def install() -> None:
    """Put :class:`KernelLocator` first among numba's locators and read the shipped
    manifest (once per process, before any kernel module is imported)."""
    global KernelLocator, _shipped, _status
    from numba.core import caching

    if KernelLocator is not None:
        return
    KernelLocator = _locator_class()
    caching.CacheImpl._locator_classes = [KernelLocator, *caching.CacheImpl._locator_classes]
    _shipped, _status = _find_shipped()
    root = shipped_root()
    if _shipped is None and root is not None and (root / MANIFEST).exists():  # shipped, but not for us
        from ._numba import log

        log.info("collisionkit: %s; compiling instead", _status)

    load = caching.Cache._load_overload

    def _load_overload(self: Any, sig: Any, target_context: Any) -> Any:
        locator = self._impl.locator
        if KernelLocator is None or not isinstance(locator, KernelLocator):
            return load(self, sig, target_context)
        shipped = _shipped
        if shipped is not None and self._enabled:
            try:
                data = _load_shipped(self, sig, target_context)
            except Exception as exc:  # noqa: BLE001  (a damaged shipped entry: compile instead)
                from ._numba import _report_damage

                _report_damage(str(shipped.root / locator.relative_dir / self._impl.filename_base),
                               f"{type(exc).__name__}: {exc}", removed=False)  # fmt: skip
                data = None
            if data is not None:
                return data
        try:
            # the files are checked (``_numba._harden_cache_files``); what can still fail
            # is rebuilding a checked entry (LLVM refusing it): heal it the same way
            return load(self, sig, target_context)
        except Exception as exc:  # noqa: BLE001
            heal = getattr(self._cache_file, "_collisionkit_heal", None)
            if heal is None:
                raise
            heal(f"{type(exc).__name__}: {exc}")
            return None

    caching.Cache._load_overload = _load_overload


# -- building the shipped folder (make wheel) -----------------------------------------------
_PROBE = (
    "import json, sys, collisionkit, numba\n"
    "from collisionkit._numba import kernel_source_hash\n"
    "from numba.core.registry import cpu_target\n"
    "json.dump({'kernel_hash': kernel_source_hash(), 'numba': numba.__version__,\n"
    "           'cache_tag': sys.implementation.cache_tag,\n"
    "           'magic_tuple': list(cpu_target.target_context.codegen().magic_tuple())}, sys.stdout)\n"
)


def build(
    out: Path, jobs: int = 2, groups: list[str] | None = None, cache: Path | None = None
) -> dict[str, Any]:
    """Compile the warm-up groups (default all) for the generic CPU into ``out``, with a manifest.

    What ``collisionkit warmup --ship DIR`` and ``make wheel`` run. ``out`` is replaced.
    ``cache``: a compile cache kept between builds (content-keyed like every collisionkit
    cache, so only what changed compiles again); default a new temporary one.
    Returns the manifest.
    """
    cmd = [sys.executable, "-m", "collisionkit", "warmup", "--jobs", str(jobs)]
    for g in groups or ():
        cmd += ["--group", g]
    return compile_into(Path(out), cmd, cache=cache, groups=groups or "all")


def compile_into(out: Path, command: list[str], cache: Path | None = None, **notes: Any) -> dict[str, Any]:
    """Run ``command`` (which runs kernels) compiling for the generic CPU into ``cache``
    (default: an empty temporary folder), then copy the cache files of the current kernel
    sources to ``out/kernels`` and write the manifest.

    The command runs with ``NUMBA_CPU_NAME=generic`` and this install's shipped folder
    turned off; ``notes`` are added to the manifest.
    """
    with contextlib.ExitStack() as stack:
        if cache is None:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="collisionkit-ship-"))
        else:
            Path(cache).mkdir(parents=True, exist_ok=True)
            tmp = str(Path(cache).resolve())
        env = dict(os.environ, NUMBA_CPU_NAME=SHIPPED_CPU, COLLISIONKIT_CACHE_DIR=tmp, COLLISIONKIT_COMPILED_DIR="none")
        env.pop("NUMBA_CPU_FEATURES", None)  # generic implies none
        env.pop("NUMBA_CACHE_DIR", None)
        t0 = time.perf_counter()
        subprocess.run(command, env=env, check=True)
        probe = subprocess.run([sys.executable, "-c", _PROBE], env=env, check=True, capture_output=True, text=True)
        manifest = json.loads(probe.stdout)
        if manifest["magic_tuple"][1] != SHIPPED_CPU:
            raise RuntimeError(f"expected code for cpu {SHIPPED_CPU!r}, got {manifest['magic_tuple']}")
        compiled = Path(tmp) / manifest["kernel_hash"] / "kernels"
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(compiled, out / "kernels", ignore=shutil.ignore_patterns("*.lock", "*.tmp.*"))
    files = [p for p in (out / "kernels").rglob("*") if p.is_file()]
    manifest.update(
        notes,
        files=len(files),
        bytes=sum(p.stat().st_size for p in files),
        build_seconds=round(time.perf_counter() - t0, 1),
    )
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest
