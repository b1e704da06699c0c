"""Every compiled kernel has exactly one specialisation, whatever else ran.

STYLE.md: variants are runtime integer codes inside one generic kernel, so
compile time and the cache stay small. A second signature means some caller
passes other types (a read-only array, a literal int, a uint64 loop index, a
float32 pose) and numba compiled the whole kernel again.

The check runs in a FRESH interpreter (``python -c``, the same numba cache): only its own
workload (every public query, below) has compiled anything there, so the answer depends
neither on test order nor on which tests were selected, nor on tests that call kernels
directly with other types on purpose.

NOTE: with a warm on-disk cache, numba loads an entry point's machine code
without typing its body, so the helpers it calls never show their
signatures; with a cold cache they do. To give the same answer either way,
the entry points that ran in this session are typed again (fresh, uncached
copies of their Python functions, compiled for the same signatures), which
makes every helper they call record the signatures it is called with.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from numba.core.registry import CPUDispatcher
from tests.brute import PARALLEL_BATCH

import collisionkit as ck
import collisionkit.kernels as kernels_pkg
from collisionkit import Descent
from collisionkit.kernels.core.lazy import LazyKernel


def kernel_dispatchers() -> dict[str, CPUDispatcher]:
    """'module.function' -> dispatcher, for every @njit function defined in collisionkit.kernels."""
    found: dict[int, tuple[str, CPUDispatcher]] = {}
    # walk_packages: the kernels live in subfolders (kernels/traverse/descent.py, ...); names
    # are 'module.function' with the module's last component ('descent.query_serial')
    for info in pkgutil.walk_packages(kernels_pkg.__path__, kernels_pkg.__name__ + "."):
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if isinstance(obj, LazyKernel):  # a cold path's entry: its own dispatcher
                obj = obj.dispatcher
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == mod.__name__:
                found[id(obj)] = (f"{info.name.rsplit('.', 1)[1]}.{name}", obj)
    return dict(found.values())


def _calls_kernels(disp: CPUDispatcher) -> bool:
    """Does the function's body name another dispatcher (so typing it types callees)?"""
    g = disp.py_func.__globals__
    return any(isinstance(g.get(n), CPUDispatcher) for n in disp.py_func.__code__.co_names)


def _type_only_compiler():
    """A numba pipeline that stops right after type inference (typing a body makes every
    dispatcher it calls compile, or load from the cache, the signature it is called with).
    None when numba's internals differ from what this needs (then bodies are compiled fully)."""
    try:
        from numba.core.compiler import CompilerBase, DefaultPassBuilder, _EarlyPipelineCompletion
        from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass
        from numba.core.typed_passes import NopythonTypeInference
    except ImportError:  # pragma: no cover - other numba versions
        return None

    @register_pass(mutates_CFG=False, analysis_only=True)
    class StopAfterTyping(FunctionPass):
        _name = "collisionkit_tests_stop_after_typing"

        def __init__(self):
            FunctionPass.__init__(self)

        def run_pass(self, state):
            raise _EarlyPipelineCompletion("typed")  # any non-None result ends the compile

    class TypeOnly(CompilerBase):
        def define_pipelines(self):
            pm = PassManager("collisionkit_tests_type_only")
            for pass_cls, description in DefaultPassBuilder.define_untyped_pipeline(self.state).passes:
                pm.add_pass(pass_cls, description)
            pm.add_pass(NopythonTypeInference, "nopython frontend")
            pm.add_pass(StopAfterTyping, "stop after typing")
            pm.finalize()
            return [pm]

    return TypeOnly


