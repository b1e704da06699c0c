"""Which volume kind the robot checker should traverse its pairs in: every kind on every robot scene.

    python -m benchmarks.robot_volumes [--repeats 3] [--n 2000]

Issue 30 item 1 (``robot.checker.ROBOT_VOLUME``). Scenes: the Franka Panda and the KUKA iiwa
of ``pybullet_data`` among ``benchmarks.robot_config``'s seven box meshes, and the Panda in
``benchmarks.planning_scenes``' table, bookshelf, cage and thin-plate scenes; self-collision
on. Per scene, uniform configurations (seed 11) split into random, free and colliding sets
(up to ``--n`` each), and per volume kind (``bv=``: the default, "auto" = ``bvh.pair_volume``'s
pick, "aabb", "obb", "kdop14", "rss"):

* one configuration a call on the prepared checker (``robot.checker(world, bv=...)``, no
  options to key): the thread CPU time a call, the mean over 500 calls;
* one batched call at ``threads=1``: thread CPU time a configuration;
* one batched call on all threads: wall time a configuration.

The kinds are interleaved and their order alternated per repeat (the machine is shared);
each figure is the median of ``--repeats``. Answers are refereed first: every kind must give
the default's answers on every configuration (the run fails otherwise; the default's own are
tested against the per-pair path in tests/test_robot_checker.py). Writes
benchmarks/results/robot_volumes.md and .json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import collisionkit as ck
from collisionkit.robot.checker import ROBOT_VOLUME

RESULTS = Path(__file__).resolve().parent / "results"
#: the kinds compared (None: the checker's default)
KINDS: tuple[str | None, ...] = (None, "auto", "aabb", "obb", "kdop14", "rss")
SCENES = ("panda_boxes", "iiwa_boxes", "panda_table", "panda_bookshelf", "panda_cage", "panda_thin_plate")


def _robot(name: str) -> ck.Robot:
    import pybullet_data

    path = {"panda": ("franka_panda", "panda.urdf"), "iiwa": ("kuka_iiwa", "model.urdf")}[name]
    return ck.Robot.load(os.path.join(pybullet_data.getDataPath(), *path))


def scene(name: str) -> tuple[ck.Robot, ck.World]:
    """(robot, world) of a scene of ``SCENES``: "<robot>_<obstacles>"."""
    from . import planning_scenes, robot_config

    robot, obstacles = name.split("_", 1)
    if obstacles == "boxes":
        world = ck.World()
        for box, size, at in robot_config.BOXES:
            world.add(box, ck.primitives.box_mesh(size), ck.translation(at))
    else:
        world = planning_scenes.scene(obstacles, 0)
    return _robot(robot), world


def _single(robot: ck.Robot, world: ck.World, Q: np.ndarray, bv: str | None) -> float:
    """Thread CPU us a call of the prepared checker's ``check`` on one configuration."""
    check = robot.checker(world, bv=bv).check
    for x in Q[:20]:
        check(x)
    c = time.thread_time_ns()
    for x in Q:
        check(x)
    return (time.thread_time_ns() - c) / len(Q) / 1e3


def _batch(robot: ck.Robot, world: ck.World, Q: np.ndarray, bv: str | None, threads: int | None) -> tuple[float, float]:
    """(wall us, thread CPU us) a configuration of one batched call."""
    robot.check(Q[:64], world, threads=threads, bv=bv)
    t, c = time.perf_counter(), time.thread_time()
    robot.check(Q, world, threads=threads, bv=bv)
    return (time.perf_counter() - t) / len(Q) * 1e6, (time.thread_time() - c) / len(Q) * 1e6


def measure(name: str, n: int, repeats: int) -> dict:
    """Per set and kind: single CPU, batched t=1 CPU, batched all-threads wall (medians)."""
    robot, world = scene(name)
    Q = robot.random_configurations(3 * n, seed=11)
    hit = robot.check(Q, world, threads=1)
    equal = all(np.array_equal(robot.check(Q, world, threads=1, bv=bv), hit) for bv in KINDS)
    sets = {"random": Q[:n], "free": Q[~hit][:n], "colliding": Q[hit][:n]}
    runs: dict = {s: {str(bv): [] for bv in KINDS} for s in sets}
    for rep in range(repeats):
        for s, QQ in sets.items():
            if len(QQ) < 50:
                continue
            big = np.tile(QQ, (max(1, 3 * n // len(QQ)), 1))  # a batch of about 3n configurations
            for bv in KINDS if rep % 2 == 0 else KINDS[::-1]:
                single = _single(robot, world, QQ[:500], bv)
                _, cpu1 = _batch(robot, world, big, bv, 1)
                wall_all, _ = _batch(robot, world, big, bv, None)
                runs[s][str(bv)].append((single, cpu1, wall_all))
    med = {s: {k: np.median(np.array(v), axis=0).tolist() for k, v in d.items() if v} for s, d in runs.items()}
    return {"scene": name, "colliding": float(hit.mean()), "equal": bool(equal), "us": med}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=int, default=2000, help="configurations per set")
    ap.add_argument("--scenes", default=",".join(SCENES), help="comma-separated names of SCENES")
    args = ap.parse_args(argv)
    rows = []
    for name in args.scenes.split(","):
        rows.append(measure(name, args.n, args.repeats))
        print(json.dumps(rows[-1]), flush=True)
    from .pairs import provenance, stamp

    meta = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "default": ROBOT_VOLUME, "provenance": provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.robot_volumes")}  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "robot_volumes.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    names = [f"default ({ROBOT_VOLUME})" if bv is None else str(bv) for bv in KINDS]
    lines = [
        f"# The robot checker's volume kind ({meta['date']}, {meta['machine']})",
        "",
        "`python -m benchmarks.robot_volumes`: self-collision on, uniform configurations (seed 11) split into "
        "random, free and colliding sets; per kind (`bv=`; \"auto\" is `bvh.pair_volume`'s pick, AABB for these "
        f"links), kinds interleaved, the median of {args.repeats} repeats. Each cell: one call a configuration "
        "(thread CPU us) / batched at `threads=1` (thread CPU us a configuration) / batched on all threads (wall us "
        "a configuration, a shared 2-core machine).",
        "",
        "| scene | set | " + " | ".join(names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for r in rows:
        for s, d in r["us"].items():
            if d:
                cells = [" / ".join(f"{x:.2f}" for x in d[str(bv)]) for bv in KINDS]
                lines.append(f"| {r['scene']} ({r['colliding']:.0%} colliding) | {s} | " + " | ".join(cells) + " |")
    ok = all(r["equal"] for r in rows)
    lines += ["", f"Referee: every kind gives the default's answers on every configuration: **{'yes' if ok else 'NO'}**."]
    (RESULTS / "robot_volumes.md").write_text(stamp("\n".join(lines) + "\n", meta["provenance"]))
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
