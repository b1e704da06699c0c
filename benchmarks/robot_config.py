"""One configuration at a time, as a planner asks: the Panda among seven boxes, self-collision on.

    python -m benchmarks.robot_config [--quick] [--n 2000] [--batch 20000]

Issue 30 item 1 (the prepared robot checker). The Franka Panda of ``pybullet_data`` (its
collision meshes) among seven box obstacles (a table, a shelf board, a wall, two posts, a
cube, a crate), given to collisionkit as triangle meshes; uniformly drawn configurations
within the joint limits (seed 11). Measured:

* collisionkit ``robot.check(q, world)`` on one (dof,) configuration from Python: each call
  timed alone (``perf_counter_ns``), the median over ``--n`` configurations, and the thread
  CPU time per call (this machine is shared: CPU time leaves out the time other processes
  took);
* the per-pair path it replaced (``robot/check.py``, kept as the reference), on fewer
  configurations;
* collisionkit batched, ``robot.check(Q, world, threads=1)`` on ``--batch`` configurations,
  per configuration (the median of 3 runs);
* the same, one call a configuration and batched, with ``bv="auto"`` (each pair in the kind
  ``bvh.pair_volume`` picks: AABB for the Panda's links; the checker's default before
  ``checker.ROBOT_VOLUME``);
* per volume kind (``bv=`` auto, aabb, obb, kdop14, rss), the batched call's thread CPU time
  at ``threads=1`` on the free and on the colliding configurations of the batch, the kinds
  interleaved and repeated 3 times (the median): what ``ROBOT_VOLUME`` was chosen by;
* pybullet, per configuration: ``resetJointState`` per joint (both fingers take q[7]), then
  ``getClosestPoints(robot, box, 0)`` per obstacle and ``getClosestPoints(robot, robot, 0,
  link a, link b)`` per self pair (the same non-adjacent pairs), stopping at the first
  contact: the same links, obstacles (native boxes) and answer form. pybullet uses convex
  hulls of the link meshes and a collision margin, so its answers may differ.

Answers are refereed first: collisionkit's must equal the per-pair path's on every
configuration measured (the run fails otherwise); configurations where pybullet differs are
decided, up to 20, by tests/brute.py over every (link, obstacle) and self pair (all triangle
pairs, independent of collisionkit's kernels). Writes benchmarks/results/robot_config.md
and .json.
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
from collisionkit.robot import check as reference
from collisionkit.robot.checker import ROBOT_VOLUME

RESULTS = Path(__file__).resolve().parent / "results"

#: (name, size xyz, centre xyz): the scene of tests/test_robot_checker.py
BOXES = [
    ("table", [1.0, 1.4, 0.04], [0.6, 0.0, -0.03]),
    ("shelf", [0.3, 0.8, 0.02], [0.7, 0.0, 0.6]),
    ("wall", [0.04, 1.4, 1.2], [-0.45, 0.0, 0.6]),
    ("post_l", [0.06, 0.06, 1.0], [0.45, 0.5, 0.5]),
    ("post_r", [0.06, 0.06, 1.0], [0.45, -0.5, 0.5]),
    ("cube", [0.1, 0.1, 0.1], [0.5, 0.2, 0.05]),
    ("crate", [0.2, 0.15, 0.25], [0.55, -0.3, 0.125]),
]


def scene() -> tuple[str, ck.Robot, ck.World]:
    import pybullet_data

    urdf = os.path.join(pybullet_data.getDataPath(), "franka_panda", "panda.urdf")
    robot = ck.Robot.load(urdf)
    world = ck.World()
    for name, size, at in BOXES:
        world.add(name, ck.primitives.box_mesh(size), ck.translation(at))
    return urdf, robot, world


def time_single(robot: ck.Robot, world: ck.World, q: np.ndarray, **options) -> tuple[np.ndarray, float, float]:
    """(answers, median wall us a call, thread CPU us a call) of robot.check one at a time."""
    for x in q[:50]:
        robot.check(x, world, **options)  # warm: compile or load, build the checker
    hit = np.zeros(len(q), np.bool_)
    wall = np.empty(len(q))
    clock, cpu = time.perf_counter_ns, time.thread_time_ns
    c0 = cpu()
    for k in range(len(q)):
        x = q[k]
        t = clock()
        hit[k] = robot.check(x, world, **options)
        wall[k] = clock() - t
    cpu_us = (cpu() - c0) / len(q) / 1e3
    return hit, float(np.median(wall) / 1e3), cpu_us


def time_reference(robot: ck.Robot, world: ck.World, q: np.ndarray) -> tuple[np.ndarray, float]:
    """(answers, median us a call) of the per-pair path, one configuration at a time."""
    reference.check_configurations(robot, q[0], world)
    hit = np.zeros(len(q), np.bool_)
    wall = np.empty(len(q))
    for k in range(len(q)):
        t = time.perf_counter_ns()
        hit[k] = reference.check_configurations(robot, q[k], world)
        wall[k] = time.perf_counter_ns() - t
    return hit, float(np.median(wall) / 1e3)


def time_batch(robot: ck.Robot, world: ck.World, Q: np.ndarray, threads: int | None, **options) -> tuple[np.ndarray, float, float]:
    """(answers, median wall us a configuration, thread CPU us a configuration) of one batched call."""
    robot.check(Q[:64], world, threads=threads, **options)
    walls, cpus = [], []
    for _ in range(3):
        t, c = time.perf_counter(), time.thread_time()
        hit = robot.check(Q, world, threads=threads, **options)
        walls.append(time.perf_counter() - t)
        cpus.append(time.thread_time() - c)
    return hit, float(np.median(walls) / len(Q) * 1e6), float(np.median(cpus) / len(Q) * 1e6)


#: the volume kinds compared (``bv=``)
KINDS = ("auto", "aabb", "obb", "kdop14", "rss")


def time_kinds(robot: ck.Robot, world: ck.World, Q: np.ndarray, repeats: int = 3) -> dict:
    """Per kind of ``KINDS``, the batched call's thread CPU us a configuration at threads=1 on
    the random, free and colliding configurations of Q (kinds interleaved, order alternated,
    the median of ``repeats``), and every kind's answers on Q (``hits``)."""
    hit = robot.check(Q, world, threads=1)
    parts = {"random": Q, "free": Q[~hit], "colliding": Q[hit]}
    hits = [robot.check(Q, world, threads=1, bv=k) for k in KINDS]
    cpu: dict = {p: {k: [] for k in KINDS} for p in parts}
    for rep in range(repeats):
        for part, QQ in parts.items():
            for k in KINDS if rep % 2 == 0 else KINDS[::-1]:
                c = time.thread_time()
                robot.check(QQ, world, threads=1, bv=k)
                cpu[part][k].append((time.thread_time() - c) / max(len(QQ), 1) * 1e6)
    return {"cpu_us": {p: {k: float(np.median(v)) for k, v in d.items()} for p, d in cpu.items()}, "hits": hits}


