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
import gc
import glob
import hashlib
import importlib.abc
import importlib.util
import logging
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

_KERNEL_DIR = Path(__file__).resolve().parent / "kernels"


def kernel_source_hash() -> str:
    """Hash of the kernel sources and the numba version (names the cache folder).

    Imports nothing heavy (not even numba).
    """
    from importlib.metadata import version

    h = hashlib.sha256(version("numba").encode() + CACHE_FORMAT)
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
#: distance family compiles apart from (and after) the collision kernels. The seconds are
#: what each adds to a user's first call from an empty cache (``python -m
#: benchmarks.compile_times --first``, 2026-12-07, CPU s: intersects 11-12, contacts 13, a
#: scene's pairs or a robot check 20-25; distance 16-20, penetration of non-convex meshes
#: 20-22, time of impact 22-27, each including the collision kernels' 11-12).
_GROUPS = {
    "proximity": ("distance / penetration / time-of-impact", 15),
}
_DEFAULT_GROUP = ("collision (intersects, contacts, tree build)", 20)
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


#: The collector's young-generation threshold while a collisionkit kernel compiles
#: (Python's default is 700); see ``_install_compile_listener``.
COMPILE_GC_THRESHOLD = 10_000
_gc_saved: tuple[int, ...] | None = None  # the thresholds to restore, while a compile runs


def _install_compile_listener() -> None:
    """Announce the outermost collisionkit compile (numba fires ``numba:compile`` only on a
    cache miss, never on a cache load or a call), so queries pay nothing per call.

    For the length of that compile the cyclic garbage collector runs less often (issue 32
    item 2): a compile allocates millions of container objects (IR, types, LLVM wrappers),
    most of which live until the compile ends, and at Python's default threshold every
    700 of them start a collection, the larger ones walking everything numba keeps alive
    from the earlier compiles; about a seventh of a group's compile time (the distance
    group 32.6, 33.2 -> 28.0, 28.4 CPU s, 471 -> 499 MiB peak; turning the collector off
    instead saved no more and took 764 MiB). The user's thresholds come back when the
    compile ends; a collector the user turned off is left off, and another library's
    compile (not a ``collisionkit.kernels`` function at the outermost level) is left alone.
    """
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            global _compile_depth, _gc_saved
            _compile_depth += 1
            if _compile_depth == 1:
                disp = ev.data.get("dispatcher")
                group = _kernel_group(getattr(getattr(disp, "py_func", None), "__module__", "") or "")
                if group is not None:
                    announce_compile(*_GROUPS.get(group, _DEFAULT_GROUP))
                    _inline_copies_share_one_scope()  # on the first compile: imports numba's inliner
                    _passes_start_on_a_fresh_stack_chunk()
                    if gc.isenabled():
                        _gc_saved = gc.get_threshold()
                        gc.set_threshold(max(_gc_saved[0], COMPILE_GC_THRESHOLD), *_gc_saved[1:])

        def on_end(self, ev: event.Event) -> None:
            global _compile_depth, _gc_saved
            _compile_depth -= 1
            if _compile_depth == 0 and _gc_saved is not None:
                gc.set_threshold(*_gc_saved)
                _gc_saved = None

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


#: Bumped whenever the cache files' format or what they may hold changes: part of the
#: folder key (``kernel_source_hash``), so entries written by an older collisionkit are
#: never read. 2: every file carries a SHA-256 digest; function ids are process-unique
#: (``_process_unique_function_ids``), so entries compiled before that may hold clashing
#: symbol names and are left behind with their folder. 3: cached kernels keep their
#: threading start-up hooks (``_cached_kernels_keep_reload_init``); entries compiled
#: against a cached parallel kernel before that may lack them.
CACHE_FORMAT = b"collisionkit-cache-3"
_INDEX_MAGIC = b"CKNBI2\n"
_DATA_MAGIC = b"CKNBC2\n"
_DIGEST = 32

_reported: set[str] = set()


class DamagedCacheEntry(Exception):
    """A kernel cache file that is truncated, garbled or not the entry its index names."""


def _report_damage(index_path: str, why: str, removed: bool) -> None:
    """One warning per damaged entry and process."""
    if index_path in _reported:
        return
    _reported.add(index_path)
    action = "removed it; compiling the kernel again" if removed else "compiling the kernel instead"
    log.warning("collisionkit: damaged kernel cache entry %s (%s); %s", index_path, why, action)


