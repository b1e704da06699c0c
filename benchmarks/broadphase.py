"""The World's broad phases against Coal's and python-fcl's broad-phase managers
(and pybullet's collision pipeline), frame by frame, in one process.

Usage::

    python -m benchmarks.broadphase            # full run: 100 frames a scene, 1k..100k objects
    python -m benchmarks.broadphase --quick    # smoke run (1k and 10k, few frames)
    python -m benchmarks.broadphase --scenes seed002,uniform-1k --frames 50

Scenes (seeded):

* ``seed002``: 31 real meshes from pybullet_data (about 80k triangles, seed 002's
  "31 randomly moving objects, over 80,000 triangles"), scaled to unit size in a
  cube of side 3.2, each frame a small random translation and rotation.
* ``uniform-N`` / ``clustered-N`` (N = 1k, 10k, 100k): boxes of mixed sizes (8
  size classes over a decade, random aspect), either spread uniformly or 80 % of
  them piled into a few dense clusters (seed 001's case where sweep and prune
  degrades), each frame a small random motion.

Per frame, for each of our broad phases: ``set_poses`` (world boxes of all
objects, one kernel) + ``candidate_pairs`` = the broad-phase time; then
``colliding_pairs`` (exact narrow phase) = the full step. For each peer manager:
the Python loop that hands it the new poses (what a Python user must run), its
``update()`` and ``collide()`` with Coal's C++ collecting callback (python-fcl has
no C++ one: its callback is a Python function), timed apart. Full step of the
peers: Coal's default callback with an unlimited contact count (all contacts:
compare with our ``contacts``), python-fcl's callback running ``fcl.collide`` per
pair, pybullet's ``performCollisionDetection`` + ``getContactPoints`` (boxes
only: pybullet cannot move concave meshes). Medians over frames. The first frame
of each of ours is a warm-up (JIT compile or cache load, structure build).

Result hashes: every broad phase of ours must give the same candidate pairs in
every frame (the ``agree`` flag); pair counts of the peers are shown (their
boxes differ: Coal bounds a rotated mesh by a sphere around its box).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
OURS = ["brute", "sap", "grid", "hash", "octree", "tree"]
COAL = [
    "DynamicAABBTreeCollisionManager",
    "DynamicAABBTreeArrayCollisionManager",
    "SaPCollisionManager",
    "SSaPCollisionManager",
    "IntervalTreeCollisionManager",
    "SpatialHashingCollisionManager",
]
#: Coal managers left out of the 100k scenes, with what we measured that made us.
SLOW_AT_100K = {
    "DynamicAABBTreeArrayCollisionManager": "skipped: 34 s per frame on uniform-100k (one frame measured)",
    "IntervalTreeCollisionManager": "skipped: 52-197 ms per frame at 10k, minutes at 100k",
    "SpatialHashingCollisionManager": "skipped: 1.6-1.8 s per frame at 10k",
    "SaPCollisionManager": "skipped: registering 100k objects (one call each: the bindings take no list) did not end in minutes",
    "SSaPCollisionManager": "skipped: as SaP (not tried after SaP stalled)",
}
SEED002_MESHES = [
    "soccerball.obj", "duck.obj", "teddy2_VHACD_CHs.obj", "sphere_smooth.obj", "bunny.obj",
    "kuka_iiwa/meshes/link_0.obj", "kuka_iiwa/meshes/link_1.obj", "kuka_iiwa/meshes/link_2.obj",
    "kuka_iiwa/meshes/link_3.obj", "kuka_iiwa/meshes/link_4.obj", "kuka_iiwa/meshes/link_5.obj",
]


# --- scenes ------------------------------------------------------------------------------
class Scene:
    """Shapes (collisionkit meshes) and a seeded pose stream."""

    def __init__(self, name: str, meshes: list, kinds: np.ndarray, half: np.ndarray | None,
                 centres: np.ndarray, side: float, step: float, angle: float, seed: int):
        self.name = name
        self.meshes = meshes  # distinct meshes
        self.kinds = kinds  # (N,) index into meshes
        self.half = half  # (K, 3) half extents per box class (box scenes), else None
        self.n = kinds.shape[0]
        self.side = side
        self.step = step
        self.angle = angle
        self.rng = np.random.default_rng(seed)
        self.centres0 = centres
        self.R0 = random_rotations(self.rng, self.n)

    def frames(self, count: int):
        """Yield (N, 4, 4) poses: a random walk of small steps and rotations, kept in the box."""
        rng = np.random.default_rng(12345)
        c = self.centres0.copy()
        R = self.R0.copy()
        T = np.zeros((self.n, 4, 4))
        T[:, 3, 3] = 1.0
        for _ in range(count):
            c += rng.normal(scale=self.step, size=c.shape)
            np.clip(c, -self.side / 2, self.side / 2, out=c)
            R = np.einsum("nij,njk->nik", small_rotations(rng, self.n, self.angle), R)
            T[:, :3, :3] = R
            T[:, :3, 3] = c
            yield T

    @property
    def triangles(self) -> int:
        return int(sum(self.meshes[k].n_faces for k in self.kinds))


def random_rotations(rng, n):
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return quat_matrix(q)


def quat_matrix(q):
    w, x, y, z = q.T
    R = np.empty((q.shape[0], 3, 3))
    R[:, 0, 0] = 1 - 2 * (y * y + z * z)
    R[:, 0, 1] = 2 * (x * y - z * w)
    R[:, 0, 2] = 2 * (x * z + y * w)
    R[:, 1, 0] = 2 * (x * y + z * w)
    R[:, 1, 1] = 1 - 2 * (x * x + z * z)
    R[:, 1, 2] = 2 * (y * z - x * w)
    R[:, 2, 0] = 2 * (x * z - y * w)
    R[:, 2, 1] = 2 * (y * z + x * w)
    R[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def small_rotations(rng, n, angle):
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    half = 0.5 * angle * rng.uniform(-1, 1, size=(n, 1))
    q = np.hstack([np.cos(half), np.sin(half) * axis])
    return quat_matrix(q)


def seed002_scene():
    import pybullet_data

    import collisionkit as ck

    base = Path(pybullet_data.getDataPath())
    meshes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in SEED002_MESHES:
            m = ck.load_mesh(base / name)
            lo, hi = m.bounds
            s = 1.0 / float(np.max(hi - lo))
            meshes.append(ck.Mesh((m.vertices - (lo + hi) / 2) * s, m.faces, name=name))
    rng = np.random.default_rng(2)
    kinds = np.arange(31) % len(meshes)
    side = 3.2
    centres = rng.uniform(-side / 2, side / 2, size=(31, 3))
    return Scene("seed002", meshes, kinds, None, centres, side, step=0.01, angle=0.02, seed=2)


def box_scene(kind: str, n: int):
    import collisionkit as ck

    rng = np.random.default_rng(n + (1 if kind == "clustered" else 0))
    classes = 8
    size = np.exp(np.linspace(np.log(0.1), np.log(1.0), classes))
    half = size[:, None] * rng.uniform(0.4, 1.0, size=(classes, 3)) / 2
    meshes = [ck.primitives.box_mesh(2 * h) for h in half]
    kinds = rng.integers(classes, size=n)
    mean_vol = float(np.mean(np.prod(2 * half, axis=1)))
    side = (n * mean_vol / 0.02) ** (1 / 3)  # 2 % of the volume filled
    if kind == "uniform":
        centres = rng.uniform(-side / 2, side / 2, size=(n, 3))
    else:
        k = max(4, n // 2000)
        hubs = rng.uniform(-side / 3, side / 3, size=(k, 3))
        which = rng.integers(k, size=n)
        sigma = side / (6 * k ** (1 / 3))
        centres = hubs[which] + rng.normal(scale=sigma, size=(n, 3))
        spread = rng.random(n) < 0.2
        centres[spread] = rng.uniform(-side / 2, side / 2, size=(int(spread.sum()), 3))
    return Scene(f"{kind}-{n // 1000}k", meshes, kinds, half, centres, side, step=0.01, angle=0.02, seed=n)


# --- ours ---------------------------------------------------------------------------
#: frames whose colliding pairs every step engine hands to the referee (frame 0 included:
#: the peers' step loops time their first frames)
REFEREE_FRAMES = (0, 1)


def _pair_set(pairs) -> set[tuple[int, int]]:
    """(i, j) object-index pairs of a World ``Pairs`` record (read in one place)."""
    return {(int(i), int(j)) for i, j in np.asarray(pairs.rows).tolist()}


def run_ours(scene: Scene, broadphase: str, frames: int, hashes: dict, budget_s: float, answers: dict | None = None) -> dict:
    import collisionkit as ck

    w = ck.World(broadphase)
    t = time.perf_counter()
    first = None
    for T in scene.frames(1):
        first = T
    for i in range(scene.n):
        w.add(f"o{i}", scene.meshes[scene.kinds[i]], first[i])
    w.colliding_pairs()  # warm-up: compile or cache load, structure build
    setup = time.perf_counter() - t
    broad, step, cand, coll, work = [], [], [], [], []
    frame_hashes = []
    # big scenes: the narrow phase is timed on about 10 frames spread over the run
    stride = max(1, frames // 10) if scene.n >= 10000 else 1
    spent = 0.0
    for f, T in enumerate(scene.frames(frames + 1)):
        t0 = time.perf_counter()
        w.set_poses(T)
        c = w.candidate_pairs()
        t1 = time.perf_counter()
        broad.append(t1 - t0)
        if f % stride == 0 or f == 1:
            k = w.colliding_pairs()
            t2 = time.perf_counter()
            step.append(t2 - t0)
            coll.append(len(k))
            if answers is not None and f in REFEREE_FRAMES:
                answers[f] = _pair_set(k)
        cand.append(len(c))
        spent += time.perf_counter() - t0
        st = w.broadphase_stats()
        work.append(st.get("swaps", st.get("reinserts", st.get("relinks", st.get("entries", st.get("work", 0))))))
        frame_hashes.append(hashlib.sha1(c.rows.tobytes()).hexdigest()[:12])
        if spent > budget_s and f >= 10:
            break
    hashes[broadphase] = frame_hashes[1:]
    tc = time.perf_counter()
    nc = len(w.contacts())
    t_contacts = time.perf_counter() - tc
    return {
        "engine": f"collisionkit {broadphase}", "kind": "ours", "broadphase": broadphase,
        "frames": len(broad) - 1, "setup_s": setup,
        "pose_ms": 0.0, "broad_ms": 1e3 * statistics.median(broad[1:]),
        "frame_ms": 1e3 * statistics.median(broad[1:]), "step_ms": 1e3 * statistics.median(step[1:] or step),
        "pairs": int(statistics.median(cand[1:])), "colliding": int(statistics.median(coll[1:] or coll)),
        "work": int(statistics.median(work[1:])), "contacts_ms": 1e3 * t_contacts, "contacts": nc,
    }


# --- peers --------------------------------------------------------------------------
def coal_geometry(scene: Scene, k: int):
    import coal

    if scene.half is not None:
        h = scene.half[k]
        return coal.Box(*(2 * h))
    m = scene.meshes[k]
    g = coal.BVHModelOBBRSS()
    g.beginModel(m.n_faces, m.n_vertices)
    g.addVertices(np.asarray(m.vertices, dtype=np.float64))
    g.addTriangles(np.asarray(m.faces, dtype=np.int64))
    g.endModel()
    return g


def run_coal(scene: Scene, manager: str, frames: int, budget_s: float, cell: float) -> dict:
    import coal

    geoms = [coal_geometry(scene, k) for k in range(len(scene.meshes))]
    first = next(iter(scene.frames(1))).copy()
    objs = [coal.CollisionObject(geoms[scene.kinds[i]], coal.Transform3s(first[i, :3, :3], first[i, :3, 3])) for i in range(scene.n)]
    if manager == "SpatialHashingCollisionManager":
        lim = scene.side / 2 + 2.0
        mgr = coal.SpatialHashingCollisionManager(cell, -lim * np.ones(3), lim * np.ones(3))
    else:
        mgr = getattr(coal, manager)()
    for o in objs:
        mgr.registerObject(o)
    mgr.setup()
    collect = coal.CollisionCallBackCollect(max(16, 50 * scene.n))
    pose_t, broad_t, pairs, step_t, coll = [], [], [], [], []
    spent = 0.0
    for T in scene.frames(frames + 1):
        t0 = time.perf_counter()
        # issue #20: no new transform object per object per frame (set in place), and
        # computeAABB: Coal's setTransform does NOT refresh the object's world box, so before
        # this its broad phase ran on the first frame's boxes (less work, stale pairs)
        for i, o in enumerate(objs):
            o.setRotation(T[i, :3, :3])
            o.setTranslation(T[i, :3, 3])
            o.computeAABB()
        t1 = time.perf_counter()
        mgr.update()
        collect.init()
        mgr.collide(collect)
        t2 = time.perf_counter()
        pose_t.append(t1 - t0)
        broad_t.append(t2 - t1)
        pairs.append(collect.numCollisionPairs())
        if len(step_t) < 5:  # the exhaustive narrow phase: a few frames suffice
            cb = coal.CollisionCallBackDefault()
            cb.data.request.num_max_contacts = 1 << 30
            t3 = time.perf_counter()
            cb.init()
            mgr.collide(cb)
            step_t.append(time.perf_counter() - t3)
            coll.append(cb.data.result.numContacts())
        spent += time.perf_counter() - t0
        if spent > budget_s and len(pose_t) >= 3:
            break
    nf = len(pose_t) - 1 if len(pose_t) > 1 else 1
    sl = slice(1, None) if len(pose_t) > 1 else slice(None)
    pose_ms = 1e3 * statistics.median(pose_t[sl])
    broad_ms = 1e3 * statistics.median(broad_t[sl])
    return {
        "engine": f"coal {manager.replace('CollisionManager', '')}", "kind": "peer", "frames": nf,
        "pose_ms": pose_ms, "broad_ms": broad_ms, "frame_ms": pose_ms + broad_ms,
        "step_ms": pose_ms + broad_ms + 1e3 * statistics.median(step_t), "step_note": "all contacts",
        "pairs": int(statistics.median(pairs[sl])), "colliding": None, "contacts": int(statistics.median(coll)),
        "work": None,
    }


def run_fcl(scene: Scene, frames: int, budget_s: float, answers: dict | None = None) -> dict:
    """python-fcl's DynamicAABBTree; its step answers what ours does (the set of colliding
    object pairs, a boolean ``fcl.collide`` per candidate pair) on the same triangle surfaces
    (box scenes too: a BVH of the box mesh, not ``fcl.Box``, whose solid would make a box
    inside another collide). ``answers``: frame -> set of (i, j), collected in an untimed
    pass of the refereed frames (python-fcl's callback gets new wrapper objects, so the
    pass maps them back by their translation)."""
    import fcl

    geoms = []
    for m in scene.meshes:
        g = fcl.BVHModel()
        g.beginModel(m.n_vertices, m.n_faces)
        g.addSubModel(np.asarray(m.vertices), np.asarray(m.faces))
        g.endModel()
        geoms.append(g)
    first = next(iter(scene.frames(1))).copy()
    objs = [fcl.CollisionObject(geoms[scene.kinds[i]], fcl.Transform(first[i, :3, :3], first[i, :3, 3])) for i in range(scene.n)]
    mgr = fcl.DynamicAABBTreeCollisionManager()
    mgr.registerObjects(objs)
    mgr.setup()
    count = [0]

    def broad_cb(o1, o2, data):
        count[0] += 1
        return False

    hits = [0]
    req = fcl.CollisionRequest()

    def narrow_cb(o1, o2, data):
        if fcl.collide(o1, o2, req, fcl.CollisionResult()):
            hits[0] += 1
        return False

    pose_t, broad_t, pairs, step_t, coll = [], [], [], [], []
    spent = 0.0
    for T in scene.frames(frames + 1):
        t0 = time.perf_counter()
        for i, o in enumerate(objs):  # in place (python-fcl refreshes the box itself)
            o.setRotation(T[i, :3, :3])
            o.setTranslation(T[i, :3, 3])
        t1 = time.perf_counter()
        mgr.update()
        count[0] = 0
        mgr.collide(None, broad_cb)
        t2 = time.perf_counter()
        pose_t.append(t1 - t0)
        broad_t.append(t2 - t1)
        pairs.append(count[0])
        if len(step_t) < 5:
            hits[0] = 0
            t3 = time.perf_counter()
            mgr.collide(None, narrow_cb)
            step_t.append(time.perf_counter() - t3)
            coll.append(hits[0])
            if answers is not None and len(pose_t) - 1 in REFEREE_FRAMES:
                answers[len(pose_t) - 1] = _fcl_pairs(mgr, T, req)
        spent += time.perf_counter() - t0
        if spent > budget_s and len(pose_t) >= 3:
            break
    sl = slice(1, None) if len(pose_t) > 1 else slice(None)
    pose_ms = 1e3 * statistics.median(pose_t[sl])
    broad_ms = 1e3 * statistics.median(broad_t[sl])
    return {
        "engine": "python-fcl DynamicAABBTree", "kind": "peer", "frames": len(pose_t[sl]),
        "pose_ms": pose_ms, "broad_ms": broad_ms, "frame_ms": pose_ms + broad_ms,
        "step_ms": pose_ms + 1e3 * statistics.median([b + s for b, s in zip(broad_t, step_t, strict=False)]),
        "step_note": "fcl.collide per pair (Python callback)",
        "pairs": int(statistics.median(pairs[sl])), "colliding": int(statistics.median(coll)), "work": None,
    }


def _fcl_pairs(mgr, T, req) -> set[tuple[int, int]]:
    """Untimed: python-fcl's colliding object pairs of the current frame as index pairs."""
    import fcl

    where = {T[i, :3, 3].tobytes(): i for i in range(T.shape[0])}
    out = set()

    def cb(o1, o2, data):
        if fcl.collide(o1, o2, req, fcl.CollisionResult()):
            i, j = where[np.asarray(o1.getTranslation()).tobytes()], where[np.asarray(o2.getTranslation()).tobytes()]
            out.add((min(i, j), max(i, j)))
        return False

    mgr.collide(None, cb)
    return out


