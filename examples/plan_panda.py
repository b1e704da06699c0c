"""Plan for the Franka Panda around a table and a shelf with OMPL, every edge certified.

Run: python examples/plan_panda.py        (needs: pip install "collisionkit[planning]" pybullet)

OMPL's RRTConnect asks collisionkit two questions: is this configuration free
(``Robot.check``, exact on the link meshes) and is this straight joint-space edge free
(``Robot.check_motion``: certified on the whole segment, no resolution to pick). The arm's
7 joints are planned; the finger joint is held at the start's value.
"""

import os

import numpy as np
import pybullet_data

import collisionkit as ck
from collisionkit.planning import plan

panda = ck.Robot.load(os.path.join(pybullet_data.getDataPath(), "franka_panda", "panda.urdf"))

world = ck.World()
world.add("table", ck.primitives.box_mesh([0.7, 1.2, 0.04]), ck.translation([0.65, 0.0, 0.18]))
for k, z in enumerate((0.45, 0.75)):  # a shelf of two 2 cm boards to the robot's left
    world.add(f"board{k}", ck.primitives.box_mesh([0.3, 0.6, 0.02]), ck.translation([0.0, 0.85, z]))
world.add("shelf_back", ck.primitives.box_mesh([0.3, 0.02, 0.9]), ck.translation([0.0, 1.16, 0.45]))

start = np.array([-0.65, 1.44, -2.8, -0.57, -2.18, 1.96, -0.2, 0.02])  # hand over the table, right
goal = np.array([0.48, -0.74, 1.02, -2.51, 2.62, 1.34, -2.34, 0.02])  # hand in front of the shelf
result = plan(panda, world, start, goal, joints=panda.joint_names[:7], timeout=30.0, seed=1)
print(f"solved: {result.solved} in {result.seconds:.2f} s, {len(result.path)} waypoints")

# every edge of the path is certified free on the exact meshes
edges = [panda.check_motion(a, b, world) for a, b in zip(result.path[:-1], result.path[1:], strict=True)]
print("every edge certified free:", all(e.free for e in edges))
assert result.solved and all(e.free for e in edges)
