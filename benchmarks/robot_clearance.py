"""Robot clearance and margin checks per configuration: collisionkit vs python-fcl and Coal
(issue 30 item 2).

    python -m benchmarks.robot_clearance [--configs 200] [--seed 4]

The Franka Panda of ``pybullet_data`` among the box meshes of ``benchmarks.planning_edges``,
links against obstacles and the self-collision pairs of ``Robot.check``, at random
configurations that ``Robot.check`` calls free. Per configuration:

* clearance: ``robot.clearance(q, world)`` (one call a configuration: the checker's
  compiled pair-distance pass, each pair's search capped by the best so far) vs python-fcl
  and Coal: ``distance`` per pair (the same link and obstacle meshes as ``BVHModel``
  OBBRSS, the poses of ``Robot.link_poses``), the minimum over the pairs. Refereed first:
  every peer's minimum equal to ours within 1e-9 relative.
* margin: ``robot.check(q, world, margin=m)`` vs ``robot.check(q, world)`` (intersects),
  one configuration a call, on the same configurations (free ones and colliding ones).

Writes benchmarks/results/robot_clearance.md and .json.
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
from collisionkit.robot import motion

from .peers import coal_bvh, fcl_bvh
from .planning_edges import obstacles

RESULTS = Path(__file__).resolve().parent / "results"


class FclClearance:
    """python-fcl: one CollisionObject per link and obstacle, ``fcl.distance`` per pair."""

    def __init__(self, ps) -> None:
        import fcl

        self.fcl = fcl
        self.req = fcl.DistanceRequest()
        models = {}
        self.objs = {}
        for p in range(ps.n):
            for key, shape in ((("l", int(ps.a[p])), ps.shape_a[p]), (("o", int(ps.obj[p])) if ps.b[p] < 0 else ("l", int(ps.b[p])), ps.shape_b[p])):
                if key not in self.objs:
                    models[key] = fcl_bvh(shape)
                    self.objs[key] = fcl.CollisionObject(models[key], fcl.Transform())
        self.models = models
        for o, T in enumerate(ps.poses):
            if ("o", o) in self.objs:
                self.objs[("o", o)].setRotation(T[:3, :3])
                self.objs[("o", o)].setTranslation(T[:3, 3])
        self.pairs = [(self.objs[("l", int(ps.a[p]))], self.objs[("o", int(ps.obj[p])) if ps.b[p] < 0 else ("l", int(ps.b[p]))]) for p in range(ps.n)]
        self.links = [(i, o) for (kind, i), o in self.objs.items() if kind == "l"]

    def __call__(self, T: np.ndarray) -> float:
        for i, o in self.links:
            o.setRotation(T[i, :3, :3])
            o.setTranslation(T[i, :3, 3])
        fcl, req = self.fcl, self.req
        return min(fcl.distance(a, b, req, fcl.DistanceResult()) for a, b in self.pairs)


class CoalClearance:
    """Coal: a ComputeDistance functor per pair (models and transforms reused)."""

    def __init__(self, ps) -> None:
        import coal

        self.coal = coal
        self.req, self.res = coal.DistanceRequest(), coal.DistanceResult()
        self.models = {}
        self.tf = {}
        keys = []
        for p in range(ps.n):
            ka = ("l", int(ps.a[p]))
            kb = ("o", int(ps.obj[p])) if ps.b[p] < 0 else ("l", int(ps.b[p]))
            for key, shape in ((ka, ps.shape_a[p]), (kb, ps.shape_b[p])):
                if key not in self.models:
                    self.models[key] = coal_bvh(shape)
                    self.tf[key] = coal.Transform3s()
            keys.append((ka, kb))
        for o, T in enumerate(ps.poses):
            if ("o", o) in self.tf:
                self.tf[("o", o)].setRotation(T[:3, :3])
                self.tf[("o", o)].setTranslation(T[:3, 3])
        # NOTE: the functors keep raw pointers: the models live as long as this object
        self.pairs = [(coal.ComputeDistance(self.models[ka], self.models[kb]), self.tf[ka], self.tf[kb]) for ka, kb in keys]
        self.links = [(i, t) for (kind, i), t in self.tf.items() if kind == "l"]

    def __call__(self, T: np.ndarray) -> float:
        for i, t in self.links:
            t.setRotation(T[i, :3, :3])
            t.setTranslation(T[i, :3, 3])
        req, res = self.req, self.res
        best = np.inf
        for f, ta, tb in self.pairs:
            res.clear()
            best = min(best, f(ta, tb, req, res))
        return float(best)


def _timed(fn, items, repeat: int = 3) -> float:
    """Median over ``repeat`` rounds of the mean seconds per item."""
    rounds = []
    for _ in range(repeat):
        t = time.perf_counter()
        for x in items:
            fn(x)
        rounds.append((time.perf_counter() - t) / len(items))
    return float(np.median(rounds))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--configs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=4)
    ap.add_argument("--margin", type=float, default=0.01)
    args = ap.parse_args(argv)
    import pybullet_data

    robot = ck.Robot.load(os.path.join(pybullet_data.getDataPath(), "franka_panda", "panda.urdf"))
    world = ck.World()
    for name, m, T in obstacles():
        world.add(name, m, T)
    Q = robot.random_configurations(4 * args.configs, seed=args.seed)
    hit = robot.check(Q, world)
    free = Q[~hit][: args.configs]
    mixed = Q[: args.configs]
    ps = motion._PairSet(robot, world, self_collision=True, allowed=(), ignore=(), base=None)
    poses = [np.ascontiguousarray(robot.link_poses(q)) for q in free]

    # referee: every peer's minimum equals ours within 1e-9 relative
    ours = np.array([robot.clearance(q, world).distance for q in free])
    peers = {}
    for name, cls in (("python-fcl", FclClearance), ("coal", CoalClearance)):
        try:
            peers[name] = cls(ps)
        except Exception as exc:  # noqa: BLE001 - a missing peer is reported, not fatal
            print(f"{name}: {type(exc).__name__}: {exc}")
    worst = {}
    for name, peer in peers.items():
        theirs = np.array([peer(T) for T in poses])
        rel = np.abs(theirs - ours) / np.maximum(ours, 1e-300)
        worst[name] = float(rel.max())
        assert rel.max() <= 1e-9, f"{name} disagrees: {rel.max():.3g} relative"

    t_ours = _timed(lambda q: robot.clearance(q, world), free)
    t_peer = {name: _timed(peer, poses) for name, peer in peers.items()}
    t_margin = _timed(lambda q: robot.check(q, world, margin=args.margin), mixed)
    t_inter = _timed(lambda q: robot.check(q, world), mixed)
    t_margin_free = _timed(lambda q: robot.check(q, world, margin=args.margin), free)
    t_inter_free = _timed(lambda q: robot.check(q, world), free)

    report = {
        "configs": len(free), "pairs": ps.n, "clearance_us": t_ours * 1e6,
        "peers_us": {k: v * 1e6 for k, v in t_peer.items()}, "referee_worst_rel": worst,
        "margin": args.margin, "margin_us_mixed": t_margin * 1e6, "intersects_us_mixed": t_inter * 1e6,
        "margin_us_free": t_margin_free * 1e6, "intersects_us_free": t_inter_free * 1e6,
    }  # fmt: skip
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} cores"}
    from .pairs import provenance, stamp

    meta["provenance"] = provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.robot_clearance")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "robot_clearance.json").write_text(json.dumps({"meta": meta, "report": report}, indent=2))
    fastest = min(t_peer.values()) if t_peer else float("nan")
    lines = [
        f"# Robot clearance and margins per configuration (Panda among boxes, {meta['date']}, {meta['machine']})",
        "",
        f"`python -m benchmarks.robot_clearance --configs {args.configs} --seed {args.seed} --margin {args.margin:g}`: "
        f"{len(free)} free configurations, {ps.n} pairs (links vs {len(world.names)} box meshes, and self pairs).",
        "",
        "| method | us per configuration | vs collisionkit |",
        "|---|---|---|",
        f"| collisionkit `robot.clearance(q, world)` | {t_ours * 1e6:.1f} | 1.00 |",
        *[f"| {k}: `distance` per pair (OBBRSS), min | {v * 1e6:.1f} | {v / t_ours:.2f} |" for k, v in t_peer.items()],
        "",
        f"Referee: each peer's minimum equals collisionkit's within {max(worst.values(), default=0):.2g} relative "
        "(bound 1e-9). Speed-up over the fastest peer: " + f"{fastest / t_ours:.2f}x.",
        "",
        f"| margin check (m = {args.margin:g}) | us per configuration, free | random (some colliding) |",
        "|---|---|---|",
        f"| `robot.check(q, world, margin=m)` | {t_margin_free * 1e6:.1f} | {t_margin * 1e6:.1f} |",
        f"| `robot.check(q, world)` (intersects) | {t_inter_free * 1e6:.1f} | {t_inter * 1e6:.1f} |",
        f"| ratio | {t_margin_free / t_inter_free:.2f} | {t_margin / t_inter:.2f} |",
    ]
    (RESULTS / "robot_clearance.md").write_text(stamp("\n".join(lines) + "\n", meta["provenance"]))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
