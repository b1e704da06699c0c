"""Planning problems in the style of MotionBenchMaker for the Franka Panda of pybullet_data,
generated in code with fixed seeds, every obstacle a triangle mesh (issue 30 item 6).

MotionBenchMaker (Chamzas et al., RA-L 2022) samples perturbed table, shelf, bookshelf and
cage scenes around a Panda; these are our own scenes of the same kinds, not its files:

* ``table``: a table in front of the robot with a seeded clutter of boxes and cylinders;
* ``shelf``: a three-board open shelf in front (2 cm boards and sides);
* ``bookshelf``: a tall shelf with seeded thin "books" standing on its boards;
* ``cage``: a frame of 2 cm bars around the workspace in front, with cross bars;
* ``thin_plate``: a 2 mm plate between two reachable regions (sampled edges step over it).

``problems(robot, name, n, seed)`` gives start and goal configurations: free (exactly, by
``Robot.check``), with the fingers held, whose straight edge is not free where the scene
allows (so the planner has work). The Panda stands at the origin, z up.
"""

from __future__ import annotations

import math
import os

import numpy as np

import collisionkit as ck

SCENES = ("table", "shelf", "bookshelf", "cage", "thin_plate")
FINGER = 0.02  # the finger joint's held opening (m)


def panda() -> ck.Robot:
    import pybullet_data

    return ck.Robot.load(os.path.join(pybullet_data.getDataPath(), "franka_panda", "panda.urdf"))


def cylinder_mesh(radius: float, height: float, segments: int = 24) -> ck.Mesh:
    """A closed cylinder about z, centred at the origin, outward faces."""
    a = np.linspace(0.0, 2 * math.pi, segments, endpoint=False)
    ring = np.stack([radius * np.cos(a), radius * np.sin(a)], axis=1)
    v = np.concatenate(
        [np.c_[ring, np.full(segments, -height / 2)], np.c_[ring, np.full(segments, height / 2)], [[0, 0, -height / 2], [0, 0, height / 2]]]
    )
    bottom, top = 2 * segments, 2 * segments + 1
    faces = []
    for i in range(segments):
        j = (i + 1) % segments
        faces += [[i, j, segments + j], [i, segments + j, segments + i], [bottom, j, i], [top, segments + i, segments + j]]
    return ck.Mesh(v, np.array(faces), name="cylinder")


def _box(world: ck.World, name: str, extents, centre, yaw: float = 0.0) -> None:
    T = ck.translation(centre) @ ck.rotation([0, 0, 1], yaw)
    world.add(name, ck.primitives.box_mesh(extents), T)


def scene(name: str, seed: int = 0) -> ck.World:
    """The obstacles of scene ``name`` (one of ``SCENES``) as a World of meshes."""
    rng = np.random.default_rng(seed)
    w = ck.World()
    if name == "table":
        _box(w, "table", [0.7, 1.2, 0.04], [0.65, 0.0, 0.18])
        for k in range(6):
            x, y = 0.45 + 0.35 * rng.random(), -0.5 + rng.random()
            if rng.random() < 0.5:
                e = 0.05 + 0.1 * rng.random(3)
                _box(w, f"box{k}", e, [x, y, 0.2 + e[2] / 2], yaw=math.pi * rng.random())
            else:
                r, h = 0.03 + 0.03 * rng.random(), 0.1 + 0.15 * rng.random()
                w.add(f"cyl{k}", cylinder_mesh(r, h), ck.translation([x, y, 0.2 + h / 2]))
    elif name in ("shelf", "bookshelf"):
        x0, depth, width = 0.55 + 0.1 * rng.random(), 0.35, 0.8
        levels = (0.15, 0.45, 0.75) if name == "shelf" else (0.1, 0.35, 0.6, 0.85, 1.1)
        top = levels[-1] + 0.3
        _box(w, "back", [0.02, width, top], [x0 + depth, 0.0, top / 2])
        _box(w, "side_l", [depth, 0.02, top], [x0 + depth / 2, width / 2, top / 2])
        _box(w, "side_r", [depth, 0.02, top], [x0 + depth / 2, -width / 2, top / 2])
        for k, z in enumerate(levels):
            _box(w, f"board{k}", [depth, width, 0.02], [x0 + depth / 2, 0.0, z])
            if name == "bookshelf":
                for b in range(int(rng.integers(2, 5))):
                    h = 0.12 + 0.08 * rng.random()
                    y = -width / 2 + 0.05 + (width - 0.1) * rng.random()
                    _box(w, f"book{k}_{b}", [0.18, 0.03, h], [x0 + depth - 0.1, y, z + 0.01 + h / 2])
    elif name == "cage":
        x0, x1, y0, z1 = 0.3, 0.8, 0.45, 0.9
        for i, x in enumerate((x0, x1)):
            for j, y in enumerate((-y0, y0)):
                _box(w, f"post{i}{j}", [0.02, 0.02, z1], [x, y, z1 / 2])
        for k, z in enumerate((0.3 + 0.2 * rng.random(), z1)):
            _box(w, f"rail_front{k}", [0.02, 2 * y0, 0.02], [x1, 0.0, z])
            _box(w, f"rail_l{k}", [x1 - x0, 0.02, 0.02], [(x0 + x1) / 2, y0, z])
            _box(w, f"rail_r{k}", [x1 - x0, 0.02, 0.02], [(x0 + x1) / 2, -y0, z])
        _box(w, "roof_bar", [x1 - x0, 0.02, 0.02], [(x0 + x1) / 2, 0.0, z1])
    elif name == "thin_plate":
        # 2 mm: at OMPL's default resolution a hand edge of ~0.1 rad a step moves ~5 cm
        _box(w, "plate", [0.002, 0.5, 0.5], [0.5 + 0.05 * rng.random(), 0.0, 0.45])
    else:
        raise ValueError(f"unknown scene {name!r}; scenes: {SCENES}")
    return w


def free_configurations(robot: ck.Robot, world: ck.World, n: int, seed: int) -> np.ndarray:
    """(n, dof) random configurations free of the world and of self-collision (fingers held)."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    lo, hi = robot.limits[:, 0], robot.limits[:, 1]
    while len(out) < n:
        q = lo + (hi - lo) * rng.random((256, robot.dof))
        q[:, 7:] = FINGER
        ok = ~np.asarray(robot.check(q, world))
        out += list(q[ok])
    return np.array(out[:n])


def problems(robot: ck.Robot, name: str, n: int, seed: int = 0) -> tuple[ck.World, np.ndarray, np.ndarray]:
    """(world, starts (n, dof), goals (n, dof)): free endpoints whose straight edge collides
    where such pairs are found among 64 tries a problem (else any free pair)."""
    world = scene(name, seed)
    q = free_configurations(robot, world, 4 * n + 64, seed + 1)
    starts, goals = [], []
    rng = np.random.default_rng(seed + 2)
    for _ in range(n):
        best = None
        for _try in range(64):
            i, j = rng.choice(len(q), 2, replace=False)
            seg = q[i] + np.linspace(0, 1, 64)[:, None] * (q[j] - q[i])
            if np.any(robot.check(seg, world)):
                best = (i, j)
                break
            best = best or (i, j)
        starts.append(q[best[0]])
        goals.append(q[best[1]])
    return world, np.array(starts), np.array(goals)
