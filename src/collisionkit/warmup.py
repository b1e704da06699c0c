"""``collisionkit warmup``: compile every query's kernels up front, in parallel processes.

Each *group* runs its queries once on tiny meshes in a fresh ``spawn``-started
process, so numba compiles (or loads from the cache) the kernels those queries
use and writes them to the shared cache folder (``collisionkit._numba.cache_dir``).
Groups overlap (every query builds trees), and two processes that compile one
kernel at once both write it safely; the later queries then load it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .constants import PARALLEL_MIN_POSES


def _turned(t: list[float], angle: float = 0.3) -> np.ndarray:
    """A pose at ``t``, turned about a generic axis: the groups' meshes then have no two faces
    in one plane, so each query compiles its common case and none of the cold paths (the
    "exact" group compiles those, ``kernels/core/lazy.py``)."""
    from .geometry.transforms import rotation, translation

    return translation(t) @ rotation([1.0, 2.0, 3.0], angle)


def _meshes() -> tuple[Any, Any, np.ndarray, np.ndarray]:
    from .geometry.primitives import box_mesh

    box = box_mesh([1.0, 1.0, 1.0])
    near = _turned([0.75, 0.0, 0.0])
    poses = np.repeat(near[None], 4 * PARALLEL_MIN_POSES, axis=0)  # long enough for the parallel path
    return box, box, near, poses


def _split(a: Any, b: Any, T: np.ndarray, mode: int) -> None:
    """One pose split over threads at the roots (budget 0): what a large pose runs."""
    from .bvh import pair_trees
    from .query.strategies.descent import split_pose

    ta, tb = pair_trees(a, b)
    split_pose(ta, tb, np.eye(4), T, 0, mode, None, 0)


def _one_and_batch(query: Callable[..., Any]) -> tuple[Any, Any, np.ndarray]:
    """``query`` at one pose (the per-call path), then over a batch on one thread and on
    all (the serial and the parallel batch kernels); returns the meshes and the pose."""
    a, b, T, poses = _meshes()
    query(a, b, None, T)
    for threads in (1, None):
        query(a, b, None, poses, threads=threads)
    return a, b, T


def _intersects() -> None:
    from .constants import MODE_ANY
    from .query.pair import intersects

    a, b, T = _one_and_batch(intersects)
    _split(a, b, T, MODE_ANY)  # also a large per-call boolean's kernels (split_boolean)
    # OBB trees ("auto" picks them for thin meshes): the build's OBB variant (issue 32)
    intersects(a.with_options(bv="obb"), b.with_options(bv="obb"), None, T)


def _contacts() -> None:
    from .constants import MODE_ALL
    from .query.contact_geometry import contact_geometry
    from .query.pair import contacts, query_stats

    a, b, T, poses = _meshes()
    contacts(a, b, None, T)
    _split(a, b, T, MODE_ALL)
    contact_geometry(a, b, None, T)
    for threads in (1, None):
        contacts(a, b, None, poses, threads=threads)
        contacts(a, b, None, poses, mode="first", threads=threads)
        query_stats(a, b, None, poses, threads=threads)


def _distance() -> None:
    from .query.distance import distance

    _one_and_batch(distance)


def _penetration() -> None:
    from .geometry.primitives import torus_mesh
    from .query.penetration import penetration

    a, b, T, poses = _meshes()
    ring = torus_mesh(1.0, 0.3)  # closed and not convex: the "bounds" method
    for x, y in ((a, b), (ring, ring)):
        penetration(x, y, None, T)
        for threads in (1, None):
            penetration(x, y, None, poses[:8], threads=threads)
    penetration(ring, ring, None, T, refine=True)
    penetration(ring, ring, None, T, method="sampled")


def _classify() -> None:
    from .geometry.primitives import box_mesh
    from .query.classify import classify

    a, _, _ = _one_and_batch(classify)
    # surfaces apart: the containment test (winding numbers), a small box inside the big one
    classify(a, box_mesh([0.2, 0.2, 0.2]), None, _turned([0.1, 0.0, 0.0], 0.5))


def _bfs() -> None:
    """The breadth-first strategy (``strategy="bfs"``, serial and parallel frontiers)."""
    from .query.pair import contacts, intersects
    from .query.strategies.bfs import BFS

    a, b, T, poses = _meshes()
    for strategy in ("bfs", BFS(parallel=True), BFS(parallel=False)):
        for p in (T, poses):
            intersects(a, b, None, p, strategy=strategy)
            contacts(a, b, None, p, strategy=strategy)


def _oaabb() -> None:
    """The on-the-fly AABB strategy (``strategy="oaabb"``), and double-box on two boxes."""
    from .convex import Box
    from .query.pair import contacts, intersects

    a, b, T, poses = _meshes()
    box = Box([1.0, 1.0, 1.0])
    for p in (T, poses):
        intersects(a, b, None, p, strategy="oaabb")
        contacts(a, b, None, p, strategy="oaabb")
        intersects(box, box, None, p, strategy="double-box")


def _convex() -> None:
    """Convex shapes: GJK over a batch (one launch), and a convex shape against a mesh
    (surfaces, then containment)."""
    from .convex import Box, Sphere
    from .query.distance import distance
    from .query.pair import intersects

    a, _, T, poses = _meshes()
    box = Box([1.0, 1.0, 1.0])
    for threads in (1, None):
        intersects(box, Sphere(0.5), None, poses, threads=threads)
        distance(box, Sphere(0.5), None, poses, threads=threads)
    far = T.copy()
    far[:3, 3] += 10.0
    for p in (far, poses):
        intersects(box, a, None, p)
        intersects(a, box, p, None)


def _builds() -> None:
    """The other tree builds (``build="bottomup"``, ``"incremental"``)."""
    from .query.pair import intersects

    a, b, _, poses = _meshes()
    for build in ("bottomup", "incremental"):
        intersects(a.with_options(build=build), b, None, poses[:2])


def _splits() -> None:
    """The top-down build's other split rule (``split="median"``), AABB and OBB trees."""
    from .query.pair import intersects

    a, b, T, _ = _meshes()
    for bv in ("aabb", "obb"):
        intersects(a.with_options(bv=bv, split="median"), b, None, T)