def _retype(disp: CPUDispatcher, sig, type_only) -> None:
    options = {k: v for k, v in disp.targetoptions.items() if k not in ("cache", "nopython")}
    # parfors type the loop body again at lowering (uint64 prange indices): compile those fully
    if type_only is not None and not options.get("parallel"):
        from numba.core.compiler import Flags, compile_extra
        from numba.core.registry import cpu_target

        flags = disp.targetdescr.options.parse_as_flags(Flags(), options)
        try:
            compile_extra(
                cpu_target.typing_context, cpu_target.target_context, disp.py_func,
                tuple(sig), None, flags, {}, pipeline_class=type_only,
            )  # fmt: skip
            return
        except Exception:  # internals changed: fall back to a full compile
            pass
    numba.njit(**options)(disp.py_func).compile(sig)


#: Kernels whose bodies take minutes to type again (measured 2026-11-24 with a warm cache:
#: toi.min_step 91 s, bvh_distance.distance_task 52 s, of 197 s for every kernel). The
#: default run skips retyping them, so with a warm cache the helpers only they call are not
#: checked there; ``test_one_signature_per_kernel_full`` (marked slow) retypes everything.
SLOW_TO_RETYPE = frozenset({"toi.min_step", "distance.distance_task"})


def _retype_entry_points(dispatchers: dict[str, CPUDispatcher], skip: frozenset[str] = frozenset()) -> None:
    """Type compiled kernels' bodies again, to a fixpoint, so callees record their signatures."""
    type_only = _type_only_compiler()
    done: set[tuple[str, str]] = set()
    changed = True
    while changed:
        changed = False
        for name, disp in sorted(dispatchers.items()):
            if name in skip or not _calls_kernels(disp):
                continue
            for sig in list(disp.signatures):
                if (name, str(sig)) in done:
                    continue
                done.add((name, str(sig)))
                changed = True
                _retype(disp, sig, type_only)


