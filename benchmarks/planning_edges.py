"""Certified edge checks vs sampling at OMPL's resolution: the Panda among boxes (issue 30 item 6).

    python -m benchmarks.planning_edges [--edges 100] [--seed 3] [--reach 0.2]

The Franka Panda of ``pybullet_data`` among box meshes (a table, two shelf boards, two posts,
a wall, a crate and a 2 mm plate). Edges as a planner makes them: from a random free configuration,
a step in a random direction of length up to RRT's default range (0.2 of the joint
space's extent), clipped to the limits, ending free. Links against obstacles only (no
self-collision), the same pairs for every method:

* certified: ``robot.check_motion(q0, q1, world)``, one call per edge;
* sampled, collisionkit: the states OMPL's ``DiscreteMotionValidator`` tests, ``ceil(|dq| /
  (0.01 * extent))`` segments (the end and the interior states), in one batched
  ``robot.check`` call per edge;
* sampled, pybullet: the same states one by one (``resetJointState`` per joint,
  ``getClosestPoints(robot, obstacle, 0)`` per obstacle), stopping at the first hit as OMPL
  does. pybullet collides convex hulls of the link meshes (a different, larger shape).

Counted per sampled method: edges it calls free that the certified check proves colliding,
each with a witness configuration that ``Robot.check`` confirms on the exact meshes (and the
reverse: edges it calls colliding that are certified free; for pybullet its hulls).
Writes benchmarks/results/planning_edges.md and .json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import collisionkit as ck

RESULTS = Path(__file__).resolve().parent / "results"


def obstacles() -> list[tuple[str, ck.Mesh, np.ndarray]]:
    box = ck.primitives.box_mesh
    return [
        ("table", box([1.2, 1.6, 0.04]), ck.translation([0.75, 0.0, -0.03])),
        ("shelf", box([0.3, 0.8, 0.02]), ck.translation([0.6, 0.0, 0.5])),
        ("post", box([0.08, 0.08, 0.8]), ck.translation([0.5, 0.5, 0.4])),
        ("wall", box([0.02, 1.0, 1.0]), ck.translation([-0.6, 0.0, 0.5])),
        ("plate", box([0.4, 0.002, 0.4]), ck.translation([0.45, -0.35, 0.35])),
        ("crate", box([0.15, 0.15, 0.2]), ck.translation([0.45, 0.1, 0.1])),
        ("post_2", box([0.06, 0.06, 1.0]), ck.translation([0.1, -0.55, 0.5])),
        ("shelf_2", box([0.3, 0.8, 0.02]), ck.translation([0.6, 0.0, 0.85])),
    ]


def edges(robot, world, n: int, seed: int, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """n edges (q0, q1), both ends free of the obstacles, |dq| up to ``reach`` of the extent."""
    rng = np.random.default_rng(seed)
    lo, hi = robot.limits[:, 0], robot.limits[:, 1]
    extent = float(np.linalg.norm(hi - lo))
    q0s, q1s = [], []
    while len(q0s) < n:
        q0 = robot.random_configurations(256, seed=int(rng.integers(1 << 31)))
        step = rng.normal(size=q0.shape)
        step *= (reach * extent * rng.random((len(q0), 1))) / np.linalg.norm(step, axis=1, keepdims=True)
        q1 = np.clip(q0 + step, lo, hi)
        ok = ~robot.check(q0, world, self_collision=False) & ~robot.check(q1, world, self_collision=False)
        q0s += list(q0[ok])
        q1s += list(q1[ok])
    return np.array(q0s[:n]), np.array(q1s[:n])


def ompl_states(robot, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """The states OMPL's DiscreteMotionValidator checks on one edge: the end, then the
    interior states, ``ceil(|dq| / (0.01 * extent))`` segments."""
    extent = float(np.linalg.norm(robot.limits[:, 1] - robot.limits[:, 0]))
    nd = max(1, math.ceil(float(np.linalg.norm(q1 - q0)) / (0.01 * extent)))
    t = np.concatenate([[1.0], np.arange(1, nd) / nd])
    return q0 + t[:, None] * (q1 - q0)


class Pybullet:
    """The Panda and the obstacles in a pybullet DIRECT client."""

    def __init__(self, urdf: str, robot, obs) -> None:
        import pybullet as p
        from scipy.spatial.transform import Rotation

        self.p = p
        self.cid = cid = p.connect(p.DIRECT)
        self.body = p.loadURDF(urdf, useFixedBase=True, physicsClientId=cid)
        names = {p.getJointInfo(self.body, j, physicsClientId=cid)[1].decode(): j for j in range(p.getNumJoints(self.body, physicsClientId=cid))}
        self.joints = [names[n] for n in robot.joint_names]
        self.bodies = []
        for _, m, T in obs:
            shape = p.createCollisionShape(p.GEOM_MESH, vertices=np.asarray(m.vertices).tolist(),
                                           indices=np.asarray(m.faces).reshape(-1).tolist(),
                                           flags=p.GEOM_FORCE_CONCAVE_TRIMESH, physicsClientId=cid)  # fmt: skip
            quat = Rotation.from_matrix(T[:3, :3]).as_quat()
            self.bodies.append(p.createMultiBody(0, shape, basePosition=T[:3, 3].tolist(), baseOrientation=quat.tolist(), physicsClientId=cid))

    def colliding(self, q: np.ndarray) -> bool:
        p, cid = self.p, self.cid
        for j, v in zip(self.joints, q.tolist(), strict=True):
            p.resetJointState(self.body, j, v, physicsClientId=cid)
        return any(p.getClosestPoints(self.body, b, 0.0, physicsClientId=cid) for b in self.bodies)

    def close(self) -> None:
        self.p.disconnect(self.cid)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edges", type=int, default=100)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--reach", type=float, default=0.2, help="longest edge, a fraction of the extent (RRT's range: 0.2)")
    args = ap.parse_args(argv)
    import pybullet_data

    urdf = os.path.join(pybullet_data.getDataPath(), "franka_panda", "panda.urdf")
    robot = ck.Robot.load(urdf)
    obs = obstacles()
    world = ck.World()
    for name, m, T in obs:
        world.add(name, m, T)
    q0, q1 = edges(robot, world, args.edges, args.seed, args.reach)
    n = len(q0)
    # warm (compile) every path on a few edges
    robot.check_motion(q0[:3], q1[:3], world, self_collision=False)
    robot.check(ompl_states(robot, q0[0], q1[0]), world, self_collision=False)

    t_cert = np.zeros(n)
    free = np.zeros(n, np.bool_)
    undecided = np.zeros(n, np.bool_)
    witness_ok = np.zeros(n, np.bool_)
    segments = np.zeros(n, np.int64)
    calls = np.zeros(n, np.int64)
    # the compiled search (``kernels/robot/edge.py``) and, interleaved edge by edge, its
    # reference written in Python (``motion._search``): the same answers, timed alike
    from collisionkit.robot import motion as robot_motion

    # and the compiled search with exact distances (``EDGE_SHRINK = 1``: ``_search``'s steps,
    # the same answers and counters), against which the default's relative-error distances
    # (certified lower bounds) are measured: the same verdicts wherever both decide
    t_ref = np.zeros(n)
    t_exact = np.zeros(n)
    shrink = robot_motion.EDGE_SHRINK
    robot_motion.EDGE_SHRINK = 1.0
    robot.check_motion(q0[:3], q1[:3], world, self_collision=False)
    robot_motion.EDGE_SHRINK = shrink
    for k in range(n):
        robot_motion.COMPILED_SEARCH = False
        try:
            t = time.perf_counter()
            ref = robot.check_motion(q0[k], q1[k], world, self_collision=False)
            t_ref[k] = time.perf_counter() - t
        finally:
            robot_motion.COMPILED_SEARCH = True
        robot_motion.EDGE_SHRINK = 1.0
        try:
            t = time.perf_counter()
            ex = robot.check_motion(q0[k], q1[k], world, self_collision=False)
            t_exact[k] = time.perf_counter() - t
        finally:
            robot_motion.EDGE_SHRINK = shrink
        assert (ex.free, ex.t_free, ex.undecided, ex.segments) == (ref.free, ref.t_free, ref.undecided, ref.segments)
        t = time.perf_counter()
        r = robot.check_motion(q0[k], q1[k], world, self_collision=False)
        t_cert[k] = time.perf_counter() - t
        assert r.undecided or ref.undecided or r.free == ref.free
        free[k], undecided[k], segments[k], calls[k] = r.free, r.undecided, r.segments, r.distance_calls
        if r.witness is not None:
            witness_ok[k] = bool(robot.check(r.witness, world, self_collision=False))

    states = [ompl_states(robot, q0[k], q1[k]) for k in range(n)]
    t_ck = np.zeros(n)
    free_ck = np.zeros(n, np.bool_)
    for k in range(n):
        t = time.perf_counter()
        free_ck[k] = not robot.check(states[k], world, self_collision=False).any()
        t_ck[k] = time.perf_counter() - t

    row_pb: dict = {}
    free_pb = None
    try:
        pb = Pybullet(urdf, robot, obs)
        try:
            t_pb = np.zeros(n)
            free_pb = np.zeros(n, np.bool_)
            for k in range(n):
                t = time.perf_counter()
                free_pb[k] = not any(pb.colliding(s) for s in states[k])  # stops at the first hit
                t_pb[k] = time.perf_counter() - t
        finally:
            pb.close()
        row_pb = {"median_ms": float(np.median(t_pb) * 1e3), "mean_ms": float(np.mean(t_pb) * 1e3)}
    except Exception as exc:  # noqa: BLE001 - a missing or failing peer is reported, not fatal
        row_pb = {"error": f"{type(exc).__name__}: {exc}"}

    colliding = ~free & ~undecided
    assert np.all(witness_ok[colliding]), "a witness Robot.check does not confirm"

    def missed(sampled_free):
        return {"free_but_colliding": int((sampled_free & colliding).sum()),
                "colliding_but_certified_free": int((~sampled_free & free).sum())}  # fmt: skip

    report = {
        "edges": n,
        "states_per_edge_median": float(np.median([len(s) for s in states])),
        "certified": {
            "median_ms": float(np.median(t_cert) * 1e3), "mean_ms": float(np.mean(t_cert) * 1e3),
            "free": int(free.sum()), "colliding": int(colliding.sum()), "undecided": int(undecided.sum()),
            "segments_median": float(np.median(segments)), "distance_calls_median": float(np.median(calls)),
        },
        "certified_exact_distances": {"median_ms": float(np.median(t_exact) * 1e3), "mean_ms": float(np.mean(t_exact) * 1e3)},
        "certified_python_search": {"median_ms": float(np.median(t_ref) * 1e3), "mean_ms": float(np.mean(t_ref) * 1e3)},
        "edge_shrink": shrink,
        "sampled_collisionkit": {"median_ms": float(np.median(t_ck) * 1e3), "mean_ms": float(np.mean(t_ck) * 1e3), **missed(free_ck)},
        "sampled_pybullet": {**row_pb, **(missed(free_pb) if free_pb is not None else {})},
    }  # fmt: skip
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} cores", "threads": ck.threading_layer()}
    from .pairs import provenance, stamp

    meta["provenance"] = provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.planning_edges")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "planning_edges.json").write_text(json.dumps({"meta": meta, "report": report}, indent=2))
    c, s, b = report["certified"], report["sampled_collisionkit"], report["sampled_pybullet"]

    def ms(r):
        return f"{r['median_ms']:.2f} / {r['mean_ms']:.2f}" if "median_ms" in r else r.get("error", "-")

    lines = [
        f"# Certified edge checks vs sampling (Panda among boxes, {meta['date']}, {meta['machine']})",
        "",
        f"`python -m benchmarks.planning_edges --edges {args.edges} --seed {args.seed} --reach {args.reach:g}`: {n} edges "
        f"(both ends free, |dq| up to {args.reach:g} of the extent), links vs {len(obs)} box meshes, no self-collision; sampled methods test "
        f"OMPL's states (1% of the extent, median {report['states_per_edge_median']:.0f} a edge).",
        "",
        "| method | ms per edge (median / mean) | free edges | edges called free that collide (confirmed witness) | edges called colliding that are certified free |",
        "|---|---|---|---|---|",
        f"| certified `check_motion` | {ms(c)} | {c['free']} (+{c['colliding']} colliding, {c['undecided']} undecided) | - | - |",
        f"| certified, exact distances (`EDGE_SHRINK = 1`: the reference's steps) | {ms(report['certified_exact_distances'])} | the same | - | - |",
        f"| certified, the bisection in Python (the reference, exact distances) | {ms(report['certified_python_search'])} | the same | - | - |",
        f"| sampled, collisionkit `check` (one batch an edge) | {ms(s)} | {int(free_ck.sum())} | {s['free_but_colliding']} | {s['colliding_but_certified_free']} |",
        f"| sampled, pybullet (one state at a time, first hit stops) | {ms(b)} | {int(free_pb.sum()) if free_pb is not None else '-'} | "
        f"{b.get('free_but_colliding', '-')} | {b.get('colliding_but_certified_free', '-')} |",
        "",
        f"Certified search, median per edge: {c['segments_median']:.0f} sub-segments, {c['distance_calls_median']:.0f} "
        "pair distance queries; the whole search of an edge is one compiled call (`kernels/robot/edge.py`: kinematics, boxes and the "
        f"checker's pair distances at each bisection point, in the descent's relative-error mode, shrink {shrink:g}, whose certified "
        "lower bounds certify: the same verdicts as exact distances, other sub-segments). pybullet collides the links' convex hulls: its disagreements with the exact meshes "
        "are shape differences, not only sampling.",
    ]
    if "median_ms" in b:
        lines.append("")
        lines.append(
            f"Ratio, medians: pybullet sampling / certified = {b['median_ms'] / c['median_ms']:.2f}x "
            f"(the Python bisection: {b['median_ms'] / report['certified_python_search']['median_ms']:.2f}x); "
            f"relative-error / exact distances = {report['certified_exact_distances']['median_ms'] / c['median_ms']:.1f}x faster; "
            f"compiled / Python search = {report['certified_python_search']['median_ms'] / c['median_ms']:.1f}x faster."
        )
    (RESULTS / "planning_edges.md").write_text(stamp("\n".join(lines) + "\n", meta["provenance"]))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