def _refitting() -> None:
    """Refitting a tree to moved vertices (``bvh.refit``), then a query on it."""
    from .bvh.refit import refit
    from .query.pair import intersects

    a, b, T, _ = _meshes()
    intersects(a, b, None, T)  # builds a's tree, which refit then refits
    intersects(refit(a, a.vertices * 1.01), b, None, T)


def _volume_kinds() -> None:
    """The options compiled apart from the common case (issue 32, options by type): the
    volume kinds other than boxes and Moller's test take the descent kernels' general
    variant (``query.strategies.descent.descent_tri``)."""
    from .constants import MODE_ALL, MODE_ANY
    from .query.pair import contacts, intersects
    from .strategies import Descent

    a, b, T, poses = _meshes()
    ka, kb = a.with_options(bv="kdop14"), b.with_options(bv="kdop14")
    intersects(ka, kb, None, T)
    contacts(ka, kb, None, T)
    for threads in (1, None):
        intersects(ka, kb, None, poses, threads=threads)
        contacts(ka, kb, None, poses, threads=threads)
    for mode in (MODE_ANY, MODE_ALL):
        _split(ka, kb, T, mode)  # MODE_ANY: also a large per-call boolean's kernels
    intersects(a, b, None, T, strategy=Descent(tri_test="moller"))


def _time_of_impact() -> None:
    from .geometry.transforms import translation
    from .query.toi import time_of_impact

    a, b, _, _ = _meshes()
    time_of_impact(a, b, None, None, translation([3.0, 0, 0]), translation([0.5, 0, 0]))


def _scene(broadphase: str | None = None, pairs: bool = True) -> Any:
    """A scene of two meshes, a box and a sphere (its mesh's rings, too) under
    ``broadphase`` (None: the default); with ``pairs``, its colliding pairs, one object
    moved, the pairs again."""
    from .convex import Box, Sphere
    from .world import World

    a, _, T, _ = _meshes()
    w = World() if broadphase is None else World(broadphase)
    w.add("mesh", a)
    w.add("near", a, T)
    w.add("box", Box([1.0, 1.0, 1.0]), _turned([0.0, 0.75, 0.0], 0.5))
    w.add("ball", Sphere(0.5), _turned([0.0, 0.0, 0.75], 0.7))
    if pairs:
        w.colliding_pairs()
        w.set_pose("ball", _turned([0.0, 0.0, 0.5], 0.7))
        w.colliding_pairs()
    return w