def time_pybullet(urdf: str, robot: ck.Robot, q: np.ndarray) -> tuple[np.ndarray, float]:
    """(answers, median us a configuration) of pybullet's closest-point queries (module notes)."""
    import pybullet as p
    from scipy.spatial.transform import Rotation

    cid = p.connect(p.DIRECT)
    try:
        body = p.loadURDF(urdf, useFixedBase=True, physicsClientId=cid)
        n_joints = p.getNumJoints(body, physicsClientId=cid)
        info = [p.getJointInfo(body, j, physicsClientId=cid) for j in range(n_joints)]
        joint_of = {i[1].decode(): i[0] for i in info}
        link_of = {i[12].decode(): i[0] for i in info}
        link_of[robot.base_link] = -1
        setters = []  # (pybullet joint, index in q)
        for name, j in joint_of.items():
            if name in robot.joint_names:
                setters.append((j, robot.joint_names.index(name)))
            elif name.startswith("panda_finger"):
                setters.append((j, robot.dof - 1))  # the mimic finger follows q[7]
        self_pairs = [(link_of[robot.links[i]], link_of[robot.links[j]]) for i, j in reference.self_collision_pairs(robot)]
        boxes = []
        for _, size, at in BOXES:
            shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=[0.5 * s for s in size], physicsClientId=cid)
            quat = Rotation.identity().as_quat()
            boxes.append(p.createMultiBody(0, shape, basePosition=at, baseOrientation=quat.tolist(), physicsClientId=cid))
        hit = np.zeros(len(q), np.bool_)
        wall = np.empty(len(q))
        for k in range(len(q)):
            t = time.perf_counter_ns()
            for j, i in setters:
                p.resetJointState(body, j, float(q[k, i]), physicsClientId=cid)
            found = any(p.getClosestPoints(body, b, 0.0, physicsClientId=cid) for b in boxes)
            if not found:
                found = any(p.getClosestPoints(body, body, 0.0, la, lb, physicsClientId=cid) for la, lb in self_pairs)
            hit[k] = found
            wall[k] = time.perf_counter_ns() - t
        return hit, float(np.median(wall) / 1e3)
    finally:
        p.disconnect(cid)


