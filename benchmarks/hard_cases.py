"""Benchmarks of the hard cases (issue 15, item 8): collisionkit against Coal, python-fcl,
trueform and py-parry3d on the generated scenes of ``benchmarks/hard_scenes.py`` (gears
in near contact, a bolted flange, a press fit, a 512k-triangle scan, thin robot links).

Usage::

    python -m benchmarks.hard_cases                      # full run, writes results/hard_cases.{md,json}
    python -m benchmarks.hard_cases --quick              # fewer poses, 2 rounds (same meshes)
    python -m benchmarks.hard_cases --scenes gears-15k,thin-links --rounds 5 --no-write

Workloads (medians over ``--rounds`` interleaved rounds; every engine sees the same poses,
its objects, requests and transforms built outside the timed region; the engine order
rotates per round):

* ``bool_call``: boolean per call (us/call); ``pairs_call``: all intersecting triangle
  pairs per call, ids only, every answer a ``(k, 2)`` int64 array (us/call);
* ``bool_batch``: the pose batch as one call (us/pose): collisionkit at 1 thread and at
  numba's default threads, py-parry3d's ``CollisionWorld.check`` (rayon, set to the same
  thread count); the per-call peers' loops count as their batch (no batch call);
* ``distance_call``: minimum distance per call (us/call), with the closest faces.

collisionkit runs twice: default build options (``collisionkit``, ``bv="auto"``: the kind
it picks per pair is in the tests table) and ``BuildOptions(bv="obb")`` (``collisionkit-obb``); ``-t1``: ``threads=1``. Adapters and the
timing helpers are ``benchmarks.peers`` / ``benchmarks.pairs``' (python-fcl
``enable_contact=False``, Coal ``NO_REQUEST``, trueform's resolved nanobind calls).

Answers gate ratios: pair sets and booleans are refereed by ``benchmarks.referee``
(exact rationals, every disputed pair plus a seeded sample of agreed ones), exactly as in
``benchmarks.pairs``. Distances: every engine's reported closest faces are re-measured in
float64 (``referee.triangle_distance``, world frame) and must give its value, poses the
exact referee found colliding must report 0, and every engine must be within tolerance of
the smallest verified value (a cross-check of witnesses: not exhaustive, the scenes are
too large for ``referee.brute_distance``). An engine with an unexplained wrong answer gets
no ratio in that scene and the run exits 1. Also reported per scene: triangle and
bounding-volume tests per pose (``ck.query_stats``) for AABB and OBB trees.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import hard_scenes as H
from . import peers as P
from . import referee as R
from .pairs import (
    SETTLE_S,
    Samples,
    SceneRun,
    _jsonable,
    _la,
    _short,
    fmt_t,
    machine,
    output_hash,
    peer_batch_from_calls,
    provenance,
    provenance_line,
    ratios,
    rotate,
    timed,
    verify,
    versions,
)

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

CK, CK1, CKO, CKO1 = "collisionkit", "collisionkit-t1", "collisionkit-obb", "collisionkit-obb-t1"
CATEGORIES = {
    "bool_call": ("boolean per call", "us/call", 1e6),
    "pairs_call": ("all pairs per call", "us/call", 1e6),
    "bool_batch": ("boolean batch", "us/pose", 1e6),
    "distance_call": ("distance per call", "us/call", 1e6),
}
DEFAULT_PEERS = ("coal-obbrss", "fcl", "trueform", "parry3d")


# --------------------------------------------------------------------------- adapters


class Parry(P.Engine):
    """py-parry3d (parry3d-f64): a static group for A at the identity and a dynamic group
    for B; the batch is one ``CollisionWorld.check({"b": (n, 4, 4)}, [("a", "b", 0.0)])``
    (rayon-parallel over poses). Its TriMesh is a hollow surface, like ours. Booleans only."""

    name = "parry3d"
    module = "py_parry3d"
    batch_native = True
    can_pairs = False
    can_build = False
    note = "CollisionWorld(static A, dynamic B), check({'b': poses}, [('a', 'b', 0.0)]) per batch; rayon threads"

    @classmethod
    def version(cls) -> str:
        try:
            from importlib.metadata import version

            return version("py-parry3d")
        except Exception:  # noqa: BLE001
            return "unknown"

    def setup(self, mesh_a, mesh_b) -> None:
        import py_parry3d as pp

        def tri(m):
            return pp.TriMesh(np.array(m.vertices, dtype=np.float64), np.array(m.faces, dtype=np.uint32))

        self.world = pp.CollisionWorld(
            [pp.CollisionGroup("a", [tri(mesh_a)], static=True, transform=np.eye(4)), pp.CollisionGroup("b", [tri(mesh_b)])]
        )
        self.pairs = [("a", "b", 0.0)]

    def intersects_one(self, T_a, T_b) -> bool:
        return bool(self.intersects_batch(T_a[None], T_b[None])[0])

    def intersects_batch(self, P_a, P_b) -> np.ndarray:
        # A is static at the identity in every hard scene (checked in main)
        return np.asarray(self.world.check({"b": P_b}, self.pairs), dtype=bool)[:, 0]


class Dist:
    """Per-call distance adapters: each returns (distance, face_a, face_b)."""

    def __init__(self, kind: str, mesh_a, mesh_b, ck_mesh=None):
        self.kind = kind
        if kind == "coal-obbrss":
            import coal

            self.coal = coal
            m = P.CoalOBBRSS()
            # NOTE: the functor keeps raw pointers: the models must outlive it
            self.ga, self.gb = m._model(mesh_a), m._model(mesh_b)
            self.functor = coal.ComputeDistance(self.ga, self.gb)
            self.req, self.res = coal.DistanceRequest(), coal.DistanceResult()
            self.ta, self.tb = coal.Transform3s(), coal.Transform3s()
        elif kind == "fcl":
            import fcl

            self.fcl = fcl
            m = P.FCL()
            self.oa = fcl.CollisionObject(m._model(mesh_a), fcl.Transform())
            self.ob = fcl.CollisionObject(m._model(mesh_b), fcl.Transform())
            self.req = fcl.DistanceRequest()
        else:
            import collisionkit as ck

            self.ck = ck
            self.a, self.b = ck_mesh

    def __call__(self, Ta, Tb) -> tuple[float, int, int]:
        if self.kind == "coal-obbrss":
            ta, tb = self.ta, self.tb
            ta.setRotation(Ta[:3, :3])
            ta.setTranslation(Ta[:3, 3])
            tb.setRotation(Tb[:3, :3])
            tb.setTranslation(Tb[:3, 3])
            res = self.res
            res.clear()
            d = self.functor(ta, tb, self.req, res)
            return float(d), int(res.b1), int(res.b2)
        if self.kind == "fcl":
            oa, ob = self.oa, self.ob
            oa.setRotation(Ta[:3, :3])
            oa.setTranslation(Ta[:3, 3])
            ob.setRotation(Tb[:3, :3])
            ob.setTranslation(Tb[:3, 3])
            res = self.fcl.DistanceResult()
            d = self.fcl.distance(oa, ob, self.req, res)
            return float(d), int(res.b1), int(res.b2)
        r = self.ck.distance(self.a, self.b, Ta, Tb)
        return float(r.distance), int(r.face_a), int(r.face_b)


# --------------------------------------------------------------------------- rounds


def run_round(run: SceneRun, rnd: int, samples: Samples, dist: dict[str, Dist]) -> None:
    s, la, lb, n = run.scene, run.la, run.lb, run.scene.n
    keep = rnd == 0

    def record(cat: str, name: str, eng: P.Engine | None, fn, per: int) -> None:
        w, c, out = timed(fn, SETTLE_S)
        samples.add(s.name, cat, name, w, c, per)
        h = output_hash(cat, eng, out, n) if eng is not None else repr(out)
        if keep:
            run.outputs[(cat, name)] = out
            run.hashes[(cat, name)] = h
        elif run.hashes.get((cat, name)) != h:
            run.round_mismatch.append(f"{name} {cat}: round {rnd} answer differs from round 0")

    per_call = [e for e in run.engines if e.name not in (CK1, CKO1) and e.name != Parry.name]
    for e in rotate(per_call, rnd):
        f = e.intersects_one
        record("bool_call", e.name, e, lambda f=f: [f(x, y) for x, y in zip(la, lb, strict=True)], n)
    for e in rotate([e for e in run.engines if e.batch_native], rnd):
        record("bool_batch", e.name, e, lambda e=e: e.intersects_batch(run.Pa, run.Pb), n)
    for e in rotate([e for e in per_call if e.can_pairs], rnd):
        f = e.all_pairs_raw
        record("pairs_call", e.name, e, lambda f=f: [f(x, y) for x, y in zip(la, lb, strict=True)], n)
    for name in rotate(list(dist), rnd):
        f = dist[name]
        record("distance_call", name, None, lambda f=f: [f(x, y) for x, y in zip(la, lb, strict=True)], n)


# --------------------------------------------------------------------------- distance referee

#: absolute distance tolerances of the engines (Coal: GJK 1e-6; see referee.TOLERANCE)
DIST_TOL = {"coal-obbrss": 1e-6}


def referee_distances(run: SceneRun, truth: np.ndarray | None) -> dict[str, dict[str, Any]]:
    """Witness check of every engine's per-call distances (see the module docstring)."""
    sc = run.scene
    outs = {name: out for (cat, name), out in run.outputs.items() if cat == "distance_call"}
    if not outs:
        return {}
    n = sc.n
    scale = float(np.abs(sc.mesh_a.vertices).max()) + float(np.abs(sc.mesh_b.vertices).max())
    scale += float(np.abs(run.Pb[:, :3, 3]).max())
    slack = R.VALUE_RTOL * scale
    verified = np.full((len(outs), n), np.inf)
    res: dict[str, dict[str, Any]] = {}
    names = list(outs)
    for k, name in enumerate(names):
        tol = DIST_TOL.get(name, 0.0)
        v: dict[str, Any] = {"wrong": 0, "explained": {}, "unexplained": [], "max_abs_err": 0.0}
        for p, (d, fa, fb) in enumerate(outs[name]):
            hit = truth is not None and bool(truth[p])
            if d <= tol + slack and (hit or d == 0.0):
                if not hit and truth is not None:
                    # reports contact where the exact referee found none among the refereed pairs:
                    # accept only if its witness faces really are within tolerance
                    td = R.triangle_distance(
                        R.world_triangles(sc.mesh_a, run.Pa[p], [fa])[0], R.world_triangles(sc.mesh_b, run.Pb[p], [fb])[0]
                    )
                    if td > tol + slack:
                        v["unexplained"].append({"pose": p, "got": d, "witness": td})
                        continue
                verified[k, p] = 0.0 if hit else d
                continue
            if hit:
                v["unexplained"].append({"pose": p, "got": d, "reference": 0.0})
                continue
            td = R.triangle_distance(
                R.world_triangles(sc.mesh_a, run.Pa[p], [fa])[0], R.world_triangles(sc.mesh_b, run.Pb[p], [fb])[0]
            )
            err = abs(td - d)
            v["max_abs_err"] = max(v["max_abs_err"], err)
            if err > tol + slack:
                v["unexplained"].append({"pose": p, "got": d, "witness": td})
                continue
            verified[k, p] = d
        res[name] = v
    best = verified.min(axis=0)
    for k, name in enumerate(names):
        v = res[name]
        tol = DIST_TOL.get(name, 0.0)
        for p in range(n):
            if math.isfinite(verified[k, p]) and verified[k, p] - best[p] > tol + slack:
                v["unexplained"].append({"pose": p, "got": float(verified[k, p]), "smallest_verified": float(best[p])})
        v["status"] = "FAIL" if v["unexplained"] else "agrees"
        v["unexplained_count"] = len(v["unexplained"])
        v["unexplained"] = v["unexplained"][:5]
    return res