def _sealed(payload: bytes, magic: bytes, salt: bytes = b"") -> bytes:
    return magic + hashlib.sha256(salt + payload).digest() + payload


def _unsealed(blob: bytes, magic: bytes, path: str, salt: bytes = b"") -> bytes:
    """The payload of a sealed file; DamagedCacheEntry when its digest does not match
    (a truncated file, a garbled byte, data written for another entry)."""
    n = len(magic) + _DIGEST
    if len(blob) < n or not blob.startswith(magic):
        raise DamagedCacheEntry(f"{os.path.basename(path)}: not a collisionkit cache file ({len(blob)} bytes)")
    payload = blob[n:]
    if hashlib.sha256(salt + payload).digest() != blob[len(magic) : n]:
        raise DamagedCacheEntry(f"{os.path.basename(path)}: checksum mismatch ({len(blob)} bytes)")
    return payload


def _harden_cache_files() -> None:
    """Make numba's per-function cache files safe to share, and self-healing, for our kernels.

    Only files under this process's cache folder (``cache_dir``) or the shipped folder
    are handled here; every other numba cache (users' own functions) keeps numba's code.

    * **Concurrent writers.** numba writes each file through ``<file>.tmp.<uuid>`` +
      ``os.replace`` (no torn files), but its ``save`` reads the index, picks a free
      data-file number and writes the index *before* the data: two processes saving
      different signatures of one function at once could pick the same number, and a
      reader could follow the new index entry to an old data file. Under a
      per-function lock file, this save re-reads the index, writes the data first,
      then the index.
    * **Damage is detected, never trusted.** Every index and data file carries a
      SHA-256 digest of its payload (a data file's digest also covers its index key,
      so data written for another entry is refused). numba unpickled and linked what
      it found: a truncated or garbled file was an ``UnpicklingError``/``EOFError``,
      an "LLVM bitcode parsing error" or a crash in every later process. A file that
      fails its check, or an entry that fails to load, is reported once
      (``_report_damage``), its function's files are removed and the kernel compiles
      again (and is saved afresh). A missing data file (a partial set) is a miss.
    """
    from numba.core import caching

    cls = caching.IndexDataCacheFile
    needed = ("save", "load", "_load_index", "_save_index", "_load_data", "_save_data", "_data_name", "_dump")
    if getattr(cls, "_collisionkit_hardened", False) or not all(hasattr(cls, n) for n in needed):
        return
    orig = {n: getattr(cls, n) for n in needed}

    def ours(self: Any) -> bool:
        flag = getattr(self, "_collisionkit", None)
        if flag is None:
            from ._shipped import shipped_root

            roots = [cache_dir()]
            shipped = shipped_root()
            if shipped is not None:
                roots.append(shipped)
            here = Path(self._cache_path)
            flag = any(here == r or r in here.parents for r in roots)
            self._collisionkit = flag
        return flag

    def _load_index(self):  # noqa: ANN001, ANN202  (numba's signatures)
        if not ours(self):
            return orig["_load_index"](self)
        try:
            with open(self._index_path, "rb") as f:
                blob = f.read()
        except FileNotFoundError:
            return {}
        version, stamp, overloads = pickle.loads(_unsealed(blob, _INDEX_MAGIC, self._index_path))
        if version != self._version or stamp != self._source_stamp:
            return {}
        return overloads

    def _save_index(self, overloads):  # noqa: ANN001, ANN202
        if not ours(self):
            return orig["_save_index"](self, overloads)
        blob = _sealed(self._dump((self._version, self._source_stamp, overloads)), _INDEX_MAGIC)
        with self._open_for_write(self._index_path) as f:
            f.write(blob)
        return None

    def _load_entry(self, name, key):  # noqa: ANN001, ANN202
        path = self._data_path(name)
        with open(path, "rb") as f:
            blob = f.read()
        return pickle.loads(_unsealed(blob, _DATA_MAGIC, path, repr(key).encode()))

    def _save_entry(self, name, key, data):  # noqa: ANN001, ANN202
        blob = _sealed(self._dump(data), _DATA_MAGIC, repr(key).encode())
        with self._open_for_write(self._data_path(name)) as f:
            f.write(blob)

    def heal(self, why: str) -> None:  # noqa: ANN001
        """Remove this function's cache files (not shipped ones: they are only read)."""
        from ._shipped import shipped_root

        shipped = shipped_root()
        here = Path(self._cache_path)
        if shipped is not None and (here == shipped or shipped in here.parents):
            _report_damage(self._index_path, why, removed=False)
            return
        with _file_lock(self._index_path + ".lock"):
            base = self._index_name[: -len(".nbi")]
            for victim in [self._index_path, *glob.glob(os.path.join(glob.escape(self._cache_path), glob.escape(base) + ".*.nbc"))]:
                with contextlib.suppress(OSError):
                    os.remove(victim)
        _report_damage(self._index_path, why, removed=True)

    def load(self, key):  # noqa: ANN001, ANN202
        if not ours(self):
            return orig["load"](self, key)
        try:
            data_name = self._load_index().get(key)
            if data_name is None:
                return None
            try:
                return _load_entry(self, data_name, key)
            except FileNotFoundError:  # a partial set: the data file is gone, the index stayed
                return None
        except Exception as exc:  # noqa: BLE001  (pickle raises anything on garbage; all mean "damaged")
            heal(self, f"{type(exc).__name__}: {exc}")
            return None

    def save(self, key, data):  # noqa: ANN001, ANN202
        if not ours(self):
            return orig["save"](self, key, data)
        with _file_lock(self._index_path + ".lock"):
            try:
                overloads = self._load_index()
            except Exception:  # noqa: BLE001  (a damaged index is replaced)
                overloads = {}
            data_name = overloads.get(key)
            new = data_name is None
            if new:
                existing = set(overloads.values())
                i = 1
                while self._data_name(i) in existing:
                    i += 1
                data_name = self._data_name(i)
            _save_entry(self, data_name, key, data)
            if new:
                overloads[key] = data_name
                self._save_index(overloads)
        return None

    cls._load_index = _load_index
    cls._save_index = _save_index
    cls.load = load
    cls.save = save
    cls._collisionkit_heal = heal
    cls._collisionkit_hardened = True


