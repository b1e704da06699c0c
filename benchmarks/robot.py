"""The planner's main call: N robot configurations against obstacles, collisionkit vs peers.

    python -m benchmarks.robot [--quick] [--n 100000] [--peer-n 2000]

For the KUKA iiwa and the Franka Panda of ``pybullet_data``: a cell of obstacles
(a table top, two posts, a shelf mesh) as triangle meshes; N random configurations
within the joint limits. Measured per configuration (links against obstacles,
no self-collision, the same for every engine):

* collisionkit: ``robot.check(q, world)``: one call for all N (FK batched).
* Coal: per configuration, ``coal.collide`` per (link, obstacle) with OBBRSS meshes,
  link poses from our batched FK (given to Coal for free: FK not timed for Coal).
* pybullet: per configuration, ``resetJointState`` per joint and
  ``getClosestPoints(robot, obstacle, 0)`` per obstacle (pybullet's own FK; links are
  the convex hulls pybullet makes of the URDF meshes, obstacles concave meshes).

Peers run ``--peer-n`` configurations (a Python loop each); their per-configuration
time is compared with ours over N. Agreement with Coal (same triangles, exact vs 1e-6
tolerance) is counted; pybullet's hulls and 0.002 margin make it an approximate peer.
Writes benchmarks/results/robot.md and .json.
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

RESULTS = Path(__file__).resolve().parent / "results"


def obstacles() -> list[tuple[str, ck.Mesh, np.ndarray]]:
    """The cell: a table top in front, two posts to the sides, a shelf behind (meshes)."""
    import pybullet_data

    items = [
        ("table", ck.primitives.box_mesh([0.8, 1.2, 0.05]), ck.translation([0.65, 0.0, 0.45])),
        ("post_l", ck.primitives.box_mesh([0.08, 0.08, 1.6]), ck.translation([0.3, 0.55, 0.8])),
        ("post_r", ck.primitives.box_mesh([0.08, 0.08, 1.6]), ck.translation([0.3, -0.55, 0.8])),
    ]
    shelf = os.path.join(pybullet_data.getDataPath(), "kiva_shelf", "meshes", "pod_lowres.stl")
    if os.path.exists(shelf):
        m = ck.load_mesh(shelf)
        lo, hi = m.bounds
        T = ck.translation([-0.9 - hi[0], -0.5 * (lo[1] + hi[1]), -lo[2]])
        items.append(("shelf", m, T))
    return items


def robots() -> list[tuple[str, str]]:
    import pybullet_data

    d = pybullet_data.getDataPath()
    return [("kuka_iiwa", os.path.join(d, "kuka_iiwa", "model.urdf")), ("franka_panda", os.path.join(d, "franka_panda", "panda.urdf"))]


def run_ours(robot, q, world) -> tuple[float, np.ndarray]:
    robot.check(q[:64], world, self_collision=False)  # compile / warm
    t = time.perf_counter()
    hit = robot.check(q, world, self_collision=False)
    return time.perf_counter() - t, hit


def run_coal(robot, q, obs) -> tuple[float, np.ndarray]:
    import coal

    def model(m):
        g = coal.BVHModelOBBRSS()
        g.beginModel(m.n_faces, m.n_vertices)
        g.addVertices(np.ascontiguousarray(m.vertices))
        g.addTriangles(np.ascontiguousarray(m.faces, dtype=np.int64))
        g.endModel()
        return g

    links = [(i, model(robot.link_meshes[n])) for i, n in enumerate(robot.links) if n in robot.link_meshes]
    objs = []
    for _, m, T in obs:
        tf = coal.Transform3s()
        tf.setRotation(T[:3, :3])
        tf.setTranslation(T[:3, 3])
        objs.append((model(m), tf))
    poses = robot.link_poses(q)  # FK not charged to Coal
    req, res, tl = coal.CollisionRequest(), coal.CollisionResult(), coal.Transform3s()
    hit = np.zeros(len(q), np.bool_)
    t = time.perf_counter()
    for k in range(len(q)):
        P = poses[k]
        for i, g in links:
            tl.setRotation(P[i, :3, :3])
            tl.setTranslation(P[i, :3, 3])
            for go, to in objs:
                res.clear()
                if coal.collide(g, tl, go, to, req, res):
                    hit[k] = True
                    break
            if hit[k]:
                break
    return time.perf_counter() - t, hit


def referee(robot, q, obs, ours: np.ndarray, theirs: np.ndarray, tolerance: float, sample: int = 20) -> dict:
    """Referee a peer's per-configuration answers against ours (issue #20).

    Every configuration where they differ, and a seeded sample where they agree, is decided
    by tests/brute.py over every (link, obstacle) pair (all triangle pairs, its own mapping,
    exact: independent of collisionkit's kernels). A wrong answer is explained only when it
    is a reported hit whose brute-force distance is within the engine's documented tolerance.
    Returns {"ours": verdict, "peer": verdict} (``benchmarks.referee`` form).
    """
    from tests.brute import brute_colliding

    from .referee import brute_distance

    rng = np.random.default_rng(0)
    differ = np.flatnonzero(ours != theirs)
    agree = np.flatnonzero(ours == theirs)
    todo = np.concatenate([differ, rng.choice(agree, size=min(sample, agree.size), replace=False)])
    poses = robot.link_poses(q[todo])
    links = [(i, robot.link_meshes[n]) for i, n in enumerate(robot.links) if robot.link_meshes.get(n) is not None]
    out = {e: {"wrong": 0, "explained": {}, "unexplained": []} for e in ("ours", "peer")}
    for k, c in enumerate(todo.tolist()):
        truth = any(bool(brute_colliding(m, om, poses[k, i], oT)[0]) for i, m in links for _, om, oT in obs)
        for e, got, tol in (("ours", ours, 0.0), ("peer", theirs, tolerance)):
            if bool(got[c]) == truth:
                continue
            out[e]["wrong"] += 1
            if got[c] and min(brute_distance(m, om, poses[k, i], oT)[0] for i, m in links for _, om, oT in obs) <= tol:
                out[e]["explained"][f"tolerance {tol:g}"] = out[e]["explained"].get(f"tolerance {tol:g}", 0) + 1
            else:
                out[e]["unexplained"].append({"configuration": c, "reported": bool(got[c])})
    for v in out.values():
        v["status"] = "FAIL" if v["unexplained"] else ("explained" if v["wrong"] else "exact")
        v["refereed"] = int(todo.size)
        v["unexplained"] = v["unexplained"][:5]
    return out


def run_pybullet(urdf, robot, q, obs) -> tuple[float, np.ndarray]:
    import pybullet as p

    cid = p.connect(p.DIRECT)
    try:
        body = p.loadURDF(urdf, useFixedBase=True, physicsClientId=cid)
        names = {p.getJointInfo(body, j, physicsClientId=cid)[1].decode(): j for j in range(p.getNumJoints(body, physicsClientId=cid))}
        joint_ids = [names[n] for n in robot.joint_names]
        bodies = []
        for _, m, T in obs:
            shape = p.createCollisionShape(p.GEOM_MESH, vertices=np.asarray(m.vertices).tolist(),
                                           indices=np.asarray(m.faces).reshape(-1).tolist(),
                                           flags=p.GEOM_FORCE_CONCAVE_TRIMESH, physicsClientId=cid)  # fmt: skip
            from scipy.spatial.transform import Rotation

            quat = Rotation.from_matrix(T[:3, :3]).as_quat()
            bodies.append(p.createMultiBody(0, shape, basePosition=T[:3, 3].tolist(), baseOrientation=quat.tolist(), physicsClientId=cid))
        hit = np.zeros(len(q), np.bool_)
        t = time.perf_counter()
        for k in range(len(q)):
            for j, v in zip(joint_ids, q[k], strict=True):
                p.resetJointState(body, j, float(v), physicsClientId=cid)
            for b in bodies:
                if p.getClosestPoints(body, b, 0.0, physicsClientId=cid):
                    hit[k] = True
                    break
        return time.perf_counter() - t, hit
    finally:
        p.disconnect(cid)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="10,000 configurations, 500 for the peers")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--peer-n", type=int, default=2_000)
    args = ap.parse_args(argv)
    n, peer_n = (10_000, 500) if args.quick else (args.n, args.peer_n)
    obs = obstacles()
    rows = []
    failed = False
    for rname, urdf in robots():
        robot = ck.Robot.load(urdf)
        world = ck.World()
        for name, m, T in obs:
            world.add(name, m, T)
        q = robot.random_configurations(n, seed=11)
        t_ours, hit = run_ours(robot, q, world)
        row = {"robot": rname, "links": len(robot.links), "configurations": n, "colliding": float(hit.mean()),
               "ours_us": t_ours / n * 1e6}  # fmt: skip
        for peer in ("coal", "pybullet"):
            try:
                if peer == "coal":
                    t_peer, hit_peer = run_coal(robot, q[:peer_n], obs)
                else:
                    t_peer, hit_peer = run_pybullet(urdf, robot, q[:peer_n], obs)
            except Exception as exc:  # noqa: BLE001 - a missing or failing peer is reported, not fatal
                row[f"{peer}_error"] = f"{type(exc).__name__}: {exc}"
                continue
            row[f"{peer}_us"] = t_peer / peer_n * 1e6
            row[f"{peer}_disagree"] = int((hit_peer != hit[:peer_n]).sum())
            if peer == "coal":  # issue #20: the ratio only when the referee passes both answers
                v = referee(robot, q[:peer_n], obs, hit[:peer_n], hit_peer, tolerance=1e-6)
                row["referee"] = v
                if v["ours"]["status"] != "FAIL" and v["peer"]["status"] != "FAIL":
                    row["coal_ratio"] = row["coal_us"] / row["ours_us"]
                else:
                    failed = True
            # pybullet: convex hulls of the links and a 0.002 margin, a different answer: no ratio
        rows.append(row)
        print(json.dumps(row))
    RESULTS.mkdir(exist_ok=True)
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} cores", "threads": ck.threading_layer()}
    from .pairs import provenance, stamp

    meta["provenance"] = provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.robot")
    (RESULTS / "robot.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    lines = [
        f"# Robot batch check ({meta['date']}, {meta['machine']})",
        "",
        f"`python -m benchmarks.robot{' --quick' if args.quick else ''}`: links vs obstacles (table, posts, shelf), no self-collision; "
        "peers loop in Python over a subset; x = peer time / ours per configuration.",
        "",
        "| robot | configurations | colliding | collisionkit us/config | Coal us/config (x) | pybullet us/config | disagreements Coal / pybullet | referee (Coal's disagreements + 20 agreed, tests/brute.py) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    def cell(r, p):
        if p + "_us" not in r:
            return r.get(p + "_error", "-")
        x = f"{r[p + '_ratio']:.1f}x" if p + "_ratio" in r else "no ratio"
        return f"{r[p + '_us']:.1f} ({x})"

    def verdict(r):
        from .referee import verdict_text

        v = r.get("referee")
        return f"ours {verdict_text(v['ours'])}; Coal {verdict_text(v['peer'])}" if v else "unrefereed"

    for r in rows:
        lines.append(f"| {r['robot']} | {r['configurations']} | {r['colliding']:.1%} | {r['ours_us']:.2f} | {cell(r, 'coal')} | {cell(r, 'pybullet')} | "
                     f"{r.get('coal_disagree', '-')} / {r.get('pybullet_disagree', '-')} of {peer_n} | {verdict(r)} |")  # fmt: skip
    lines += ["", "pybullet uses convex hulls of the links and a 0.002 margin (a different answer): its time is shown, no ratio."]
    (RESULTS / "robot.md").write_text(stamp("\n".join(lines) + "\n", meta["provenance"]))
    print("\n".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
