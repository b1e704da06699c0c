"""Issue 32 item 2, compile less: what a first query compiles, and the kernels compiled
without numba's CPython wrapper (``kernels/core/jit.njit_internal``)."""

from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from benchmarks.compile_times import ENTRY_POINTS as COMPILE_ENTRY_POINTS
from numba import njit, types
from numba.core.errors import TypingError
from numba.core.registry import CPUDispatcher, cpu_target
from tests.test_dispatch import kernel_dispatchers

import collisionkit as ck
from collisionkit.bvh import pair_trees
from collisionkit.constants import BV_AABB, BV_KINDS, BV_OBB, BV_SAABB, NO_BUDGET, TRI_TEST_GUIGUE, TRI_TEST_MOLLER
from collisionkit.kernels.core import unlinked
from collisionkit.kernels.core.jit import BorrowingKernel, InternalKernel, njit_borrowing
from collisionkit.kernels.core.unlinked import DriverKernel, call_unlinked, njit_driver
from collisionkit.kernels.traverse import descent as kt
from collisionkit.query.strategies.descent import descent_tri

ROOT = Path(__file__).resolve().parents[1]


def test_an_internal_kernel_refuses_a_python_call_instead_of_crashing():
    """Without its wrapper a Python call would jump into missing code (a segfault)."""
    half_area = kernel_dispatchers()["linalg.box_half_area"]  # by name: Python names none
    assert isinstance(half_area, InternalKernel)
    with pytest.raises(TypeError, match="called from compiled kernels only"):
        half_area(0.0, 0.0, 0.0, 1.0, 2.0, 3.0)
    assert half_area.py_func(0.0, 0.0, 0.0, 1.0, 2.0, 3.0) == 11.0  # its Python body still runs
    # and compiled callers run it: the SAH build uses it
    assert ck.build_bvh(ck.primitives.box_mesh([1.0, 2.0, 3.0])).n_nodes > 1


def _is_njit(dec: ast.expr) -> bool:
    f = dec.func if isinstance(dec, ast.Call) else dec
    return (f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")) in (
        "njit", "njit_internal", "njit_driver", "njit_borrowing", "njit_lazy",
    )  # fmt: skip


def _python_names(tree: ast.AST) -> set[str]:
    """Names and attributes read by Python code (not inside compiled functions, not imports)."""
    out: set[str] = set()

    def visit(node: ast.AST, compiled: bool) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            compiled = compiled or any(_is_njit(d) for d in node.decorator_list)
        elif not compiled and isinstance(node, ast.Name):
            out.add(node.id)
        elif not compiled and isinstance(node, ast.Attribute):
            out.add(node.attr)
        for child in ast.iter_child_nodes(node):
            visit(child, compiled)

    visit(tree, False)
    return out


def test_no_python_code_calls_an_internal_kernel():
    """An internal kernel named by Python code (a call, a launch, a pinned entry) would fail
    at run time: refused here, where the whole tree is read."""
    internal = {name.split(".")[-1]: name for name, d in kernel_dispatchers().items() if isinstance(d, InternalKernel)}
    assert len(internal) > 150, len(internal)  # the walk finds them
    named: dict[str, list[str]] = {}
    for folder in ("src", "tests", "benchmarks", "examples"):
        for path in (ROOT / folder).rglob("*.py"):
            for name in _python_names(ast.parse(path.read_text())) & internal.keys():
                named.setdefault(internal[name], []).append(str(path.relative_to(ROOT)))
    assert not named, f"internal kernels named by Python code (use @njit for these): {named}"


def test_descent_tri_routes_the_common_case_to_none():
    for kind in (BV_AABB, BV_OBB, BV_SAABB):
        assert descent_tri(kind, TRI_TEST_GUIGUE) is None
        assert descent_tri(kind, TRI_TEST_MOLLER) == TRI_TEST_MOLLER
    for name in ("sphere", "kdop14", "rss"):
        assert descent_tri(BV_KINDS[name], TRI_TEST_GUIGUE) == TRI_TEST_GUIGUE


@pytest.mark.parametrize("bv", ["sphere", "kdop14", "rss"])
def test_other_kinds_routed_to_none_are_only_slower(bv):
    """The common-case kernels take box trees; given another kind they test every node pair
    as overlapping (a conservative answer), never a wrong one."""
    a = ck.primitives.uv_sphere_mesh(0.5, 8, 12).with_options(bv=bv)
    b = ck.primitives.box_mesh([1.0, 0.6, 0.4]).with_options(bv=bv)
    ta, tb = pair_trees(a, b)
    eye = np.eye(4)
    for T in ck.random_poses(40, radius=1.2, seed=3):
        T = np.ascontiguousarray(T)
        routed = kt.intersect_one(*ta.descent_args, eye, *tb.descent_args, T, ta.bv_code, np.int64(TRI_TEST_GUIGUE), NO_BUDGET)
        wrong = kt.intersect_one(*ta.descent_args, eye, *tb.descent_args, T, ta.bv_code, None, NO_BUDGET)
        assert routed == wrong == int(ck.intersects(a, b, None, T))


