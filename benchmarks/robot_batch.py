"""Robot configurations in one batch call: ``Robot.check`` against Pinocchio's C++ batch.

    python -m benchmarks.robot_batch [--quick] [--n 20000] [--threads 2]

Issue 15, item 8. For the KUKA iiwa and the Franka Panda of ``pybullet_data`` and the
cell of ``benchmarks/robot.py`` (table, posts, shelf mesh), N random configurations
within the joint limits, links against obstacles (no self-collision):

* collisionkit: ``robot.check(q, world, self_collision=False, threads=T)``;
* Pinocchio (pip ``pin``): ``pin.computeCollisionsInParallel(T, pool, Q, True)``
  with a ``GeometryPool`` (every (link, obstacle) pair narrow-phased) and with a
  ``BroadPhaseManagerPool_DynamicAABBTreeCollisionManager`` (Coal's dynamic AABB tree
  broad phase), ``stop_at_first_collision_in_configuration=True``.

Same triangles: Pinocchio's kinematics come from the URDF (``buildModelFromUrdf``), but its
GeometryModel is built here from OUR link meshes as Coal ``BVHModelOBBRSS`` objects (not
from its assimp mesh loader, which garbles the Franka link6 OBJ's multi-material
groups), each placed at its link frame; the obstacles are the same meshes at the same
poses. Before timing, Pinocchio's link frames are checked against ``robot.link_poses`` on
a few configurations (the kinematics must be the same).

Answers gate the ratio: configurations where the answers differ, and a seeded sample
where they agree, are refereed by ``benchmarks.robot.referee`` (tests/brute.py, exact);
Coal's documented GJK tolerance (1e-6) explains a reported near miss.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import collisionkit as ck

from .peers import coal_bvh
from .robot import obstacles, referee, robots

RESULTS = Path(__file__).resolve().parent / "results"


class PinBatch:
    """Pinocchio's model from the URDF, its geometry from our meshes."""

    def __init__(self, urdf: str, robot, obs):
        import pinocchio as pin

        self.pin = pin
        self.model = pin.buildModelFromUrdf(urdf)
        model = self.model
        gm = pin.GeometryModel()
        self._keep = []  # the BVH models must outlive the geometry objects
        self.link_ids = []
        for name in robot.links:
            m = robot.link_meshes.get(name)
            if m is None:
                continue
            fid = model.getFrameId(name)
            if fid >= len(model.frames):
                raise LookupError(f"Pinocchio has no frame {name!r}")
            fr = model.frames[fid]
            g = coal_bvh(m)
            self._keep.append(g)
            go = pin.GeometryObject(f"link:{name}", fr.parentJoint, fid, fr.placement, g)
            self.link_ids.append(gm.addGeometryObject(go))
        self.obs_ids = []
        for name, m, T in obs:
            g = coal_bvh(m)
            self._keep.append(g)
            go = pin.GeometryObject(f"obs:{name}", 0, 0, pin.SE3(np.asarray(T[:3, :3]), np.asarray(T[:3, 3])), g)
            self.obs_ids.append(gm.addGeometryObject(go))
        for i in self.link_ids:
            for j in self.obs_ids:
                gm.addCollisionPair(pin.CollisionPair(i, j))
        self.gm = gm
        # our joint values -> Pinocchio's q (joints we do not actuate stay at neutral)
        self.q_index = []
        for jn in robot.joint_names:
            jid = model.getJointId(jn)
            if jid >= model.njoints or model.joints[jid].nq != 1:
                raise LookupError(f"joint {jn!r} is not a 1-dof joint of Pinocchio's model")
            self.q_index.append(model.joints[jid].idx_q)
        self.neutral = pin.neutral(model)
        # URDF mimic joints (the Panda's second finger) follow their leader, as in ours
        import xml.etree.ElementTree as ET

        self.mimic = []
        ours = list(robot.joint_names)
        for j in ET.parse(urdf).getroot().iter("joint"):
            mm = j.find("mimic")
            if mm is None or j.get("name") in ours or mm.get("joint") not in ours:
                continue
            jid = model.getJointId(j.get("name"))
            if jid < model.njoints and model.joints[jid].nq == 1:
                self.mimic.append(
                    (model.joints[jid].idx_q, ours.index(mm.get("joint")), float(mm.get("multiplier", 1)), float(mm.get("offset", 0)))
                )

    def q_matrix(self, q: np.ndarray) -> np.ndarray:
        Q = np.repeat(self.neutral[:, None], len(q), axis=1)
        Q[self.q_index, :] = np.asarray(q).T
        for iq, lead, mult, off in self.mimic:
            Q[iq, :] = mult * np.asarray(q)[:, lead] + off
        return np.asfortranarray(Q)

    def check_kinematics(self, robot, q: np.ndarray) -> float:
        """Largest difference between Pinocchio's link frames and robot.link_poses."""
        pin = self.pin
        data = self.model.createData()
        ours = robot.link_poses(q)
        Q = self.q_matrix(q)
        worst = 0.0
        for k in range(len(q)):
            pin.framesForwardKinematics(self.model, data, Q[:, k])
            for i, name in enumerate(robot.links):
                fid = self.model.getFrameId(name)
                worst = max(worst, float(np.abs(data.oMf[fid].homogeneous - ours[k, i]).max()))
        return worst

    def pools(self, threads: int):
        pin = self.pin
        return {
            "pin-GeometryPool": pin.GeometryPool(self.model, self.gm, threads),
            "pin-BroadPhasePool": pin.BroadPhaseManagerPool_DynamicAABBTreeCollisionManager(self.model, self.gm, threads),
        }

    def run(self, pool, threads: int, Q: np.ndarray) -> np.ndarray:
        return np.asarray(self.pin.computeCollisionsInParallel(threads, pool, Q, True), dtype=bool)