def _world() -> None:
    """A scene with the default broad phase: its colliding pairs."""
    _scene()


def _nearest() -> None:
    """The nearest pair of a scene, and of one object (``World.nearest_pair``,
    ``kernels/broadphase/nearest.py``); a query of its own: no colliding pairs asked."""
    w = _scene(pairs=False)
    w.nearest_pair()
    w.nearest_pair("ball")


def _broadphases() -> None:
    """Every other broad phase's own kernels: build, pairs, update."""
    from .world import World
    from .world.broadphases import BROADPHASES

    default = World().broadphase  # the world group's
    for broadphase in BROADPHASES:
        if broadphase != default:
            _scene(broadphase)


def _drop_in() -> None:
    """The trimesh drop-in's own kernels on a World (issue 32 item 4): box tests across
    managers and against a probe, the kept deepest pair after a move; a closed non-convex
    mesh for the depth's lower bound."""
    import trimesh

    from .geometry.transforms import translation
    from .trimesh import CollisionManager

    box, ring = trimesh.creation.box([1.0, 1.0, 1.0]), trimesh.creation.annulus(0.2, 0.5, 0.4)
    m, other = CollisionManager(), CollisionManager()
    for k, mesh in enumerate((box, ring, box)):
        m.add_object(k, mesh, _turned([0.6 * k, 0.0, 0.0]) if k else translation([0.0, 0.0, 0.0]))
    other.add_object("o", ring, _turned([0.3, 0.0, 0.0]))
    m.min_distance_internal()
    m.set_transform(2, _turned([1.1, 0.0, 0.0]))
    m.min_distance_internal()
    m.in_collision_internal()
    m.in_collision_other(other)
    m.min_distance_other(other)
    m.in_collision_single(box, _turned([0.2, 0.0, 0.0]))
    m.min_distance_single(box, _turned([0.2, 0.0, 0.0]))


#: A two-link arm of URDF primitives (the robot group; benchmarks.cold_start).
ARM_URDF = """<robot name="warmup"><link name="base"><collision><geometry><box size="0.2 0.2 0.1"/></geometry>
</collision></link><link name="arm"><collision><origin xyz="0 0 0.3"/><geometry><cylinder radius="0.05" length="0.5"/>
</geometry></collision></link><joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
<axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint></robot>"""


def _arm_and_wall() -> tuple[Any, Any, np.ndarray]:
    """The two-link arm, a wall beside it, and a sweep of its joint (the robot groups)."""
    import tempfile
    from pathlib import Path

    from .convex import Box
    from .geometry.transforms import translation
    from .robot import Robot
    from .world import World

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "warmup.urdf"
        path.write_text(ARM_URDF)
        robot = Robot.load(path)
    w = World()
    w.add("wall", Box([0.1, 1.0, 1.0]), translation([0.3, 0.0, 0.3]))
    return robot, w, np.linspace(-1.5, 1.5, 4 * PARALLEL_MIN_POSES)[:, None]


def _robot(bv: str | None = None) -> None:
    """The robot checker (``bv``: its volume kind option; None, the default, box trees)."""
    robot, w, q = _arm_and_wall()
    robot.check(q[0], w, bv=bv)
    for threads in (1, None):
        robot.check(q, w, self_collision=True, threads=threads, bv=bv)


def _robot_volumes() -> None:
    """The robot checker's general variant (volume kinds other than boxes)."""
    _robot(bv="kdop14")


def _robot_sweep() -> None:
    """The robot checker's sort-and-sweep of self pairs (``kernels.robot.checker._self_sweep``),
    which robots of ``SWEEP_MIN_LINKS`` meshed links or more take: the two-link arm, with the
    threshold lowered for these calls (the kernels' types do not depend on the link count)."""
    from .robot import checker

    robot, w, q = _arm_and_wall()
    saved = checker.SWEEP_MIN_LINKS
    checker.SWEEP_MIN_LINKS = 2
    try:
        robot.check(q[0], w, self_collision=True)
        for threads in (1, None):
            robot.check(q, w, self_collision=True, threads=threads)
    finally:
        checker.SWEEP_MIN_LINKS = saved


