"""Write the example files the README and docs/guide.md use (run once; the output is committed).

Run: python examples/data/make_data.py

* ``ring.obj``: a small torus (256 triangles), ``plate.stl``: a thin plate
  (12 triangles); the plate cuts the ring at identity poses and clears it
  lifted by 0.1.
* ``path.csv``: a trajectory of ``arm.urdf`` (header of joint names, 60 steps)
  that swings the arm into ``post`` of ``cell.yaml``.

``arm.urdf`` and ``cell.yaml`` are written by hand.
"""

from pathlib import Path

import numpy as np
import trimesh

import collisionkit as ck

HERE = Path(__file__).resolve().parent


def export(mesh: ck.Mesh, path: Path) -> None:
    trimesh.Trimesh(np.asarray(mesh.vertices), np.asarray(mesh.faces), process=False).export(path)


export(ck.primitives.torus_mesh(0.15, 0.03, rings=16, segments=8), HERE / "ring.obj")
export(ck.primitives.box_mesh([0.4, 0.4, 0.02]), HERE / "plate.stl")

# Waypoints (step, yaw, shoulder, elbow), linear in between: lean out, then swing
# towards +y, where the post stands at a yaw of 1.1 rad.
way = np.array([[0, 0.0, 0.2, 0.2], [20, 0.4, 1.0, 0.6], [59, 1.6, 1.0, 0.6]])
steps = np.arange(60)
q = np.stack([np.interp(steps, way[:, 0], way[:, k]) for k in (1, 2, 3)], axis=1)
rows = ["yaw,shoulder,elbow"] + [",".join(f"{v:.4f}" for v in row) for row in q]
(HERE / "path.csv").write_text("\n".join(rows) + "\n")
print(f"wrote ring.obj, plate.stl, path.csv to {HERE}")