def _process_unique_function_ids() -> None:
    """Start numba's function ids at a random point of a 2**60 range in every process.

    ROOT CAUSE of the segfaults after one kernel was recompiled into a complete cache
    (issue 31). numba names every compiled function ``<qualified name>`` + ``v<id>`` +
    argument types, the id from a per-process counter that starts at 1, and a cached
    kernel's object code carries weak (``linkonce_odr``) copies of every helper it
    calls, under those names. numba's own helpers are closures with one qualified name
    for several bodies (``make_quicksort_impl.<locals>.run_quicksort1`` sorts values
    for ``np.sort`` and positions for ``np.argsort``, with the same argument types).
    Two processes number their compiles alike from 1, so a kernel compiled in one
    process and a kernel compiled in another can both define, say,
    ``run_quicksort1 v7 (int64[::1])`` with different bodies. A later process that
    loads both links every call of that name to the first one loaded: an argsort then
    returns sorted values, which the kernel uses as indices (out of bounds: the
    segfault in ``query/batch.py``). A cache compiled by one process never shows it;
    recompiling one kernel in a fresh process (or warm-up groups compiled in parallel
    processes) does. With ids drawn from a random start, names from two processes do
    not meet, so cached kernels from any mix of processes link each call to its own
    body.
    """
    import itertools
    import secrets

    from numba.core import bytecode

    ids = getattr(bytecode.FunctionIdentity, "_unique_ids", None)
    if ids is None or getattr(bytecode.FunctionIdentity, "_collisionkit_ids", False):
        return
    def fresh_start() -> None:
        bytecode.FunctionIdentity._unique_ids = itertools.count(secrets.randbits(60) + (1 << 60))

    fresh_start()
    bytecode.FunctionIdentity._collisionkit_ids = True
    # A fork-started child inherits the parent's counter: both would number their next
    # compiles alike, the clash above. The child draws a start of its own.
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=fresh_start)


