"""Scene files: mesh parts, convex shapes and robots with poses, in YAML.

The format (paths are relative to the scene file, or absolute)::

    objects:
      - name: ring
        mesh: parts/ring.stl
        pose: {translation: [0, 0, 0], rpy: [0, 0, 0]}    # optional; or  matrix: 4x4 list
      - name: post
        box: [0.1, 0.1, 2.0]                             # full side lengths
        pose: {translation: [1, 0, 1]}
      - name: ball
        sphere: 0.25                                     # radius
      - name: pin
        capsule: {radius: 0.05, length: 0.4}             # or cylinder: {radius:, length:}
      - name: arm
        robot: kuka_iiwa/model.urdf
        joints: [0, 0.3, 0, -1.2, 0, 0.5, 0]             # or {joint_name: value, ...}
        pose: {translation: [0, 0, 0.6]}                 # the robot's base
    exclude:                                             # optional: pairs never checked
      - [arm, post]

Every mistake raises ``SceneError`` naming the file and the line.
Trajectories (one row of joint values per step) are read by ``load_trajectory``.

Files are data, never code: the YAML is checked on the parser's event stream
(``yaml.parse``) before any document is composed, and refused with a clear
error when it holds a tag (``!!python/...``, ``!foo``, even ``!!str``), nesting
deeper than ``MAX_DEPTH``, aliases that expand to more than ``MAX_NODES``
nodes, a duplicate key, or a key that is not a plain name. Only the safe
loader ever builds values.

Paths a scene may name: ``mesh:`` and ``robot:`` values only, each a regular
file (not a folder or device), relative to the scene file's folder or
absolute (``~`` expands to the home folder). A URDF's meshes resolve against
the URDF's folder. Mesh files are read by trimesh, URDFs by yourdfpy; neither
runs anything the file names.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .errors import CollisionKitError, SceneError
from .geometry.transforms import pose_from

#: Keys that name an object's shape; exactly one per object.
SHAPE_KEYS = ("mesh", "box", "sphere", "capsule", "cylinder", "robot")

#: Deepest nesting of lists and mappings a scene file may have (a real scene
#: needs 4; PyYAML's composer recurses, so 5,000 levels was a RecursionError).
MAX_DEPTH = 64

#: Most YAML nodes a scene may hold with every alias expanded (a 413-byte file
#: of nested aliases expanded to ~1e9 nodes and 1.9 GB).
MAX_NODES = 1_000_000

#: Longest rendering of a bad value in an error message.
_SHOW = 60


@dataclass(frozen=True)
class SceneObject:
    """One entry of a scene file.

    Attributes
    ----------
    name : str
    kind : {"mesh", "box", "sphere", "capsule", "cylinder", "robot"}
    pose : (4, 4) float64
        World-from-object (for a robot: world-from-base).
    source : Path or None
        Mesh or URDF file (resolved).
    params : dict
        box: ``size`` (3,); sphere: ``radius``; capsule/cylinder: ``radius``, ``length``;
        robot: ``joints`` (list of floats or {name: value}).
    line : int
        Line of the entry in the scene file (for messages).
    """

    name: str
    kind: str
    pose: NDArray[np.float64]
    source: Path | None = None
    params: dict[str, Any] = field(default_factory=dict)
    line: int = 0


def _read_text(p: Path) -> str:
    """The UTF-8 text of a scene or trajectory file; a SceneError naming ``p`` if unreadable."""
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SceneError(p, None, "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SceneError(p, None, f"cannot read: {exc}") from None


@dataclass(frozen=True)
class Scene:
    """A parsed scene file: its objects in file order and the excluded name pairs."""

    path: Path
    objects: tuple[SceneObject, ...]
    exclude: tuple[tuple[str, str], ...] = ()

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Scene:
        """Parse and check a scene file (files named in it must exist; they are loaded later)."""
        p = Path(path)
        return cls.parse(_read_text(p), p)

    @classmethod
    def parse(cls, text: str, path: str | os.PathLike[str] = "<scene>") -> Scene:
        """Parse scene YAML ``text``; relative file names resolve against ``path``'s folder."""
        import yaml

        p = Path(path)
        try:
            check_yaml_events(text, p)
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            problem = getattr(exc, "problem", None) or str(exc)
            raise SceneError(p, line, f"malformed YAML: {problem}") from None
        if root is None:
            raise SceneError(p, None, "empty scene file (expected a mapping with 'objects:')")
        top = _mapping(root, p, "the scene")
        unknown = set(top) - {"objects", "exclude"}
        if unknown:
            key = sorted(unknown)[0]
            raise SceneError(p, _line(top[key][0]), f"unknown top-level key {_show(key)} (expected 'objects', 'exclude')")
        if "objects" not in top:
            raise SceneError(p, _line(root), "missing 'objects:' list")
        objs_node = top["objects"][1]
        if not isinstance(objs_node, yaml.SequenceNode):
            raise SceneError(p, _line(objs_node), "'objects' must be a list")
        base = p.parent
        objects: list[SceneObject] = []
        seen: dict[str, int] = {}
        for i, node in enumerate(objs_node.value):
            obj = _object(node, i, base, p)
            if obj.name in seen:
                raise SceneError(p, obj.line, f"duplicate object name {_show(obj.name)} (first on line {seen[obj.name]})")
            seen[obj.name] = obj.line
            objects.append(obj)
        exclude: list[tuple[str, str]] = []
        if "exclude" in top:
            ex = top["exclude"][1]
            if not isinstance(ex, yaml.SequenceNode):
                raise SceneError(p, _line(ex), "'exclude' must be a list of [name, name] pairs")
            for pair in ex.value:
                names = _value(pair)
                if not (isinstance(names, list) and len(names) == 2 and all(isinstance(n, str) for n in names)):
                    raise SceneError(p, _line(pair), "each 'exclude' entry must be a [name, name] pair")
                for n in names:
                    if n not in seen:
                        raise SceneError(p, _line(pair), f"'exclude' names unknown object {_show(n)}")
                if names[0] == names[1]:
                    raise SceneError(p, _line(pair), f"'exclude' pairs {_show(names[0])} with itself (an object is never checked against itself)")
                exclude.append((names[0], names[1]))
        return cls(p, tuple(objects), tuple(exclude))

    def __repr__(self) -> str:
        kinds = ", ".join(f"{o.name} ({o.kind})" for o in self.objects)
        return f"Scene({str(self.path)!r}: {kinds})"


