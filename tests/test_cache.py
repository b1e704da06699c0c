"""The numba compile cache (issue 16): one folder, a compile notice, safe concurrent writers.

Every test runs collisionkit in fresh subprocesses with their own cache folder, so
nothing here depends on (or fills) the developer's cache. Compiling takes ~40 s of
one core per process: those tests are marked slow.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Prints the cache folder numba was pointed at (imports collisionkit, compiles nothing).
SHOW_DIR = "import collisionkit, numba; print(numba.config.CACHE_DIR)"

#: One intersects on two boxes; prints the traversal kernel's cache misses/hits and how
#: many collisionkit kernels compiled (numba fires "numba:compile" only on a real compile).
ONE_QUERY = """
import logging, sys
logging.basicConfig(level=logging.INFO, format="LOG %(message)s", stream=sys.stderr)
from numba.core import event
compiled = []
class L(event.Listener):
    def on_start(self, ev): compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev): pass
event.register("numba:compile", L())
import collisionkit as ck
from collisionkit.kernels.traverse.descent import intersect_one
box = ck.primitives.box_mesh([1, 1, 1])
assert ck.intersects(box, box, None, ck.translation([0.5, 0, 0])) is True
st = intersect_one.stats
print(sum(st.cache_misses.values()), sum(st.cache_hits.values()), len(compiled))
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLLISIONKIT_CACHE_DIR", "NUMBA_CACHE_DIR")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def _run(code: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)


def _hash() -> str:
    from collisionkit._numba import kernel_source_hash

    return kernel_source_hash()


def test_cache_folder_choice(tmp_path):
    """COLLISIONKIT_CACHE_DIR, then NUMBA_CACHE_DIR, then $XDG_CACHE_HOME/collisionkit/numba;
    always with the kernel-hash subfolder."""
    h = _hash()
    both = _env(COLLISIONKIT_CACHE_DIR=str(tmp_path / "ck"), NUMBA_CACHE_DIR=str(tmp_path / "nb"))
    numba_only = _env(NUMBA_CACHE_DIR=str(tmp_path / "nb"))
    xdg = _env(XDG_CACHE_HOME=str(tmp_path / "xdg"))
    for env, want in [
        (both, tmp_path / "ck" / h),
        (numba_only, tmp_path / "nb" / h),
        (xdg, tmp_path / "xdg" / "collisionkit" / "numba" / h),
    ]:
        r = _run(SHOW_DIR, env)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == str(want)


def test_unwritable_cache_folder_falls_back_to_temp_with_one_warning(tmp_path):
    # a folder below a plain file cannot be created, even by root (chmod would not stop root)
    (tmp_path / "file").write_text("")
    ro = tmp_path / "file" / "cache"
    r = _run(SHOW_DIR, _env(COLLISIONKIT_CACHE_DIR=str(ro)))
    assert r.returncode == 0, r.stderr
    used = Path(r.stdout.strip())
    assert not str(used).startswith(str(ro)) and "site-packages" not in str(used)
    assert used.name == _hash()
    notes = [line for line in r.stderr.splitlines() if "not writable" in line]
    assert len(notes) == 1 and str(used) in notes[0]


def test_cli_prints_compile_notice_once_on_stderr():
    code = (
        "from collisionkit.cli import _log_to_stderr; from collisionkit._numba import announce_compile\n"
        "_log_to_stderr(); announce_compile('collision', 40); announce_compile('collision', 40)"
    )
    r = _run(code, _env())
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "compiling collision kernels" in lines[0] and "about 40 s" in lines[0]