@pytest.mark.parametrize(("bv", "box_trees"), [(None, True), ("auto", True), ("aabb", True), ("obb", True),
                                               ("sphere", False), ("kdop14", False), ("rss", False)])  # fmt: skip
def test_robot_checker_takes_the_box_tree_variant_on_box_trees(bv, box_trees):
    """The checker's kernels get ``tri=None`` (the descent's box-tree variant, the one
    ``intersects`` compiles) exactly when every pair it may traverse is on box trees; the
    answers are the per-pair path's either way (tests/test_robot_checker.py)."""
    import tempfile

    from collisionkit.warmup import ARM_URDF

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "arm.urdf"
        path.write_text(ARM_URDF)
        robot = ck.Robot.load(path)
    w = ck.World()
    w.add("block", ck.primitives.box_mesh([0.1, 1.0, 1.0]), ck.translation([0.3, 0.0, 0.3]))
    checker = robot.checker(w, self_collision=True, bv=bv)
    assert (checker._tri is None) == box_trees
    q = np.linspace(-1.5, 1.5, 40)[:, None]
    got = checker.check(q)
    assert got.any() and not got.all()  # the sweep meets the block for some configurations
    assert [checker.check(x) for x in q] == got.tolist()


_FIRST_QUERY = """
import json, sys
from numba.core import event
import collisionkit as ck
names = []
class L(event.Listener):
    def on_start(self, ev):
        names.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", L())
box = ck.primitives.box_mesh([1.0, 1.0, 1.0])
hit = ck.intersects(box, box, None, ck.translation([0.75, 0.0, 0.0]))
sys.stdout.write("RESULT " + json.dumps({"hit": bool(hit), "names": names}))
"""


def test_a_first_intersects_compiles_only_the_common_case(tmp_path):
    """From an empty cache, two meshes' first ``intersects`` (AABB trees, SAH, Guigue's test)
    compiles none of the options it does not use (about 12 of 25 CPU s, issue 32)."""
    env = dict(os.environ, COLLISIONKIT_CACHE_DIR=str(tmp_path), COLLISIONKIT_COMPILED_DIR="none")
    run = subprocess.run([sys.executable, "-c", _FIRST_QUERY], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.rsplit("RESULT ", 1)[1])
    assert out["hit"]
    names = set(out["names"])
    assert {"build_binary_tree", "collide_task", "_guigue"} <= names, sorted(names)
    unused = {"_moller", "overlap_other", "size_other", "_fit_obb", "symmetric_eigen3", "split_balanced", "_rule_split"}
    assert not names & unused, sorted(names & unused)


@pytest.mark.parametrize("name", list(COMPILE_ENTRY_POINTS))
def test_a_first_call_entry_point_of_the_compile_benchmark_runs(name):
    """``benchmarks.compile_times``' first-call entry points (issue 32 item 2) run as a user's
    first call would; here on the warm cache, so nothing is timed, only that the benchmark
    keeps working."""
    COMPILE_ENTRY_POINTS[name]()


def _callees_leaving_unset(kernels: list[CPUDispatcher], option: str) -> dict[str, list[str]]:
    """For each of ``kernels``: the kernels it names, directly or through the ``inline="always"``
    helpers numba copies into it, that leave ``option`` unset (so inherit it from the compile
    they are compiled inside)."""
    unset: dict[str, list[str]] = {}
    for d in kernels:
        bodies = [d]  # the kernel, and the inline="always" helpers numba copies into it
        while bodies:
            f = bodies.pop().py_func
            for name in f.__code__.co_names:
                callee = f.__globals__.get(name)
                if not isinstance(callee, CPUDispatcher):
                    continue
                if callee.targetoptions.get("inline") == "always":
                    bodies.append(callee)
                elif option not in callee.targetoptions:
                    unset.setdefault(d.py_func.__qualname__, []).append(name)
    return unset