def _inline_copies_share_one_scope() -> None:
    """Make numba's ``inline="always"`` inlining copy a callee in time linear in its size
    (issue 32 item 2: compile from source).

    ``InlineWorker.inline_ir`` copies the callee's IR twice per call site, block by block,
    each block by its own ``copy.deepcopy``. Every variable refers to the function's one
    ``Scope``, which holds every variable, so each block's copy copies the whole scope
    again: blocks x variables. Sharing one ``deepcopy`` memo among the blocks of one copy
    gives the copy the original's shape (one scope for all its blocks) in one pass. The
    inliner's copies took 4.0 of the distance group's 30.6 CPU s and 10.1 of
    penetration's 60.8 (60.8 -> 52.0 with one memo). What numba's module uses of ``copy``
    is otherwise unchanged; left alone when numba's inliner is not laid out as expected.
    """
    import copy as _copy
    import threading

    from numba.core import inline_closurecall, ir

    worker: Any = getattr(inline_closurecall, "InlineWorker", None)
    if getattr(inline_closurecall, "copy", None) is not _copy or not callable(getattr(worker, "inline_ir", None)):
        return
    if getattr(worker.inline_ir, "_collisionkit", False):
        return  # installed by an earlier compile
    local = threading.local()  # per thread: a stack of {id(scope): (scope, memo)}, one per inline_ir

    def deepcopy(x: Any, memo: Any = None) -> Any:
        stack = getattr(local, "stack", None)
        if memo is None and stack and isinstance(x, ir.Block):
            # the blocks of one IR share their scope: one memo per source scope in this inline_ir
            held = stack[-1].setdefault(id(x.scope), (x.scope, {}))
            memo = held[1]
        return _copy.deepcopy(x, memo)

    class _Copy:
        """What ``inline_closurecall`` reads of the ``copy`` module."""

        def __getattr__(self, name: str) -> Any:
            return getattr(_copy, name)

    shim = _Copy()
    shim.deepcopy = deepcopy  # type: ignore[attr-defined]
    original = worker.inline_ir

    def inline_ir(self: Any, *args: Any, **kwargs: Any) -> Any:
        stack = getattr(local, "stack", None)
        if stack is None:
            stack = local.stack = []
        stack.append({})
        try:
            return original(self, *args, **kwargs)
        finally:
            stack.pop()

    inline_ir._collisionkit = True  # type: ignore[attr-defined]
    inline_ir.__doc__ = original.__doc__
    worker.inline_ir = inline_ir
    inline_closurecall.copy = shim


def _callees_inherit_no_cfunc_wrapper() -> None:
    """Compile what a collisionkit kernel's compile compiles (numba's own implementations of
    ``np.empty``, ``min``, ...) without the C-callable wrapper too, as the kernel itself
    (``kernels/core/jit.py``, ``njit``).

    numba hands some options of the function being compiled on to the functions its typing
    compiles (``fastmath``, ``error_model``, ...: ``Flags.inherit_if_not_set``), not
    ``no_cfunc_wrapper``. This makes it one of them: a function that sets the option keeps
    its own, one compiled at the top (a user's ``@njit`` called from Python) keeps numba's
    default, and one compiled inside a compile takes the value of the compile that needs
    it, so only kernels compiled under a collisionkit kernel drop the wrapper. About 30 of
    a first query's 100-150 compiles are such implementations. Left alone when numba's
    target options are not laid out as expected.
    """
    from numba.core import cpu

    options: Any = getattr(cpu, "CPUTargetOptions", None)
    original = getattr(options, "finalize", None)
    if not callable(original) or getattr(original, "_collisionkit", False):
        return

    def finalize(self: Any, flags: Any, opts: Any) -> None:
        original(self, flags, opts)
        flags.inherit_if_not_set("no_cfunc_wrapper")

    finalize._collisionkit = True  # type: ignore[attr-defined]
    finalize.__doc__ = original.__doc__
    options.finalize = finalize


def _compare_compile_flags_cheaply() -> None:
    """Make numba's comparisons of compile flags cheap, with the same answers (issue 32 item
    2: compile from source).

    numba looks up the implementation of every overloaded call (``np.empty``, ``a[i]``,
    ``min``, ...) in a cache keyed by the argument types and the flags of the compile asking
    (``templates._get_impl``). ``TargetConfig.__hash__`` hashes the sorted option *names*
    (the same for every flag set of a class) and ``__eq__`` builds two dicts of every
    option's value: a first edge check's compile made 123,000 such comparisons, 7% of its
    CPU time under the profiler. Here the hash is the same value computed once per class,
    and ``__eq__`` of two flag sets of one class compares only the options set in either
    (an option set in neither reads its default in both): the same answer as numba's.
    Left alone when numba's flags are not laid out as expected.
    """
    from numba.core import targetconfig

    cls: Any = getattr(targetconfig, "TargetConfig", None)
    if cls is None or "_values" not in getattr(cls, "__slots__", ()) or getattr(cls.__eq__, "_collisionkit", False):
        return
    original_eq = cls.__eq__
    hashes: dict[type, int] = {}

    def __hash__(self: Any) -> int:
        kind = type(self)
        h = hashes.get(kind)
        if h is None:
            h = hashes[kind] = hash(tuple(sorted(self.values())))
        return h

    def __eq__(self: Any, other: Any) -> Any:
        if self is other:
            return True
        if type(other) is not type(self):
            return original_eq(self, other)
        mine, theirs = self._values, other._values
        if mine == theirs:
            return True
        # an option set in neither reads its default in both: only the options set in one
        # can differ (``values()`` compares every option, as a dict: ``is`` or ``==``)
        for name in mine.keys() | theirs.keys():
            a, b = getattr(self, name), getattr(other, name)
            if a is not b and not a == b:
                return False
        return True

    __eq__._collisionkit = True  # type: ignore[attr-defined]
    cls.__hash__ = __hash__
    cls.__eq__ = __eq__