# -- the YAML event stream, checked before composing ----------------------------------------
def check_yaml_events(text: str, path: str | os.PathLike[str] = "<scene>") -> None:
    """Refuse YAML that is not plain data of bounded size, before composing it.

    Walks ``yaml.parse`` events (the parser keeps an explicit stack, so depth
    costs no recursion) with O(depth + anchors) memory: each anchor remembers
    its expanded node count, so an alias is charged its full size without
    expanding it.

    Raises
    ------
    SceneError
        A tag, nesting deeper than ``MAX_DEPTH``, more than ``MAX_NODES`` nodes
        with aliases expanded, an unknown alias, a duplicate mapping key or a
        key that is not a scalar; names the file and line.
    """
    import yaml

    p = Path(path)
    # frames: [is_mapping, children seen, expanded size, anchor, keys seen]
    stack: list[list[Any]] = []
    sizes: dict[str, int] = {}
    total = 0

    def line(ev: Any) -> int:
        return int(ev.start_mark.line) + 1

    def child(ev: Any, size: int, key_text: str | None) -> None:
        nonlocal total
        if not stack:
            return
        top = stack[-1]
        if top[0] and top[1] % 2 == 0:  # a mapping key
            if key_text is None:
                raise SceneError(p, line(ev), "mapping keys must be plain names (no lists, mappings or aliases as keys)")
            if key_text in top[4]:
                raise SceneError(p, line(ev), f"duplicate key {_show(key_text)}")
            top[4].add(key_text)
        top[1] += 1
        top[2] += size

    for ev in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(ev, (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if ev.tag is not None:
                raise SceneError(p, line(ev), f"YAML tags are not allowed in scene files (found {_show(ev.tag)})")
        if isinstance(ev, yaml.ScalarEvent):
            total += 1
            if ev.anchor is not None:
                sizes[ev.anchor] = 1
            child(ev, 1, ev.value)
        elif isinstance(ev, yaml.AliasEvent):
            if ev.anchor not in sizes:
                raise SceneError(p, line(ev), f"unknown or recursive alias *{_show(ev.anchor)}")
            size = sizes[ev.anchor]
            total += size
            child(ev, size, None)
        elif isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if len(stack) >= MAX_DEPTH:
                raise SceneError(p, line(ev), f"nesting deeper than {MAX_DEPTH} levels")
            total += 1
            stack.append([isinstance(ev, yaml.MappingStartEvent), 0, 1, ev.anchor, set(), ev])
        elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            _, _, size, anchor, _, start = stack.pop()
            if anchor is not None:
                sizes[anchor] = size
            child(start, size, None)
        if total > MAX_NODES:
            raise SceneError(p, line(ev), f"more than {MAX_NODES} YAML nodes with aliases expanded (alias bomb?)")


def _show(value: Any) -> str:
    """``repr(value)``, cut to ``_SHOW`` characters (a bad value may be huge)."""
    text = repr(value)
    return text if len(text) <= _SHOW else text[: _SHOW - 3] + "..."


# -- YAML nodes with their lines ---------------------------------------------------------
def _line(node: Any) -> int:
    return int(node.start_mark.line) + 1


def _value(node: Any) -> Any:
    import yaml

    return yaml.SafeLoader(io.StringIO("")).construct_object(node, deep=True)


def _mapping(node: Any, path: Path, what: str) -> dict[str, tuple[Any, Any]]:
    """A mapping node as {key: (key node, value node)}."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise SceneError(path, _line(node), f"{what} must be a mapping (key: value)")
    out: dict[str, tuple[Any, Any]] = {}
    for k, v in node.value:
        key = _value(k)
        if not isinstance(key, str):
            raise SceneError(path, _line(k), f"keys of {what} must be names, got {_show(key)}")
        out[key] = (k, v)
    return out


def _floats(node: Any, path: Path, what: str, shape: tuple[int, ...] | None = None) -> NDArray[np.float64]:
    raw = _value(node)
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise SceneError(path, _line(node), f"{what} must be numbers, got {_show(raw)}") from None
    if arr.dtype == object or (shape is not None and arr.shape != shape):
        want = "x".join(map(str, shape)) if shape else "numbers"
        raise SceneError(path, _line(node), f"{what} must be {want} numbers, got {_show(raw)}")
    if not np.all(np.isfinite(arr)):
        raise SceneError(path, _line(node), f"{what} must be finite, got {_show(raw)}")
    return arr


def _positive(node: Any, path: Path, what: str) -> float:
    v = _floats(node, path, what, ())
    if v <= 0:
        raise SceneError(path, _line(node), f"{what} must be positive, got {float(v)}")
    return float(v)


def _pose(node: Any, path: Path) -> NDArray[np.float64]:
    m = _mapping(node, path, "'pose'")
    unknown = set(m) - {"translation", "rpy", "matrix"}
    if unknown:
        key = sorted(unknown)[0]
        raise SceneError(path, _line(m[key][0]), f"unknown pose key {_show(key)} (expected translation, rpy or matrix)")
    if "matrix" in m:
        if len(m) > 1:
            raise SceneError(path, _line(node), "give either 'matrix' or 'translation'/'rpy', not both")
        T = _floats(m["matrix"][1], path, "pose matrix", (4, 4))
        R = T[:3, :3]
        if np.abs(R.T @ R - np.eye(3)).max() > 1e-6 or np.linalg.det(R) < 0 or not np.allclose(T[3], [0, 0, 0, 1]):
            raise SceneError(path, _line(m["matrix"][1]), "pose matrix is not a rigid transform")
        return T
    t = _floats(m["translation"][1], path, "translation", (3,)) if "translation" in m else np.zeros(3)
    rpy = _floats(m["rpy"][1], path, "rpy", (3,)) if "rpy" in m else np.zeros(3)
    return pose_from(t, rpy)


def _file(node: Any, base: Path, path: Path, what: str) -> Path:
    raw = _value(node)
    if not isinstance(raw, str) or not raw:
        raise SceneError(path, _line(node), f"{what} must be a file name, got {_show(raw)}")
    f = Path(raw).expanduser()
    if not f.is_absolute():
        f = base / f
    if not f.is_file():
        raise SceneError(path, _line(node), f"{what} file not found: {raw} (looked at {f})")
    return f


def _object(node: Any, index: int, base: Path, path: Path) -> SceneObject:
    m = _mapping(node, path, f"objects[{index}]")
    line = _line(node)
    if "name" not in m:
        raise SceneError(path, line, f"objects[{index}] has no 'name'")
    name = _value(m["name"][1])
    if not isinstance(name, str) or not name:
        raise SceneError(path, _line(m["name"][1]), f"object name must be a non-empty string, got {_show(name)}")
    kinds = [k for k in SHAPE_KEYS if k in m]
    if len(kinds) != 1:
        got = f"got {', '.join(kinds)}" if kinds else "got none"
        raise SceneError(path, line, f"object {_show(name)} needs exactly one of {', '.join(SHAPE_KEYS)} ({got})")
    kind = kinds[0]
    allowed = {"name", "pose", kind} | ({"joints"} if kind == "robot" else set())
    unknown = set(m) - allowed
    if unknown:
        key = sorted(unknown)[0]
        raise SceneError(path, _line(m[key][0]), f"object {_show(name)}: unknown key {_show(key)}")
    pose = _pose(m["pose"][1], path) if "pose" in m else np.eye(4)
    shape_node = m[kind][1]
    params: dict[str, Any] = {}
    source = None
    if kind == "mesh":
        source = _file(shape_node, base, path, "mesh")
    elif kind == "robot":
        source = _file(shape_node, base, path, "robot URDF")
        if "joints" in m:
            jn = m["joints"][1]
            raw = _value(jn)
            if isinstance(raw, dict):
                joints: Any = {
                    k: float(_floats(v, path, f"joint {_show(k)}", ())) for k, (_, v) in _mapping(jn, path, "'joints'").items()
                }
            else:
                joints = [float(x) for x in _floats(jn, path, "joints").reshape(-1)]
            params["joints"] = joints
            params["joints_line"] = _line(jn)
    elif kind == "box":
        size = _floats(shape_node, path, "box size", (3,))
        if np.any(size <= 0):
            raise SceneError(path, _line(shape_node), f"box sides must be positive, got {size.tolist()}")
        params["size"] = size
    elif kind == "sphere":
        params["radius"] = _positive(shape_node, path, "sphere radius")
    else:  # capsule, cylinder
        sm = _mapping(shape_node, path, f"'{kind}'")
        for key in ("radius", "length"):
            if key not in sm:
                raise SceneError(path, _line(shape_node), f"{kind} needs '{key}'")
            params[key] = _positive(sm[key][1], path, f"{kind} {key}")
        extra = set(sm) - {"radius", "length"}
        if extra:
            key = sorted(extra)[0]
            raise SceneError(path, _line(sm[key][0]), f"{kind}: unknown key {_show(key)}")
    return SceneObject(name, kind, pose, source, params, line)


# -- trajectories --------------------------------------------------------------------------
@dataclass(frozen=True)
class Trajectory:
    """Joint values per step: ``values`` (steps, dof), ``names`` from the header (or None)."""

    path: Path
    values: NDArray[np.float64]
    names: tuple[str, ...] | None
    lines: NDArray[np.int64]  # file line of each step (for messages)
    header_line: int | None = None


def load_trajectory(path: str | os.PathLike[str]) -> Trajectory:
    """Read a CSV trajectory: one row of joint values per step, an optional header of joint names.

    Blank lines and lines starting with '#' are skipped. Every row must have the
    same number of values, all finite numbers.
    """
    p = Path(path)
    text = _read_text(p)
    rows: list[list[float]] = []
    lines: list[int] = []
    names: tuple[str, ...] | None = None
    header_line = None
    width = None
    for lineno, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        cells = [c.strip() for c in row]
        if not cells or all(c == "" for c in cells) or cells[0].startswith("#"):
            continue
        try:
            vals = [float(c) for c in cells]
        except ValueError:
            if not rows and names is None and not any(_is_number(c) for c in cells):
                dup = next((c for i, c in enumerate(cells) if c in cells[:i]), None)
                if dup is not None:
                    raise SceneError(p, lineno, f"joint {_show(dup)} named more than once in the header") from None
                if "" in cells:
                    raise SceneError(p, lineno, "empty joint name in the header") from None
                names = tuple(cells)
                header_line = lineno
                width = len(cells)
                continue
            bad = next(c for c in cells if not _is_number(c))
            raise SceneError(p, lineno, f"not a number: {_show(bad)}") from None
        if width is None:
            width = len(vals)
        if len(vals) != width:
            raise SceneError(p, lineno, f"expected {width} values, got {len(vals)}")
        if not all(np.isfinite(vals)):
            raise SceneError(p, lineno, "values must be finite")
        rows.append(vals)
        lines.append(lineno)
    if not rows:
        raise SceneError(p, None, "no trajectory rows")
    return Trajectory(p, np.asarray(rows, dtype=np.float64), names, np.asarray(lines, dtype=np.int64), header_line)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


# -- from a scene to shapes and a World -------------------------------------------------------
@dataclass
class LoadedScene:
    """A scene with its shapes loaded.

    Attributes
    ----------
    scene : Scene
    shapes : dict[str, shape]
        Every non-robot object's shape (Mesh or convex shape), by name.
    poses : dict[str, (4, 4)]
        Their poses.
    robots : dict[str, (Robot, base pose (4, 4), joints (dof,))]
        Every robot with its base pose and the scene's joint values.
    """

    scene: Scene
    shapes: dict[str, Any]
    poses: dict[str, NDArray[np.float64]]
    robots: dict[str, tuple[Any, NDArray[np.float64], NDArray[np.float64]]]

    def robot_link_objects(self, name: str, q: ArrayLike | None = None) -> list[tuple[str, Any, NDArray[np.float64]]]:
        """(object name "robot/link", mesh, world pose) for each link with a mesh at joints ``q``."""
        robot, base, q0 = self.robots[name]
        poses = robot.link_poses(q0 if q is None else np.asarray(q, dtype=np.float64), base)
        return [
            (f"{name}/{link}", robot.link_meshes[link], poses[i])
            for i, link in enumerate(robot.links)
            if robot.link_meshes.get(link) is not None
        ]

    def world(self, broadphase: str = "sap", *, robots: bool = True) -> Any:
        """A World of every object (robot links as "robot/link"; each robot's
        ``adjacent_pairs`` and ``allowed_pairs`` excluded) plus the scene's
        ``exclude`` pairs."""
        from .world import World

        w = World(broadphase=broadphase)
        for name, shape in self.shapes.items():
            w.add(name, shape, self.poses[name])
        if robots:
            for rname, (robot, _, _) in self.robots.items():
                for oname, mesh, pose in self.robot_link_objects(rname):
                    w.add(oname, mesh, pose)
                for la, lb in robot.adjacent_pairs | robot.allowed_pairs:
                    a, b = f"{rname}/{la}", f"{rname}/{lb}"
                    if a in w.names and b in w.names:
                        w.exclude(a, b)
        for a, b in self.scene.exclude:
            for x in self._expand(a, w.names):
                for y in self._expand(b, w.names):
                    w.exclude(x, y)
        return w

    def _expand(self, name: str, names: tuple[str, ...]) -> list[str]:
        """An object name, or every link object of a robot name."""
        if name in self.robots:
            return [n for n in names if n.startswith(name + "/")]
        return [name] if name in names else []


def _source(o: SceneObject) -> Path:
    """The file of a mesh or robot object (a SceneObject built by hand may lack it)."""
    if o.source is None:
        raise ValueError(f"a {o.kind} object needs a source file")
    return o.source


def load_scene(scene: Scene | str | os.PathLike[str]) -> LoadedScene:
    """Load every file a scene names (meshes, URDFs); errors name the scene file and line."""
    from .convex.shapes import Box, Capsule, Cylinder, Sphere
    from .io import load_mesh
    from .robot import Robot

    sc = scene if isinstance(scene, Scene) else Scene.load(scene)
    shapes: dict[str, Any] = {}
    poses: dict[str, NDArray[np.float64]] = {}
    robots: dict[str, tuple[Any, NDArray[np.float64], NDArray[np.float64]]] = {}
    for o in sc.objects:
        try:
            if o.kind == "mesh":
                shapes[o.name] = load_mesh(_source(o))
            elif o.kind == "box":
                shapes[o.name] = Box(o.params["size"])
            elif o.kind == "sphere":
                shapes[o.name] = Sphere(o.params["radius"])
            elif o.kind == "capsule":
                shapes[o.name] = Capsule(o.params["radius"], o.params["length"])
            elif o.kind == "cylinder":
                shapes[o.name] = Cylinder(o.params["radius"], o.params["length"])
            else:
                robot = Robot.load(_source(o))
                q = joint_vector(robot, o.params.get("joints"), sc.path, o.params.get("joints_line", o.line))
                robots[o.name] = (robot, o.pose, q)
                continue
        except SceneError:
            raise
        except (CollisionKitError, ValueError, OSError) as exc:
            raise SceneError(sc.path, o.line, f"object {_show(o.name)}: {exc}") from None
        poses[o.name] = o.pose
    # robot links enter a World as "robot/link": a plain object may not take such a name
    for rname, (robot, _, _) in robots.items():
        for link in robot.links:
            clash = f"{rname}/{link}"
            if clash in shapes:
                line = next(o.line for o in sc.objects if o.name == clash)
                raise SceneError(sc.path, line, f"object name {_show(clash)} clashes with link {_show(link)} of robot {_show(rname)}")
    return LoadedScene(sc, shapes, poses, robots)


def joint_vector(robot: Any, joints: Any, path: Path, line: int | None) -> NDArray[np.float64]:
    """The (dof,) configuration from a list (joint_names order) or {name: value}; zeros if None."""
    q = np.zeros(robot.dof)
    if joints is None:
        return q
    if isinstance(joints, dict):
        for name, value in joints.items():
            if name not in robot.joint_names:
                raise SceneError(path, line, f"robot {robot.name!r} has no joint {_show(name)} (joints: {', '.join(robot.joint_names)})")
            q[robot.joint_names.index(name)] = value
        return q
    if len(joints) != robot.dof:
        raise SceneError(path, line, f"robot {robot.name!r} has {robot.dof} joints, got {len(joints)} values")
    return np.asarray(joints, dtype=np.float64)


def trajectory_for(robot: Any, traj: Trajectory) -> NDArray[np.float64]:
    """The (steps, dof) configurations of a trajectory file for ``robot`` (header names map columns)."""
    if traj.names is not None:
        unknown = [n for n in traj.names if n not in robot.joint_names]
        if unknown:
            raise SceneError(traj.path, traj.header_line, f"unknown joint {_show(unknown[0])} (robot {robot.name!r} has {', '.join(robot.joint_names)})")
        q = np.zeros((traj.values.shape[0], robot.dof))
        for c, n in enumerate(traj.names):
            q[:, robot.joint_names.index(n)] = traj.values[:, c]
        return q
    if traj.values.shape[1] != robot.dof:
        raise SceneError(traj.path, int(traj.lines[0]), f"robot {robot.name!r} has {robot.dof} joints, rows have {traj.values.shape[1]} values")
    return traj.values