def _library_workload() -> None:
    """Every public code path once (whatever tests were selected before this file):
    each volume kind and split rule, every query mode, serial and parallel, both tests."""
    sphere = ck.primitives.uv_sphere_mesh(0.5, 6, 10)
    poses = ck.random_poses(PARALLEL_BATCH, radius=1.0, seed=0)
    for bv in ("aabb", "obb"):
        for split in ("sah", "median", "mean"):
            a = ck.primitives.box_mesh([1.0, 0.5, 0.25]).with_options(bv=bv, split=split, leaf_size=1)
            for strategy in ("descent", Descent(tri_test="moller")):
                ck.intersects(a, sphere, None, poses[0], strategy=strategy)
                for threads in (1, 2):
                    ck.intersects(a, sphere, None, poses, threads=threads, strategy=strategy)
                    ck.contacts(a, sphere, None, poses, threads=threads, strategy=strategy)
                    ck.contacts(a, sphere, None, poses, mode="first", threads=threads, strategy=strategy)
                    ck.contacts(a, sphere, None, poses, max_pairs=2, threads=threads, strategy=strategy)
                    ck.query_stats(a, sphere, None, poses, mode="all", threads=threads, strategy=strategy)
    # strategy "oaabb" (seed 000's R-trees): every mode, serial and parallel, surfaces, visits
    box = ck.primitives.box_mesh([1.0, 0.5, 0.25])
    for strategy in ("oaabb", ck.OAABB(use_overlap_box=False)):
        ck.intersects(box, sphere, None, poses[0], strategy=strategy)
        for threads in (1, 2):
            ck.intersects(box, sphere, None, poses, threads=threads, strategy=strategy)
            ck.contacts(box, sphere, None, poses, threads=threads, strategy=strategy)
            ck.contacts(box, sphere, None, poses, mode="first", threads=threads, strategy=strategy)
            ck.contacts(box, sphere, None, poses, max_pairs=2, threads=threads, strategy=strategy)
            ck.surface_contacts(box, sphere, None, poses, threads=threads, strategy=strategy)
    ck.node_visits(box, sphere, None, poses, surfaces=True)
    # seed 002's breadth-first strategy
    for threads in (1, 2):
        ck.intersects(box, sphere, None, poses, threads=threads, strategy=ck.BFS())
        ck.contacts(box, sphere, None, poses, threads=threads, strategy=ck.BFS())
    # the other questions: distance, penetration, time of impact, classification, convex
    # shapes (GJK), the world's broad phases
    far = [ck.translation([3.0, 0.0, 0.0]), ck.translation([0.2, 0.1, 0.0])]
    for threads in (1, 2):
        ck.distance(box, sphere, None, poses, threads=threads)
        ck.penetration(box, sphere, None, poses[:4], threads=threads)
    ck.distance(box, sphere, None, far[0])
    ck.penetration(box, sphere, None, far[1])
    # closed non-convex meshes: the certified bracket (penetration_bounds), refined, one pose
    ring = ck.primitives.torus_mesh(1.0, 0.3)
    ck.penetration(ring, ring, None, far[1], refine=True)
    for motion in ("linear", "screw"):
        ck.time_of_impact(box, sphere, None, None, far[0], far[1], motion=motion)
    ck.classify(box, sphere, None, far[1])
    cube, ball = ck.Box([0.5, 0.5, 0.5]), ck.Sphere(0.4)
    ck.intersects(cube, ball, None, poses)
    ck.distance(cube, ball, None, poses)
    for p in (far[0], poses):  # a convex shape and a mesh: surfaces, then containment
        ck.intersects(cube, sphere, None, p)
        ck.intersects(sphere, cube, p, None)
    # the prepared robot checker (issue 30 item 1): one configuration, batches serial and
    # parallel, detail, first colliding; a mesh and a convex obstacle (the routed path)
    from collisionkit.robot.robot import Joint

    joint = Joint("j", "revolute", "base", "arm", ck.translation([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]), -3.0, 3.0, 0)
    arm = ck.Robot("arm", ("base", "arm"), (joint,), {"base": box, "arm": sphere})
    cell = ck.World()
    cell.add("o", sphere, ck.translation([0.0, 0.8, 1.0]))
    cell.add("c", ck.Box([0.2, 0.2, 0.2]), ck.translation([0.0, -0.8, 1.0]))
    qs = np.linspace(-3.0, 3.0, PARALLEL_BATCH).reshape(-1, 1)
    arm.check(qs[0], cell)
    arm.check_detail(qs[:3], cell)
    for threads in (1, 2):
        arm.check(qs, cell, threads=threads)
        arm.checker(cell).first_colliding(qs, threads=threads)
    # its compiled distance pass (issue 30 item 2): clearance, margins (per configuration,
    # and the batch kernel of a mesh-only world), certified edges
    solo = ck.World()
    solo.add("o", sphere, ck.translation([0.0, 0.8, 1.0]))
    for w in (cell, solo):
        arm.clearance(qs[:2], w)
        arm.check(qs[:2], w, margin=0.05)
        arm.check_motion(qs[0], qs[1], w)
    for broadphase in ("sap", "tree", "grid", "hash", "octree", "brute"):
        world = ck.World(broadphase)
        for i in range(4):
            world.add(f"o{i}", sphere, poses[i])
        world.step(poses[4:8])
    ck.threading_layer()


def _compiled(skip: frozenset[str]) -> dict[str, CPUDispatcher]:
    _library_workload()
    dispatchers = kernel_dispatchers()
    _retype_entry_points(dispatchers, skip)
    return {name: d for name, d in dispatchers.items() if d.signatures}


ROOT = Path(__file__).resolve().parents[1]


def report(skip: frozenset[str]) -> dict:
    """Run the workload in THIS process and report what compiled: {"compiled": names,
    "offenders": {name: signatures}} (called in the fresh interpreter)."""
    compiled = _compiled(skip)
    return {
        "compiled": sorted(compiled),
        "offenders": {n: [str(s) for s in d.signatures] for n, d in compiled.items() if len(d.signatures) > 1},
    }