def test_warmup_rejects_unknown_group():
    r = subprocess.run(
        [sys.executable, "-m", "collisionkit", "warmup", "--group", "nope"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert "unknown group 'nope'" in r.stderr


@pytest.mark.slow
def test_two_processes_compile_at_once_then_a_third_loads(tmp_path):
    """Two processes compile into one fresh folder at the same time; a third loads every
    kernel from it (no compile) and no temporary or half-written file is left."""
    env = _env(COLLISIONKIT_CACHE_DIR=str(tmp_path))
    procs = [
        subprocess.Popen([sys.executable, "-c", ONE_QUERY], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)  # fmt: skip
        for _ in range(2)
    ]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        misses, hits, compiled = map(int, out.split())
        assert misses == 1 and hits == 0 and compiled > 0
        assert "LOG collisionkit: compiling collision" in err  # the compile notice
    r = _run(ONE_QUERY, env, timeout=300)
    assert r.returncode == 0, r.stderr
    misses, hits, compiled = map(int, r.stdout.split())
    assert (misses, hits, compiled) == (0, 1, 0)
    assert "compiling" not in r.stderr  # loading from the cache announces nothing
    leftovers = [p.name for p in tmp_path.rglob("*.tmp.*")]
    assert leftovers == []
    assert any(tmp_path.rglob("*.nbi.lock"))  # the writes went through collisionkit's locked save


#: Compiles one function that presents itself as a collisionkit kernel (its module name) and
#: one that does not, each inside a caller of the other kind; prints the collector's
#: young-generation threshold seen by every compiler pass, and the thresholds afterwards.
GC_DURING_COMPILE = """
import gc, os
from numba import njit
from numba.core import event
import collisionkit  # installs the compile listener
seen = []
class Passes(event.Listener):
    def on_start(self, ev): seen.append(gc.get_threshold()[0])
    def on_end(self, ev): pass
event.register("numba:run_pass", Passes())
def kernel(name, body):
    scope = {"__name__": name, "njit": njit}
    exec(body, scope)
    return scope["f"]
ours = njit(kernel("collisionkit.kernels.fake", "def f(x):\\n    return x + 1"))
theirs = njit(kernel("user_code", "def f(x):\\n    return x * 2"))
gc.set_threshold(int(os.environ["THRESHOLD"]), 7, 9)
if os.environ["COLLECTOR"] == "off":
    gc.disable()
ours(1)
print("ours", min(seen), max(seen), gc.get_threshold(), gc.isenabled())
seen.clear()
theirs(1)
print("theirs", min(seen), max(seen), gc.get_threshold(), gc.isenabled())
bad = njit(kernel("collisionkit.kernels.fake2", "def f(x):\\n    return undefined_name + x"))
try:
    bad(1)
except Exception as exc:
    print("failed", type(exc).__name__, gc.get_threshold())
"""


@pytest.mark.parametrize("threshold, state", [(700, "on"), (50_000, "on"), (700, "off")])
def test_the_collector_runs_less_often_while_a_kernel_compiles(tmp_path, threshold, state):
    """issue 32 item 2: a collisionkit kernel's compile raises the young-generation threshold
    (never lowers a user's higher one), and every threshold comes back afterwards, a failed
    compile included; another library's compile and a collector the user turned off are
    left alone."""
    from collisionkit._numba import COMPILE_GC_THRESHOLD

    r = _run(GC_DURING_COMPILE, _env(COLLISIONKIT_CACHE_DIR=str(tmp_path), THRESHOLD=str(threshold), COLLECTOR=state))
    assert r.returncode == 0, r.stderr
    lines = {line.split()[0]: line.split(None, 1)[1] for line in r.stdout.splitlines()}
    during = max(threshold, COMPILE_GC_THRESHOLD) if state == "on" else threshold
    after = f"({threshold}, 7, 9)"
    assert lines["ours"] == f"{during} {during} {after} {state == 'on'}"
    assert lines["theirs"] == f"{threshold} {threshold} {after} {state == 'on'}"
    assert lines["failed"].endswith(after)


#: A kernel (by its module name) with an ``inline="always"`` helper of several blocks called
#: at two sites, itself inlining another; prints whether collisionkit's inliner patch is on
#: and the kernel's answers against plain Python's.
INLINED_KERNEL = """
import numpy as np
from numba import njit
import collisionkit
from numba.core import inline_closurecall
body = '''
def inner(x, k):
    s = 0.0
    for j in range(k):
        if j % 2:
            s += x * j
        else:
            s -= j
    return s, k + 1

def helper(x, k):
    if x > 0.5:
        a, n = inner(x, k)
        return a + n, 1
    t = 0.0
    while k > 0:
        t += x
        k -= 1
    return t, 0

def f(x, k):
    a, ia = helper(x, k)
    b, ib = helper(1.0 - x, k + 1)
    return a - 2.0 * b + ia + 10 * ib
'''
scope = {"__name__": "collisionkit.kernels.fake"}
exec(body, scope)
py = scope["f"]
scope["inner"] = njit(inline="always")(scope["inner"])
scope["helper"] = njit(inline="always")(scope["helper"])
jit = njit(scope["f"])
xs = np.linspace(0.0, 1.0, 23)
same = all(jit(x, k) == py(x, k) for x in xs for k in range(5))
from numba.core import compiler_machinery
print(getattr(inline_closurecall.InlineWorker.inline_ir, "_collisionkit", False), same,
      getattr(compiler_machinery.PassManager._runPass, "_collisionkit", False))
"""


def test_inlining_with_one_scope_copy_compiles_the_same_kernel(tmp_path):
    """issue 32 item 2: numba's inliner, patched to copy a callee's blocks with one shared
    memo (``_numba._inline_copies_share_one_scope``), still inlines correctly: helpers of
    several blocks (loops, branches, tuples), at two sites, one inlined into the other.
    Its passes ran each on a fresh stack chunk (``_passes_start_on_a_fresh_stack_chunk``)."""
    r = _run(INLINED_KERNEL, _env(COLLISIONKIT_CACHE_DIR=str(tmp_path)))
    assert r.returncode == 0, r.stderr
    fresh_chunks = sys.implementation.name == "cpython" and sys.version_info >= (3, 11)
    assert r.stdout.split() == ["True", "True", str(fresh_chunks)]


#: A loop of calls to a tiny function, run at every stack depth over more than one 16 KiB
#: stack chunk, plainly and through ``_on_fresh_stack_chunk``; prints the most page faults
#: one loop of 2,000 calls took each way (a call across a chunk boundary maps a new chunk,
#: and touching it faults a page in).
STACK_CHUNKS = """
import resource
from collisionkit._numba import _on_fresh_stack_chunk
def leaf():
    return None
leaf.__code__ = leaf.__code__.replace(co_stacksize=200)  # a 1.6 KiB frame: wider than a step of at_depth
def loop(n):
    for _ in range(n):
        leaf()
def at_depth(d, fn, *args):
    return fn(*args) if d == 0 else at_depth(d - 1, fn, *args)
def faults(d, fn, *args):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    at_depth(d, fn, *args)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(max(faults(d, loop, 2000) for d in range(400)),
      max(faults(d, _on_fresh_stack_chunk, loop, 2000) for d in range(400)))
"""


@pytest.mark.skipif(
    sys.implementation.name != "cpython" or sys.version_info < (3, 11) or sys.platform == "win32",
    reason="chunked frame stacks are CPython 3.11+; page-fault counts need getrusage",
)
def test_a_loop_on_a_fresh_stack_chunk_never_calls_across_a_chunk_boundary():
    """issue 32 item 2: the root cause of a compile time depending on the process. A loop
    whose callee lands just past a CPython stack-chunk boundary maps and unmaps a chunk on
    every call (gh-142183: so on 3.11 and 3.12, fixed in later 3.13 and 3.14 releases).
    Through ``_on_fresh_stack_chunk`` (how each numba pass runs while collisionkit
    compiles) the loop starts a chunk of its own, at any depth the caller is at."""
    r = _run(STACK_CHUNKS, _env())
    assert r.returncode == 0, r.stderr
    plain, fresh = map(int, r.stdout.split())
    if sys.version_info < (3, 13):  # no spare chunk kept: at some depth each call maps one (2,000)
        assert plain >= 1000
    assert fresh < 200


def test_cheap_flag_comparisons_answer_as_numbas():
    """``_numba._compare_compile_flags_cheaply``: equality of compile flags compares only the
    options set in either, hash is one value per class; both agree with numba's own
    definitions (every option's value compared as a dict) on flag sets that differ, match,
    or set an option to its default."""
    import itertools

    from numba.core.compiler import Flags

    import collisionkit  # noqa: F401  (installs the patch)

    assert getattr(Flags.__eq__, "_collisionkit", False)

    def numba_eq(a, b):
        return a.values() == b.values()

    def flags(**set_options):
        f = Flags()
        for name, value in set_options.items():
            setattr(f, name, value)
        return f

    variants = [
        flags(),
        flags(nrt=True),
        flags(nrt=False),
        flags(no_cfunc_wrapper=False),  # set to its default: equal to flags()
        flags(no_cfunc_wrapper=True),
        flags(nrt=True, no_cfunc_wrapper=True),
        flags(no_cfunc_wrapper=True, nrt=True),
        flags(forceinline=False, error_model="numpy"),
        flags(error_model="python"),
    ]
    pairs = list(itertools.product(variants, repeat=2))
    assert any(numba_eq(a, b) and a._values != b._values for a, b in pairs)  # not vacuous
    assert any(not numba_eq(a, b) for a, b in pairs)
    for a, b in pairs:
        assert (a == b) is numba_eq(a, b), (a, b)
        if numba_eq(a, b):
            assert hash(a) == hash(b)
