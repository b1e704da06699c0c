"""Robots from URDF files: link meshes and batched forward kinematics.

``Robot.load(path)`` reads a URDF with yourdfpy (parsing only: no scene graph,
no meshes through yourdfpy) and keeps, per link, one collision ``Mesh`` in the
link frame (its ``<collision>`` elements merged; the ``<visual>`` elements when
a link has no collision geometry). ``robot.link_poses(q)`` evaluates the joint
chain for a batch of configurations in a few numpy operations per joint.

Conventions (URDF): a joint's pose in its parent link's frame is
``origin @ motion(q)``; revolute and continuous joints rotate about ``axis``
(unit vector in the joint frame) by q radians, prismatic joints translate
along it by q metres; mimic joints take ``multiplier * q[mimicked] + offset``.
Link poses are world-from-link rigid transforms (``p_world = T @ [p, 1]``), the
convention of every pose in collisionkit, so ``link_poses(q)[:, i]`` is the
pose to pass with ``link_meshes[links[i]]`` to any query.

The configuration vector holds the actuated (non-fixed, non-mimic) joints in
the file's order: ``robot.joint_names``.

Self-collision (``check.py``) never tests two *adjacent* links: links whose
kinematic path passes only through links without geometry, whatever the joint
types (the Panda's ``panda_link7 -> panda_link8 -> panda_hand``, joined by two
fixed joints through the geometry-less ``panda_link8``, are adjacent). Pairs
that may touch by design beyond those are ``allowed_pairs``: read from MoveIt's
SRDF (``Robot.load(urdf, srdf=...)``), found by sampling
(``allowed_pairs_from_samples``), or given per call (``check(..., allowed=...)``).
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..constants import WORLD_BOX_SLACK
from ..errors import InvalidMeshError, InvalidRobotError
from ..geometry.frozen import immutable
from ..geometry.mesh import Mesh
from ..kernels.core.linalg import POSE_BAD_LAST_ROW, POSE_NOT_FINITE, POSE_NOT_RIGID, POSE_OK, pose_error
from ..kernels.robot import kinematics
from ..query import batch, deferred
from . import checker as _checker
from .srdf import MAX_SRDF_BYTES, parse_xml, read_xml_file

if TYPE_CHECKING:  # the records and the World, for the public signatures only
    from ..world import World
    from .check import RobotCheck
    from .checker import RobotChecker
    from .motion import MotionCheck, RobotClearance

_MOVING = ("revolute", "continuous", "prismatic")
#: the default of the link-pair and object-name options: an empty tuple known by identity
#: (PERF: ``Robot.check`` without options builds no options dict)
_NONE: tuple = ()


@dataclass(frozen=True)
class Joint:
    """One URDF joint (frozen). ``index`` is its slot in the configuration
    vector (-1 for fixed and mimic joints)."""

    name: str
    type: str
    parent: str
    child: str
    origin: NDArray[np.float64]  # (4, 4) child joint frame in the parent link's frame
    axis: NDArray[np.float64]  # (3,) unit axis in the joint frame
    lower: float
    upper: float
    index: int
    mimic: str | None = None
    multiplier: float = 1.0
    offset: float = 0.0

    def __post_init__(self) -> None:
        """Refuse a joint that is not what it says (issue 31): a wrong joint gave NaN link
        poses, and a NaN pose collides with nothing, so ``check`` answered "clear".

        Keeps private read-only copies of ``origin`` and ``axis`` (nobody holds a
        writable view of them: flipping ``flags.writeable`` back raises).
        """
        if self.type not in (*_MOVING, "fixed"):
            raise InvalidRobotError(f"joint {self.name!r}: type {self.type!r} is not supported")
        origin = _frozen(self.origin, (4, 4), f"joint {self.name!r}: origin")
        # a writable copy: a read-only array would compile pose_error a second signature
        code = pose_error(np.array(origin))
        if code != POSE_OK:
            raise InvalidRobotError(f"joint {self.name!r}: origin {_ORIGIN_REASON.get(code, 'is invalid')}")
        axis = _frozen(self.axis, (3,), f"joint {self.name!r}: axis")
        if not np.all(np.isfinite(axis)):
            raise InvalidRobotError(f"joint {self.name!r}: axis {axis.tolist()} is not finite")
        if self.type in _MOVING and abs(float(np.linalg.norm(axis)) - 1.0) > 1e-9:
            raise InvalidRobotError(f"joint {self.name!r}: axis {axis.tolist()} is not a unit vector")
        for what in ("lower", "upper", "multiplier", "offset"):
            value = getattr(self, what)
            if isinstance(value, complex) or np.iscomplexobj(value):
                raise InvalidRobotError(f"joint {self.name!r}: {what} {value!r} is not a real number")
            object.__setattr__(self, what, float(value))
        if math.isnan(self.lower) or math.isnan(self.upper):
            raise InvalidRobotError(f"joint {self.name!r}: limit is NaN (lower {self.lower}, upper {self.upper})")
        if self.lower == math.inf or self.upper == -math.inf:
            raise InvalidRobotError(f"joint {self.name!r}: limits [{self.lower}, {self.upper}] hold no value")
        if self.lower > self.upper:
            raise InvalidRobotError(f"joint {self.name!r}: lower limit {self.lower} > upper limit {self.upper}")
        if not (math.isfinite(self.multiplier) and math.isfinite(self.offset)):
            raise InvalidRobotError(f"joint {self.name!r}: mimic multiplier/offset not finite")
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "axis", axis)

    def __setstate__(self, state: dict) -> None:
        # unpickled arrays are writable copies: freeze them again (Dask ships robots)
        for key, value in state.items():
            object.__setattr__(self, key, value)
        object.__setattr__(self, "origin", _frozen(self.origin, (4, 4), "origin"))
        object.__setattr__(self, "axis", _frozen(self.axis, (3,), "axis"))


_ORIGIN_REASON = {
    POSE_NOT_FINITE: "is not finite",
    POSE_NOT_RIGID: "is not a rigid transform (rotation block not orthonormal with det +1)",
    POSE_BAD_LAST_ROW: "has a last row other than [0, 0, 0, 1]",
}


def _frozen(value: Any, shape: tuple[int, ...], what: str) -> NDArray[np.float64]:
    """``value`` as a float64 copy over immutable bytes (``geometry.frozen.immutable``:
    numpy refuses to make it writable again), checked for shape and complex values."""
    arr = np.asarray(value)
    if np.iscomplexobj(arr):
        raise InvalidRobotError(f"{what} holds complex values")
    try:
        own = np.array(arr, dtype=np.float64, order="C")
    except (TypeError, ValueError) as exc:
        raise InvalidRobotError(f"{what} is not numeric: {exc}") from None
    if own.shape != shape:
        raise InvalidRobotError(f"{what} must have shape {shape}, got {own.shape}")
    return immutable(own)


#: Largest URDF read (bytes), the SRDF's rule: real robots' URDFs are tens of kilobytes.
MAX_URDF_BYTES = MAX_SRDF_BYTES


def _read_urdf(path: str) -> Any:
    """The yourdfpy model of the URDF at ``path``, read strictly and in bounded memory.

    The file is read as data by the SRDF's rules (``srdf.read_xml_file`` and
    ``srdf.parse_xml``: at most ``MAX_URDF_BYTES``, no DOCTYPE, so no entity
    expansion and no external entity, a ``<robot>`` root, well-formed XML), then
    given to yourdfpy as bytes. yourdfpy falls back to lxml's *recovering* parser
    when its own parse fails: a document it refused was loaded as a robot with one
    link and no joints. Checked first, the document never reaches that fallback.
    """
    import io

    import yourdfpy

    data = read_xml_file(path, "URDF", MAX_URDF_BYTES)
    parse_xml(data, path, "URDF")
    try:
        return yourdfpy.URDF.load(io.BytesIO(data), build_scene_graph=False, load_meshes=False, load_collision_meshes=False)
    except Exception as exc:  # yourdfpy raises many types on bad files
        raise InvalidRobotError(f"{path}: cannot read URDF ({type(exc).__name__}: {exc})") from None


def _joint_motion(j: Joint) -> NDArray[np.float64]:
    """The (3, 10) motion matrix of joint ``j`` for ``kernels.robot.kinematics`` (its module
    notes give the columns): the joint origin's rotation Ro and translation to, and for
    moving joints the products with the unit axis a that make a step two 3x3 products."""
    Ro, to = j.origin[:3, :3], j.origin[:3, 3]
    H = np.zeros((3, 10))
    H[:, 3] = to
    if j.type == "fixed":
        H[:, 0:3] = Ro
    elif j.type == "prismatic":
        H[:, 0:3] = Ro
        H[:, 4] = Ro @ j.axis
    else:
        a = j.axis
        aa = np.outer(a, a)
        cross = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
        H[:, 0:3] = Ro @ aa
        H[:, 4:7] = Ro @ (np.eye(3) - aa)
        H[:, 7:10] = Ro @ cross
    return H


def _geometry_mesh(geometry: Any, base_dir: str, mesh_dir: str | None) -> tuple[NDArray, NDArray] | None:
    """(vertices, faces) of one URDF geometry element in its own frame; None if empty."""
    import trimesh

    if geometry is None:
        return None
    if geometry.box is not None:
        tm = trimesh.creation.box(extents=np.asarray(geometry.box.size, float))
    elif geometry.cylinder is not None:
        tm = trimesh.creation.cylinder(radius=float(geometry.cylinder.radius), height=float(geometry.cylinder.length), sections=32)
    elif geometry.sphere is not None:
        tm = trimesh.creation.icosphere(subdivisions=2, radius=float(geometry.sphere.radius))
    elif geometry.mesh is not None:
        path = _resolve(geometry.mesh.filename, base_dir, mesh_dir)
        try:
            tm = trimesh.load(path, force="mesh", process=False)
        except Exception as exc:  # trimesh raises many types on bad files
            raise InvalidRobotError(f"{path}: cannot read link mesh ({type(exc).__name__}: {exc})") from None
        scale = geometry.mesh.scale
        if scale is not None:
            tm.apply_scale(np.broadcast_to(np.asarray(scale, float), (3,)))
    else:
        return None
    if len(tm.faces) == 0:
        return None
    return np.asarray(tm.vertices, np.float64), np.asarray(tm.faces, np.int64)


def _resolve(filename: str, base_dir: str, mesh_dir: str | None) -> str:
    name = filename
    for prefix in ("package://", "file://"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    candidates = [name] if os.path.isabs(name) else []
    candidates += [os.path.join(base_dir, name)]
    if mesh_dir:
        candidates += [os.path.join(mesh_dir, name), os.path.join(mesh_dir, os.path.basename(name))]
    # package://pkg/path: try the path below the URDF's folder and its parents
    parts = name.split("/")
    for k in range(1, len(parts)):
        candidates.append(os.path.join(base_dir, *parts[k:]))
    for c in candidates:
        if os.path.isfile(c):
            return c
    raise InvalidRobotError(f"mesh {filename!r} not found (looked in {base_dir}{' and ' + mesh_dir if mesh_dir else ''})")


def _link_mesh(elements: list, base_dir: str, mesh_dir: str | None, name: str) -> Mesh | None:
    verts, faces = [], []
    offset = 0
    for el in elements:
        got = _geometry_mesh(el.geometry, base_dir, mesh_dir)
        if got is None:
            continue
        v, f = got
        T = np.asarray(el.origin, float) if el.origin is not None else np.eye(4)
        v = v @ T[:3, :3].T + T[:3, 3]
        verts.append(v)
        faces.append(f + offset)
        offset += v.shape[0]
    if not faces:
        return None
    # surfaces: segmented (each element is its own connected component)
    return Mesh(np.vstack(verts), np.vstack(faces), name=name)


def as_configurations(q: Any, dof: int, what: str = "q") -> NDArray[np.float64]:
    """``q`` as a C-contiguous float64 array of shape (N, dof) or (dof,), checked.

    Raises
    ------
    ValueError
        Complex values (numpy would drop the imaginary part without a word), values
        that are not numbers, the wrong shape, or non-finite values (the first
        offending configuration named: ``q[12]``).
    """
    if isinstance(q, np.ndarray) and q.dtype == np.float64:
        qa = q
    else:
        probe = np.asarray(q)
        if np.iscomplexobj(probe):
            raise ValueError(f"{what} holds complex values (joint values are real numbers)")
        if probe.dtype.kind not in "biuf":
            raise ValueError(f"{what} must hold numbers, got dtype {probe.dtype}")
        qa = np.asarray(probe, dtype=np.float64)
    if qa.ndim not in (1, 2) or qa.shape[-1] != dof:
        raise ValueError(f"{what} must have shape (N, {dof}) or ({dof},), got {qa.shape}")
    finite = np.isfinite(qa)
    if not finite.all():
        if qa.ndim == 1:
            raise ValueError(f"{what} holds non-finite values")
        row = int(np.flatnonzero(~finite.all(axis=1))[0])
        raise ValueError(f"{what}[{row}] holds non-finite values")
    return qa


def _margin_check() -> Any:
    """``robot.margin.check``, imported on first use (PERF: an import statement per call
    cost ~0.3 us of a ~9 us margin check)."""
    global _MARGIN_CHECK
    if _MARGIN_CHECK is None:
        from .margin import check

        _MARGIN_CHECK = check
    return _MARGIN_CHECK


_MARGIN_CHECK: Any = None


class Robot:
    """A kinematic tree from a URDF file with one collision mesh per link.

    Attributes
    ----------
    name : str
    links : tuple[str, ...]
        Link names in the file's order (the L axis of ``link_poses``).
    joints : tuple[Joint, ...]
        Every joint, in the file's order.
    joint_names : tuple[str, ...]
        The actuated joints: the configuration vector's order (length ``dof``).
    limits : (dof, 2) float64
        Lower and upper limit per actuated joint (-inf/inf for continuous joints).
    link_meshes : Mapping[str, Mesh] (read-only)
        Collision mesh of each link with geometry, in the link's frame (visual
        geometry when the link has no collision geometry). Links with neither
        are not keys: they are ``links_without_geometry``.
    links_without_geometry : tuple[str, ...]
        Links with no collision or visual geometry (frames only), in file order.
    adjacent_pairs : frozenset[tuple[str, str]]
        Pairs of links with geometry whose kinematic path passes only through
        links without geometry (each pair sorted by name); never checked for
        self-collision.
    allowed_pairs : frozenset[tuple[str, str]]
        Further link pairs never checked for self-collision (sorted by name):
        from the SRDF given to ``load``, or ``with_allowed_pairs``. Empty by default.
    base_link : str
        The root of the tree.

    Examples
    --------
    >>> import pybullet_data, os, collisionkit as ck
    >>> iiwa = ck.Robot.load(os.path.join(pybullet_data.getDataPath(), "kuka_iiwa/model.urdf"))
    >>> iiwa.dof, len(iiwa.links), iiwa.link_poses(np.zeros((5, 7))).shape
    (7, 8, (5, 8, 4, 4))
    """

    def __init__(
        self,
        name: str,
        links: tuple[str, ...],
        joints: tuple[Joint, ...],
        link_meshes: Mapping[str, Mesh | None],
        path: str | None = None,
        allowed_pairs: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.name = name
        self.links = tuple(links)
        self.joints = tuple(joints)
        self.path = path
        self._link_index = {n: i for i, n in enumerate(self.links)}
        if len(self._link_index) != len(self.links):
            dup = next(n for k, n in enumerate(self.links) if n in self.links[:k])
            raise InvalidRobotError(f"robot {name!r}: link name {dup!r} is used twice")
        unknown = sorted(set(link_meshes) - set(self._link_index))
        if unknown:
            raise InvalidRobotError(f"robot {name!r}: meshes given for unknown link(s) {', '.join(map(repr, unknown))}")
        # no None entries: a link without geometry is named in links_without_geometry instead
        # a read-only mapping: assigning an entry raised nothing and changed nothing the checker saw
        self.link_meshes: Mapping[str, Mesh] = MappingProxyType(
            {n: m for n in self.links if (m := link_meshes.get(n)) is not None}
        )
        self.links_without_geometry = tuple(n for n in self.links if n not in self.link_meshes)
        for j in self.joints:
            for end in (j.parent, j.child):
                if end not in self._link_index:
                    raise InvalidRobotError(f"robot {name!r}: joint {j.name!r} names unknown link {end!r}")
        children = {j.child for j in joints}
        roots = [n for n in links if n not in children]
        if len(roots) != 1:
            raise InvalidRobotError(f"robot {name!r} must have one root link, found {roots}")
        self.base_link = roots[0]
        # joints in topological order (parents before children)
        by_parent: dict[str, list[Joint]] = {}
        for j in joints:
            by_parent.setdefault(j.parent, []).append(j)
        order: list[Joint] = []
        frontier = [self.base_link]
        while frontier:
            link = frontier.pop(0)
            for j in by_parent.get(link, []):
                order.append(j)
                frontier.append(j.child)
        if len(order) != len(joints):
            raise InvalidRobotError(f"robot {name!r}: joints do not form a tree from {self.base_link!r}")
        self._order = tuple(order)
        # the joint tree as kernel arrays (kernels.robot.kinematics): one step per joint
        kind = {"fixed": kinematics.JOINT_FIXED, "prismatic": kinematics.JOINT_PRISMATIC}
        self._chain = (
            np.array([self._link_index[j.parent] for j in order], dtype=np.int64),
            np.array([self._link_index[j.child] for j in order], dtype=np.int64),
            np.array([kind.get(j.type, kinematics.JOINT_REVOLUTE) for j in order], dtype=np.int64),
            np.array([_joint_motion(j) for j in order], dtype=np.float64).reshape(len(order), 3, 10),
        )
        actuated = sorted((j for j in joints if j.index >= 0), key=lambda j: j.index)
        self.joint_names = tuple(j.name for j in actuated)
        # over immutable bytes: numpy refuses to make it writable again (geometry.frozen)
        self.limits = immutable(np.array([[j.lower, j.upper] for j in actuated], dtype=np.float64).reshape(-1, 2))
        self._by_name = {j.name: j for j in joints}
        if len(self._by_name) != len(joints):
            dup = next(j.name for k, j in enumerate(joints) if any(i.name == j.name for i in joints[:k]))
            raise InvalidRobotError(f"robot {name!r}: joint name {dup!r} is used twice")
        self._check_mimics()
        self.adjacent_pairs = self._adjacent_pairs()
        self.allowed_pairs = self.link_pairs(allowed_pairs, "allowed_pairs")

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["link_meshes"] = dict(self.link_meshes)  # a mappingproxy does not pickle
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.link_meshes = MappingProxyType(state["link_meshes"])
        self.limits = immutable(state["limits"])

    def _adjacent_pairs(self) -> frozenset[tuple[str, str]]:
        """Pairs of links with geometry joined through geometry-less links only.

        From each link with geometry, walk the (undirected) joint tree and stop
        at the first link with geometry on every branch: those links are its
        neighbours. Fixed, moving and mimic joints count alike (the old rule,
        "joined by one joint", missed the Panda's hand and link7, joined through
        the empty panda_link8, and reported them colliding in every configuration).
        """
        neighbours: dict[str, list[str]] = {n: [] for n in self.links}
        for j in self.joints:
            neighbours[j.parent].append(j.child)
            neighbours[j.child].append(j.parent)
        pairs = set()
        for start in self.link_meshes:
            seen = {start}
            todo = list(neighbours[start])
            while todo:
                link = todo.pop()
                if link in seen:
                    continue
                seen.add(link)
                if link in self.link_meshes:
                    pairs.add(_sorted_pair(start, link))
                else:
                    todo.extend(neighbours[link])
        return frozenset(pairs)

    def link_pairs(self, pairs: Iterable[Any], what: str = "pairs") -> frozenset[tuple[str, str]]:
        """Validate link name pairs: a frozenset of (name, name) tuples sorted by name.

        Raises
        ------
        ValueError
            An entry that is not two link names, a link paired with itself, or
            unknown link names (all of them named in the message).
        """
        if isinstance(pairs, (str, bytes)):
            raise ValueError(f"{what}: expected pairs of link names, got a string {pairs[:60]!r}")
        out = set()
        unknown: list[str] = []
        for entry in pairs:
            if isinstance(entry, (str, bytes)) or not isinstance(entry, Iterable):
                raise ValueError(f"{what}: each entry must be a (link, link) pair, got {entry!r:.80}")
            items = tuple(entry)
            if len(items) != 2 or not all(isinstance(x, str) for x in items):
                raise ValueError(f"{what}: each entry must be a (link, link) pair of names, got {entry!r:.80}")
            a, b = items
            unknown += [x for x in (a, b) if x not in self._link_index and x not in unknown]
            if a == b:
                raise ValueError(f"{what}: link {a!r} is paired with itself")
            out.add(_sorted_pair(a, b))
        if unknown:
            raise ValueError(f"{what}: robot {self.name!r} has no link(s) {', '.join(map(repr, unknown))}")
        return frozenset(out)

    def with_allowed_pairs(self, pairs: Iterable[tuple[str, str]]) -> Robot:
        """A copy whose ``allowed_pairs`` also hold ``pairs`` (meshes and joints shared).

        For example ``robot.with_allowed_pairs(robot.allowed_pairs_from_samples(1000))``
        installs the pairs found by sampling.
        """
        extra = self.link_pairs(pairs, "pairs")
        out = Robot(self.name, self.links, self.joints, self.link_meshes, self.path, self.allowed_pairs | extra)
        out.padding = self.padding  # NOTE: padding (with_padding) carries over
        return out

    def allowed_pairs_from_samples(self, n: int = 1000, *, seed: int | None = 0, threads: int | None = None) -> frozenset[tuple[str, str]]:
        """Link pairs that collide in every one of ``n`` random configurations.

        As MoveIt's setup assistant does ("always in collision"): such pairs
        overlap by construction (two meshes bolted together, a cover over a
        motor) and checking them only reports the robot itself. Every pair of
        links with geometry that is not adjacent is sampled, whether or not it
        is already in ``allowed_pairs``.

        The pairs are returned, not installed: review them, then pass them as
        ``check(..., allowed=pairs)`` or make a robot that keeps them with
        ``with_allowed_pairs(pairs)``. Sampling can only suggest: a pair that
        touches in every sample may still be apart somewhere in the joint space.

        Parameters
        ----------
        n : int
            Configurations, uniform within the joint limits (``random_configurations``), >= 1.
        seed : int or None
            Seed of the samples (default 0: the same answer every call).
        threads : int, optional
            Threads per batched query.

        Returns
        -------
        frozenset of (str, str), each pair sorted by name.
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be an int >= 1, got {n!r}")
        return _checker.always_colliding_pairs(self, int(n), seed, threads)

    # -- construction -----------------------------------------------------------------
    @classmethod
    def load(
        cls,
        urdf_path: str | os.PathLike[str],
        *,
        srdf: str | os.PathLike[str] | None = None,
        mesh_dir: str | None = None,
        geometry: str = "collision",
    ) -> Robot:
        """Read a URDF file (yourdfpy) and its link meshes (trimesh).

        ``srdf`` names a MoveIt SRDF file whose ``<disable_collisions link1=
        link2=/>`` entries (and ``<disable_default_collisions link=/>``, less
        its ``<enable_collisions/>`` entries) fill ``allowed_pairs``; the rest
        of the SRDF (groups, states, end effectors) is not used. It is read as
        data with the standard library's expat parser, refusing any DOCTYPE
        (so no entity expansion, no external entity), and an unknown link name
        is an error naming the file and line (``robot/srdf.py``).

        ``geometry="collision"`` (default) takes each link's ``<collision>``
        elements and falls back to its ``<visual>`` ones; ``"visual"`` the
        reverse (for pictures, or files whose collision geometry is cruder
        than wanted).

        Mesh file names resolve relative to the URDF's folder (``package://``
        prefixes stripped), then in ``mesh_dir`` if given. Box, cylinder and
        sphere elements become meshes (cylinders with 32 sections, spheres as
        twice-subdivided icospheres).

        Raises
        ------
        InvalidRobotError (a ValueError)
            Missing or unreadable file or mesh, floating or planar joints,
            links that do not form one tree, or an SRDF that is malformed or
            names unknown links.
        """
        if geometry not in ("collision", "visual"):
            raise ValueError(f"geometry must be 'collision' or 'visual', got {geometry!r}")
        path = os.fspath(urdf_path)
        if not os.path.isfile(path):
            raise InvalidRobotError(f"{path}: no such file")
        urdf = _read_urdf(path)
        robot = urdf.robot
        link_names = tuple(link.name for link in robot.links)
        allowed: frozenset[tuple[str, str]] = frozenset()
        if srdf is not None:  # before the meshes: a bad SRDF fails fast
            from .srdf import read_allowed_pairs

            allowed = read_allowed_pairs(srdf, link_names, robot.name)
        base_dir = os.path.dirname(os.path.abspath(path))
        joints: list[Joint] = []
        index = 0
        for j in robot.joints:
            if j.type not in (*_MOVING, "fixed"):
                raise InvalidRobotError(f"{path}: joint {j.name!r} of type {j.type!r} is not supported")
            axis = np.asarray(j.axis if j.axis is not None else [1.0, 0.0, 0.0], float)
            if j.type in _MOVING:
                norm = float(np.linalg.norm(axis))
                if not math.isfinite(norm):
                    raise InvalidRobotError(f"{path}: joint {j.name!r}: axis {axis.tolist()} is not finite")
                if norm == 0.0:
                    raise InvalidRobotError(f"{path}: joint {j.name!r} has a zero axis")
                axis = axis / norm
            lower, upper = -np.inf, np.inf
            if j.type in ("revolute", "prismatic") and j.limit is not None:
                lower = float(j.limit.lower) if j.limit.lower is not None else -np.inf
                upper = float(j.limit.upper) if j.limit.upper is not None else np.inf
            mimic = j.mimic.joint if j.mimic is not None else None
            slot = -1
            if j.type in _MOVING and mimic is None:
                slot = index
                index += 1
            origin = np.asarray(j.origin, float) if j.origin is not None else np.eye(4)
            try:  # Joint refuses non-finite or non-rigid origins, bad axes and limits
                joints.append(
                    Joint(
                        j.name, j.type, j.parent, j.child, origin, axis, lower, upper, slot, mimic,
                        float(j.mimic.multiplier) if j.mimic is not None and j.mimic.multiplier is not None else 1.0,
                        float(j.mimic.offset) if j.mimic is not None and j.mimic.offset is not None else 0.0,
                    )  # fmt: skip
                )
            except InvalidRobotError as exc:
                raise InvalidRobotError(f"{path}: {exc}") from None
        meshes: dict[str, Mesh | None] = {}
        for link in robot.links:
            first, second = (link.collisions, link.visuals) if geometry == "collision" else (link.visuals, link.collisions)
            try:
                mesh = _link_mesh(list(first), base_dir, mesh_dir, link.name)
                if mesh is None:
                    mesh = _link_mesh(list(second), base_dir, mesh_dir, link.name)
            except InvalidMeshError as exc:  # e.g. a NaN in a <collision> origin
                raise InvalidRobotError(f"{path}: link {link.name!r}: {exc}") from None
            meshes[link.name] = mesh
        return cls(robot.name, link_names, tuple(joints), meshes, path, allowed)

    # -- kinematics -------------------------------------------------------------------
    @property
    def dof(self) -> int:
        return len(self.joint_names)

    def link_index(self, name: str) -> int:
        """Position of link ``name`` in ``links``."""
        try:
            return self._link_index[name]
        except KeyError:
            raise KeyError(f"robot {self.name!r} has no link {name!r}") from None

    def link_poses(self, q: ArrayLike, base: ArrayLike | None = None) -> NDArray[np.float64]:
        """World-from-link poses of every link for a batch of configurations.

        Parameters
        ----------
        q : array_like (N, dof) or (dof,)
            Joint values in ``joint_names`` order (radians, metres). Values are
            not clamped to ``limits`` (see ``within_limits``).
        base : array_like (4, 4), optional
            World-from-base-link pose (default identity).

        Returns
        -------
        (N, L, 4, 4) float64, or (L, 4, 4) for a single (dof,) configuration;
        L = len(links), in ``links`` order.
        """
        qa = as_configurations(q, self.dof)
        T = self.link_poses_by_link(qa, base)
        if qa.ndim == 1:
            return T[:, 0]
        return np.ascontiguousarray(T.transpose(1, 0, 2, 3))

    def link_poses_by_link(
        self, q: ArrayLike, base: ArrayLike | None = None, *, threads: int | None = None
    ) -> NDArray[np.float64]:
        """``link_poses`` with the link axis first: (L, N, 4, 4), C-contiguous, so that each
        link's N poses are one contiguous block (what the batched queries take without a copy).

        A single (dof,) configuration gives (L, 1, 4, 4). ``threads``: numba threads for a
        large batch (default: all cores).
        """
        return self.poses_and_boxes(q, base, threads=threads)[0]

    def poses_and_boxes(
        self, q: ArrayLike, base: ArrayLike | None = None, *, boxed: ArrayLike = (), threads: int | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``link_poses_by_link`` and, in the same pass, the padded world boxes of the links
        ``boxed`` (link indices, each with a mesh) in every configuration: (M, 6, N), rows
        lo xyz, hi xyz, each row contiguous. The boxes are the World's (``world_boxes``'s
        padding: a pair the exact test finds intersecting always has overlapping boxes).
        """
        qa = as_configurations(q, self.dof)
        q2 = qa.reshape(1, -1) if qa.ndim == 1 else qa
        n = q2.shape[0]
        B = np.eye(4) if base is None else np.ascontiguousarray(base, dtype=np.float64)
        if B.shape != (4, 4):
            raise ValueError(f"base must have shape (4, 4), got {B.shape}")
        ids = np.asarray(boxed, dtype=np.int64).reshape(-1)
        local = np.array([self.link_meshes[self.links[i]].bounds.ravel() for i in ids], dtype=np.float64).reshape(-1, 6)
        values = np.zeros((len(self._order), n))
        for s, j in enumerate(self._order):
            if j.type != "fixed":
                values[s] = self._joint_value(j, q2)
        T = np.empty((len(self.links), n, 4, 4))
        box = np.empty((ids.size, 6, n))
        parents, children, kinds, H = self._chain
        p = batch.plan(n, batch.thread_count(threads), uniform=True)
        batch.launch(
            p, kinematics.chain_poses, kinematics.chain_poses_parallel,
            np.int64(self._link_index[self.base_link]), B, parents, children, kinds, H, values,
            local, ids, WORLD_BOX_SLACK, T, box,
        )  # fmt: skip
        return T, box

    def _check_mimics(self) -> None:
        """Every mimic chain ends at an actuated joint (no unknown joint, no cycle:
        a joint mimicking itself was a RecursionError in ``link_poses``)."""
        for j in self.joints:
            chain = [j.name]
            k = j
            while k.mimic is not None:
                src = self._by_name.get(k.mimic)
                if src is None:
                    raise InvalidRobotError(f"robot {self.name!r}: joint {k.name!r} mimics unknown joint {k.mimic!r}")
                if src.name in chain:
                    cycle = " -> ".join([*chain[chain.index(src.name):], src.name])
                    raise InvalidRobotError(f"robot {self.name!r}: mimic cycle {cycle}")
                chain.append(src.name)
                k = src
            if k is not j and k.index < 0:
                raise InvalidRobotError(f"robot {self.name!r}: joint {j.name!r} mimics {k.name!r}, which is not actuated ({k.type})")

    def _joint_value(self, j: Joint, q2: NDArray[np.float64]) -> NDArray[np.float64]:
        if j.mimic is None:
            return q2[:, j.index]
        src = self._by_name.get(j.mimic)
        if src is None:
            raise InvalidRobotError(f"joint {j.name!r} mimics unknown joint {j.mimic!r}")
        return j.multiplier * self._joint_value(src, q2) + j.offset

    def within_limits(self, q: ArrayLike) -> bool | NDArray[np.bool_]:
        """(N,) bool (or a bool for one configuration): every joint within its limits."""
        qa = np.asarray(q)
        if np.iscomplexobj(qa):
            raise ValueError("q holds complex values (joint values are real numbers)")
        qa = np.asarray(qa, dtype=np.float64)
        if qa.ndim not in (1, 2) or qa.shape[-1] != self.dof:
            raise ValueError(f"q must have shape (N, {self.dof}) or ({self.dof},), got {qa.shape}")
        ok = np.all((qa >= self.limits[:, 0]) & (qa <= self.limits[:, 1]), axis=-1)
        return bool(ok) if qa.ndim == 1 else ok

    def random_configurations(self, n: int, *, seed: int | None = 0) -> NDArray[np.float64]:
        """(n, dof) uniform samples within the limits (continuous joints in [-pi, pi]).

        ``seed``: as ``collisionkit.random_poses``' (default 0: the same samples every call;
        None: fresh entropy)."""
        rng = np.random.default_rng(seed)
        lo = np.where(np.isfinite(self.limits[:, 0]), self.limits[:, 0], -np.pi)
        hi = np.where(np.isfinite(self.limits[:, 1]), self.limits[:, 1], np.pi)
        return lo + (hi - lo) * rng.random((n, self.dof))

    def check(
        self,
        q: ArrayLike,
        world: World | None = None,
        *,
        base: ArrayLike | None = None,
        self_collision: bool = True,
        allowed: Iterable[tuple[str, str]] = _NONE,
        ignore: Iterable[str] = _NONE,
        bv: str | None = None,
        threads: int | None = None,
        margin: float = 0.0,
    ) -> bool | NDArray[np.bool_]:
        """Which configurations collide with ``world`` or with the robot itself: a bool for
        one (dof,) configuration, an (N,) bool array for an (N, dof) batch.

        Parameters
        ----------
        q : array_like (dof,) or (N, dof)
            Joint values (``joint_names`` order), or a Dask array (N, dof) chunked along N:
            the answer is then an (N,) Dask bool array (``collisionkit.distributed``).
        world : World, optional
            The obstacles (None: self-collision only).
        base : array_like (4, 4), optional
            World pose of the root link (default: the identity).
        self_collision : bool
            Also test link pairs that are not adjacent, not in ``allowed_pairs`` and not in
            ``allowed``.
        allowed : iterable of (link, link)
            Link pairs skipped for this call (unknown names raise ``ValueError``).
        ignore : iterable of str
            World objects skipped.
        bv : str, optional
            The volume kind every pair is traversed in (default: OBB for two meshes of kind
            "auto", ``robot.checker.ROBOT_VOLUME``, else a mesh's named kind; "auto": each
            pair's ``bvh.pair_volume`` pick); answers unchanged.
        threads : int, optional
            Threads for a batch (default: all cores).
        margin : float
            >= 0, world units: a pair collides when its distance is at most
            ``margin + pad_a + pad_b`` (the links' ``padding``, ``with_padding``): then, and
            for a padded robot, ``robot.margin.check`` answers (the prepared checker's
            threshold descents; not on Dask input yet).

        Runs on a prepared ``checker(world, ...)`` (cached on the robot per world and
        options, rebuilt when the world changes): one compiled call per configuration or
        batch, with the per-pair path's answers. ``check_detail`` answers per link, object
        and link pair.
        """
        options = _checker_options(self_collision, allowed, ignore, base, bv)
        if threads is not None:
            options["threads"] = threads
        if margin != 0.0 or self.padding:  # a distance threshold: robot/margin.py
            if deferred.is_lazy(q):
                raise ValueError("Robot.check: margin and padding do not take Dask input yet")
            return _margin_check()(self, q, world, margin, options)
        if deferred.is_lazy(q):
            return deferred.run("robot_check", self, q, world, **options)
        return _checker.check(self, q, world, options)

    # -- motion planning: clearance, margins, padding, certified edges (robot/motion.py) --
    #: per-link padding (link name -> distance): empty unless made by ``with_padding``
    padding: Mapping[str, float] = MappingProxyType({})

    def with_padding(self, padding: Mapping[str, float]) -> Robot:
        """A copy whose listed links count as colliding within that distance of anything.

        ``robot.with_padding({"panda_hand": 0.02})``: a pair (link a, object or link b)
        collides when its exact distance is at most ``margin + pad_a + pad_b`` (an offset by
        a ball, not an inflation of vertices). ``check``, ``clearance`` and ``check_motion``
        of the copy honour it. The entries update this robot's ``padding``; meshes, joints
        and pairs are shared.

        Raises
        ------
        ValueError
            Unknown link names or links without geometry (all named), or a pad that is
            negative, NaN or inf.
        """
        from .motion import check_padding

        pads = {**self.padding, **check_padding(self, padding)}
        out = copy.copy(self)
        out.padding = MappingProxyType({k: v for k, v in pads.items() if v > 0.0})
        return out

    def link_travel(self, q0: ArrayLike, q1: ArrayLike) -> NDArray[np.float64]:
        """Per link, an upper bound on how far any point of its geometry moves along the
        straight joint-space segment q0 -> q1: (N, L) float64, or (L,) for (dof,) ends
        (``robot/travel.py`` derives and proves it)."""
        from .travel import link_travel

        return link_travel(self, q0, q1)

    def clearance(
        self, q: ArrayLike, world: World | None = None, *, self_collision: bool = True, allowed: Iterable[tuple[str, str]] = (),
        ignore: Iterable[str] = (), base: ArrayLike | None = None, per_link: bool = False,
    ) -> RobotClearance:
        """The smallest distance from the robot to collision, for one (dof,) configuration
        or an (N, dof) batch: a ``RobotClearance`` (``robot/motion.py``).

        Over the pairs ``check`` tests (each link against each world object not in
        ``ignore``; with ``self_collision``, the link pairs that are not adjacent, allowed
        or in ``allowed``), the exact distance less both links' ``padding``, 0 when the
        configuration collides; with the pair's names and closest points (world frame), and
        per link with ``per_link=True``.

        Examples
        --------
        >>> c = robot.clearance(q, world)            # doctest: +SKIP
        >>> c.distance, c.link, c.other              # doctest: +SKIP
        (0.084, 'panda_hand', 'shelf')
        """
        from .motion import clearance

        return clearance(
            self, q, world, self_collision=self_collision, allowed=allowed, ignore=ignore, base=base, per_link=per_link
        )

    def check_motion(
        self, q_start: ArrayLike, q_end: ArrayLike, world: World | None = None, *, margin: float = 0.0,
        self_collision: bool = True, allowed: Iterable[tuple[str, str]] = (), ignore: Iterable[str] = (),
        base: ArrayLike | None = None,
    ) -> MotionCheck:
        """Certified check of the straight joint-space edge q_start -> q_end ((dof,) each),
        or of N edges ((N, dof) each): a ``MotionCheck`` (``robot/motion.py``).

        ``free`` only when every configuration of the segment is free, certified by travel
        bounds against distance lower bounds with adaptive bisection (Schwarzer, Saha &
        Latombe 2005), not by samples: a pair collides when its distance is at most
        ``margin + pad_a + pad_b``. Otherwise ``t_free`` is the certified free prefix
        (OMPL's lastValid) and ``witness`` a colliding configuration of the segment, one
        that ``check`` calls colliding (``undecided`` when the search finds neither: a graze
        within rounding of the threshold). The pairs and options are ``check``'s.

        Raises
        ------
        ValueError
            Ends of the wrong or different shapes, non-finite values, a negative or
            non-finite margin, unknown link names in ``allowed``.
        """
        from .motion import check_motion

        return check_motion(
            self, q_start, q_end, world, margin=margin, self_collision=self_collision, allowed=allowed,
            ignore=ignore, base=base,
        )  # fmt: skip

    def check_detail(
        self,
        q: ArrayLike,
        world: World | None = None,
        *,
        base: ArrayLike | None = None,
        self_collision: bool = True,
        allowed: Iterable[tuple[str, str]] = _NONE,
        ignore: Iterable[str] = _NONE,
        bv: str | None = None,
        threads: int | None = None,
    ) -> RobotCheck:
        """A ``RobotCheck``: which links touch, per world object and per self pair, for every
        configuration (the options of ``check``, less ``margin``; every pair tested: slower)."""
        if self.padding:  # NOTE: not routed to robot/motion.py yet
            raise ValueError("check_detail does not take a padded robot yet; use check or clearance")
        options = _checker_options(self_collision, allowed, ignore, base, bv)
        if threads is not None:
            options["threads"] = threads
        return _checker.check_detail(self, q, world, options)

    def checker(
        self,
        world: World | None = None,
        *,
        base: ArrayLike | None = None,
        self_collision: bool = True,
        allowed: Iterable[tuple[str, str]] = _NONE,
        ignore: Iterable[str] = _NONE,
        bv: str | None = None,
    ) -> RobotChecker:
        """A ``RobotChecker`` (``robot/checker.py``): this robot against ``world`` prepared once
        into flat arrays, with ``check(q)``, ``check_detail(q)`` and ``first_colliding(qs)``.

        Options as ``check`` (``self_collision``, ``allowed``, ``ignore``, ``base``, ``bv``:
        the volume kind of every pair's traversal, default ``checker.ROBOT_VOLUME`` for two
        "auto" meshes, else a mesh's named kind); the same
        checker ``check`` uses for them (cached on the robot).
        """
        return _checker.checker_for(self, world, _checker_options(self_collision, allowed, ignore, base, bv))

    def __repr__(self) -> str:
        return f"Robot({self.name!r}, links={len(self.links)}, dof={self.dof})"


def _checker_options(
    self_collision: bool, allowed: Iterable[tuple[str, str]], ignore: Iterable[str], base: ArrayLike | None, bv: str | None
) -> dict[str, Any]:
    """The checker options that differ from the defaults (none: the cached default checker)."""
    if self_collision is True and allowed is _NONE and ignore is _NONE and base is None and bv is None:
        return {}
    return {"self_collision": self_collision, "allowed": allowed, "ignore": ignore, "base": base, "bv": bv}


def _sorted_pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


__all__ = ["Joint", "Robot", "as_configurations"]