def _margins() -> None:
    """Distance thresholds: ``intersects(margin=)``, at one pose and over a batch."""
    from .query.pair import intersects

    a, b, T, poses = _meshes()
    for p in (T, _turned([1.3, 0.0, 0.0])):
        intersects(a, b, None, p, margin=0.05)
    for threads in (1, None):
        intersects(a, b, None, poses, margin=0.05, threads=threads)


def _motion() -> None:
    """A certified motion of one mesh past another: ``check_motion``."""
    from .query.motion import check_motion

    a, b, _, _ = _meshes()
    check_motion(a, b, None, None, _turned([3.0, 0.0, 0.0]), _turned([0.5, 0.0, 0.0]))


def _arm_and_plate() -> tuple[Any, Any, np.ndarray]:
    """The two-link arm beside a mesh plate (the compiled margin, clearance and edge kernels)."""
    from .geometry.primitives import box_mesh
    from .world import World

    robot, _, q = _arm_and_wall()
    w = World()
    w.add("plate", box_mesh([0.1, 1.0, 1.0]), _turned([0.3, 0.0, 0.3], 0.2))
    return robot, w, q


def _robot_margins() -> None:
    """The robot's margin check: a convex obstacle (the per-pair path), then a mesh one."""
    robot, wall, q = _arm_and_wall()
    robot.check(q[0], wall, margin=0.02)
    robot, w, q = _arm_and_plate()
    robot.check(q[0], w, margin=0.02)
    for threads in (1, None):
        robot.check(q, w, margin=0.02, self_collision=True, threads=threads)


def _robot_clearance() -> None:
    """The robot's clearance (``Robot.clearance``)."""
    robot, w, q = _arm_and_plate()
    robot.clearance(q[0], w)


def _robot_motion() -> None:
    """The robot's certified edges (``Robot.check_motion``), without and with a margin."""
    robot, w, q = _arm_and_plate()
    robot.check_motion(q[0], q[-1], w)
    robot.check_motion(q[0], q[-1], w, margin=0.02)


def _exact() -> None:
    """The cold paths: the exact predicates' expansions and the triangle test's coplanar and
    degenerate pairs. A query compiles them on its first need (``kernels/core/lazy.py``);
    here up front, so that the cache and the shipped kernels hold them."""
    import importlib
    import pkgutil

    from . import kernels
    from .kernels.core import lazy

    for info in pkgutil.walk_packages(kernels.__path__, kernels.__name__ + "."):
        importlib.import_module(info.name)  # every module that declares entries (compiles nothing)
    for entry in lazy.ENTRIES:
        if entry.cold:  # the shared hot entries (collide_task, ...): by the groups whose queries call them
            entry.publish_all()


#: Query groups, in the order they are started. Each is what one query, or one option of
#: a query, compiles on its first use: its one-pose and batch paths, from an empty cache
#: (``python -m benchmarks.compile_times``). Two processes at a time share one cache, so
#: the order lets later groups load what earlier ones compiled: distance beside the
#: collision kernels first (tree build, descent), then what builds on them; the robot
#: checker before its options, a scene before the scene's other queries; time of impact
#: and the motions, which call the distance kernels, late.
GROUPS: dict[str, Callable[[], None]] = {
    "distance": _distance,
    "intersects": _intersects,
    "exact": _exact,
    "contacts": _contacts,
    "robot": _robot,
    "bfs": _bfs,
    "oaabb": _oaabb,
    "volume_kinds": _volume_kinds,
    "world": _world,
    "builds": _builds,
    "splits": _splits,
    "refit": _refitting,
    "convex": _convex,
    "classify": _classify,
    "nearest": _nearest,
    "broadphases": _broadphases,
    "penetration": _penetration,
    "drop_in": _drop_in,
    "time_of_impact": _time_of_impact,
    "margins": _margins,
    "robot_volumes": _robot_volumes,
    "robot_sweep": _robot_sweep,
    "motion": _motion,
    "robot_margins": _robot_margins,
    "robot_clearance": _robot_clearance,
    "robot_motion": _robot_motion,
}


