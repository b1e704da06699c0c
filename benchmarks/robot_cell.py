"""The robot cell of seed 000's experiment: an arm with a gripper loading goods
from a shelf onto a tray on a table, inside posts and fences.

The seed's cell (a Siemens Kineo scene of a 6-axis loading robot: 28 parts,
2,252 surfaces, 30,535 triangles) is not public; this one is built from
pybullet_data's models so that anyone can rebuild it:

=====================  =========================================================
robot (8 parts)        KUKA LBR iiwa 7 (kuka_iiwa/model.urdf, collision STLs)
gripper (5 parts)      PR2 parallel gripper (pr2_gripper.urdf), on the flange
shelf                  kiva_shelf/meshes/pod_lowres.stl (as kiva_shelf/model.sdf turns it)
table, tray            table/table.urdf (visual geometry: top and legs), tray/traybox.urdf
pedestal               the arm's base, 40 cm high (a grid box)
goods (5 boxes)        boxes with every side a 6 x 6 grid (collisionkit-made)
posts (4), fences (2)  cylinders at the cell corners; grid panels between them
=====================  =========================================================

28 parts. Surfaces come from ``Mesh.surfaces`` (segmentation by the 30-degree
feature-angle rule, ``collisionkit.geometry.segmentation``): the shelf's
low-resolution mesh alone has ~2,500 creased regions.

Trajectory (``steps`` poses, default 300): home -> in front of the shelf ->
the gripper's fingers around the first box on the shelf (contact) -> lift
and retract with the box (fingers closed on it: contact every step) -> over
the tray -> lower until the box sits in the tray (contact) -> release, retreat,
home. Joint targets come from a damped least-squares inverse kinematics on
collisionkit's own forward kinematics; between them the joints move linearly.

Per step the queried pairs are every moving part (arm links, gripper links,
the carried box) against every part that is not rigidly attached to it
(``Cell.pairs``): 14 moving x 14 static parts plus the carried box against
the 13 robot and gripper links; the arm's base link sits on the pedestal
(mounted, a 1 mm gap); self-collision of the arm is issue
8's subject and is not queried.

``python -m benchmarks.robot_cell`` prints the inventory and writes a PNG of
the step with the most contacts (``--png PATH``).
"""

from __future__ import annotations

import argparse
import functools
import os
import warnings
from dataclasses import dataclass

import numpy as np

import collisionkit as ck


def _data(*parts: str) -> str:
    import pybullet_data

    return os.path.join(pybullet_data.getDataPath(), *parts)


def grid_box(extents, n: int = 6, name: str = "box") -> ck.Mesh:
    """A closed box of full ``extents`` centred at the origin, each side an n x n grid
    of squares (2 n^2 triangles a side, outward normals)."""
    e = np.asarray(extents, float) / 2
    verts, faces = [], []
    s = np.linspace(-1.0, 1.0, n + 1)
    for axis in range(3):
        u, v = (axis + 1) % 3, (axis + 2) % 3
        for sign in (-1.0, 1.0):
            base = len(verts)
            for i in range(n + 1):
                for j in range(n + 1):
                    p = np.zeros(3)
                    p[axis] = sign
                    p[u] = s[i]
                    p[v] = s[j]
                    verts.append(p * e)
            for i in range(n):
                for j in range(n):
                    a = base + i * (n + 1) + j
                    b, c, d = a + (n + 1), a + (n + 1) + 1, a + 1
                    if sign > 0:
                        faces += [[a, b, c], [a, c, d]]
                    else:
                        faces += [[a, c, b], [a, d, c]]
    return ck.Mesh(np.array(verts), np.array(faces), name=name)


def cylinder(radius: float, height: float, sections: int = 32, name: str = "post") -> ck.Mesh:
    import trimesh

    tm = trimesh.creation.cylinder(radius=radius, height=height, sections=sections)
    return ck.Mesh(tm.vertices, tm.faces, name=name)


def _pose(xyz=(0.0, 0.0, 0.0), rot=None) -> np.ndarray:
    T = np.eye(4) if rot is None else np.array(rot, float)
    T = T.copy()
    T[:3, 3] = xyz
    return T


#: Gripper mount on the iiwa's last link: the PR2 gripper's approach axis (+x)
#: along the flange's +z, 4.5 cm out (the flange face of link_7's mesh).
GRIPPER_MOUNT = _pose((0.0, 0.0, 0.045), ck.rotation([0, 1, 0], -np.pi / 2))
#: Tool centre point between the finger tips, in the gripper's base frame.
TOOL_IN_GRIPPER = _pose((0.30, 0.0, 0.0))
GRIP_OPEN = 0.45
#: Height of the arm's base above the floor (the pedestal's top, plus 1 mm).
PEDESTAL = 0.40
GRIP_CLOSED = 0.06