def verify_with_truth(run: SceneRun) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``benchmarks.pairs.verify`` (hashes, exact referee, boolean verdicts), keeping the
    referee's per-pose truth that it computes (the distance referee needs it)."""
    kept: dict[str, Any] = {}
    orig = R.referee_pairs

    def keep(*args, **kw):
        kept["ref"] = orig(*args, **kw)
        return kept["ref"]

    R.referee_pairs = keep
    try:
        vf = verify(run, False)
    finally:
        R.referee_pairs = orig
    return vf, kept.get("ref")


# --------------------------------------------------------------------------- stats


def tree_stats(ck, run: SceneRun) -> dict[str, Any]:
    """Per-pose traversal counters (mean over the scene's poses) for explicit AABB and OBB
    trees, and the kind the default (bv="auto") picks for the pair."""
    e = run.by_name(CK)
    out: dict[str, Any] = {"auto": ck.bvh.pair_volume(e.a, e.b)}
    for label in ("aabb", "obb"):
        a, b = e.a.with_options(bv=label), e.b.with_options(bv=label)
        row = {}
        for mode in ("any", "all"):
            st = ck.query_stats(a, b, run.Pa, run.Pb, mode=mode)
            row[mode] = {
                "tri_tests": float(np.mean(st.tri_tests)),
                "bv_tests": float(np.mean(st.bv_tests)),
                "bv_updates": float(np.mean(st.bv_updates)),
            }
        out[label] = row
    return out