def referee_step(scene: Scene, frames_T: dict, answers: dict[str, dict], sample: int = 20) -> dict[str, dict]:
    """Referee each engine's colliding object pairs on the refereed frames (issue #20).

    Every pair the engines disagree on, and a seeded sample of agreed pairs, is decided by
    tests/brute.py (every triangle pair, its own mapping, certified float filter + exact
    rationals: independent of collisionkit's kernels). A reported pair the brute force finds
    disjoint is explained only by rounding (brute distance <= 1e-12 x scale). Returns
    engine -> verdict (``benchmarks.referee`` form)."""
    import random

    from tests.brute import brute_colliding
    from tests.distance_oracle import brute_distance

    out = {e: {"wrong": 0, "explained": {}, "unexplained": [], "frames": []} for e in answers}
    rng = random.Random(0)
    for f, T in frames_T.items():
        sets = {e: a[f] for e, a in answers.items() if f in a}
        if len(sets) < 2:
            continue
        union = set().union(*sets.values())
        agreed = sorted(set.intersection(*sets.values()))
        todo = sorted(union - set(agreed)) + rng.sample(agreed, min(sample, len(agreed)))
        for i, j in todo:
            mi, mj = scene.meshes[scene.kinds[i]], scene.meshes[scene.kinds[j]]
            truth = bool(brute_colliding(mi, mj, T[i], T[j])[0])
            for e, got in sets.items():
                reported = (i, j) in got
                if reported == truth:
                    continue
                out[e]["wrong"] += 1
                d = brute_distance(mi, mj, T[i], T[j])[0] if reported else np.inf
                scale = 1.0 + float(np.abs(T[[i, j], :3, 3]).max())
                if d <= 1e-12 * scale:
                    out[e]["explained"]["rounding"] = out[e]["explained"].get("rounding", 0) + 1
                else:
                    out[e]["unexplained"].append({"frame": f, "pair": [i, j], "reported": reported})
        for e in sets:
            out[e]["frames"].append(f)
    for v in out.values():
        v["status"] = "FAIL" if v["unexplained"] else ("explained" if v["wrong"] else "exact")
        v["unexplained"] = v["unexplained"][:5]
    return out