def test_no_callee_inherits_llvm_inlining():
    """numba hands ``forceinline`` on to every kernel compiled inside a forceinline kernel's
    compile that does not set the option itself (``Flags.inherit_if_not_set``), and so on down
    that callee's own callees. Tried with the option unset on the rest: the first
    ``intersects`` had compiled for over 7 minutes, at 2.8 GB, when it was stopped. So every
    kernel a forceinline kernel names sets the option (``njit_internal``: False) or is inlined
    by numba (``inline="always"``: its body is copied into the caller, never compiled alone
    there)."""
    llvm_inlined = [d for d in kernel_dispatchers().values() if d.targetoptions.get("forceinline")]
    assert len(llvm_inlined) >= 10, len(llvm_inlined)  # the walk finds them
    unset = _callees_leaving_unset(llvm_inlined, "forceinline")
    assert not unset, f"callees of forceinline kernels that leave forceinline unset: {unset}"


def test_no_callee_inherits_borrowing():
    """numba hands ``_nrt`` on like ``forceinline``: a kernel compiled inside a borrowing
    kernel's compile (``njit_borrowing``: no NRT) that leaves the option unset would be
    compiled without refcounts too, and cached so, for every caller; one that returned an
    array would then hand back a borrowed reference. So every kernel a borrowing kernel names
    sets the option (``njit_internal``: True) or is inlined by numba."""
    borrowing = [d for d in kernel_dispatchers().values() if isinstance(d, BorrowingKernel)]
    assert len(borrowing) >= 8, len(borrowing)  # the walk finds them
    assert all(d.targetoptions.get("_nrt") is False for d in borrowing)
    unset = _callees_leaving_unset(borrowing, "_nrt")
    assert not unset, f"callees of borrowing kernels that leave _nrt unset: {unset}"


def test_every_kernel_is_compiled_without_the_c_callable_wrapper():
    """``kernels/core/jit.njit`` sets ``no_cfunc_wrapper`` (the wrapper cost about 6% of a first
    edge check's compile): every kernel module imports it, none numba's own ``njit``."""
    found = kernel_dispatchers()
    assert len(found) > 300, len(found)  # the walk finds them
    with_wrapper = sorted(name for name, d in found.items() if not d.targetoptions.get("no_cfunc_wrapper"))
    assert not with_wrapper, f"kernels compiled with a cfunc wrapper: {with_wrapper}"
    kernels_dir = Path(ck.__file__).parent / "kernels"
    direct = []
    for path in sorted(kernels_dir.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "numba":
                if any(alias.name == "njit" for alias in node.names) and path.name != "jit.py":
                    direct.append(str(path.relative_to(kernels_dir)))
    assert not direct, f"kernel modules importing numba's njit: {direct}"


def _has_cfunc_wrapper(dispatcher, args) -> bool:
    cres = dispatcher.overloads[args]
    return bool(cres.library.get_pointer_to_function(cres.fndesc.llvm_cfunc_wrapper_name))


def test_what_a_kernel_compiles_inherits_no_cfunc_wrapper_and_a_users_kernel_keeps_it():
    """numba's own implementations compiled inside a collisionkit kernel's compile drop the
    wrapper as the kernel does (``_numba._callees_inherit_no_cfunc_wrapper``); a user's
    ``@njit`` function, and what it compiles, keep numba's default."""
    from numba.core import event

    from collisionkit.kernels.core.jit import njit as ck_njit

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            pass

        def on_end(self, ev):
            compiled.append((ev.data["dispatcher"], tuple(ev.data["args"])))

    def body(n):
        a = np.empty((n, 7, 3), np.float32)  # a signature no kernel of ours allocates
        a[0, 0, 0] = 1.0
        return a[0, 0, 0]

    ours = ck_njit(body)
    theirs = njit(body)
    listener = Listener()
    event.register("numba:compile", listener)
    try:
        assert ours(np.int64(3)) == 1.0
        inside_ours = list(compiled)
        compiled.clear()
        assert theirs(np.int64(3)) == 1.0
        inside_theirs = list(compiled)
    finally:
        event.unregister("numba:compile", listener)
    for found, wrapped in ((inside_ours, False), (inside_theirs, True)):
        impls = [(d, a) for d, a in found if d is not ours and d is not theirs]
        assert impls, "np.empty's implementation compiled"  # not vacuous
        assert all(_has_cfunc_wrapper(d, a) is wrapped for d, a in impls)
    assert not _has_cfunc_wrapper(ours, (types.int64,))
    assert _has_cfunc_wrapper(theirs, (types.int64,))


def test_a_borrowing_kernel_may_not_return_or_allocate_an_array():
    """Without NRT a returned array would be a borrowed reference the caller frees: refused at
    compile time (the argument itself by BorrowingKernel, anything else by numba), as is an
    allocation; scalars and tuples are fine, and the answer is the plain kernel's."""

    def row_sum(a, i):
        return a[i, 0] + a[i, 1], a[i, 2]

    def itself(a, i):
        return a  # numba accepts this without NRT: the one case it does not refuse itself

    def view(a, i):
        return a[i]

    def fresh(a, i):
        return np.zeros(3)[0] + a[i, 0]

    a = np.arange(12.0).reshape(4, 3)
    assert njit_borrowing()(row_sum)(a, 2) == row_sum(a, 2)
    with pytest.raises(TypeError, match="may not return an array"):
        njit_borrowing()(itself)(a, 1)
    with pytest.raises(Exception, match="returning of array passed into the function"):
        njit_borrowing()(view)(a, 1)
    with pytest.raises(Exception, match="returning of array passed into the function"):
        njit_borrowing()(fresh)(a, 1)  # np.zeros' own implementation inherits "no NRT" and is refused


def test_batch_drivers_call_their_chunk_unlinked_and_only_from_python():
    """A batch driver (``kernels/core/unlinked.njit_driver``) calls its chunk through a slot it
    publishes before it compiles or loads. A kernel that called a driver from compiled code
    would be loaded from the cache without that slot (an unresolved symbol: LLVM aborts the
    process), so none does; and each driver passes its own arguments, in order, to the chunk
    it declares (the slot's name is derived from them)."""
    kernels = kernel_dispatchers()
    drivers = {name: d for name, d in kernels.items() if isinstance(d, DriverKernel)}
    assert len(drivers) >= 18, sorted(drivers)  # the walk finds them (serial and parallel)
    short = {name.split(".")[-1] for name in drivers}
    for name, d in kernels.items():
        callees = set(d.py_func.__code__.co_names) & short
        callees = {c for c in callees if isinstance(d.py_func.__globals__.get(c), DriverKernel)}
        assert not callees, f"{name} calls a batch driver from compiled code: {callees}"
    one_call = 0
    for name, d in drivers.items():
        fn = ast.parse(textwrap.dedent(inspect.getsource(d.py_func))).body[0]
        assert isinstance(fn, ast.FunctionDef)
        params = [a.arg for a in fn.args.args]
        calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "call_unlinked"]
        declared = {c.py_func.__name__ for c in (d._chunk, *(m for m, _ in d._more_chunks))}
        if d._more_chunks:  # a driver of several steps: it calls every chunk it declares, and only those
            assert {c.args[0].id for c in calls} == declared, name  # type: ignore[attr-defined]
            continue
        assert len(calls) == 1 and calls[0].args[0].id == d._chunk.py_func.__name__, name  # type: ignore[attr-defined]
        if d._chunk_args is not None:  # a one-call entry: it builds the chunk's arguments, typed by _chunk_args
            one_call += 1
            continue
        assert params[-1] == "nchunks", name
        tuples = [n for n in ast.walk(fn) if isinstance(n, ast.Tuple) and isinstance(n.ctx, ast.Load)]
        assert [[e.id for e in t.elts] for t in tuples] == [params[:-1]], name  # type: ignore[attr-defined]
    assert one_call >= 3  # check_one, check_one_sweep, margin_one