# --------------------------------------------------------------------------- report


def render(report: dict[str, Any]) -> str:
    m, cfg = report["machine"], report["config"]
    L = [f"# Hard cases: collisionkit vs peers ({cfg['mode']} run)", "", provenance_line(report["provenance"]), ""]
    if report.get("note"):
        L += ["Note: " + report["note"], ""]
    L.append(
        f"Machine: {m['host']}, {m['cpu_model']}, {m['cpu_count']} cores ({m['cpu_affinity']} usable), "
        f"{m['memory_gib']} GiB; load average at start {_la(m['loadavg_start'])}, at end {_la(m.get('loadavg_end'))}. "
        f"Threads: numba {report.get('numba_threads')}, parry3d {report.get('parry_threads')}. Rounds {cfg['rounds']} "
        f"(medians), engine order rotated per round. Versions: " + ", ".join(f"{k} {x}" for k, x in report["versions"].items())
    )
    L += [
        "",
        "Columns: `ck` default options (`bv='auto'`: its pick per scene is in the tests table), `ck-obb` `BuildOptions(bv='obb')`; `-t1` one thread. "
        "Ratio = fastest peer's median / ours (> 1: we are faster), with the referee's verdict; "
        "the peers' batch time is their per-call loop (no batch call) except parry3d's.",
    ]
    L += ["", "## Summary: ratio against the fastest peer", ""]
    L.append("| scene | tris A / B | colliding | workload | fastest peer | ck | ck-obb | ck-t1 | ck-obb-t1 | no ratio (referee FAIL) |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for sc in report["scenes"]:
        for cat, (title, _, _) in CATEGORIES.items():
            r = sc["ratios"].get(cat)
            if not r:
                continue
            rr = r.get("ratio", {})
            cells = [f"{rr[e]:.2f}x" if e in rr else ("FAIL" if e in r.get("no_ratio", []) else "-") for e in (CK, CKO, CK1, CKO1)]
            L.append(
                f"| {sc['name']} | {sc['tris_a']:,} / {sc['tris_b']:,} | {sc['colliding']}/{sc['n']} | {title} | "
                f"{r.get('fastest_peer', '-')} | " + " | ".join(cells) + " | "
                + (", ".join(_short(e) for e in r.get("no_ratio", []) if not e.startswith(CK)) or "-") + " |"
            )
    L += ["", "## Tests per pose (ck.query_stats, mean over the poses)", ""]
    L.append("| scene | query | auto picks | AABB tri tests | OBB tri tests | AABB BV tests | OBB BV tests | AABB/OBB tri tests |")
    L.append("|---|---|---|---|---|---|---|---|")
    for sc in report["scenes"]:
        st = sc.get("tree_stats", {})
        if "aabb" not in st or "obb" not in st:
            continue
        for mode, title in (("any", "boolean"), ("all", "all pairs")):
            a, o = st["aabb"][mode], st["obb"][mode]
            q = a["tri_tests"] / o["tri_tests"] if o["tri_tests"] else float("nan")
            L.append(
                f"| {sc['name']} | {title} | {st.get('auto', '-')} | {a['tri_tests']:,.0f} | {o['tri_tests']:,.0f} | {a['bv_tests']:,.0f} | "
                f"{o['bv_tests']:,.0f} | {q:.2f} |"
            )
    for sc in report["scenes"]:
        L += ["", f"## {sc['name']}: A {sc['mesh_a']} ({sc['tris_a']:,} tris), B {sc['mesh_b']} ({sc['tris_b']:,} tris)", ""]
        L.append(
            f"{sc['description']}. {sc['n']} poses (pose 0 nominal; rotation <= {sc['rot']:g} rad, shift <= {sc['shift']:g} "
            f"per axis), {sc['colliding']} colliding (refereed); nominal distance {sc['nominal_distance']:.3g}. "
            f"Sources: A {sc['source_a']}; B {sc['source_b']}. Set-up (untimed) s: "
            + ", ".join(f"{_short(k)} {v:.2f}" for k, v in sc["setup_s"].items())
        )
        cols = sc["engines"]
        L += ["", "| workload | unit | " + " | ".join(_short(c) for c in cols) + " | fastest peer | ratio [verdicts] |"]
        L.append("|---" * (len(cols) + 4) + "|")
        for cat, (title, unit, scale) in CATEGORIES.items():
            med = sc["medians_s"].get(cat, {})
            if not med:
                continue
            r = sc["ratios"].get(cat, {})
            fp = r.get("fastest_peer")
            rtxt = ", ".join(
                f"{_short(e)} {x:.2f}x [{r['verdict'].get(e, '?')}; {_short(fp)}: {r['verdict'].get(fp, '?')}]"
                for e, x in r.get("ratio", {}).items()
            )
            if r.get("no_ratio"):
                rtxt += (", " if rtxt else "") + "no ratio (answers FAIL): " + ", ".join(map(_short, r["no_ratio"]))
            L.append(
                f"| {title} | {unit} | " + " | ".join(fmt_t(med.get(e), scale) for e in cols) + f" | {fp or '-'} | {rtxt or '-'} |"
            )
        vf = sc["verify"]
        rf = vf.get("referee", {})
        if rf:
            c = rf["refereed"]
            L.append("")
            L.append(
                f"Referee ({rf['method']}): {c['disputed']} disputed pairs and {c['agreed_sampled']} of {c['agreed']:,} "
                "agreed pairs refereed exactly. Verdicts: "
                + ", ".join(f"{_short(k)} {R.verdict_text(v)}" for k, v in vf.get("verdicts", {}).items())
            )
        if sc.get("distance_verdicts"):
            L.append(
                "Distances (witness faces re-measured, cross-checked): "
                + ", ".join(f"{_short(k)} {R.verdict_text(v)} (max err {v['max_abs_err']:.2g})" for k, v in sc["distance_verdicts"].items())
            )
        for k, v in list(vf.get("verdicts", {}).items()) + list(sc.get("distance_verdicts", {}).items()):
            for u in v.get("unexplained", [])[:3]:
                L.append(f"UNEXPLAINED {_short(k)}: {u}  ")
        par = [f"{_short(e)} {c}: {x:.1f}" for c, d in sc["cpu_over_wall"].items() for e, x in d.items() if x and x > 1.3]
        if par:
            L.append("cpu/wall > 1.3 (parallel inside): " + "; ".join(par))
    L += ["", "## Engine settings", ""]
    for k, v in report["engine_notes"].items():
        L.append(f"* `{k}`: {v}")
    return "\n".join(L) + "\n"


# --------------------------------------------------------------------------- main


def parse(argv):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.hard_cases", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer poses per scene, 2 rounds (same meshes)")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5; quick 2)")
    ap.add_argument("--poses", type=int, default=None, help="poses per scene (default: per scene)")
    ap.add_argument("--scenes", default=None, help="comma-separated: " + ",".join(H.HARD_SCENES))
    ap.add_argument("--res", default=None, help="mesh resolution override ('tiny': the tests' miniatures)")
    ap.add_argument("--peers", default=",".join(DEFAULT_PEERS), help="comma-separated peers")
    ap.add_argument("--no-obb", action="store_true", help="skip the BuildOptions(bv='obb') columns")
    ap.add_argument("--out", default=None, help="results folder (default benchmarks/results)")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--note", default="")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    t_start = time.perf_counter()
    rounds = a.rounds or (2 if a.quick else 5)
    names = a.scenes.split(",") if a.scenes else list(H.HARD_SCENES)
    unknown = [n for n in names if n not in H.SPECS]
    if unknown:
        print(f"unknown scenes {unknown}; known: {H.HARD_SCENES}", file=sys.stderr)
        return 2
    log = lambda *x: print(*x, file=sys.stderr, flush=True)  # noqa: E731
    import numba

    import collisionkit as ck

    threads = numba.get_num_threads()
    wanted = set(a.peers.split(",")) if a.peers else set()
    parry_threads = None
    if Parry.name in wanted and Parry.available():
        import py_parry3d as pp

        pp.set_num_threads(threads)  # equal threads (a no-op once its pool exists)
        parry_threads = pp.get_num_threads()
    mode = "quick" if a.quick else "full"
    argv_list = sys.argv[1:] if argv is None else list(argv)
    report: dict[str, Any] = {
        "provenance": provenance(argv_list, prog="benchmarks.hard_cases"),
        "note": a.note,
        "machine": machine(),
        "versions": {**versions(), "py-parry3d": Parry.version()},
        "config": {"mode": mode, "rounds": rounds, "scenes": names, "poses": a.poses, "res": a.res, "argv": argv_list},
        "numba_threads": threads,
        "parry_threads": parry_threads,
        "scenes": [],
    }
    samples = Samples()
    runs: list[tuple[SceneRun, dict[str, Dist]]] = []
    obb = ck.BuildOptions(bv="obb")
    for name in names:
        sc = H.make_hard_scene(name, quick=a.quick, n=a.poses, res=a.res)
        assert np.array_equal(sc.pose_a, np.eye(4))  # parry3d's static A
        engines: list[P.Engine] = [P.Collisionkit(threads=None, label=CK), P.Collisionkit(threads=1, label=CK1)]
        if not a.no_obb:
            engines += [P.Collisionkit(threads=None, options=obb, label=CKO), P.Collisionkit(threads=1, options=obb, label=CKO1)]
        engines += [c() for c in [*P.PEERS, Parry] if c.name in wanted and c.available()]
        run = SceneRun(sc, engines)
        for e in engines:
            w, _, _ = timed(lambda e=e, sc=sc: e.setup(sc.mesh_a, sc.mesh_b))
            run.setup_s[e.name] = w
        dist = {CK: Dist(CK, sc.mesh_a, sc.mesh_b, (run.by_name(CK).a, run.by_name(CK).b))}
        if not a.no_obb:
            dist[CKO] = Dist(CK, sc.mesh_a, sc.mesh_b, (run.by_name(CKO).a, run.by_name(CKO).b))
        for peer in ("coal-obbrss", "fcl"):
            if peer in wanted and run.by_name(peer) is not None:
                dist[peer] = Dist(peer, sc.mesh_a, sc.mesh_b)
        # warm-up (compile or numba-cache load; untimed): one call of every workload
        for e in engines:
            e.intersects_batch(run.Pa[:2], run.Pb[:2])
            if e.name not in (CK1, CKO1, Parry.name):
                e.intersects_one(run.la[0], run.lb[0])
                e.all_pairs_raw(run.la[0], run.lb[0])
        for f in dist.values():
            f(run.la[0], run.lb[0])
        runs.append((run, dist))
        log(f"scene {name}: A {sc.mesh_a.n_faces:,} B {sc.mesh_b.n_faces:,} tris, n={sc.n}")
    for rnd in range(rounds):
        t_r = time.perf_counter()
        for run, dist in runs:
            run_round(run, rnd, samples, dist)
        log(f"round {rnd + 1}/{rounds}: {time.perf_counter() - t_r:.1f}s, load {_la(os.getloadavg())}")

    failed = []
    for run, _ in runs:
        sc = run.scene
        peer_batch_from_calls(samples, sc.name, run.engines)
        vf, ref = verify_with_truth(run)
        truth = np.asarray(ref["truth_colliding"], dtype=bool) if ref else None
        dv = referee_distances(run, truth)
        for k, v in dv.items():
            vf["verdicts"][k + " [distance]"] = v
        peer_names = [e.name for e in run.engines if not e.name.startswith(CK)] + [k for k in dv if not k.startswith(CK)]
        peer_names = list(dict.fromkeys(peer_names))
        entry: dict[str, Any] = {
            "name": sc.name,
            "description": sc.description,
            "mesh_a": sc.mesh_a.name,
            "mesh_b": sc.mesh_b.name,
            "tris_a": sc.mesh_a.n_faces,
            "tris_b": sc.mesh_b.n_faces,
            "source_a": sc.mesh_a.source,
            "source_b": sc.mesh_b.source,
            "n": sc.n,
            "seed": sc.seed,
            "rot": sc.info["rot"],
            "shift": sc.info["shift"],
            "res": sc.info["res"],
            "colliding": int(truth.sum()) if truth is not None else -1,
            "nominal_distance": float(run.outputs[("distance_call", CK)][0][0]),
            "setup_s": run.setup_s,
            "engines": [e.name for e in run.engines] + [k for k in dv if k not in [e.name for e in run.engines]],
            "verify": vf,
            "distance_verdicts": dv,
            "ratios": {},
            "medians_s": {},
            "cpu_over_wall": {},
            "samples_s": {},
        }
        for cat in CATEGORIES:
            if cat == "distance_call":
                r = _distance_ratios(samples, sc.name, peer_names, dv)
            else:
                r = ratios(samples, sc.name, cat, peer_names, vf)
            if r.get("peers"):
                entry["ratios"][cat] = r
        for (s, c, e), d in samples.data.items():
            if s == sc.name and c in CATEGORIES:
                entry["medians_s"].setdefault(c, {})[e] = statistics.median(d["wall"])
                entry["cpu_over_wall"].setdefault(c, {})[e] = samples.cpu_over_wall(s, c, e)
                entry["samples_s"].setdefault(c, {})[e] = d["wall"]
        entry["tree_stats"] = tree_stats(ck, run)
        report["scenes"].append(entry)
        failed += [f"{sc.name}: {_short(k)}" for k, v in vf["verdicts"].items() if v["status"] == "FAIL"]
    report["engine_notes"] = {e.name: e.note for e in runs[0][0].engines} if runs else {}
    report["engine_notes"]["distance"] = (
        "per call; Coal ComputeDistance functor + DistanceRequest() (reused result, clear()), python-fcl "
        "distance(DistanceRequest()), ck.distance; every answer (distance, face_a, face_b)"
    )
    report["machine"]["loadavg_end"] = list(os.getloadavg())
    report["wall_s"] = time.perf_counter() - t_start
    md = render(report)
    print(md)
    # NOTE: ``python -c "from benchmarks.hard_cases import rerender; rerender()"`` re-renders the
    # markdown from the JSON (the report holds everything render needs).
    if not a.no_write:
        od = Path(a.out) if a.out else RESULTS
        od.mkdir(parents=True, exist_ok=True)
        (od / "hard_cases.json").write_text(json.dumps(report, indent=1, default=_jsonable) + "\n")
        (od / "hard_cases.md").write_text(md)
        log(f"wrote {od / 'hard_cases.md'} and .json")
    log(f"total {report['wall_s']:.1f}s")
    if failed:
        log("ANSWERS FAIL THE REFEREE (no ratio reported for them): " + "; ".join(failed))
        return 1
    return 0