def run_pybullet(scene: Scene, frames: int, budget_s: float) -> dict | None:
    if scene.half is None or scene.n > 20000:
        return None  # pybullet cannot move concave meshes; 100k bodies take minutes to create
    import pybullet as p

    cid = p.connect(p.DIRECT)
    try:
        p.setGravity(0, 0, 0, physicsClientId=cid)
        shapes = [p.createCollisionShape(p.GEOM_BOX, halfExtents=list(h), physicsClientId=cid) for h in scene.half]
        first = next(iter(scene.frames(1))).copy()
        bodies = [p.createMultiBody(1.0, shapes[scene.kinds[i]], -1, list(first[i, :3, 3]), physicsClientId=cid) for i in range(scene.n)]
        step_t, pose_t, coll = [], [], []
        spent = 0.0
        for T in scene.frames(frames + 1):
            q = rotation_quats(T[:, :3, :3])
            t0 = time.perf_counter()
            for i, b in enumerate(bodies):
                p.resetBasePositionAndOrientation(b, T[i, :3, 3].tolist(), q[i].tolist(), physicsClientId=cid)
            t1 = time.perf_counter()
            p.performCollisionDetection(physicsClientId=cid)
            cps = p.getContactPoints(physicsClientId=cid)
            t2 = time.perf_counter()
            pose_t.append(t1 - t0)
            step_t.append(t2 - t0)
            coll.append(len({(c[1], c[2]) for c in cps}))
            spent += t2 - t0
            if spent > budget_s and len(pose_t) >= 3:
                break
    finally:
        p.disconnect(cid)
    sl = slice(1, None) if len(pose_t) > 1 else slice(None)
    return {
        "engine": "pybullet (full pipeline)", "kind": "peer-full", "frames": len(pose_t[sl]),
        "pose_ms": 1e3 * statistics.median(pose_t[sl]), "broad_ms": None, "frame_ms": None,
        "step_ms": 1e3 * statistics.median(step_t[sl]), "step_note": "performCollisionDetection + getContactPoints",
        "pairs": None, "colliding": int(statistics.median(coll[sl])), "work": None,
    }