#: Stack slots (8 bytes each) in the frame of ``_on_fresh_stack_chunk``: more than the
#: 2,048 of CPython's 16 KiB data-stack chunk, so its frame never fits in what is left of
#: the current chunk and always opens a new one (of 32 KiB: about 16 KiB left for callees).
_FRESH_CHUNK_SLOTS = 2100


def _on_fresh_stack_chunk(f: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``f(*args, **kwargs)``, called from a frame that starts a new CPython data-stack chunk
    (its code's stack size is raised to ``_FRESH_CHUNK_SLOTS`` below)."""
    return f(*args, **kwargs)


_on_fresh_stack_chunk.__code__ = _on_fresh_stack_chunk.__code__.replace(co_stacksize=_FRESH_CHUNK_SLOTS)


def _passes_start_on_a_fresh_stack_chunk() -> None:
    """Run each numba compiler pass at the start of a fresh CPython data-stack chunk, so that
    no pass's inner loop calls across a chunk boundary (issue 32 item 2: compile from source).

    ROOT CAUSE of the world group's compile time depending on the process (52-68 CPU s at
    one commit): since 3.11 CPython keeps frames on per-thread stack chunks of 16 KiB. A
    call whose frame does not fit in the current chunk maps a new chunk (``mmap``), and the
    return unmaps it. A loop whose callee lands just past a boundary does that on every
    call: CPython issue gh-142183, "Calls across stack chunks perform badly", fixed for
    3.13 and 3.14 in 2026 by keeping one spare chunk; 3.11 and 3.12 keep the cost. Where the
    boundary falls depends on how deep the compile is called (a script or ``-m``, a test
    runner, a user's own frames). In one process the SSA pass over ``distance_task``
    (95 variables renamed over 5,131 statements) made 2.7 million ``mmap``/``munmap``
    pairs: 13 CPU s, against 1 s when its loops stay inside one chunk.

    Each pass now runs through ``_on_fresh_stack_chunk``, whose frame is larger than a
    chunk: it opens a new chunk at a known place (one map per pass, tens of microseconds
    per kernel), and the pass's loops run in the ~16 KiB after it. Nested compiles (a
    callee typed inside its caller's type inference) go through the same wrapper and get
    a chunk of their own. Only where the stack lives changes, not what a pass does; left
    alone on interpreters without chunked stacks and when numba's pass manager is not laid
    out as expected.
    """
    if sys.implementation.name != "cpython" or sys.version_info < (3, 11):
        return
    from numba.core import compiler_machinery

    manager: Any = getattr(compiler_machinery, "PassManager", None)
    run_pass = getattr(manager, "_runPass", None)
    if not callable(run_pass) or getattr(run_pass, "_collisionkit", False):
        return

    def _runPass(self: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 (numba's name)
        return _on_fresh_stack_chunk(run_pass, self, *args, **kwargs)

    _runPass._collisionkit = True  # type: ignore[attr-defined]
    _runPass.__doc__ = run_pass.__doc__
    manager._runPass = _runPass


def _cached_kernels_keep_reload_init() -> None:
    """Give a kernel loaded from the cache the start-up hooks a compiled one has.

    ROOT CAUSE of a segfault on the first large per-call ``intersects`` (found at
    0edb8c8, issue 29's review): a ``parallel=True`` kernel's code calls numba's
    thread-pool entry points (``allocate_sched``, ...), which exist only once the
    threading layer is launched. numba records that need as ``reload_init`` hooks: a
    freshly compiled library carries them, a caller compiled against it inherits them
    when the library is linked in, and the caller's cache entry stores them, so a
    later process that loads the caller launches the threads first. A library
    *loaded* from the cache runs its hooks but does not keep them
    (``CompileResult._rebuild`` leaves ``library._reload_init`` empty; numba 0.68). A
    caller compiled against it (then ``intersect_one`` against a cached ``_resume_any``)
    then stores no hook, and a process whose first parallel code is that cached caller
    calls a null ``allocate_sched``: a segfault (or, compiling, "LLVM ERROR: Symbol
    not found: allocate_sched"). Whether it happened depended on which process had
    compiled which kernel first. Here a loaded library keeps its hooks, as a compiled
    one does; ``CACHE_FORMAT`` 3 leaves entries written without this behind.
    """
    from numba.core import compiler

    cls = compiler.CompileResult
    if getattr(cls, "_collisionkit_reload_init", False) or not hasattr(cls, "_rebuild"):
        return
    orig = cls._rebuild.__func__

    def _rebuild(klass, *args, **kwargs):  # noqa: ANN001, ANN202  (numba's signature)
        cr = orig(klass, *args, **kwargs)
        hooks = getattr(cr, "reload_init", None)
        lib = getattr(cr, "library", None)
        if hooks and lib is not None and hasattr(lib, "_reload_init"):
            lib._reload_init.update(hooks)
        return cr

    cls._rebuild = classmethod(_rebuild)
    cls._collisionkit_reload_init = True


class _BlasProbeFromFiles(importlib.abc.MetaPathFinder):
    """Answer numba's import-time BLAS probe from scipy's installed files (issue 32 item 3).

    PERF: a process's first kernel load makes numba import its own implementations, among
    them ``numba.np.arraymath``, whose import runs ``_check_blas()``: ``ensure_blas()``
    imports ``scipy.linalg.cython_blas`` only to learn whether BLAS is there, and that
    runs ``scipy.linalg``'s whole package import (0.27 of the 1.4 s from ``python``
    starting to a warm process's first ``intersects`` answer, 2026-12-07). No collisionkit
    kernel calls BLAS. So when ``numba.np.linalg`` is imported, its ``ensure_blas`` is
    wrapped: the first call (that probe; nothing calls it earlier) answers yes when
    scipy's ``linalg/cython_blas`` extension is installed, without importing it; every
    other call, and the probe when the file is missing, runs numba's own. A kernel that
    does use BLAS still imports it when it compiles (numba's ``ensure_blas``) and runs
    (numba's C helper imports ``cython_blas`` itself).
    """

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "numba.np.linalg":
            return None
        sys.meta_path.remove(self)  # once; and find_spec below must not come back here
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            real = getattr(module, "ensure_blas", None)
            if real is None:  # another numba: nothing to wrap
                return
            probed = False

            def ensure_blas() -> None:
                nonlocal probed
                if not probed:
                    probed = True
                    if _cython_blas_installed():
                        return
                real()

            module.ensure_blas = ensure_blas

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]  # this spec's loader only
        return spec


def _cython_blas_installed() -> bool:
    """Whether scipy's ``linalg/cython_blas`` extension is installed (nothing imported)."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or not spec.submodule_search_locations:
        return False
    return any(glob.glob(os.path.join(folder, "linalg", "cython_blas*")) for folder in spec.submodule_search_locations)


def _defer_blas_probe() -> None:
    """Install :class:`_BlasProbeFromFiles` (before numba imports ``numba.np.linalg``)."""
    if "numba.np.linalg" not in sys.modules and not any(isinstance(f, _BlasProbeFromFiles) for f in sys.meta_path):
        sys.meta_path.insert(0, _BlasProbeFromFiles())


def configure() -> None:
    """Point numba at the keyed cache folder and choose the threading layer.

    Called once by ``collisionkit/__init__.py`` before any kernel module loads.
    """
    import numba

    from . import _shipped

    numba.config.CACHE_DIR = str(cache_dir())
    _shipped.install()  # our kernels: install-path-free cache folders, shipped code first
    _harden_cache_files()
    _process_unique_function_ids()
    _cached_kernels_keep_reload_init()
    _callees_inherit_no_cfunc_wrapper()
    _compare_compile_flags_cheaply()
    _install_compile_listener()
    _defer_blas_probe()
    if _preload_tbb():
        try:
            from numba.np.ufunc import tbbpool  # type: ignore[attr-defined]  # noqa: F401  (a compiled module, raises if TBB is unusable)

            numba.config.THREADING_LAYER = "safe"
            return
        except ImportError:
            pass
    numba.config.THREADING_LAYER = "threadsafe"
