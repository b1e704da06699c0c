"""Interleaved timing of collisionkit at two commits: is the new code slower than the old?

    python -m benchmarks.versions OLD [NEW] [--rounds 5] [--quick] [--bv KIND]

OLD and NEW are git revisions (NEW defaults to the working tree). Each revision's
``src`` is checked out once into ``build/versions/<sha>`` (a detached git worktree).
The workloads are those of ``benchmarks.pairs`` (per scene: ``intersects`` and
``contacts`` over a batch of poses, ``intersects`` one pose per call) and
``benchmarks.queries`` (distance batched and per call, time of impact per motion,
penetration batched), on the same seeded scenes, exported once to an ``.npz`` so
that both revisions read identical arrays.

Each round runs one fresh worker process per revision (the order alternates
between rounds) with ``PYTHONPATH`` set to that revision's ``src``; a worker
warms every workload (compiling if needed, not timed), then times each one (the
best of a few repeats) and prints JSON. The table gives the median over rounds of
each revision and new/old: rounds interleave, so load on the shared machine falls
on both sides alike. Both revisions' answers are compared (a digest per
workload) before any ratio is printed: a workload whose answers differ is
flagged, not timed as equal work.

Only APIs both revisions share are called, and answers are reduced to plain
arrays (``np.asarray``) so that API-shape changes between the two do not matter.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "versions"

#: (scene, poses) for the pair workloads (benchmarks.scenes names).
PAIR_SCENES = [("env-rob", 2000), ("bunny-bunny", 1000), ("duck-shelf", 500), ("soccer-soccer", 500),
               ("assembly-near-contacts", 200), ("miss-overhead", 2000)]  # fmt: skip
QUICK_SCENES = [("env-rob", 400), ("bunny-bunny", 200), ("miss-overhead", 400)]
#: Pairs of scenes whose meshes the proximity workloads use (queries.py's pairs).
PROXIMITY = ["bunny-bunny", "env-rob"]


# --------------------------------------------------------------------------- worker (either revision)


def _digest(*arrays) -> str:
    h = hashlib.sha1()
    for x in arrays:
        a = np.ascontiguousarray(np.asarray(x))
        h.update(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())
    return h.hexdigest()[:12]


def _time(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _workloads(ck, data, bv: str | None = None):
    """name -> (callable, per: units the time is divided by, digest callable).

    ``bv``: every mesh built with that volume kind (both revisions alike), else each
    revision's default.
    """
    out = {}
    opts = None if bv is None else ck.BuildOptions(bv=bv)
    for name in data["scenes"]:
        a = ck.Mesh(data[f"{name}/va"], data[f"{name}/fa"], options=opts)
        b = ck.Mesh(data[f"{name}/vb"], data[f"{name}/fb"], options=opts)
        pb = data[f"{name}/poses"]
        n = pb.shape[0]
        one = pb[: min(n, 200)]

        def inter(a=a, b=b, pb=pb):
            return np.asarray(ck.intersects(a, b, None, pb))

        def cont(a=a, b=b, pb=pb):
            c = ck.contacts(a, b, None, pb)
            return np.asarray(c.pose_index), np.asarray(c.face_a), np.asarray(c.face_b)

        def single(a=a, b=b, one=one):
            eye = np.eye(4)
            return np.array([bool(ck.intersects(a, b, eye, T)) for T in one])

        out[f"{name}: intersects (batch)"] = (inter, n)
        out[f"{name}: contacts (batch)"] = (cont, n)
        out[f"{name}: intersects (per call)"] = (single, one.shape[0])
    for name in data["proximity"]:
        a = ck.Mesh(data[f"{name}/va"], data[f"{name}/fa"], options=opts)
        b = ck.Mesh(data[f"{name}/vb"], data[f"{name}/fb"], options=opts)
        pb = data[f"{name}/near"]
        k = min(pb.shape[0], 50)
        k_toi = min(k, 10)

        def dist(a=a, b=b, pb=pb):
            return np.asarray(ck.distance(a, b, None, pb).distance)

        def dist1(a=a, b=b, pb=pb, k=k):
            return np.array([float(np.asarray(ck.distance(a, b, np.eye(4), pb[i]).distance).reshape(-1)[0]) for i in range(k)])

        def toi(a=a, b=b, pb=pb, k=k_toi):
            eye = np.eye(4)
            ts = []
            for i in range(k):
                end = pb[i].copy()
                end[:3, 3] = -end[:3, 3]
                ts.append(float(np.asarray(ck.time_of_impact(a, b, eye, eye, pb[i], end).t).reshape(-1)[0]))
            return np.array(ts)

        out[f"{name}: distance (batch)"] = (dist, pb.shape[0])
        out[f"{name}: distance (per call)"] = (dist1, k)
        out[f"{name}: time_of_impact (per motion)"] = (toi, k_toi)
    box_a = ck.primitives.box_mesh([1, 1, 1])
    box_b = ck.primitives.box_mesh([0.5, 1.5, 0.8])
    pp = data["penetration/poses"]

    def pen():
        r = ck.penetration(box_a, box_b, None, pp)
        return np.asarray(r.depth)

    out["box-box: penetration (batch)"] = (pen, pp.shape[0])
    return out


def worker(data_path: str, repeats: int, bv: str | None = None) -> None:
    import collisionkit as ck

    data = dict(np.load(data_path, allow_pickle=False))
    data["scenes"] = [s for s in str(data["names"]).split(",") if s]
    data["proximity"] = [s for s in str(data["proximity_names"]).split(",") if s]
    result: dict = {"__module__": ck.__file__}
    for name, (fn, per) in _workloads(ck, data, bv).items():
        answer = fn()  # warm: compiles here, untimed
        answers = answer if isinstance(answer, tuple) else (answer,)
        result[name] = {"s_per_unit": _time(fn, repeats) / per, "digest": _digest(*answers)}
    print(json.dumps(result))


# --------------------------------------------------------------------------- parent


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def checkout(rev: str) -> tuple[str, Path]:
    """(full sha, src folder) of a revision, checked out once into build/versions."""
    sha = _git("rev-parse", rev)
    tree = WORK / sha[:12]
    if not (tree / "src").exists():
        WORK.mkdir(parents=True, exist_ok=True)
        _git("worktree", "add", "--detach", "-f", str(tree), sha)
    return sha, tree / "src"


def export_scenes(path: Path, quick: bool) -> None:
    """The scenes as plain arrays (meshes and poses), read alike by both revisions."""
    from . import scenes as S

    chosen = QUICK_SCENES if quick else PAIR_SCENES
    arrays: dict[str, np.ndarray] = {}
    for name, n in chosen:
        sc = S.make_scene(name, n)
        arrays[f"{name}/va"], arrays[f"{name}/fa"] = np.asarray(sc.mesh_a.vertices, float), np.asarray(sc.mesh_a.faces, np.int64)
        arrays[f"{name}/vb"], arrays[f"{name}/fb"] = np.asarray(sc.mesh_b.vertices, float), np.asarray(sc.mesh_b.faces, np.int64)
        arrays[f"{name}/poses"] = np.ascontiguousarray(sc.poses_b, float)
    rng = np.random.default_rng(7)
    prox = [p for p in PROXIMITY if f"{p}/va" in arrays]
    for name in prox:
        # poses near contact: the scene's own poses pushed out a little (distance > 0 mostly)
        poses = arrays[f"{name}/poses"][: 100 if not quick else 30].copy()
        poses[:, :3, 3] *= 1.0 + 0.2 * rng.random((poses.shape[0], 1))
        arrays[f"{name}/near"] = poses
    R = np.array([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(200)])
    R[np.linalg.det(R) < 0] *= -1
    pen = np.tile(np.eye(4), (200, 1, 1))
    pen[:, :3, :3] = R
    pen[:, :3, 3] = rng.normal(scale=0.5, size=(200, 3))
    arrays["penetration/poses"] = pen
    arrays["names"] = np.array(",".join(n for n, _ in chosen))
    arrays["proximity_names"] = np.array(",".join(prox))
    np.savez(path, **arrays)


def run_worker(src: Path, data: Path, repeats: int, bv: str | None = None) -> dict:
    # this file run as a script: its folder, not a package, comes first on sys.path, and
    # PYTHONPATH puts the revision's src before the installed (editable) collisionkit
    env = dict(os.environ, PYTHONPATH=str(src))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(data), "--repeats", str(repeats)]
    if bv is not None:
        cmd += ["--bv", bv]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"worker for {src} failed:\n{r.stderr[-4000:]}")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    where = out.pop("__module__")
    if not where.startswith(str(src)):
        raise SystemExit(f"worker for {src} imported collisionkit from {where}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.versions", description=__doc__.split("\n")[0])
    ap.add_argument("old", nargs="?", help="the old revision (e.g. a commit before a change)")
    ap.add_argument("new", nargs="?", default=None, help="the new revision (default: the working tree)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats per workload in a worker (best kept)")
    ap.add_argument("--quick", action="store_true", help="three small scenes, 2 rounds")
    ap.add_argument("--json", default=None, help="also write the raw rounds to this file")
    ap.add_argument("--bv", default=None, help="build every mesh with this volume kind in both revisions (default: each one's default)")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        worker(a.worker, a.repeats, a.bv)
        return 0
    if a.old is None:
        ap.error("the old revision is required")
    rounds = 2 if a.quick else a.rounds
    old_sha, old_src = checkout(a.old)
    if a.new is None:
        new_sha, new_src = _git("rev-parse", "HEAD") + ("-dirty" if _git("status", "--porcelain") else ""), ROOT / "src"
    else:
        new_sha, new_src = checkout(a.new)
    WORK.mkdir(parents=True, exist_ok=True)
    data = WORK / ("scenes-quick.npz" if a.quick else "scenes.npz")
    export_scenes(data, a.quick)
    print(f"old {old_sha[:12]}, new {new_sha[:12]}; {rounds} rounds; bv {a.bv or 'each default'}", file=sys.stderr, flush=True)
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    for r in range(rounds):
        order = [("old", old_src), ("new", new_src)] if r % 2 == 0 else [("new", new_src), ("old", old_src)]
        for side, src in order:
            t0 = time.perf_counter()
            runs[side].append(run_worker(src, data, a.repeats, a.bv))
            print(f"  round {r + 1}/{rounds} {side}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps({"old": old_sha, "new": new_sha, "runs": runs}, indent=1))
    print(f"| workload | old {old_sha[:10]} us | new {new_sha[:10]} us | new/old |")
    print("|---|---:|---:|---:|")
    ratios = []
    for name in runs["old"][0]:
        if name not in runs["new"][0]:
            continue
        med = {s: statistics.median(run[name]["s_per_unit"] for run in runs[s]) * 1e6 for s in runs}
        same = runs["old"][0][name]["digest"] == runs["new"][0][name]["digest"]
        ratio = med["new"] / med["old"]
        if same:
            ratios.append(ratio)
        flag = "" if same else " (answers differ: not compared)"
        print(f"| {name} | {med['old']:.2f} | {med['new']:.2f} | {ratio:.3f}{flag} |")
    if ratios:
        geo = float(np.exp(np.mean(np.log(ratios))))
        print(f"\ngeomean new/old over {len(ratios)} workloads: {geo:.3f}; worst {max(ratios):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