def rotation_quats(R):
    """(N, 4) xyzw quaternions of rotation matrices (pybullet's order)."""
    tr = R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2]
    w = np.sqrt(np.maximum(0.0, 1.0 + tr)) / 2
    x = np.sqrt(np.maximum(0.0, 1.0 + R[:, 0, 0] - R[:, 1, 1] - R[:, 2, 2])) / 2
    y = np.sqrt(np.maximum(0.0, 1.0 - R[:, 0, 0] + R[:, 1, 1] - R[:, 2, 2])) / 2
    z = np.sqrt(np.maximum(0.0, 1.0 - R[:, 0, 0] - R[:, 1, 1] + R[:, 2, 2])) / 2
    x = np.copysign(x, R[:, 2, 1] - R[:, 1, 2])
    y = np.copysign(y, R[:, 0, 2] - R[:, 2, 0])
    z = np.copysign(z, R[:, 1, 0] - R[:, 0, 1])
    return np.stack([x, y, z, w], axis=1)


# --- driver -------------------------------------------------------------------------------
def scene_list(names: list[str], quick: bool) -> list[str]:
    if names:
        return names
    sizes = [1000, 10000] if quick else [1000, 10000, 100000]
    return ["seed002"] + [f"{k}-{n // 1000}k" for n in sizes for k in ("uniform", "clustered")]