def main(argv: list[str] | None = None) -> int:
    import numba

    ap = argparse.ArgumentParser(prog="python -m benchmarks.robot_batch", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2,000 configurations, 3 rounds")
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None, help="threads for every engine (default numba's)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    n, rounds = (2_000, 3) if args.quick else (args.n, args.rounds)
    threads = args.threads or numba.get_num_threads()
    obs = obstacles()
    rows, failed = [], False
    for rname, urdf in robots():
        robot = ck.Robot.load(urdf)
        world = ck.World()
        for name, m, T in obs:
            world.add(name, m, T)
        q = robot.random_configurations(n, seed=11)
        row = {"robot": rname, "configurations": n, "threads": threads, "links": len(robot.link_meshes)}
        try:
            pb = PinBatch(urdf, robot, obs)
            row["kinematics_max_diff"] = pb.check_kinematics(robot, q[:16])
            if row["kinematics_max_diff"] > 1e-9:
                raise AssertionError(f"Pinocchio's link frames differ from ours by {row['kinematics_max_diff']:.3g}")
            pools = pb.pools(threads)
            Q = pb.q_matrix(q)
        except Exception as exc:  # noqa: BLE001 - reported, not fatal
            row["pinocchio_error"] = f"{type(exc).__name__}: {exc}"
            pools, Q = {}, None
        # warm-up (compile, trees), then interleaved rounds
        robot.check(q[:64], world, self_collision=False, threads=threads)
        answers, times = {}, {"collisionkit": []}
        for k in pools:
            pb.run(pools[k], threads, Q[:, :64])
            times[k] = []
        for _ in range(rounds):
            t = time.perf_counter()
            hit = np.asarray(robot.check(q, world, self_collision=False, threads=threads), dtype=bool)
            times["collisionkit"].append(time.perf_counter() - t)
            answers.setdefault("collisionkit", hit)
            for k, pool in pools.items():
                t = time.perf_counter()
                h = pb.run(pool, threads, Q)
                times[k].append(time.perf_counter() - t)
                answers.setdefault(k, h)
        row["us_per_config"] = {k: statistics.median(v) / n * 1e6 for k, v in times.items()}
        row["samples_us_per_config"] = {k: [t / n * 1e6 for t in v] for k, v in times.items()}
        row["loadavg"] = list(os.getloadavg())
        row["colliding"] = float(answers["collisionkit"].mean())
        for k in pools:
            ours, theirs = answers["collisionkit"], answers[k]
            row[f"{k}_disagree"] = int((ours != theirs).sum())
            v = referee(robot, q, obs, ours, theirs, tolerance=1e-6, sample=20)
            row[f"{k}_referee"] = v
            if v["ours"]["status"] != "FAIL" and v["peer"]["status"] != "FAIL":
                row[f"{k}_ratio"] = row["us_per_config"][k] / row["us_per_config"]["collisionkit"]
            else:
                failed = True
        rows.append(row)
        print(json.dumps(row, default=str), flush=True)
    from .pairs import provenance, stamp
    from .referee import verdict_text

    pv = provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.robot_batch")
    lines = [
        "# Robot batch: Robot.check vs Pinocchio computeCollisionsInParallel",
        "",
        f"`python -m benchmarks.robot_batch{' --quick' if args.quick else ''}`: links vs the cell of benchmarks/robot.py "
        "(table, posts, shelf), no self-collision, equal threads; Pinocchio's geometry built from our meshes (Coal "
        "BVHModelOBBRSS), its kinematics from the URDF (checked against ours). x = Pinocchio time / ours.",
        "",
        "Medians of interleaved rounds; every round's time per configuration is in the JSON (the VM is shared: "
        "single rounds move by 2x or more).",
        "",
        "| robot | configurations | threads | colliding | ck us/config | GeometryPool us/config (x) | BroadPhasePool us/config (x) | disagreements | referee |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        u = r["us_per_config"]

        def cell(k, r=r, u=u):
            if k not in u:
                return r.get("pinocchio_error", "-")
            x = f"{r[k + '_ratio']:.2f}x" if k + "_ratio" in r else "no ratio"
            return f"{u[k]:.2f} ({x})"

        ks = [k for k in u if k != "collisionkit"]
        dis = " / ".join(str(r.get(k + "_disagree", "-")) for k in ks) or "-"
        ver = "; ".join(f"{k}: ours {verdict_text(r[k + '_referee']['ours'])}, pin {verdict_text(r[k + '_referee']['peer'])}" for k in ks)
        lines.append(
            f"| {r['robot']} | {r['configurations']:,} | {r['threads']} | {r['colliding']:.1%} | {u['collisionkit']:.2f} | "
            f"{cell('pin-GeometryPool')} | {cell('pin-BroadPhasePool')} | {dis} | {ver or '-'} |"
        )
    md = stamp("\n".join(lines) + "\n", pv)
    print(md)
    if not args.no_write:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "robot_batch.json").write_text(json.dumps({"provenance": pv, "rows": rows}, indent=1, default=str) + "\n")
        (RESULTS / "robot_batch.md").write_text(md)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
