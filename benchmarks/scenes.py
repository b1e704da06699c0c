"""Named, seeded, deterministic benchmark scenes: two meshes and a batch of poses for B.

Every scene is a pair of triangle meshes (A, B) loaded with ``trimesh`` and
``process=False`` (faces exactly as in the file, so triangle indices match what
every engine reports), ``pose_a`` = identity and ``n`` world-from-object poses
for B, ``(n, 4, 4) float64`` (``p_world = T @ [p, 1]``).

Poses are a function of seeded *unit samples* (random rotations and unit
translations, drawn from separate streams so the first ``k`` poses do not depend
on ``n``) and of one scalar, the sampling radius ``r``. ``r`` is calibrated once
per scene, deterministically: bisection on ``r`` over a fixed calibration sample
(its own seed, independent of ``n``) until a peer's boolean test reports the
scene's target fraction of colliding poses (half, unless stated). Nothing is
cached on disk; loaded meshes and calibrated radii are cached in memory.

Scenes
------
env-rob                 FCL/Coal's classic environment (2,180 tris) vs robot (216 tris).
bunny-bunny             pybullet bunny (902 tris) against itself.
duck-shelf              duck.obj (4,212 tris) vs kiva_shelf/meshes/pod_lowres.stl (10,184).
soccer-soccer           soccerball.obj (9,048 tris) against itself.
large-bunny-soccer      bunny subdivided 3x by trimesh.remesh.subdivide (57,728 tris) vs
                        soccerball subdivided once (36,192 tris): same surfaces, more triangles.
assembly-near-contacts  soccer ball vs a copy scaled by 1.0005 about its centre (a 2.5e-4 gap
                        between nested shells), B jittered by small rotations about the centre
                        and small translations: about 3/4 of the poses collide along a curve,
                        and nearly every triangle of A is a near miss of some triangle of B.
miss-overhead           env vs rob with B far away (bounding spheres disjoint): every root
                        bounding-volume test misses, so a call measures per-call overhead.

``load_monastery()`` gives samurai_monastry.obj (124,789 tris) for the BVH build benchmark.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

# The classic env/rob pair lives in ../shared/data beside the checkout (CI puts shared/ there too).
DATA_DIR = os.environ.get(
    "COLLISIONKIT_DATA",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data"),
)


def _pybullet_data_dir() -> str:
    try:
        import pybullet_data

        return pybullet_data.getDataPath()
    except ImportError:  # pragma: no cover - the venv has pybullet
        return os.path.join(os.path.dirname(np.__file__), "..", "pybullet_data")


@dataclass(frozen=True)
class MeshData:
    """A triangle mesh as plain arrays.

    Attributes
    ----------
    name : str
    vertices : (V, 3) float64, C-contiguous, read-only
    faces : (F, 3) int64, C-contiguous, read-only, triangle order as in the source file
    source : str
        Where it came from (file path and any processing).
    """

    name: str
    vertices: np.ndarray
    faces: np.ndarray
    source: str

    @property
    def n_faces(self) -> int:
        return int(self.faces.shape[0])

    @property
    def n_vertices(self) -> int:
        return int(self.vertices.shape[0])

    @property
    def bbox(self) -> tuple[np.ndarray, np.ndarray]:
        used = self.vertices[np.unique(self.faces)]
        return used.min(axis=0), used.max(axis=0)


def _freeze(name: str, vertices, faces, source: str) -> MeshData:
    v = np.ascontiguousarray(vertices, dtype=np.float64)
    f = np.ascontiguousarray(faces, dtype=np.int64)
    v.setflags(write=False)
    f.setflags(write=False)
    return MeshData(name, v, f, source)


def load_mesh(path: str, name: str | None = None) -> MeshData:
    """Load a mesh with trimesh, ``process=False`` (faces as given in the file)."""
    import trimesh

    m = trimesh.load(path, process=False, force="mesh")
    return _freeze(name or os.path.basename(path), m.vertices, m.faces, path)


@functools.cache
def mesh(name: str) -> MeshData:
    """A named mesh (cached in memory): env, rob, bunny, duck, shelf, soccer,
    bunny-sub3, soccer-sub1, soccer-x1.0005, monastery."""
    pb = _pybullet_data_dir()
    files = {
        "env": os.path.join(DATA_DIR, "env.obj"),
        "rob": os.path.join(DATA_DIR, "rob.obj"),
        "bunny": os.path.join(pb, "bunny.obj"),
        "duck": os.path.join(pb, "duck.obj"),
        "shelf": os.path.join(pb, "kiva_shelf", "meshes", "pod_lowres.stl"),
        "soccer": os.path.join(pb, "soccerball.obj"),
        "monastery": os.path.join(pb, "samurai_monastry.obj"),
    }
    if name in files:
        return load_mesh(files[name], name)
    if name in ("bunny-sub3", "soccer-sub1"):
        import trimesh

        base, times = {"bunny-sub3": ("bunny", 3), "soccer-sub1": ("soccer", 1)}[name]
        src = mesh(base)
        v, f = np.array(src.vertices), np.array(src.faces)
        for _ in range(times):
            v, f = trimesh.remesh.subdivide(v, f)
        return _freeze(name, v, f, f"{src.source}, trimesh.remesh.subdivide x{times}")
    if name == "soccer-x1.0005":
        src = mesh("soccer")
        lo, hi = src.bbox
        c = 0.5 * (lo + hi)
        v = c + 1.0005 * (src.vertices - c)
        return _freeze(name, v, src.faces, f"{src.source}, scaled by 1.0005 about its bbox centre")
    raise KeyError(f"unknown mesh {name!r}")


def load_monastery() -> MeshData:
    """samurai_monastry.obj from pybullet_data (124,789 triangles), for the build benchmark."""
    return mesh("monastery")


# --------------------------------------------------------------------------- poses


@dataclass(frozen=True)
class UnitSamples:
    """Seeded pose ingredients; each array is prefix-stable in ``n``.

    quat : (n, 4) unit quaternions (w, x, y, z), uniform on SO(3) (Shoemake 1992)
    u : (n, 3) uniform in [-1, 1]^3
    v : (n,) uniform in [0, 1]
    """

    quat: np.ndarray
    u: np.ndarray
    v: np.ndarray


def unit_samples(seed: int, n: int) -> UnitSamples:
    s_rot, s_u, s_v = np.random.SeedSequence(seed).spawn(3)
    x = np.random.default_rng(s_rot).random((n, 3))
    # Shoemake, "Uniform random rotations", Graphics Gems III (1992).
    a, b = np.sqrt(1.0 - x[:, 0]), np.sqrt(x[:, 0])
    t1, t2 = 2 * np.pi * x[:, 1], 2 * np.pi * x[:, 2]
    quat = np.stack([b * np.cos(t2), a * np.sin(t1), a * np.cos(t1), b * np.sin(t2)], axis=1)
    u = np.random.default_rng(s_u).uniform(-1.0, 1.0, (n, 3))
    v = np.random.default_rng(s_v).random(n)
    return UnitSamples(quat, u, v)


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """(n, 4) unit quaternions (w, x, y, z) -> (n, 3, 3) rotation matrices."""
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        axis=1,
    )


def axis_angle_to_matrix(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """(n, 3) unit axes, (n,) angles -> (n, 3, 3) rotations (Rodrigues' formula)."""
    k = axis
    K = np.zeros((len(k), 3, 3))
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -k[:, 2], k[:, 1], -k[:, 0]
    K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = k[:, 2], -k[:, 1], k[:, 0]
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + s * K + (1 - c) * (K @ K)


def _rigid(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    T = np.zeros((len(R), 4, 4))
    T[:, :3, :3] = R
    T[:, :3, 3] = t
    T[:, 3, 3] = 1.0
    return T


def _center_radius(m: MeshData) -> tuple[np.ndarray, float, np.ndarray]:
    lo, hi = m.bbox
    c = 0.5 * (lo + hi)
    return c, float(np.linalg.norm(m.vertices - c, axis=1).max()), 0.5 * (hi - lo)


def box_sampler(a: MeshData, b: MeshData) -> Callable[[UnitSamples, float], np.ndarray]:
    """Random rotation of B; B's bbox centre uniform in a box around A's centre of
    half-size ``r * (half_extent_a + radius_b)`` (``r`` = 1: B may just touch A's box)."""
    ca, _, ha = _center_radius(a)
    cb, rb, _ = _center_radius(b)
    half = ha + rb

    def poses(us: UnitSamples, r: float) -> np.ndarray:
        R = quat_to_matrix(us.quat)
        return _rigid(R, ca - R @ cb + r * half * us.u)

    return poses


def jitter_sampler(b: MeshData, max_angle: float, max_shift: float) -> Callable[[UnitSamples, float], np.ndarray]:
    """Small motions of B about its bbox centre: rotation of ``r * max_angle * v`` about a
    random axis, translation ``r * max_shift * u`` (u in the unit cube)."""
    c, _, _ = _center_radius(b)

    def poses(us: UnitSamples, r: float) -> np.ndarray:
        axis = us.quat[:, 1:] / np.linalg.norm(us.quat[:, 1:], axis=1, keepdims=True)
        R = axis_angle_to_matrix(axis, r * max_angle * us.v)
        return _rigid(R, c - R @ c + r * max_shift * us.u)

    return poses


def far_sampler(a: MeshData, b: MeshData) -> Callable[[UnitSamples, float], np.ndarray]:
    """Random rotation of B, centre at distance ``(1 + r) * (radius_a + radius_b)`` from A's
    centre: bounding spheres disjoint, so no bounding volume of the roots can overlap."""
    ca, ra, _ = _center_radius(a)
    cb, rb, _ = _center_radius(b)

    def poses(us: UnitSamples, r: float) -> np.ndarray:
        R = quat_to_matrix(us.quat)
        d = us.u / np.linalg.norm(us.u, axis=1, keepdims=True)
        return _rigid(R, ca - R @ cb + (1.0 + r) * (ra + rb) * d)

    return poses


# --------------------------------------------------------------------------- scenes


@dataclass(frozen=True)
class SceneSpec:
    name: str
    description: str
    a: str
    b: str
    sampler: str  # "box" | "jitter" | "far"
    target_fraction: float = 0.5
    default_poses: int = 200
    quick: bool = False
    seed: int = 0
    jitter: tuple[float, float] = (0.0, 0.0)  # (max_angle rad, max_shift) for "jitter"
    r_range: tuple[float, float] = (0.0, 2.0)
    increasing: bool = False  # does the colliding fraction grow with r? (box: no, jitter: yes)


SCENES: dict[str, SceneSpec] = {
    s.name: s
    for s in [
        SceneSpec(
            "env-rob",
            "FCL/Coal classic env.obj vs rob.obj",
            "env",
            "rob",
            "box",
            default_poses=1000,
            quick=True,
            seed=1,
        ),
        SceneSpec(
            "bunny-bunny",
            "pybullet bunny.obj against itself",
            "bunny",
            "bunny",
            "box",
            default_poses=1000,
            quick=True,
            seed=2,
        ),
        SceneSpec(
            "duck-shelf",
            "duck.obj vs kiva_shelf/meshes/pod_lowres.stl",
            "duck",
            "shelf",
            "box",
            default_poses=400,
            seed=3,
        ),
        SceneSpec(
            "soccer-soccer", "soccerball.obj against itself", "soccer", "soccer", "box", default_poses=300, seed=4
        ),
        SceneSpec(
            "large-bunny-soccer",
            "bunny.obj subdivided 3x vs soccerball.obj subdivided 1x (trimesh.remesh.subdivide)",
            "bunny-sub3",
            "soccer-sub1",
            "box",
            default_poses=60,
            seed=5,
        ),
        SceneSpec(
            "assembly-near-contacts",
            "soccerball.obj vs a copy scaled 1.0005 about its centre, small jitter "
            "(rotation <= r*0.02 rad, shift <= r*1e-3 per axis)",
            "soccer",
            "soccer-x1.0005",
            "jitter",
            target_fraction=0.75,
            default_poses=40,
            seed=6,
            jitter=(0.02, 1e-3),
            r_range=(0.0, 1.0),
            increasing=True,
        ),
        SceneSpec(
            "miss-overhead",
            "env.obj vs rob.obj, B far away: roots miss (per-call overhead)",
            "env",
            "rob",
            "far",
            target_fraction=0.0,
            default_poses=2000,
            quick=True,
            seed=7,
        ),
    ]
}

QUICK_SCENES = [s.name for s in SCENES.values() if s.quick]
CALIBRATION_POSES = 64
CALIBRATION_SEED = 12345


@dataclass
class Scene:
    """A calibrated scene.

    Attributes
    ----------
    name, description : str
    mesh_a, mesh_b : MeshData
    pose_a : (4, 4) float64 identity
    poses_b : (n, 4, 4) float64 world-from-B poses
    radius : float
        The calibrated sampling parameter ``r``.
    target_fraction, calibration_fraction : float
        Wanted / obtained fraction of colliding poses on the calibration sample.
    calibrated_with : str
        The engine whose boolean test calibrated ``r`` ("none" for fixed scenes).
    """

    name: str
    description: str
    mesh_a: MeshData
    mesh_b: MeshData
    pose_a: np.ndarray
    poses_b: np.ndarray
    radius: float
    target_fraction: float
    calibration_fraction: float
    calibrated_with: str
    seed: int
    info: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.poses_b.shape[0])

    @property
    def poses_a(self) -> np.ndarray:
        """(n, 4, 4) identity poses for A, one per pose of B."""
        return np.ascontiguousarray(np.broadcast_to(self.pose_a, self.poses_b.shape))


def _sampler(spec: SceneSpec, a: MeshData, b: MeshData):
    if spec.sampler == "box":
        return box_sampler(a, b)
    if spec.sampler == "jitter":
        return jitter_sampler(b, *spec.jitter)
    if spec.sampler == "far":
        return far_sampler(a, b)
    raise ValueError(spec.sampler)


def default_oracle(a: MeshData, b: MeshData) -> tuple[str, Callable[[np.ndarray], np.ndarray]]:
    """A peer's boolean test over a pose batch, for calibration: Coal OBBRSS, else
    python-fcl, else trueform. Returns (engine name, poses_b -> (n,) bool)."""
    from . import peers

    cls = next((c for c in (peers.CoalOBBRSS, peers.FCL, peers.Trueform) if c.available()), None)
    if cls is None:
        raise RuntimeError("no peer available to calibrate the scenes")
    eng = cls()
    eng.setup(a, b)
    eye = np.eye(4)
    return eng.name, lambda P: np.array([eng.intersects_one(eye, T) for T in P], bool)


@functools.cache
def calibrate(name: str) -> tuple[float, float, str]:
    """Bisection on the sampling radius ``r`` so that the fraction of colliding poses
    on the fixed calibration sample is the scene's target. Returns (r, fraction, engine).

    Deterministic: fixed sample (CALIBRATION_SEED), fixed iteration rule, deterministic
    oracle. Stops when the fraction is within 1.5/CALIBRATION_POSES of the target.
    """
    spec = SCENES[name]
    if spec.sampler == "far":
        return 1.0, 0.0, "none"
    a, b = mesh(spec.a), mesh(spec.b)
    poses_of = _sampler(spec, a, b)
    us = unit_samples(CALIBRATION_SEED + spec.seed, CALIBRATION_POSES)
    engine, oracle = default_oracle(a, b)

    def frac(r: float) -> float:
        return float(oracle(poses_of(us, r)).mean())

    # The endpoints are not evaluated (r = 0 on the jitter scene is all near misses, the
    # slowest case for every engine): the direction is the spec's, and the first midpoint
    # that lands within tolerance wins.
    lo, hi = spec.r_range
    tol = 1.5 / CALIBRATION_POSES
    best = (np.inf, hi, np.nan)
    for _ in range(16):
        mid = 0.5 * (lo + hi)
        f = frac(mid)
        best = min(best, (abs(f - spec.target_fraction), mid, f))
        if best[0] <= tol:
            break
        if (f > spec.target_fraction) != spec.increasing:
            lo = mid
        else:
            hi = mid
    return best[1], best[2], engine


def make_scene(name: str, n: int | None = None) -> Scene:
    """Build the named scene with ``n`` poses (the scene's default when None)."""
    spec = SCENES[name]
    n = spec.default_poses if n is None else int(n)
    a, b = mesh(spec.a), mesh(spec.b)
    r, f_cal, engine = calibrate(name)
    poses = _sampler(spec, a, b)(unit_samples(spec.seed, n), r)
    # NOTE: poses stay writable: nanobind (trueform) refuses read-only arrays.
    return Scene(
        name=name,
        description=spec.description,
        mesh_a=a,
        mesh_b=b,
        pose_a=np.eye(4),
        poses_b=poses,
        radius=r,
        target_fraction=spec.target_fraction,
        calibration_fraction=f_cal,
        calibrated_with=engine,
        seed=spec.seed,
        info={"source_a": a.source, "source_b": b.source},
    )


def scene_names(quick: bool = False) -> list[str]:
    return list(QUICK_SCENES) if quick else list(SCENES)