def rerender(path: str | Path = RESULTS / "hard_cases.json") -> str:
    """Rewrite hard_cases.md from hard_cases.json (after a change of the report's layout)."""
    path = Path(path)
    md = render(json.loads(path.read_text()))
    path.with_suffix(".md").write_text(md)
    return md


def _distance_ratios(samples: Samples, scene: str, peer_names: list[str], dv: dict[str, Any]) -> dict[str, Any]:
    peer_t = {p: samples.median(scene, "distance_call", p) for p in peer_names}
    peer_t = {p: t for p, t in peer_t.items() if t is not None}
    out: dict[str, Any] = {"peers": peer_t, "verdict": {k: R.verdict_text(v) for k, v in dv.items()}, "no_ratio": []}
    ok = {p: t for p, t in peer_t.items() if dv.get(p, {}).get("status") != "FAIL"}
    out["no_ratio"] = [p for p in peer_t if p not in ok]
    if not ok:
        return out
    fp = min(ok, key=ok.get)
    out["fastest_peer"], out["fastest_peer_s"] = fp, ok[fp]
    for e in (CK, CKO):
        t = samples.median(scene, "distance_call", e)
        if t is None:
            continue
        if dv.get(e, {}).get("status") == "FAIL":
            out["no_ratio"].append(e)
        else:
            out.setdefault("ratio", {})[e] = ok[fp] / t
    return out


if __name__ == "__main__":
    sys.exit(main())