def make_scene(name: str) -> Scene:
    if name == "seed002":
        return seed002_scene()
    kind, size = name.split("-")
    return box_scene(kind, int(size.rstrip("k")) * 1000)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1k and 10k objects, 10 frames (writes results-quick)")
    ap.add_argument("--frames", type=int, default=None, help="frames per scene (default 100; quick 10)")
    ap.add_argument("--scenes", default="", help="comma-separated scene names")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--peer-budget", type=float, default=None, help="seconds per peer and scene (default 15; quick 5)")
    ap.add_argument("--budget", type=float, default=None, help="seconds per broad phase of ours and scene (default 60; quick 10)")
    ap.add_argument("--merge", action="store_true", help="merge these scenes into the existing results file")
    ap.add_argument("--render", action="store_true", help="only rewrite the .md and .png from the .json")
    args = ap.parse_args(argv)
    if args.render:
        suffix = "-quick" if args.quick else ""
        report = json.loads((RESULTS / f"broadphase{suffix}.json").read_text())
        (RESULTS / f"broadphase{suffix}.md").write_text(markdown(report))
        chart(report, RESULTS / f"broadphase{suffix}.png")
        return 0
    frames = args.frames or (10 if args.quick else 100)
    budget = args.peer_budget or (5.0 if args.quick else 15.0)
    our_budget = args.budget or (10.0 if args.quick else 60.0)
    import collisionkit as ck
    from collisionkit.world.broadphases import default_cell

    report = {
        "date": _dt.date.today().isoformat(), "machine": f"{platform.node()} ({platform.machine()}, 2-core VM)",
        "python": sys.version.split()[0], "collisionkit": ck.__version__, "frames": frames, "quick": args.quick,
        "scenes": [],
    }
    for name in scene_list([s for s in args.scenes.split(",") if s], args.quick):
        t = time.perf_counter()
        scene = make_scene(name)
        rows, hashes, answers = [], {}, {}
        for bp in OURS:
            if bp == "brute" and scene.n > 10000:
                continue
            f = frames if not (bp == "brute" and scene.n >= 10000) else min(frames, 10)
            answers[f"collisionkit {bp}"] = {}
            rows.append(run_ours(scene, bp, f, hashes, our_budget, answers[f"collisionkit {bp}"]))
            print(f"  {name:14s} {rows[-1]['engine']:28s} broad {rows[-1]['broad_ms']:9.3f} ms  step {rows[-1]['step_ms']:9.3f} ms  pairs {rows[-1]['pairs']}", flush=True)
        ref = hashes.get("tree")
        agree = all(h[: len(ref)] == ref[: len(h)] for h in hashes.values())
        if not args.no_peers:
            # the cell Coal's spatial hash gets: ours, from the objects' sizes
            w = ck.World("grid")
            first = next(iter(scene.frames(1)))
            for i in range(scene.n):
                w.add(f"o{i}", scene.meshes[scene.kinds[i]], first[i])
            cell = default_cell(w._lo, w._hi, w._order)
            del w
            for mgr in COAL:
                if scene.n > 10000 and mgr in SLOW_AT_100K:
                    rows.append({"engine": f"coal {mgr.replace('CollisionManager', '')}", "kind": "peer", "error": SLOW_AT_100K[mgr]})
                    continue
                try:
                    rows.append(run_coal(scene, mgr, frames, budget, cell))
                except Exception as exc:  # noqa: BLE001 - a peer that fails is reported, not fatal
                    rows.append({"engine": f"coal {mgr}", "kind": "peer", "error": repr(exc)})
                r = rows[-1]
                print(f"  {name:14s} {r['engine']:28s} " + (f"frame {r['frame_ms']:9.3f} ms (C++ {r['broad_ms']:8.3f})  pairs {r['pairs']}" if "error" not in r else r["error"]), flush=True)
            answers["python-fcl DynamicAABBTree"] = {}
            rows.append(run_fcl(scene, frames, budget, answers["python-fcl DynamicAABBTree"]))
            r = rows[-1]
            print(f"  {name:14s} {r['engine']:28s} frame {r['frame_ms']:9.3f} ms  pairs {r['pairs']}", flush=True)
            pb = run_pybullet(scene, frames, budget)
            if pb is not None:
                rows.append(pb)
                print(f"  {name:14s} {pb['engine']:28s} step {pb['step_ms']:9.3f} ms", flush=True)
        frames_T = {f: T.copy() for f, T in enumerate(scene.frames(max(REFEREE_FRAMES) + 1))}
        referee = referee_step(scene, frames_T, answers)
        for e, v in referee.items():
            print(f"  {name:14s} {e:28s} referee: {v['status']} {v['explained'] or ''} {v['unexplained'] or ''}", flush=True)
        report["scenes"].append({
            "scene": name, "objects": scene.n, "triangles": scene.triangles, "agree": agree, "referee": referee,
            "seconds": time.perf_counter() - t, "rows": rows,
            # issue #20: each scene keeps its own provenance, so a merged rerun of one scene
            # does not restamp the others with today's date
            **_provenance(),
        })
        print(f"{name}: {scene.n} objects, {scene.triangles} triangles, broad phases agree: {agree}", flush=True)
        write(report, args.quick, args.merge or len(report["scenes"]) > 1)  # after every scene: a killed run keeps its scenes
    print(markdown(report))
    return 0