@njit(nogil=True)
def _sum_rows_chunk(c, nchunks, Q, out):
    """A chunk for the one-call entry tests: out[k] = the sum of row k of Q."""
    for k in range(c, Q.shape[0], nchunks):
        out[k] = Q[k].sum()


@njit_driver(_sum_rows_chunk, lambda q: (q.copy(ndim=2, layout="C"), types.Array(types.float64, 1, "C")))
def _sum_one(q):
    out = np.zeros(1)
    call_unlinked(_sum_rows_chunk, np.int64(0), np.int64(1), (q.reshape((1, q.shape[0])), out))
    return out[0]


# wrong on purpose: the chunk's ``out`` declared int64, the entry passes float64
@njit_driver(_sum_rows_chunk, lambda q: (q.copy(ndim=2, layout="C"), types.Array(types.int64, 1, "C")))
def _sum_one_mistyped(q):
    out = np.zeros(1)
    call_unlinked(_sum_rows_chunk, np.int64(0), np.int64(1), (q.reshape((1, q.shape[0])), out))
    return out[0]


def _calls_only_its_declared_slot(entry, sig, monkeypatch) -> None:
    """Compile a copy of the one-call ``entry`` for ``sig`` with only the slot its
    ``chunk_args`` declare published: ``call_unlinked`` refuses (TypingError) a body that
    calls another. (With every slot visible a mistake could pass: another driver of the same
    chunk may have published the types the body uses; a process loading the entry from the
    cache without that driver would then lack the slot its code names.)"""
    chunks = ((entry._chunk, entry._chunk_args), *entry._more_chunks)
    declared = [unlinked._slot_name(c, (types.int64, types.int64, *f(*sig))) for c, f in chunks]
    assert all(name in unlinked.SLOTS for name in declared)  # the entry published them before it compiled
    with monkeypatch.context() as m:
        m.setattr(unlinked, "SLOTS", {name: unlinked.SLOTS[name] for name in declared})
        # numba keeps each intrinsic's typing per argument types: forget it, so the copy's
        # call is typed (and its slot looked up) again
        for template in cpu_target.typing_context.resolve_value_type(call_unlinked).templates:
            m.setattr(template, "_impl_cache", {})
        njit(entry.py_func).compile(sig)