def _fresh_report(skip: frozenset[str]) -> dict:
    code = (
        "import json, sys; from tests.test_dispatch import report; "
        f"sys.stdout.write('REPORT ' + json.dumps(report(frozenset({sorted(skip)!r}))))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=3000)
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(run.stdout.rsplit("REPORT ", 1)[1])


@pytest.fixture(scope="module")
def fresh():
    return _fresh_report(SLOW_TO_RETYPE)


_BY_TYPE = (
    "options by type (issue 32): a None argument lets numba prune what it rules out, so "
    "the common case compiles alone and a rarer option compiles the kernel once more"
)
#: Kernels allowed several signatures, with why (list one here only with a reason a
#: reviewer accepts). Their signatures may differ only where one of them has ``none``.
KNOWN_SEVERAL: dict[str, str] = {
    # tri_test None: Guigue's test on box trees; an int64 code: any test and volume kind
    **{f"descent.{k}": _BY_TYPE for k in (
        "collide_task", "_boolean_descent", "intersect_one",
        "_expand", "contacts_one", "_run_chunk", "query_serial", "query_parallel",
    )},  # fmt: skip
    # obb None or True, split_rule None (SAH) or a code (kernels/build/topdown.build_binary_tree)
    "topdown.build_binary_tree": _BY_TYPE,
    "topdown._choose_split": _BY_TYPE,
}


def _args(sig: str) -> list[str]:
    """The argument types of a signature string, split at depth-0 commas."""
    out, depth, cur = [], 0, ""
    for ch in sig.strip()[1:-1]:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [*out, cur.strip()]


def _differ_only_by_none(sigs: list[str]) -> bool:
    """Each argument has one type in every signature, or that type and ``none``."""
    rows = [_args(s) for s in sigs]
    if len({len(r) for r in rows}) != 1:
        return False
    return all(len(set(col) - {"none"}) <= 1 for col in zip(*rows, strict=True))


def test_differ_only_by_none_refuses_other_differences():
    arr = "Array(float64, 2, 'C', False, aligned=True)"
    assert _args(f"({arr}, none, int64)") == [arr, "none", "int64"]
    assert _differ_only_by_none([f"({arr}, none, int64)", f"({arr}, int64, int64)"])
    assert not _differ_only_by_none([f"({arr}, none, int64)", f"({arr}, int64, Literal[int](1))"])
    assert not _differ_only_by_none([f"({arr}, none)", f"({arr}, int64)", f"({arr}, bool)"])
    assert _differ_only_by_none([f"({arr}, {x}, {y})" for x in ("none", "bool") for y in ("none", "int64")])
    assert not _differ_only_by_none([f"({arr}, none)", f"({arr}, none, int64)"])


def _assert_one_signature(rep: dict) -> None:
    offenders = {
        k: v for k, v in rep["offenders"].items() if k not in KNOWN_SEVERAL or not _differ_only_by_none(v)
    }  # fmt: skip
    assert not offenders, "kernels compiled for several signatures:\n" + "\n".join(
        f"  {name}:\n    " + "\n    ".join(sigs) for name, sigs in sorted(offenders.items())
    )


def test_workload_compiled_every_query_kernel(fresh):
    names = kernel_dispatchers()
    # the walk finds the kernels (it found none once the kernels moved into subfolders)
    assert len(names) > 100, len(names)
    for name in ("descent.query_serial", "descent.query_parallel", "descent.intersect_one", "descent.contacts_one",
                 "distance.distance_task", "toi.min_step", "oaabb.oaabb_task"):  # fmt: skip
        assert name in names, f"{name} is no kernel any more: update this list"
    must = {"descent", "distance", "toi", "penetration", "gjk", "tri_tri", "sap", "oaabb", "bfs"}
    families = {n.split(".")[0] for n in fresh["compiled"]}
    assert must <= families, f"the workload compiled nothing in {sorted(must - families)}"
    assert len(fresh["compiled"]) > 60, len(fresh["compiled"])


def test_one_signature_per_kernel(fresh):
    _assert_one_signature(fresh)


@pytest.mark.slow
def test_one_signature_per_kernel_full():
    """As above, with every kernel's body typed again (SLOW_TO_RETYPE included)."""
    _assert_one_signature(_fresh_report(frozenset()))