def _provenance() -> dict:
    import subprocess

    from collisionkit._numba import kernel_source_hash

    try:
        commit = subprocess.run(
            ["git", "-C", str(RESULTS.parent.parent), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {
        "date": _dt.date.today().isoformat(),
        "commit": commit or "unknown",
        "kernel_source_hash": kernel_source_hash(),
        "command": "python -m benchmarks.broadphase " + " ".join(sys.argv[1:]),
    }


def write(report: dict, quick: bool, merge: bool) -> None:
    """Write results/broadphase[-quick].{json,md,png}, merging with the file's other scenes."""
    suffix = "-quick" if quick else ""
    RESULTS.mkdir(exist_ok=True)
    old = RESULTS / f"broadphase{suffix}.json"
    out = dict(report)
    if merge and old.is_file():
        done = {sc["scene"] for sc in report["scenes"]}
        previous = json.loads(old.read_text())
        order = scene_list([], quick)
        kept = [sc for sc in previous["scenes"] if sc["scene"] not in done]
        out["scenes"] = sorted(kept + report["scenes"], key=lambda sc: order.index(sc["scene"]) if sc["scene"] in order else 99)
    (RESULTS / f"broadphase{suffix}.json").write_text(json.dumps(out, indent=1))
    (RESULTS / f"broadphase{suffix}.md").write_text(markdown(out))
    chart(out, RESULTS / f"broadphase{suffix}.png")


def _fmt(x, digits=3):
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}" if x < 100 else f"{x:.0f}"
    return str(x)


def summary(scene: dict) -> dict:
    ours = [r for r in scene["rows"] if r.get("kind") == "ours" and "error" not in r]
    peers = [r for r in scene["rows"] if r.get("kind") == "peer" and "error" not in r]
    best = min(ours, key=lambda r: r["frame_ms"])
    out = {"best_ours": best["engine"], "best_ours_ms": best["frame_ms"]}
    # the full step against the one peer whose step gives the same answer (python-fcl: the set
    # of colliding object pairs), only when the referee passed both engines' answers
    ref = scene.get("referee", {})
    ok = {e for e, v in ref.items() if v["status"] != "FAIL"}
    fcl_row = next((r for r in peers if r["engine"] == "python-fcl DynamicAABBTree"), None)
    ours_ok = [r for r in ours if r["engine"] in ok]
    if fcl_row is not None and ours_ok and fcl_row["engine"] in ok:
        bs = min(ours_ok, key=lambda r: r["step_ms"])
        out.update({"best_step": bs["engine"], "best_step_ms": bs["step_ms"], "fcl_step_ms": fcl_row["step_ms"],
                    "step_ratio": fcl_row["step_ms"] / bs["step_ms"]})  # fmt: skip
    out["step_referee"] = (
        "unrefereed" if not ref else "; ".join(f"{e.replace('collisionkit ', 'ck ')}: {v['status']}" for e, v in ref.items())
    )
    if peers:
        bp = min(peers, key=lambda r: r["frame_ms"])
        # C++ alone: Coal's update + collide with its C++ collecting callback
        # (python-fcl's broad phase calls a Python function per pair)
        bc = min((r for r in peers if r["engine"].startswith("coal")), key=lambda r: r["broad_ms"], default=bp)
        out.update({
            "best_peer": bp["engine"], "best_peer_ms": bp["frame_ms"], "ratio": bp["frame_ms"] / best["frame_ms"],
            "best_peer_cpp": bc["engine"], "best_peer_cpp_ms": bc["broad_ms"], "ratio_cpp": bc["broad_ms"] / best["frame_ms"],
        })
    return out


def markdown(report: dict) -> str:
    lines = [
        "# Broad phase: the World against Coal, python-fcl, pybullet",
        "",
        f"Last written {report['date']} (each scene states when it was measured), {report['machine']}, Python {report['python']}, collisionkit {report['collisionkit']}; "
        f"{report['frames']} frames of small random motion per scene (peers: fewer on big scenes, see `frames`). "
        "Command: `python -m benchmarks.broadphase" + (" --quick`" if report["quick"] else "`") + ".",
        "",
        "Columns (medians over frames, ms): **pose** = the Python loop that hands a peer its poses; "
        "**broad** = ours: `set_poses` + `candidate_pairs`; peers: `update()` + `collide()` (C++ collecting callback "
        "for Coal, a Python callback for python-fcl); **frame** = pose + broad (what a Python user pays per frame); "
        "**step** = frame + exact narrow phase (ours: `colliding_pairs`; Coal: all contacts; python-fcl: "
        "`fcl.collide` per candidate pair; pybullet: its whole pipeline); **work** = swaps (sap), reinsertions "
        "(tree), relinks (octree), grid entries (grid, hash), box tests (brute).",
        "",
        "| scene | best of ours | ms/frame | best peer (frame) | ms/frame | ratio | best peer (C++ broad only) | ms | ratio | ours agree |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for sc in report["scenes"]:
        s = summary(sc)
        lines.append(
            f"| {sc['scene']} | {s['best_ours']} | {_fmt(s['best_ours_ms'])} | {s.get('best_peer', '-')} | {_fmt(s.get('best_peer_ms'))} | "
            f"{_fmt(s.get('ratio'), 1)}x | {s.get('best_peer_cpp', '-')} | {_fmt(s.get('best_peer_cpp_ms'))} | {_fmt(s.get('ratio_cpp'), 1)}x | {sc['agree']} |"
        )
    lines += [
        "",
        "Full step (poses + broad phase + exact narrow phase: the set of colliding object pairs) against "
        "python-fcl, the one peer whose Python step gives that answer (`fcl.collide` per candidate pair, on BVHs "
        "of the same triangles). Coal's Python bindings cannot: `CollisionCallBackCollect.getCollisionPairs` has "
        "no Python converter (coal 3.0.3), `CollisionCallBackBase` cannot be subclassed from Python, and "
        "`CollisionCallBackDefault` computes every contact into one result without object ids; Coal's step "
        "column below (all contacts) is therefore not compared. Ratios only where the referee passed both "
        f"engines (frames {', '.join(map(str, REFEREE_FRAMES))}: every disputed pair and 20 agreed pairs a frame "
        "decided by tests/brute.py).",
        "",
        "| scene | best step of ours | ms/step | python-fcl ms/step | ratio | referee |",
        "|---|---|---|---|---|---|",
    ]
    for sc in report["scenes"]:
        s = summary(sc)
        lines.append(
            f"| {sc['scene']} | {s.get('best_step', '-')} | {_fmt(s.get('best_step_ms'))} | {_fmt(s.get('fcl_step_ms'))} | "
            f"{_fmt(s.get('step_ratio'), 1)}{'x' if s.get('step_ratio') else ''} | {s['step_referee']} |"
        )
    for sc in report["scenes"]:
        when = (
            f"Measured {sc['date']}, commit {sc['commit'][:12]}, kernel-source hash {sc['kernel_source_hash']}, "
            f"command `{sc['command']}`."
            if "date" in sc
            else f"Measured on or before {report['date']} (no per-scene provenance recorded then)."
        )
        lines += [
            "",
            f"## {sc['scene']}: {sc['objects']} objects, {sc['triangles']} triangles",
            "",
            when,
            "",
            "| engine | frames | pose | broad | frame | step | pairs | colliding | work |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in sc["rows"]:
            if "error" in r:
                lines.append(f"| {r['engine']} | failed: {r['error']} | | | | | | | |")
                continue
            lines.append(
                f"| {r['engine']} | {r['frames']} | {_fmt(r['pose_ms'])} | {_fmt(r['broad_ms'])} | {_fmt(r['frame_ms'])} | "
                f"{_fmt(r['step_ms'])} | {_fmt(r['pairs'])} | {_fmt(r.get('colliding') if r.get('colliding') is not None else (('contacts ' + str(r['contacts'])) if r.get('contacts') is not None and r['kind'] == 'peer' else None))} | {_fmt(r['work'])} |"
            )
    return "\n".join(lines) + "\n"


def chart(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenes = report["scenes"]
    engines: list[str] = []
    for sc in scenes:
        for r in sc["rows"]:
            if "error" not in r and r.get("frame_ms") is not None and r["engine"] not in engines:
                engines.append(r["engine"])
    fig, ax = plt.subplots(figsize=(max(8, 1.6 * len(scenes)), 5))
    width = 0.8 / max(1, len(engines))
    cmap = plt.get_cmap("tab20")
    for k, e in enumerate(engines):
        xs, ys = [], []
        for i, sc in enumerate(scenes):
            for r in sc["rows"]:
                if r["engine"] == e and "error" not in r and r.get("frame_ms") is not None:
                    xs.append(i + (k - len(engines) / 2) * width)
                    ys.append(r["frame_ms"])
        ax.bar(xs, ys, width, label=e, color=cmap(k % 20), edgecolor="black" if e.startswith("collisionkit") else None)
    ax.set_yscale("log")
    ax.set_xticks(range(len(scenes)))
    ax.set_xticklabels([f"{sc['scene']}\n{sc['objects']} obj" for sc in scenes])
    ax.set_ylabel("ms per frame (poses + broad phase), log")
    ax.set_title(f"Broad phase per frame ({report['date']}, 2-core VM)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