def run_group(name: str) -> dict[str, Any]:
    """Run one group in this process; return its time and how many kernels compiled."""
    from numba.core import event

    compiled = 0

    class _Count(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            nonlocal compiled
            compiled += 1

        def on_end(self, ev: event.Event) -> None:
            pass

    listener = _Count()
    event.register("numba:compile", listener)
    t0 = time.perf_counter()
    try:
        GROUPS[name]()
    finally:
        event.unregister("numba:compile", listener)
    return {"group": name, "seconds": time.perf_counter() - t0, "compiled": compiled}


def _bar(done: int, total: int, width: int = 20) -> str:
    filled = width * done // total
    return "[" + "#" * filled + "-" * (width - filled) + f"] {done}/{total}"


def _group_process(name: str, conn: Any) -> None:
    """Body of one warm-up process: run ``name``, send its record back."""
    try:
        rec = run_group(name)
        rec["error"] = None
    except Exception as exc:  # reported by the parent, not raised
        rec = {"group": name, "seconds": float("nan"), "compiled": 0, "error": f"{type(exc).__name__}: {exc}"}
    conn.send(rec)
    conn.close()


def run(
    groups: list[str] | None = None,
    jobs: int = 2,
    out: Callable[[str], None] = print,
    heartbeat: float = 30.0,
) -> list[dict[str, Any]]:
    """Compile the kernels of ``groups`` (default: all), ``jobs`` processes at a time.

    Each group runs in its own ``spawn``-started process, which exits when the group is
    done (numba keeps every module it compiled until its process ends, so one process
    reused for group after group would only grow). Prints a progress line per finished
    group, one every ``heartbeat`` seconds while none finishes (a group may compile for
    minutes), then a table; returns one record per group (``group``, ``seconds``,
    ``compiled``: kernels compiled, 0 = all loaded from the cache, ``error``: a one-line
    message or None, a crashed process included). Order: as ``GROUPS``.
    """
    import multiprocessing
    from multiprocessing.connection import wait

    from ._numba import cache_dir

    names = list(GROUPS) if groups is None else list(groups)
    out(f"collisionkit warmup: {len(names)} query groups in {jobs} processes; cache {cache_dir()}")
    ctx = multiprocessing.get_context("spawn")
    t0 = last_line = time.perf_counter()
    results: dict[str, dict[str, Any]] = {}
    queue = list(names)
    running: dict[str, tuple[Any, Any, float]] = {}  # name -> (process, our end of its pipe, start)

    def finish(name: str, rec: dict[str, Any]) -> None:
        nonlocal last_line
        results[name] = rec
        state = "failed" if rec["error"] else (f"compiled {rec['compiled']} kernels" if rec["compiled"] else "loaded")
        out(f"{_bar(len(results), len(names))} {name}: {rec['seconds']:.1f} s, {state}")
        sys.stdout.flush()
        last_line = time.perf_counter()

    while queue or running:
        while queue and len(running) < jobs:
            name = queue.pop(0)
            ours, theirs = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_group_process, args=(name, theirs), name=f"collisionkit-warmup-{name}")
            proc.start()
            theirs.close()
            running[name] = (proc, ours, time.perf_counter())
        # a group is done when its pipe has the record, or its process ended (a crash)
        owner = {obj: name for name, (proc, conn, _) in running.items() for obj in (conn, proc.sentinel)}
        ready = wait(list(owner), timeout=max(0.0, heartbeat - (time.perf_counter() - last_line)))
        for name in dict.fromkeys(owner[obj] for obj in ready):
            proc, conn, started = running.pop(name)
            try:
                rec = conn.recv()
            except (EOFError, OSError):  # the process died before it could answer
                proc.join()
                rec = {
                    "group": name,
                    "seconds": time.perf_counter() - started,
                    "compiled": 0,
                    "error": f"the warm-up process exited with code {proc.exitcode}",
                }
            proc.join()
            conn.close()
            finish(name, rec)
        now = time.perf_counter()
        if running and now - last_line >= heartbeat:
            busy = ", ".join(f"{n} ({now - st:.0f} s)" for n, (_, _, st) in running.items())
            out(f"{_bar(len(results), len(names))} still running: {busy}")
            sys.stdout.flush()
            last_line = now
    ordered = [results[n] for n in names]
    out("")
    out(f"{'group':<16}{'seconds':>9}  result")
    for r in ordered:
        if r["error"]:
            what = f"error: {r['error']}"
        elif r["compiled"]:
            what = f"compiled ({r['compiled']} kernels)"
        else:
            what = "loaded from cache"
        out(f"{r['group']:<16}{r['seconds']:>9.1f}  {what}")
    out(f"{'total (wall)':<16}{time.perf_counter() - t0:>9.1f}")
    return ordered