def brute_truth(robot: ck.Robot, world: ck.World, q: np.ndarray) -> bool:
    """Does configuration q collide: tests/brute.py over every world and self pair."""
    from tests.brute import brute_colliding

    T = robot.link_poses(q)
    links = [(i, robot.link_meshes[n]) for i, n in enumerate(robot.links) if n in robot.link_meshes]
    meshes = dict(links)
    for o in world.names:
        if any(bool(brute_colliding(m, world.shape(o), T[i], world.pose(o))[0]) for i, m in links):
            return True
    return any(bool(brute_colliding(meshes[i], meshes[j], T[i], T[j])[0]) for i, j in reference.self_collision_pairs(robot))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="500 single configurations, a 5,000 batch")
    ap.add_argument("--n", type=int, default=2000, help="single configurations (collisionkit and pybullet)")
    ap.add_argument("--batch", type=int, default=20000, help="configurations of the batched call")
    ap.add_argument("--reference-n", type=int, default=300, help="configurations for the per-pair path")
    args = ap.parse_args(argv)
    n, nb = (500, 5000) if args.quick else (args.n, args.batch)
    urdf, robot, world = scene()
    q = robot.random_configurations(max(n, nb), seed=11)
    t0 = time.perf_counter()
    robot.checker(world)
    prepare_ms = (time.perf_counter() - t0) * 1e3

    ours, single_us, single_cpu_us = time_single(robot, world, q[:n])
    ref, ref_us = time_reference(robot, world, q[: args.reference_n])
    batch_hit, batch_us, batch_cpu_us = time_batch(robot, world, q[:nb], threads=1)
    batch_all_hit, batch_all_us, _ = time_batch(robot, world, q[:nb], threads=None)
    # the same with each pair in the kind bvh.pair_volume picks (the default before ROBOT_VOLUME)
    auto_hit, auto_us, auto_cpu_us = time_single(robot, world, q[:n], bv="auto")
    auto_batch_hit, auto_batch_us, auto_batch_cpu_us = time_batch(robot, world, q[:nb], threads=1, bv="auto")
    kinds = time_kinds(robot, world, q[:nb])
    # referee 1: the kernel's answers are the per-pair path's, on every configuration measured
    want = reference.check_configurations(robot, q[:nb], world)
    kinds["equal"] = all(np.array_equal(h, want) for h in kinds.pop("hits"))
    exact = bool(np.array_equal(ours, want[:n]) and np.array_equal(batch_hit, want) and np.array_equal(batch_all_hit, want)
                 and np.array_equal(ref, want[: args.reference_n]) and np.array_equal(auto_hit, want[:n])
                 and np.array_equal(auto_batch_hit, want))  # fmt: skip
    row: dict = {
        "robot": "franka_panda", "obstacles": len(BOXES), "self_pairs": len(reference.self_collision_pairs(robot)),
        "configurations": n, "colliding": float(want[:n].mean()), "prepare_ms": prepare_ms,
        "ours_single_us": single_us, "ours_single_cpu_us": single_cpu_us, "per_pair_path_us": ref_us,
        "ours_batch_t1_us": batch_us, "ours_batch_t1_cpu_us": batch_cpu_us, "ours_batch_all_threads_us": batch_all_us,
        "auto_single_us": auto_us, "auto_single_cpu_us": auto_cpu_us, "auto_batch_t1_us": auto_batch_us,
        "auto_batch_t1_cpu_us": auto_batch_cpu_us, "batch": nb, "equal_to_per_pair_path": exact and kinds["equal"],
        "default_volume": ROBOT_VOLUME, "kinds_batch_t1_cpu_us": kinds["cpu_us"],
    }  # fmt: skip
    try:
        pb_hit, pb_us = time_pybullet(urdf, robot, q[:n])
        differ = np.flatnonzero(pb_hit != ours)
        checked = differ[:20]
        truth = [brute_truth(robot, world, q[k]) for k in checked.tolist()]
        row.update({
            "pybullet_us": pb_us, "pybullet_disagree": int(differ.size), "refereed": int(checked.size),
            "ours_right": int(sum(t == bool(ours[k]) for k, t in zip(checked.tolist(), truth, strict=True))),
            "pybullet_right": int(sum(t == bool(pb_hit[k]) for k, t in zip(checked.tolist(), truth, strict=True))),
            "pybullet_ratio": pb_us / single_us,
        })  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - a missing or failing peer is reported, not fatal
        row["pybullet_error"] = f"{type(exc).__name__}: {exc}"
    print(json.dumps(row))
    RESULTS.mkdir(exist_ok=True)
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "threads": ck.threading_layer()}  # fmt: skip
    from .pairs import provenance, stamp

    meta["provenance"] = provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.robot_config")
    (RESULTS / "robot_config.json").write_text(json.dumps({"meta": meta, "rows": [row]}, indent=2))
    r = row
    pb = (f"{r['pybullet_us']:.0f} ({r['pybullet_ratio']:.0f}x ours)" if "pybullet_us" in r else r.get("pybullet_error", "-"))
    referee = (f"{r['pybullet_disagree']} of {n} differ from pybullet; of {r['refereed']} refereed by tests/brute.py, "
               f"collisionkit right in {r['ours_right']}, pybullet in {r['pybullet_right']}" if "pybullet_us" in r else "-")  # fmt: skip
    lines = [
        f"# One robot configuration from Python ({meta['date']}, {meta['machine']})",
        "",
        f"`python -m benchmarks.robot_config{' --quick' if args.quick else ''}`: the Franka Panda (pybullet_data) among "
        f"{len(BOXES)} box obstacles (meshes for collisionkit), self-collision on ({r['self_pairs']} link pairs), "
        f"uniform configurations (seed 11), {r['colliding']:.0%} colliding. Medians per configuration; a shared 2-core "
        "machine, so the thread CPU time is given beside the wall time.",
        "",
        "| what | us per configuration |",
        "|---|---|",
        f"| collisionkit `robot.check(q, world)` (default: \"{ROBOT_VOLUME}\" trees), one (dof,) configuration a call ({n} calls) | {r['ours_single_us']:.1f} wall median, "
        f"{r['ours_single_cpu_us']:.1f} CPU mean |",
        f"| the per-pair path it replaced (`robot/check.py`, {args.reference_n} calls) | {r['per_pair_path_us']:.0f} |",
        f"| collisionkit batched, `threads=1` ({nb} configurations) | {r['ours_batch_t1_us']:.2f} wall, {r['ours_batch_t1_cpu_us']:.2f} CPU |",
        f"| collisionkit batched, all threads | {r['ours_batch_all_threads_us']:.2f} |",
        f"| collisionkit `bv=\"auto\"` (each pair in `bvh.pair_volume`'s pick: AABB; the default before), one a call | "
        f"{r['auto_single_us']:.1f} wall median, {r['auto_single_cpu_us']:.1f} CPU mean |",
        f"| collisionkit `bv=\"auto\"` batched, `threads=1` | {r['auto_batch_t1_us']:.2f} wall, {r['auto_batch_t1_cpu_us']:.2f} CPU |",
        f"| pybullet `getClosestPoints` per obstacle and self pair ({n} configurations) | {pb} |",
        "",
        f"Referee: collisionkit equals the per-pair path on every configuration measured: **{'yes' if exact else 'NO'}**. "
        f"{referee}. Preparing the checker (first call): {r['prepare_ms']:.0f} ms.",
        "pybullet checks convex hulls of the link meshes with its collision margin: a different answer, timed for scale.",
        "",
        f"Volume kinds (`bv=`; the default `checker.ROBOT_VOLUME` = \"{ROBOT_VOLUME}\" for pairs of two \"auto\" meshes): "
        "batched thread CPU us a configuration at `threads=1`, kinds interleaved, median of 3, same answers in every kind:",
        "",
        "| configurations | " + " | ".join(KINDS) + " |",
        "|---|" + "---|" * len(KINDS),
        *(f"| {part} | " + " | ".join(f"{r['kinds_batch_t1_cpu_us'][part][k]:.2f}" for k in KINDS) + " |" for part in ("random", "free", "colliding")),
    ]
    (RESULTS / "robot_config.md").write_text(stamp("\n".join(lines) + "\n", meta["provenance"]))
    print("\n".join(lines))
    return 0 if exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