def test_one_call_entries_call_the_chunk_slot_they_declare(monkeypatch):
    """A one-call entry (``njit_driver(chunk, chunk_args=f)``) builds its chunk's arguments
    itself; ``f`` must name their types, since the entry publishes the slot of ``f``'s types
    before it compiles or loads from the cache. Checked for the library's entries (the robot's
    ``check_one``, ``check_one_sweep``, ``margin_one``, and ``bfs_query_frontier``, whose
    three chunk steps each have their types, after a first use of each) and for a
    small entry, which also answers for two input types; a mistyped ``f`` is refused."""
    from collisionkit.robot import checker as robot_checker
    from collisionkit.warmup import _arm_and_plate

    robot, w, q = _arm_and_plate()
    robot.check(q[0], w)
    robot.check(q[0], w, margin=0.02)
    saved = robot_checker.SWEEP_MIN_LINKS
    robot_checker.SWEEP_MIN_LINKS = 2  # the sweeping checker's entry (types do not depend on the links)
    try:
        robot, w, q = _arm_and_plate()  # a new checker (one is kept per robot and world)
        robot.check(q[0], w, self_collision=True)
    finally:
        robot_checker.SWEEP_MIN_LINKS = saved
    from collisionkit.warmup import GROUPS

    GROUPS["bfs"]()  # the breadth-first traversal's driver of three chunk steps
    entries = {n: d for n, d in kernel_dispatchers().items() if isinstance(d, DriverKernel) and d._chunk_args}
    assert {n.split(".")[-1] for n in entries} >= {"check_one", "check_one_sweep", "margin_one", "bfs_query_frontier"}
    checked = 0
    for d in entries.values():
        for sig in d.signatures:
            _calls_only_its_declared_slot(d, sig, monkeypatch)
            checked += 1
    assert checked >= 3

    assert _sum_one(np.array([1.5, 2.0, -0.25])) == 3.25
    assert _sum_one(np.array([1.5, 2.0], np.float32)) == 3.5
    for sig in _sum_one.signatures:
        _calls_only_its_declared_slot(_sum_one, sig, monkeypatch)
    # the mistyped entry: with _sum_one's slot published it even runs in this process, but
    # it does not call the slot it declares
    assert _sum_one_mistyped(np.array([1.5, 2.0])) == 3.5
    with pytest.raises(TypingError, match="no published slot"):
        _calls_only_its_declared_slot(_sum_one_mistyped, _sum_one_mistyped.signatures[0], monkeypatch)


def test_drivers_loaded_from_the_cache_find_their_chunks():
    """A fresh process that loads the batch drivers from the cache (nothing compiled) runs
    them, serial and parallel, with the answers of the per-call path."""
    code = (
        "import numpy as np, collisionkit as ck\n"
        "from numba.core import event\n"
        "n = [0]\n"
        "class L(event.Listener):\n"
        "    def on_start(self, ev): n[0] += 1\n"
        "    def on_end(self, ev): pass\n"
        "event.register('numba:compile', L())\n"
        "a, b = ck.primitives.torus_mesh(1.0, 0.3), ck.primitives.box_mesh([0.5, 0.5, 0.5])\n"
        "P = ck.random_poses(64, 1.5, seed=3)\n"
        "d1, d2 = ck.distance(a, b, None, P, threads=1), ck.distance(a, b, None, P, threads=2)\n"
        "h1, h2 = ck.intersects(a, b, None, P, threads=1), ck.intersects(a, b, None, P, threads=2)\n"
        "one = [ck.distance(a, b, None, T).distance for T in P]\n"
        "assert np.array_equal(d1.distance, one) and np.array_equal(d2.distance, one)\n"
        "assert np.array_equal(h1, h2) and 0 < h1.sum() < len(P)\n"
        "print(n[0])\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900, check=False)
        for _ in range(2)
    ]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    assert int(runs[1].stdout.split()[-1]) == 0  # the second process loaded everything
