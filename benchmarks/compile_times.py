"""What numba compiles for each query, and how long it takes (issue 16, "compile less").

Usage::

    python -m benchmarks.compile_times                     # every warmup group, fresh empty caches
    python -m benchmarks.compile_times --group intersects  # one group (repeatable)
    python -m benchmarks.compile_times --group first-intersects  # a user's first call only
    python -m benchmarks.compile_times --first --group distance  # every first call, then a group
    python -m benchmarks.compile_times --cache             # use the configured cache instead
    python -m benchmarks.compile_times --out benchmarks/results/compile_times.md --json FILE

Each *entry point* is one group of ``collisionkit.warmup.GROUPS`` (intersects, contacts,
distance, ...), run in a fresh process (one at a time) so that nothing one group compiled
is reused by the next. By default each process gets its own new, empty cache folder
(``COLLISIONKIT_CACHE_DIR`` pointing at a temporary folder, deleted afterwards): the
figures are a cold first use. With ``--cache`` it uses the configured cache folder, so a
warm cache shows what is still compiled.

Per entry point it prints: total CPU seconds of the process spent in the group
(``time.process_time``; all threads), wall seconds, peak RSS of the process
(``ru_maxrss``: import included), the number of compiles, and the kernels with the
largest *exclusive* compile time. numba fires ``numba:compile`` around every cache-miss
compile of a dispatcher for one signature; a compile that triggers another (a callee
typed for new argument types) nests, and the callee's time is subtracted from the caller's,
so exclusive times add up to the total compile time. Times are CPU time of the compiling
thread (``time.thread_time``), so another process on the machine disturbs them little.
Exclusive time of a caller includes LLVM optimisation and code generation of the callees'
IR linked into its module (numba re-optimises every callee in each caller's module) and
the inlined copies of ``inline="always"`` callees. ``sigs`` counts the signatures a kernel
compiled for (more than 1: the same kernel specialised twice). The JSON records also give
numba's phases (type inference, SSA, lowering, LLVM) per group (``phases``) and per kernel
(``kernel_phases``: the phases of each kernel's own compile, exclusive of nested ones, for the
kernels of 0.3 CPU s or more).

A benchmark, not a test: nothing asserts on its times.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _child(group: str) -> dict[str, Any]:
    """Run one warmup group in this (fresh) process; return its compile record."""
    t_import = time.perf_counter()
    c_import = time.process_time()
    from numba.core import event

    import collisionkit  # noqa: F401  (configures numba: cache folder, threading layer)
    from collisionkit import warmup

    import_wall = time.perf_counter() - t_import
    import_cpu = time.process_time() - c_import

    stack: list[list[Any]] = []  # [key, start, time spent in nested compiles]
    kernels: dict[str, dict[str, Any]] = {}

    def key_of(ev: event.Event) -> str:
        f = getattr(ev.data.get("dispatcher"), "py_func", None)
        mod = getattr(f, "__module__", "?").removeprefix("collisionkit.kernels.")
        return f"{mod}.{getattr(f, '__qualname__', '?')}"

    class _Listener(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            stack.append([key_of(ev), time.thread_time(), 0.0])

        def on_end(self, ev: event.Event) -> None:
            key, t0, nested = stack.pop()
            inclusive = time.thread_time() - t0
            if stack:
                stack[-1][2] += inclusive
            rec = kernels.setdefault(key, {"exclusive": 0.0, "inclusive": 0.0, "sigs": []})
            rec["exclusive"] += inclusive - nested
            if not stack:
                rec["inclusive"] += inclusive
            rec["sigs"].append(", ".join(str(a) for a in ev.data.get("args", ())))

    # Phases: numba's compiler passes (type inference, lowering, ...) and the LLVM work of
    # finalising a code library (optimisation + machine code), each exclusive of the
    # phases nested in it (a callee's compile runs inside its caller's type inference).
    phases: dict[str, float] = {}
    kernel_phases: dict[str, dict[str, float]] = {}  # the same, by the kernel compiling
    pstack: list[list[Any]] = []  # [name, start, nested]

    def phase_start(name: str) -> None:
        pstack.append([name, time.thread_time(), 0.0])

    def phase_end() -> None:
        name, t0, nested = pstack.pop()
        inclusive = time.thread_time() - t0
        if pstack:
            pstack[-1][2] += inclusive
        phases[name] = phases.get(name, 0.0) + inclusive - nested
        if stack:
            mine = kernel_phases.setdefault(stack[-1][0], {})
            mine[name] = mine.get(name, 0.0) + inclusive - nested

    class _Passes(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            phase_start(ev.data["name"].split(" [")[0])

        def on_end(self, ev: event.Event) -> None:
            phase_end()

    from numba.core import codegen

    lib = codegen.CPUCodeLibrary
    finalize = lib.finalize

    def timed_finalize(self: Any) -> Any:
        if self._finalized:
            return finalize(self)
        phase_start("llvm (optimise + machine code)")
        try:
            return finalize(self)
        finally:
            phase_end()

    listener, passes = _Listener(), _Passes()
    event.register("numba:compile", listener)
    event.register("numba:run_pass", passes)
    lib.finalize = timed_finalize
    wall0, cpu0 = time.perf_counter(), time.process_time()
    try:
        ENTRY_POINTS[group]() if group in ENTRY_POINTS else warmup.GROUPS[group]()
    finally:
        event.unregister("numba:compile", listener)
        event.unregister("numba:run_pass", passes)
        lib.finalize = finalize
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return {
        "group": group,
        "cpu_s": cpu,
        "wall_s": wall,
        "import_cpu_s": import_cpu,
        "import_wall_s": import_wall,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "compiles": sum(len(k["sigs"]) for k in kernels.values()),
        "compile_cpu_s": sum(k["exclusive"] for k in kernels.values()),
        "kernels": kernels,
        "phases": phases,
        # the kernels that matter (>= 0.3 CPU s of their own), to keep the records small
        "kernel_phases": {
            k: {n: round(t, 3) for n, t in v.items()} for k, v in kernel_phases.items() if sum(v.values()) >= 0.3
        },
    }


def _first_call(query: str) -> Callable[[], None]:
    """A user's first call of ``query``: once, at one pose, on two small meshes (the trees
    built on the way), nothing else (``first-intersects`` is issue 32's "first intersects")."""

    def run() -> None:
        import collisionkit as ck
        from collisionkit.warmup import _meshes

        a, b, T, _ = _meshes()
        getattr(ck, query)(a, b, None, T)

    run.__doc__ = f"A user's first ``{query}``: two small meshes, one pose."
    return run


def _first_penetration_nonconvex() -> None:
    """A user's first ``penetration`` of closed non-convex meshes (two tori: the "bounds"
    method, not the convex one two boxes take)."""
    import collisionkit as ck
    from collisionkit.geometry.primitives import torus_mesh
    from collisionkit.warmup import _meshes

    ring = torus_mesh(1.0, 0.3)
    ck.penetration(ring, ring, None, _meshes()[2])


def _first_time_of_impact() -> None:
    """A user's first ``time_of_impact``: the warm-up group's one call (a mesh sliding into
    another), imported here so that collisionkit's import stays inside the timed child."""
    from collisionkit.warmup import _time_of_impact

    _time_of_impact()


def _first_scene(box_at: list[float]) -> Any:
    """A ``World`` with its default broad phase: two meshes and a box at ``box_at``."""
    import collisionkit as ck
    from collisionkit.convex import Box
    from collisionkit.geometry.transforms import translation
    from collisionkit.warmup import _meshes

    a, _, T, _ = _meshes()
    w = ck.World()
    w.add("mesh", a)
    w.add("near", a, T)
    w.add("box", Box([1.0, 1.0, 1.0]), translation(box_at))
    return w


def _first_world() -> None:
    """A user's first scene: two meshes and a box, the colliding pairs, one object moved,
    the pairs again."""
    from collisionkit.geometry.transforms import translation

    w = _first_scene([0.0, 0.75, 0.0])
    w.colliding_pairs()
    w.set_pose("box", translation([0.0, 0.0, 0.5]))
    w.colliding_pairs()


def _first_robot(call: str, **options: Any) -> Callable[[], None]:
    """A planner's first call of ``Robot.<call>`` (one configuration, or one edge for
    ``check_motion``): the warm-up's two-link arm beside a mesh plate, self-collision on.
    ``check_motion``'s edge crosses the plate (its witness is confirmed by ``Robot.check``,
    which compiles the collision chain); ``check_motion_free``'s stops short of it: free,
    certified by distances (no witness to confirm)."""

    def run() -> None:
        from collisionkit.warmup import _arm_and_plate

        robot, w, q = _arm_and_plate()
        if call == "check_motion":
            assert not robot.check_motion(q[0], q[-1], w, **options).free
        elif call == "check_motion_free":
            got = robot.check_motion(q[0], 0.5 * (q[0] + q[-1]), w, **options)
            assert got.free and got.distance_calls > 0
        elif call == "clearance":
            robot.clearance(q[0], w)
        else:
            robot.check(q[0], w, self_collision=True, **options)

    run.__doc__ = f"A planner's first ``Robot.{call}`` ({options or 'default options'})."
    return run


def _first_drop_in() -> None:
    """A trimesh user's first calls after the one-import switch: a manager of two boxes,
    ``in_collision_internal``, then ``min_distance_single`` with a probe box."""
    import trimesh

    from collisionkit.trimesh import CollisionManager
    from collisionkit.warmup import _turned

    box = trimesh.creation.box([1.0, 1.0, 1.0])
    m = CollisionManager()
    m.add_object("a", box)
    m.add_object("b", box, _turned([0.8, 0.0, 0.0]))
    m.in_collision_internal()
    m.min_distance_single(box, _turned([0.0, 2.0, 0.0]))


def _first_nearest() -> None:
    """A user's first ``World.nearest_pair`` (two meshes and a box), no colliding pairs asked first."""
    _first_scene([0.0, 2.0, 0.0]).nearest_pair()


#: Entry points beyond the warm-up groups: what a user's first call of one query compiles
#: (``--group first-intersects``; ``--first`` runs them all). A warm-up group compiles a
#: query's every path (one pose, the serial and parallel batches, its options) or several
#: queries (world: every broad phase; strategies: every strategy and option); a first call
#: compiles the path it takes.
ENTRY_POINTS: dict[str, Callable[[], None]] = {
    "first-intersects": _first_call("intersects"),
    "first-contacts": _first_call("contacts"),
    "first-distance": _first_call("distance"),
    "first-classify": _first_call("classify"),
    "first-penetration": _first_call("penetration"),
    "first-penetration-nonconvex": _first_penetration_nonconvex,
    "first-time-of-impact": _first_time_of_impact,
    "first-world": _first_world,
    "first-nearest": _first_nearest,
    "first-robot-check": _first_robot("check"),
    "first-robot-margin": _first_robot("check", margin=0.02),
    "first-robot-clearance": _first_robot("clearance"),
    "first-robot-motion": _first_robot("check_motion"),
    "first-robot-motion-free": _first_robot("check_motion_free"),
    "first-drop-in": _first_drop_in,
}


def measure(group: str, fresh_cache: bool) -> dict[str, Any]:
    """Run ``group`` in a fresh Python process (with a new empty cache when asked)."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="ck-compile-times-") as tmp:
        if fresh_cache:
            env["COLLISIONKIT_CACHE_DIR"] = tmp
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.compile_times", "--child", group],
            cwd=HERE.parent,
            env=env,
            capture_output=True,
            text=True,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"group {group} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compare_markdown(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> str:
    """Before/after table per entry point (CPU s, wall s, peak RSS MiB)."""
    old = {r["group"]: r for r in before}
    out = [
        "| entry point | CPU s before | CPU s after | wall s before | wall s after | peak RSS MiB before | after |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in after:
        b = old.get(r["group"])
        if b is None:
            continue
        out.append(
            f"| {r['group']} | {b['cpu_s']:.1f} | {r['cpu_s']:.1f} | {b['wall_s']:.1f} | {r['wall_s']:.1f} | "
            f"{b['peak_rss_mib']:.0f} | {r['peak_rss_mib']:.0f} |"
        )
    # the entry points beyond the groups (a first intersects) are part of a group: not summed
    both = [r for r in after if r["group"] in old and r["group"] not in ENTRY_POINTS]
    out.append(
        f"| **sum** | {sum(old[r['group']]['cpu_s'] for r in both):.1f} | {sum(r['cpu_s'] for r in both):.1f} | "
        f"{sum(old[r['group']]['wall_s'] for r in both):.1f} | {sum(r['wall_s'] for r in both):.1f} | "
        f"{max(old[r['group']]['peak_rss_mib'] for r in both):.0f} (max) | "
        f"{max(r['peak_rss_mib'] for r in both):.0f} (max) |"
    )
    return "\n".join(out) + "\n"


def to_markdown(records: list[dict[str, Any]], top: int, header: str = "") -> str:
    out = ["# Compile time per entry point", ""]
    if header:
        out += [header, ""]
    out += [
        "| entry point | CPU s | wall s | peak RSS MiB | compiles | kernels | import CPU s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in records:
        out.append(
            f"| {r['group']} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | {r['peak_rss_mib']:.0f} | "
            f"{r['compiles']} | {len(r['kernels'])} | {r['import_cpu_s']:.1f} |"
        )
    out.append(
        f"| **sum** | {sum(r['cpu_s'] for r in records):.1f} | {sum(r['wall_s'] for r in records):.1f} | "
        f"{max(r['peak_rss_mib'] for r in records):.0f} (max) | {sum(r['compiles'] for r in records)} | | |"
    )
    for r in records:
        out += [
            "",
            f"## {r['group']}: {r['cpu_s']:.1f} CPU s, {r['wall_s']:.1f} wall s, "
            f"{r['peak_rss_mib']:.0f} MiB peak, {r['compiles']} compiles",
            "",
            "Phases (CPU s): "
            + ", ".join(f"{n} {t:.1f}" for n, t in sorted(r.get("phases", {}).items(), key=lambda kv: -kv[1])[:6]),
            "",
            "| kernel | exclusive CPU s | share | sigs |",
            "|---|---:|---:|---:|",
        ]
        total = r["compile_cpu_s"] or 1.0
        ranked = sorted(r["kernels"].items(), key=lambda kv: -kv[1]["exclusive"])
        for name, k in ranked[:top]:
            out.append(f"| `{name}` | {k['exclusive']:.2f} | {100 * k['exclusive'] / total:.0f}% | {len(k['sigs'])} |")
        rest = ranked[top:]
        if rest:
            s = sum(k["exclusive"] for _, k in rest)
            out.append(f"| {len(rest)} others | {s:.2f} | {100 * s / total:.0f}% | |")
        multi = [(n, k) for n, k in ranked if len(k["sigs"]) > 1 and not n.startswith("numba.")]
        if multi:
            out += ["", "Kernels compiled for more than one signature:", ""]
            for name, k in multi:
                out.append(f"- `{name}` x{len(k['sigs'])}: " + "; ".join(f"({s})" for s in k["sigs"]))
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--group", action="append", help="warmup group (repeatable; default: all)")
    ap.add_argument("--first", action="store_true", help="also every first-call entry point (first-intersects, ...)")
    ap.add_argument("--cache", action="store_true", help="use the configured cache, not a fresh empty one")
    ap.add_argument("--top", type=int, default=12, help="kernels listed per entry point")
    ap.add_argument("--out", type=Path, help="write the markdown table here")
    ap.add_argument("--json", type=Path, help="write the raw records here")
    ap.add_argument("--note", default="", help="a line written under the title")
    ap.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        metavar=("BEFORE", "AFTER"),
        help="print a before/after table of two --json files",
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child)))
        return 0
    if args.compare:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        print(compare_markdown(before, after), end="")
        return 0

    from collisionkit.warmup import GROUPS

    groups = args.group or list(GROUPS)
    if args.first:
        groups = [g for g in ENTRY_POINTS if g not in groups] + groups
    records = []
    for g in groups:
        rec = measure(g, fresh_cache=not args.cache)
        records.append(rec)
        print(f"{g}: {rec['cpu_s']:.1f} CPU s, {rec['wall_s']:.1f} wall s, {rec['peak_rss_mib']:.0f} MiB", flush=True)
    md = to_markdown(records, args.top, args.note)
    print()
    print(md)
    if args.out:
        args.out.write_text(md, encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(records, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