@dataclass
class Cell:
    """The parts, their static poses, and the trajectory's poses for every part."""

    names: list[str]
    meshes: list[ck.Mesh]
    kinds: list[str]  # "robot", "gripper", "goods" (moving box), "static"
    poses: np.ndarray  # (steps, P, 4, 4) world-from-part per step
    pairs: np.ndarray  # (K, 2) part indices queried every step (moving part first)
    q: np.ndarray  # (steps, 7) arm joints
    grip: np.ndarray  # (steps,) gripper opening

    @property
    def steps(self) -> int:
        return int(self.poses.shape[0])

    def inventory(self) -> dict[str, int]:
        return {
            "parts": len(self.meshes),
            "surfaces": int(sum(np.unique(m.surfaces).size for m in self.meshes)),
            "triangles": int(sum(m.n_faces for m in self.meshes)),
            "pairs_per_step": int(self.pairs.shape[0]),
            "steps": self.steps,
        }


@functools.lru_cache(maxsize=2)
def robots() -> tuple[ck.Robot, ck.Robot]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ck.Robot.load(_data("kuka_iiwa", "model.urdf")), ck.Robot.load(_data("pr2_gripper.urdf"))


def tool_pose(arm: ck.Robot, q: np.ndarray) -> np.ndarray:
    """(N, 4, 4) world-from-tool for arm configurations (N, 7) on the pedestal."""
    T = arm.link_poses(np.atleast_2d(q), base=_pose((0.0, 0.0, PEDESTAL)))[:, -1]
    return T @ GRIPPER_MOUNT @ TOOL_IN_GRIPPER


def solve_ik(arm: ck.Robot, target: np.ndarray, q0: np.ndarray, iters: int = 120) -> np.ndarray:
    """Damped least squares on position and the tool's approach (x) and closing (y) axes;
    the Jacobian by forward differences, all 8 configurations in one batched FK call."""
    q = np.array(q0, float)
    lo, hi = arm.limits[:, 0] + 1e-3, arm.limits[:, 1] - 1e-3
    h = 1e-6

    def errs(T):
        e_pos = target[:3, 3] - T[:, :3, 3]
        e_rot = 0.5 * (np.cross(T[:, :3, 0], target[:3, 0]) + np.cross(T[:, :3, 1], target[:3, 1]))
        return np.concatenate([e_pos, 0.3 * e_rot], axis=1)

    for _ in range(iters):
        batch = np.repeat(q[None], 8, axis=0)
        batch[1:] += h * np.eye(7)
        E = errs(tool_pose(arm, batch))
        e = E[0]
        if np.linalg.norm(e) < 1e-7:
            break
        J = (E[0][:, None] - E[1:].T) / h  # d(tool)/dq = -d(e)/dq
        step = J.T @ np.linalg.solve(J @ J.T + 1e-3 * np.eye(6), e)
        q = np.clip(q + step, lo, hi)
    return q


def solve_ik_elbow_up(arm: ck.Robot, target: np.ndarray, q_prev: np.ndarray) -> np.ndarray:
    """IK from several seeds (the previous configuration, and the home posture turned
    to each quadrant); of the solutions that reach the target, the one whose wrist and
    elbow stay highest (clear of tables), then the one closest to ``q_prev``."""
    seeds = [q_prev]
    for q1 in (-np.pi / 2, np.pi / 2, 0.0, np.pi - 0.1):
        seeds.append(np.array([q1, 0.5, 0.0, -1.4, 0.0, 1.0, 0.0]))
    best, best_score = None, -np.inf
    for seed in seeds:
        q = solve_ik(arm, target, seed)
        miss = float(np.linalg.norm(tool_pose(arm, q)[0, :3, 3] - target[:3, 3]))
        T = arm.link_poses(q, base=_pose((0.0, 0.0, PEDESTAL)))
        clearance = float(T[3:7, 2, 3].min())
        score = clearance - 0.02 * float(np.abs(q - q_prev).sum()) - 100.0 * miss
        if score > best_score:
            best, best_score = q, score
    return best


def _frame(approach, closing) -> np.ndarray:
    """Rotation whose x axis is ``approach`` and y axis ``closing`` (orthonormalised)."""
    x = np.asarray(approach, float)
    x /= np.linalg.norm(x)
    y = np.asarray(closing, float)
    y = y - x * (x @ y)
    y /= np.linalg.norm(y)
    R = np.eye(4)
    R[:3, 0], R[:3, 1], R[:3, 2] = x, y, np.cross(x, y)
    return R


