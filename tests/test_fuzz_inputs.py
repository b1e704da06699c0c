"""Seeded fuzzing of bad input (issue 18): malformed meshes, poses, scene YAML,
URDFs and command lines see only clear errors or correct answers.

A clear error is a ``CollisionKitError`` (``SceneError``, ``InvalidMeshError``,
``InvalidPoseError``, ...) or, at the command line, exit code 2 with one line
on stderr. A correct answer is checked against an independent oracle where
one exists (brute-force triangle pairs for meshes). The default run is small
and fast; ``-m slow`` runs many more cases.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from tests.brute import brute_pairs

import collisionkit as ck
from collisionkit.errors import CollisionKitError
from collisionkit.scene import Scene, SceneError

DATA = Path(__file__).resolve().parents[1] / "examples" / "data"
FAST, SLOW = 25, 400


def counts(n):
    return [pytest.param(n, id=f"n{n}")] + [pytest.param(SLOW, id=f"n{SLOW}", marks=pytest.mark.slow)]


# -- meshes -----------------------------------------------------------------------------
def random_mesh_input(rng: np.random.Generator):
    """Vertices, faces, surfaces: mostly plausible, often broken in one way."""
    nv = int(rng.integers(0, 8))
    v = rng.normal(size=(nv, 3))
    f = rng.integers(0, max(nv, 1), size=(int(rng.integers(0, 6)), 3))
    s = None
    k = int(rng.integers(0, 14))
    if k == 9:
        f = f + rng.choice([-nv - 1, nv])  # out of range
    if k == 0:
        v = v.astype(np.complex128) + 1j * rng.normal(size=v.shape)
    elif k == 1:
        v = v.astype(object)
    elif k == 2 and nv:
        v[int(rng.integers(nv)), int(rng.integers(3))] = rng.choice([np.nan, np.inf, -np.inf])
    elif k == 3:
        f = f.astype(np.float64) + rng.choice([0.0, 0.5])
    elif k == 4:
        s = rng.integers(-(2**40), 2**40, size=f.shape[0])
    elif k == 5:
        v = v.reshape(-1)
    elif k == 6:
        f = f.astype(str)
    elif k == 7:
        s = rng.integers(0, 4, size=f.shape[0] + 1)
    elif k == 8:
        v = v.tolist() + [[1.0, 2.0]] if nv else [[1.0, 2.0]]
    return v, f, s


@pytest.mark.parametrize("n", counts(FAST))
def test_fuzz_mesh_arrays(n):
    rng = np.random.default_rng(18)
    other = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    made = 0
    for _ in range(n):
        v, f, s = random_mesh_input(rng)
        try:
            m = ck.Mesh(v, f, s)
        except CollisionKitError as exc:
            assert str(exc) and "\n" not in str(exc)
            continue
        made += 1
        assert m.vertices.dtype == np.float64 and np.all(np.isfinite(m.vertices))
        assert m.faces.min() >= 0 and m.faces.max() < m.n_vertices
        pose = ck.translation(rng.uniform(-1.0, 1.0, size=3))
        assert ck.intersects(m, other, None, pose) == (len(brute_pairs(m, other, None, pose)) > 0)
    assert made > 0  # some inputs were valid: answers checked, not only errors


def random_obj(rng: random.Random) -> str:
    lines = [f"v {rng.uniform(-1, 1)} {rng.uniform(-1, 1)} {rng.uniform(-1, 1)}" for _ in range(rng.randint(0, 6))]
    out = []
    for _ in range(rng.randint(1, 12)):
        r = rng.random()
        if r < 0.4:
            out.append(lines.pop(0) if lines else "v 0 0 0")
        elif r < 0.9:
            idx = [rng.choice([rng.randint(-8, 8), rng.randint(1, 4)]) for _ in range(rng.randint(2, 5))]
            suffix = rng.choice(["", "/1", "//2", "/1/1"])
            out.append("f " + " ".join(f"{i}{suffix}" for i in idx))
        else:
            out.append(rng.choice(["o part", "g", "# comment", "vn 0 0 1", "f a b c", "", "s off"]))
    return "\n".join(lines + out) + "\n"


@pytest.mark.parametrize("n", counts(FAST))
def test_fuzz_obj_files(tmp_path, n):
    rng = random.Random(18)
    loaded = 0
    for k in range(n):
        p = tmp_path / f"m{k}.obj"
        text = random_obj(rng)
        p.write_text(text)
        try:
            m = ck.load_mesh(p)
        except CollisionKitError as exc:
            assert str(p) in str(exc) and "\n" not in str(exc)
            continue
        loaded += 1
        assert m.faces.min() >= 0 and m.faces.max() < m.n_vertices
        # every face the file states (triangles as written) is one the mesh holds
        n_tri = sum(max(len(s.split()) - 3, 0) for s in text.splitlines() if s.startswith("f "))
        assert m.n_faces == n_tri
    assert loaded > 0


# -- poses ------------------------------------------------------------------------------
def random_pose(rng: np.random.Generator):
    k = int(rng.integers(0, 9))
    T = np.eye(4)
    T[:3, 3] = rng.uniform(-2, 2, size=3)
    if k == 0:
        T[int(rng.integers(4)), int(rng.integers(4))] = rng.choice([np.nan, np.inf])
    elif k == 1:
        T[:3, :3] *= rng.uniform(0.5, 2.0)
    elif k == 2:
        T[3] = [0, 0, 1, 1]
    elif k == 3:
        T[:3, :3] = -T[:3, :3]  # a reflection
    elif k == 4:
        return np.repeat(T[None], int(rng.integers(0, 4)), axis=0)
    elif k == 5:
        return rng.normal(size=tuple(int(x) for x in rng.integers(1, 5, size=int(rng.integers(1, 4)))))
    elif k == 6:
        return [["a"] * 4] * 4
    return T


@pytest.mark.parametrize("n", counts(FAST))
def test_fuzz_poses(n):
    rng = np.random.default_rng(7)
    a = ck.primitives.box_mesh([1.0, 1.0, 1.0])
    b = ck.primitives.box_mesh([0.5, 0.5, 0.5])
    answered = 0
    for _ in range(n):
        pa, pb = random_pose(rng), random_pose(rng)
        try:
            got = np.atleast_1d(ck.intersects(a, b, pa, pb))
        except (CollisionKitError, ValueError) as exc:  # shapes: ValueError (ARCHITECTURE: broadcasting)
            assert str(exc)
            continue
        answered += 1
        A = np.broadcast_to(np.asarray(pa, float), (got.size, 4, 4)) if np.ndim(pa) == 3 else [pa] * got.size
        B = np.broadcast_to(np.asarray(pb, float), (got.size, 4, 4)) if np.ndim(pb) == 3 else [pb] * got.size
        want = [len(brute_pairs(a, b, x, y)) > 0 for x, y in zip(A, B, strict=True)]
        assert got.tolist() == want
    assert answered > 0


# -- scene YAML -------------------------------------------------------------------------
YAML_PIECES = [
    "objects:", "  - name: a", "  - name: b", "    box: [1, 1, 1]", "    sphere: 0.5", "    sphere: -1",
    "    pose: {translation: [0, 0, 1]}", "    pose: {matrix: [[1, 0], [0, 1]]}", "exclude:", "  - [a, b]",
    "  - [a, a]", "  - [a]", "    box: &x [1, 1, 1]", "    box: *x", "    box: *nope", "    name: a",
    "    box: !!python/tuple [1, 1, 1]", "  - !!map {}", "objects: " + "[" * 80, "x: " + "{a: " * 70,
    "    capsule: {radius: 1, length: 2}", "    capsule: {radius: 1}", "  ? [a]", "  : 1", "---", "...",
    "\t- bad indent", "    mesh: ../../etc/passwd", "    mesh: /dev/zero", "'", "    joints: [1, 2]",
]


@pytest.mark.parametrize("n", counts(4 * FAST))
def test_fuzz_scene_yaml(n):
    rng = random.Random(3)
    base = (DATA / "cell.yaml").read_text().splitlines()
    parsed = 0
    for _ in range(n):
        if rng.random() < 0.5:
            lines = [rng.choice(YAML_PIECES) for _ in range(rng.randint(1, 10))]
        else:  # mutate the real example: drop, duplicate or replace lines
            lines = list(base)
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(len(lines))
                op = rng.random()
                if op < 0.3:
                    del lines[i]
                elif op < 0.6:
                    lines.insert(i, lines[i])
                else:
                    lines[i] = rng.choice(YAML_PIECES)
                if not lines:
                    lines = ["objects: []"]
        text = "\n".join(lines) + "\n"
        try:
            sc = Scene.parse(text, DATA / "fuzz.yaml")
        except SceneError as exc:
            msg = str(exc)
            assert msg.startswith(str(DATA / "fuzz.yaml")) and "\n" not in msg and len(msg) < 400
            continue
        parsed += 1
        names = [o.name for o in sc.objects]
        assert len(set(names)) == len(names)
        assert all(a != b and a in names and b in names for a, b in sc.exclude)
    assert parsed > 0


# -- URDF -------------------------------------------------------------------------------
URDF_EDITS = [
    ('<joint name="elbow" type="revolute">', '<joint name="elbow" type="revolute"><mimic joint="elbow"/>'),
    ('<joint name="elbow" type="revolute">', '<joint name="elbow" type="revolute"><mimic joint="shoulder"/>'),
    ('<joint name="shoulder" type="revolute">', '<joint name="shoulder" type="revolute"><mimic joint="elbow"/>'),
    ('<joint name="yaw" type="revolute">', '<joint name="yaw" type="revolute"><mimic joint="ghost"/>'),
    ('<joint name="elbow"', '<joint name="shoulder"'),
    ('<child link="forearm"/>', '<child link="column"/>'),
    ('<parent link="upper_arm"/>', '<parent link="nowhere"/>'),
    ('<axis xyz="0 1 0"/>', '<axis xyz="0 0 0"/>'),
    ('type="revolute"', 'type="floating"'),
    ('<box size="0.05 0.05 0.4"/>', '<mesh filename="missing.stl"/>'),
    ("</robot>", ""),
    ('lower="-2.0"', 'lower="abc"'),
]


@pytest.mark.parametrize("n", counts(FAST))
def test_fuzz_urdf(tmp_path, n):
    from collisionkit.robot import Robot

    rng = random.Random(5)
    text0 = (DATA / "arm.urdf").read_text()
    loaded = 0
    for k in range(n):
        text = text0
        for old, new in rng.sample(URDF_EDITS, rng.randint(0, 3)):
            text = text.replace(old, new, 1)
        p = tmp_path / f"r{k}.urdf"
        p.write_text(text)
        try:
            r = Robot.load(p)
        except CollisionKitError as exc:
            assert "\n" not in str(exc).strip() or str(p) in str(exc)
            continue
        loaded += 1
        T = r.link_poses(np.zeros((2, r.dof)))  # no RecursionError, finite poses
        assert T.shape == (2, len(r.links), 4, 4) and np.all(np.isfinite(T))
    assert loaded > 0


# -- command line -----------------------------------------------------------------------
ARG_PIECES = [
    "--pose-a", "--pose-b", "0,0,0", "1,2", "nan,0,0", "two.npy", "strings.npy", "deep.json", "--max-pairs", "0",
    "-1", "3", "--show", "--json", "--broadphase", "hash", "bogus", "--chunk", "--step", "-o", "x.txt", "x.png",
    "--poses", "--until-first", "--robot", "ghost", "--trajectory", "path.csv", "dup.csv", "--kinds", "cylinder",
    "--method", "sampled", "--tolerance", "nan",
]


@pytest.mark.parametrize("n", counts(FAST))
def test_fuzz_command_line(tmp_path, monkeypatch, capsys, n):
    from collisionkit.cli import main

    for name in ("cell.yaml", "arm.urdf", "ring.obj", "plate.stl", "path.csv"):
        shutil.copy(DATA / name, tmp_path / name)
    np.save(tmp_path / "two.npy", np.stack([np.eye(4)] * 2))
    np.save(tmp_path / "strings.npy", np.array([["1"] * 4] * 4))
    (tmp_path / "deep.json").write_text("[" * 50_000 + "]" * 50_000)
    (tmp_path / "dup.csv").write_text("yaw,yaw,yaw\n0,0,0\n")
    monkeypatch.chdir(tmp_path)
    commands = {
        "check": ["ring.obj", "plate.stl"], "contacts": ["ring.obj", "plate.stl"], "scene": ["cell.yaml"],
        "trajectory": ["cell.yaml", "path.csv"], "render": ["cell.yaml"], "bv-report": ["ring.obj"],
        "distance": ["ring.obj", "plate.stl"], "penetration": ["ring.obj", "plate.stl"],
        "classify": ["ring.obj", "plate.stl"],
    }  # fmt: skip
    rng = random.Random(11)
    for _ in range(n):
        cmd = rng.choice(sorted(commands))
        argv = [cmd, *commands[cmd], *(rng.choice(ARG_PIECES) for _ in range(rng.randint(1, 4)))]
        if cmd in ("render", "bv-report") and not any(a.startswith("-") for a in argv[2:]):
            argv.append("--bogus")  # keep the fuzz to bad options: no pictures or reports drawn
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        err = capsys.readouterr().err
        assert code in (0, 1, 2), argv
        assert "Traceback" not in err, (argv, err)
        if code == 2:
            assert err.count("\n") == 1, (argv, err)