@functools.lru_cache(maxsize=4)
def build_cell(steps: int = 300) -> Cell:
    arm, grip = robots()
    names, meshes, kinds, static = [], [], [], []

    def add(name, mesh, kind, pose=None):
        names.append(name)
        meshes.append(mesh)
        kinds.append(kind)
        static.append(np.eye(4) if pose is None else pose)

    for link in arm.links:
        add(link.replace("lbr_iiwa_", "iiwa_"), arm.link_meshes[link], "robot")
    base = _pose((0.0, 0.0, PEDESTAL))
    for link in grip.links:
        add("gripper_" + link, grip.link_meshes[link], "gripper")
    # goods: the first one is picked (shelf board top at z = 0.829 in the shelf's frame)
    goods = [((0.0, 0.64, 0.829 + 0.06), (0.10, 0.10, 0.12))]
    goods += [((-0.25, 0.70, 0.829 + 0.06), (0.12, 0.12, 0.12)), ((0.25, 0.70, 0.829 + 0.07), (0.12, 0.14, 0.14))]
    table_top = 0.625
    goods += [((-0.55, -0.90, table_top + 0.05), (0.10, 0.14, 0.10)), ((0.55, -0.95, table_top + 0.05), (0.16, 0.10, 0.10))]
    for k, (xyz, ext) in enumerate(goods):
        add(f"box_{k}", grid_box(ext, 6, name=f"box_{k}"), "goods" if k == 0 else "static", _pose(xyz))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shelf = ck.load_mesh(_data("kiva_shelf", "meshes", "pod_lowres.stl"))
        table = ck.Robot.load(_data("table", "table.urdf"), geometry="visual")
        tray = ck.Robot.load(_data("tray", "traybox.urdf"))
    # kiva_shelf/model.sdf turns the pod by +90 degrees about x (its y axis up)
    add("shelf", shelf, "static", _pose((0.0, 0.95, 0.0), ck.rotation([1, 0, 0], np.pi / 2)))
    add("table", table.link_meshes[table.base_link], "static", _pose((0.0, -0.95, 0.0)))
    add("pedestal", grid_box((0.30, 0.30, PEDESTAL - 0.001), 4, name="pedestal"), "static", _pose((0.0, 0.0, (PEDESTAL - 0.001) / 2)))
    add("tray", tray.link_meshes[tray.base_link], "static", _pose((0.0, -0.75, table_top)))
    for k, (x, y) in enumerate([(-1.2, -1.45), (1.2, -1.45), (-1.2, 1.55), (1.2, 1.55)]):
        add(f"post_{k}", cylinder(0.05, 1.6, 32, name=f"post_{k}"), "static", _pose((x, y, 0.8)))
    for k, x in enumerate([-1.2, 1.2]):
        add(f"fence_{k}", grid_box((0.03, 2.9, 1.2), 14, name=f"fence_{k}"), "static", _pose((x, 0.05, 0.7)))

    # -- trajectory: joint targets by IK, linear joint interpolation between them
    box0 = np.array(goods[0][0])
    horizontal = _frame([0, 1, 0], [1, 0, 0])  # approach +y (into the shelf), fingers close along x
    down = _frame([0, 0, -1], [1, 0, 0])
    tray_xyz = np.array([0.0, -0.75, table_top + 0.06 + 0.01])
    q_home = np.array([0.0, 0.4, 0.0, -1.4, 0.0, 1.2, 0.0])
    keys = [("home", q_home, GRIP_OPEN, False)]
    targets = [
        ("pre-grasp", _pose(box0 - [0, 0.25, 0], horizontal), GRIP_OPEN, False),
        ("grasp", _pose(box0 + [0, 0.005, 0], horizontal), GRIP_OPEN, False),
        ("close", None, GRIP_CLOSED, True),
        ("lift", _pose(box0 + [0, 0.005, 0.05], horizontal), GRIP_CLOSED, True),
        ("retract", _pose(box0 + [0, -0.30, 0.08], horizontal), GRIP_CLOSED, True),
        ("turn", _pose([0.45, -0.2, 1.25], down), GRIP_CLOSED, True),
        ("over-tray", _pose(tray_xyz + [0, 0, 0.35], down), GRIP_CLOSED, True),
        ("place", _pose(tray_xyz - [0, 0, 0.005], down), GRIP_CLOSED, True),
        ("release", None, GRIP_OPEN, False),
        ("retreat", _pose(tray_xyz + [0, 0, 0.35], down), GRIP_OPEN, False),
        ("home", None, GRIP_OPEN, False),
    ]
    q = q_home
    for name, target, g, carry in targets:
        if target is not None:
            q = solve_ik_elbow_up(arm, target, q)
            miss = float(np.linalg.norm(tool_pose(arm, q)[0, :3, 3] - target[:3, 3]))
            if miss > 1e-3:
                warnings.warn(f"robot cell: IK for {name!r} misses its target by {miss:.3f} m", stacklevel=2)
        elif name == "home":
            q = q_home
        keys.append((name, q, g, carry))
    seg = max(1, (steps - 1) // (len(keys) - 1))
    qs, gs, carries = [], [], []
    for (_, q0, g0, _c0), (_, q1, g1, c1) in zip(keys[:-1], keys[1:], strict=True):
        for s in range(seg):
            w = s / seg
            qs.append((1 - w) * q0 + w * q1)
            gs.append((1 - w) * g0 + w * g1)
            carries.append(c1 and _c0)
    while len(qs) < steps:
        qs.append(keys[-1][1])
        gs.append(keys[-1][2])
        carries.append(False)
    qs_arr, gs_arr = np.array(qs[:steps]), np.array(gs[:steps])
    carries_arr = np.array(carries[:steps])

    poses = np.repeat(np.stack(static)[None], steps, axis=0)
    arm_T = arm.link_poses(qs_arr, base=base)  # (steps, 8, 4, 4)
    poses[:, : len(arm.links)] = arm_T
    mount = arm_T[:, -1] @ GRIPPER_MOUNT
    grip_q = np.stack([gs_arr, gs_arr], axis=1)
    grip_T = grip.link_poses(grip_q)
    g0 = len(arm.links)
    poses[:, g0 : g0 + len(grip.links)] = mount[:, None] @ grip_T
    # the picked box: on the shelf until grasped, then rigidly with the tool, then in the tray
    ibox = names.index("box_0")
    tool = mount @ TOOL_IN_GRIPPER
    held = None
    last = poses[0, ibox].copy()
    for s in range(steps):
        if carries_arr[s]:
            if held is None:
                held = np.linalg.inv(tool[s]) @ last
            poses[s, ibox] = tool[s] @ held
        else:
            held = None  # released (or not yet grasped): the box stays where it is
            poses[s, ibox] = last
        last = poses[s, ibox].copy()
    moving = [i for i, k in enumerate(kinds) if k != "static"]
    fixed = [i for i, k in enumerate(kinds) if k == "static"]
    robot_parts = [i for i, k in enumerate(kinds) if k in ("robot", "gripper")]
    pairs = [(i, j) for i in moving for j in fixed]
    pairs += [(ibox, j) for j in robot_parts]
    return Cell(names, meshes, kinds, np.ascontiguousarray(poses), np.array(pairs, np.int64), qs_arr, gs_arr)


def contacts_per_step(cell: Cell, strategy="descent") -> tuple[np.ndarray, np.ndarray]:
    """(steps,) triangle pairs found per step and (steps, K) bool: pairs colliding."""
    total = np.zeros(cell.steps, np.int64)
    hit = np.zeros((cell.steps, cell.pairs.shape[0]), bool)
    for k, (i, j) in enumerate(cell.pairs):
        c = ck.contacts(cell.meshes[i], cell.meshes[j], cell.poses[:, i], cell.poses[:, j], strategy=strategy)
        total += c.counts
        hit[:, k] = c.counts > 0
    return total, hit


def render_step(cell: Cell, step: int, path: str, strategy="descent") -> str:
    """PNG of one step: colliding parts orange, their intersecting triangles red."""
    marks: dict[int, object] = {}
    for i, j in cell.pairs:
        c = ck.contacts(cell.meshes[i], cell.meshes[j], cell.poses[step, i], cell.poses[step, j], strategy=strategy)
        if len(c):
            for part, faces in ((i, c.face_a), (j, c.face_b)):
                prev = marks.get(int(part))
                marks[int(part)] = np.union1d(prev, faces) if isinstance(prev, np.ndarray) else np.asarray(faces)
    title = f"robot cell, step {step}: {len(marks)} parts in contact (orange; triangles red)"
    out = ck.render_scene(cell.meshes, list(cell.poses[step]), highlight=marks, path=path, title=title, elev=32, azim=-110, size=(9, 7), dpi=110)
    return str(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--png", default=None, help="write a picture of the step with the most contacts")
    args = ap.parse_args(argv)
    cell = build_cell(args.steps)
    print(cell.inventory())
    for name, mesh, kind in zip(cell.names, cell.meshes, cell.kinds, strict=True):
        print(f"  {name:18s} {kind:8s} {mesh.n_faces:6d} triangles {np.unique(mesh.surfaces).size:5d} surfaces")
    total, hit = contacts_per_step(cell)
    print(f"steps with contact: {int((total > 0).sum())}/{cell.steps}; most pairs at step {int(total.argmax())} ({int(total.max())} triangle pairs)")
    if args.png:
        print(render_step(cell, int(total.argmax()), args.png))


if __name__ == "__main__":
    main()
