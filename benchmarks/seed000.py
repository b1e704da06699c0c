"""Seed 000's robot-cell experiment: R-trees with and without the overlap box (OAABB),
against collisionkit's default BVH traversal and against Coal and python-fcl.

One command::

    python -m benchmarks.seed000            # 300 steps, 3 rounds (~5-8 min on 2 cores)
    python -m benchmarks.seed000 --quick    # 60 steps, 1 round, writes nothing unless --out
    python -m benchmarks.seed000 --sweep-m  # also: node capacity m in {4, 8, 16}

Scene: ``benchmarks/robot_cell.py`` (28 parts, ~3,300 surfaces, ~34,000 triangles,
a loading trajectory). Per step, the same pairs of parts for every method (moving
parts against everything not attached to them).

What is timed, per step (the sum over the step's pairs, in ms):

* collisionkit (oaabb with and without the overlap box, the default bvh): one
  batched call per pair over all steps (``threads=1``, serial), the time divided by
  the steps: the library's intended use. ``*-loop`` rows: one call per pair per
  step (what the peers do), for a like-for-like per-call comparison.
* Coal (OBBRSS) and python-fcl: one call per pair per step (their adapters in
  ``benchmarks/peers.py``: transforms set in place, requests reused).

The three queries of the seed's table 1: (1) first intersecting surface pair,
(2) all intersecting surface pairs, (3) all surface pairs and their triangle
pairs (``collisionkit.surface_contacts``). Table 3's queries: first triangle
pair and all triangle pairs (``contacts`` mode "first" / "all"; the peers'
boolean query, which stops at the first pair, and their all-contacts query).
Table 2's counters: box tests and box updates per step (``query_stats``), and
node visits per node of A (``node_visits``) on the steps with contact.

The seed's figures came from another machine (Intel Core i5-8300H, 16 GB, the
authors' C++ code, their 6-axis robot cell in Siemens Kineo): they are printed
beside ours for their shape, not as a like-for-like comparison.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import warnings
from typing import Any

import numpy as np

from benchmarks import peers as P
from benchmarks.pairs import machine, versions
from benchmarks.robot_cell import Cell, build_cell, render_step

#: The seed's published figures (000_cd632d2b2fbaaacb.txt, tables 1-3).
SEED_TABLE1 = {"first surface": (0.04, 0.17), "all surfaces": (0.068, 1.65), "all surfaces + triangles": (1.04, 1.9)}
SEED_TABLE2 = {"box tests": {"first": (1523, 3251), "all": (18324, 34526)}, "box updates": {"first": (145, 816), "all": (631, 4125)}}
SEED_TABLE3 = {"PQP": (0.55, 5.17), "RAPID": (0.12, 3.87), "Dop Tree": (0.06, 18.25), "OPCODE": (1.64, 2.54), "CollisionSearch (seed)": (0.15, 1.56)}

HERE = os.path.dirname(os.path.abspath(__file__))


def _ck():
    import collisionkit as ck

    return ck


def _query(ck, query: str, a, b, pa, pb, strategy):
    """One of the experiment's queries on one part pair (a pose or a batch)."""
    if query == "first surface":
        return ck.surface_contacts(a, b, pa, pb, mode="first", strategy=strategy, threads=1)
    if query == "all surfaces":
        return ck.surface_contacts(a, b, pa, pb, mode="all", strategy=strategy, threads=1)
    if query == "all surfaces + triangles":
        return ck.surface_contacts(a, b, pa, pb, mode="all", triangles=True, strategy=strategy, threads=1)
    if query == "first triangle":
        return ck.contacts(a, b, pa, pb, mode="first", strategy=strategy, threads=1)
    if query == "all triangles":
        return ck.contacts(a, b, pa, pb, mode="all", strategy=strategy, threads=1)
    if query == "boolean":
        return ck.intersects(a, b, pa, pb, strategy=strategy, threads=1)
    raise KeyError(query)


class Experiment:
    def __init__(self, cell: Cell, rounds: int):
        self.cell = cell
        self.rounds = rounds
        ck = _ck()
        self.ck = ck
        self.strategies = {
            "oaabb": ck.OAABB(),
            "oaabb-no-obox": ck.OAABB(use_overlap_box=False),
            "bvh": ck.Descent(),
        }
        self.pairs = [(int(i), int(j)) for i, j in cell.pairs]

    def _args(self, i: int, j: int):
        c = self.cell
        return c.meshes[i], c.meshes[j], np.ascontiguousarray(c.poses[:, i]), np.ascontiguousarray(c.poses[:, j])

    # -- collisionkit -------------------------------------------------------------------
    def ck_query(self, strategy, query: str, loop: bool = False) -> float:
        """Seconds for one query over every pair and step (batched per pair, or looped)."""
        total = 0.0
        for i, j in self.pairs:
            a, b, pa, pb = self._args(i, j)
            if loop:
                for s in range(pa.shape[0]):
                    t0 = time.perf_counter()
                    _query(self.ck, query, a, b, pa[s], pb[s], strategy)
                    total += time.perf_counter() - t0
            else:
                t0 = time.perf_counter()
                _query(self.ck, query, a, b, pa, pb, strategy)
                total += time.perf_counter() - t0
        return total

    def counters(self, strategy, mode: str) -> dict[str, float]:
        ck = self.ck
        bv = np.zeros(self.cell.steps)
        upd = np.zeros(self.cell.steps)
        tri = np.zeros(self.cell.steps)
        nodes = np.zeros(self.cell.steps)
        for i, j in self.pairs:
            a, b, pa, pb = self._args(i, j)
            s = ck.query_stats(a, b, pa, pb, mode=mode, strategy=strategy, threads=1)
            bv += s.bv_tests
            upd += s.bv_updates
            tri += s.tri_tests
            nodes += s.node_pairs
        contact = self.contact_steps
        out = {
            "box_tests": float(bv.mean()),
            "box_updates": float(upd.mean()),
            "tri_tests": float(tri.mean()),
            "nodes": float(nodes.mean()),
        }
        if contact.any():
            out["box_tests_contact_steps"] = float(bv[contact].mean())
            out["box_updates_contact_steps"] = float(upd[contact].mean())
        return out

    def node_visit_stats(self, strategy, steps: np.ndarray) -> dict[str, float]:
        """Per query (pair, step) with contact: visits per visited node of A and of B."""
        ck = self.ck
        worst_a, mean_a, worst_b, mean_b, multi_a, visited_a = [], [], [], [], 0, 0
        for i, j in self.pairs:
            a, b, pa, pb = self._args(i, j)
            for s in steps:
                if not ck.intersects(a, b, pa[s], pb[s]):
                    continue
                nv = ck.node_visits(a, b, pa[s], pb[s], mode="all", strategy=strategy)
                va = nv.visits_a[nv.visits_a > 0]
                vb = nv.visits_b[nv.visits_b > 0]
                if va.size:
                    worst_a.append(int(va.max()))
                    mean_a.append(float(va.mean()))
                    multi_a += int((va > 1).sum())
                    visited_a += int(va.size)
                if vb.size:
                    worst_b.append(int(vb.max()))
                    mean_b.append(float(vb.mean()))
        return {
            "queries": len(worst_a),
            "A_max_visits_per_node": max(worst_a) if worst_a else 0,
            "A_mean_visits_per_visited_node": float(np.mean(mean_a)) if mean_a else 0.0,
            "A_share_of_visited_nodes_visited_more_than_once": (multi_a / visited_a) if visited_a else 0.0,
            "B_max_visits_per_node": max(worst_b) if worst_b else 0,
            "B_mean_visits_per_visited_node": float(np.mean(mean_b)) if mean_b else 0.0,
        }

    # -- verification ---------------------------------------------------------------------
    def verify(self) -> dict[str, Any]:
        """Every strategy returns the same triangle pairs at every step; surface pairs too."""
        ck = self.ck
        total_pairs = 0
        per_step = np.zeros(self.cell.steps, np.int64)
        mismatches = 0
        surf_mismatch = 0
        h = hashlib.sha256()
        for i, j in self.pairs:
            a, b, pa, pb = self._args(i, j)
            ref = ck.contacts(a, b, pa, pb, strategy="descent")
            rows = np.stack([ref.pose_index, ref.face_a, ref.face_b], axis=1)
            for name in ("oaabb", "oaabb-no-obox"):
                c = ck.contacts(a, b, pa, pb, strategy=self.strategies[name])
                if not np.array_equal(np.stack([c.pose_index, c.face_a, c.face_b], axis=1), rows):
                    mismatches += 1
            s1 = ck.surface_contacts(a, b, pa, pb, strategy="oaabb")
            s2 = ck.surface_contacts(a, b, pa, pb, strategy="descent")
            if not (np.array_equal(s1.surface_a, s2.surface_a) and np.array_equal(s1.surface_b, s2.surface_b) and np.array_equal(s1.counts, s2.counts)):
                surf_mismatch += 1
            total_pairs += len(ref)
            per_step += ref.counts
            h.update(np.array([i, j, len(rows)], np.int64).tobytes())
            h.update(np.ascontiguousarray(rows, dtype=np.int64).tobytes())
        return {
            "triangle_pairs": int(total_pairs),
            "strategy_mismatches": mismatches,
            "surface_mismatches": surf_mismatch,
            "steps_with_contact": int((per_step > 0).sum()),
            "max_pairs_step": int(per_step.argmax()),
            "result_hash": h.hexdigest()[:16],
            "per_step": per_step,
        }

    # -- peers ----------------------------------------------------------------------------------
    def peer(self, engine_cls, query: str) -> tuple[float, list[set]]:
        """Seconds for one query over every pair and step, one call per pair per step."""
        total = 0.0
        found: list[set] = []
        for i, j in self.pairs:
            eng = engine_cls()
            a, b, pa, pb = self._args(i, j)
            eng.setup(a, b)
            fn = eng.intersects_one if query == "first triangle" else eng.all_pairs_raw
            t0 = time.perf_counter()
            out = [fn(pa[s], pb[s]) for s in range(pa.shape[0])]
            total += time.perf_counter() - t0
            if query == "all triangles":
                found.append(set().union(*[{(s, x, y) for x, y in eng.pairs_from_raw(r)} for s, r in enumerate(out)]))
        return total, found

    @property
    def contact_steps(self) -> np.ndarray:
        return self._contact

    def set_contact(self, per_step: np.ndarray) -> None:
        self._contact = per_step > 0


def fmt(x: float) -> str:
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def run(args: argparse.Namespace) -> dict[str, Any]:
    ck = _ck()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cell = build_cell(args.steps)
    inv = cell.inventory()
    print(f"# seed 000 robot cell: {inv}", flush=True)
    exp = Experiment(cell, args.rounds)
    # warm-up: trees, segmentation and every kernel compiled before any timing
    tw = time.perf_counter()
    for m in cell.meshes:
        ck.OAABB().trees(m)
        ck.bvh.tree_for(m, m.options.bv)
    i, j = exp.pairs[0]
    a, b, pa, pb = exp._args(i, j)
    for strat in exp.strategies.values():
        for q in ("first surface", "all surfaces", "all surfaces + triangles", "first triangle", "all triangles"):
            exp.pairs = [(i, j)]
            exp.ck_query(strat, q)
            exp.ck_query(strat, q, loop=True)
    exp.pairs = [(int(x), int(y)) for x, y in cell.pairs]
    warm = time.perf_counter() - tw
    print(f"# warm-up (trees, segmentation, JIT): {warm:.1f} s", flush=True)
    vf = exp.verify()
    exp.set_contact(vf["per_step"])
    print(
        f"# verification: {vf['triangle_pairs']} triangle pairs over {cell.steps} steps, "
        f"{vf['steps_with_contact']} steps with contact; strategy mismatches {vf['strategy_mismatches']}, "
        f"surface mismatches {vf['surface_mismatches']}; hash {vf['result_hash']}",
        flush=True,
    )
    report: dict[str, Any] = {
        "machine": machine(),
        "versions": versions(),
        "cell": inv,
        "steps": cell.steps,
        "rounds": args.rounds,
        "warmup_s": warm,
        "verification": {k: v for k, v in vf.items() if k != "per_step"},
    }
    # -- timings: every job once per round, rounds interleaved (the VM is shared: every
    # method sees the same load); the minimum over rounds is reported, the median kept.
    jobs: dict[tuple[str, str], Any] = {}
    for q in (*SEED_TABLE1, "first triangle", "all triangles"):
        for name in ("oaabb", "oaabb-no-obox", "bvh"):
            jobs[(q, name)] = lambda name=name, q=q: exp.ck_query(exp.strategies[name], q)
    for q in ("first triangle", "all triangles", "boolean"):
        for name in ("oaabb", "bvh"):
            jobs[(q, name + "-loop")] = lambda name=name, q=q: exp.ck_query(exp.strategies[name], q, loop=True)
    engines = [eng for eng in (P.CoalOBBRSS, P.FCL) if eng.available()]
    found_by: dict[str, list[set]] = {}

    def peer_job(eng, q):
        def job():
            t, found = exp.peer(eng, q)
            if q == "all triangles":
                found_by[eng.name] = found
            return t

        return job

    for eng in engines:
        for q in ("first triangle", "all triangles"):
            jobs[(q, eng.name)] = peer_job(eng, q)
    if args.sweep_m:
        for m in (4, 8, 16):
            strat = ck.OAABB(node_capacity=m)
            for mesh in cell.meshes:
                strat.trees(mesh)
            for q in ("first triangle", "all triangles"):
                jobs[(q, f"oaabb-m{m}")] = lambda strat=strat, q=q: exp.ck_query(strat, q)
    samples: dict[tuple[str, str], list[float]] = {k: [] for k in jobs}
    keys = list(jobs)
    for rnd in range(args.rounds):
        shift = (rnd * len(keys)) // max(args.rounds, 1)
        for key in keys[shift:] + keys[:shift]:
            samples[key].append(jobs[key]() * 1e3 / cell.steps)
        print(f"# round {rnd + 1}/{args.rounds} done", flush=True)

    def entry(key):
        v = samples[key]
        return {"ms_per_step": float(min(v)), "median": float(np.median(v)), "samples": v}

    report["table1"] = {q: {name: entry((q, name)) for name in ("oaabb", "oaabb-no-obox", "bvh")} for q in SEED_TABLE1}
    t3: dict[str, Any] = {}
    for q in ("first triangle", "all triangles", "boolean"):
        t3[q] = {name: entry(key) for (qq, name), key in ((k, k) for k in keys) if qq == q}
    report["table3"] = t3
    if args.sweep_m:
        report["sweep_m"] = {m: {q: entry((q, f"oaabb-m{m}"))["ms_per_step"] for q in ("first triangle", "all triangles")} for m in (4, 8, 16)}
    # -- table 2 -------------------------------------------------------------------------
    t2: dict[str, Any] = {}
    for mode in ("first", "all"):
        t2[mode] = {name: exp.counters(exp.strategies[name], mode) for name in ("oaabb", "oaabb-no-obox", "bvh")}
    contact_steps = np.flatnonzero(exp.contact_steps)
    sample_steps = contact_steps[:: max(1, contact_steps.size // args.visit_steps)][: args.visit_steps]
    t2["node_visits"] = {
        name: exp.node_visit_stats(exp.strategies[name], sample_steps) for name in ("oaabb", "oaabb-no-obox")
    }
    t2["node_visits"]["steps"] = [int(s) for s in sample_steps]
    report["table2"] = t2
    # -- peers' answers against ours ------------------------------------------------------
    peer_agreement: dict[str, Any] = {}
    ours_all = []
    for i, j in exp.pairs:
        a, b, pa, pb = exp._args(i, j)
        c = ck.contacts(a, b, pa, pb)
        ours_all.append({(int(p), int(x), int(y)) for p, x, y in zip(c.pose_index, c.face_a, c.face_b, strict=True)})
    for name, found in found_by.items():
        same = sum(1 for x, y in zip(ours_all, found, strict=True) if x == y)
        extra = sum(len(y - x) for x, y in zip(ours_all, found, strict=True))
        missing = sum(len(x - y) for x, y in zip(ours_all, found, strict=True))
        peer_agreement[name] = {"pairs_of_parts_identical": same, "of": len(ours_all), "extra_pairs": extra, "missing_pairs": missing}
    report["peer_agreement"] = peer_agreement
    # -- picture --------------------------------------------------------------------------
    if args.png:
        report["png"] = render_step(cell, vf["max_pairs_step"], args.png)
    report["total_s"] = time.perf_counter() - t0
    return report


def render(r: dict[str, Any]) -> str:
    m = r["machine"]
    inv = r["cell"]
    lines = [
        "# Seed 000: R-trees with the overlap box, robot cell",
        "",
        f"Run {m['date']} on {m['cpu_model']} ({m['cpu_affinity']} cores usable, {m['memory_gib']} GiB, a shared VM), "
        f"{r['steps']} steps, {r['rounds']} interleaved rounds (the fastest reported: the VM is shared), serial (threads=1). "
        f"Command: `python -m benchmarks.seed000{' ' + r['argv'] if r.get('argv') else ''}`.",
        "",
        f"Scene: {inv['parts']} parts, {inv['surfaces']} surfaces, {inv['triangles']} triangles, "
        f"{inv['pairs_per_step']} part pairs per step (seed: 28 parts, 2,252 surfaces, 30,535 triangles).",
        "",
        f"Verification: {r['verification']['triangle_pairs']} intersecting triangle pairs over the run, "
        f"{r['verification']['steps_with_contact']} steps with contact; oaabb, oaabb without the overlap box "
        f"and bvh differ on {r['verification']['strategy_mismatches']} part pairs (triangle pairs) and "
        f"{r['verification']['surface_mismatches']} (surface pairs); result hash {r['verification']['result_hash']}.",
        "",
        "The seed's figures were measured on another machine (Intel Core i5-8300H, the authors' C++ "
        "implementation, their own cell): compare shapes (ratios), not absolute times.",
        "",
        "## Table 1: ms per step to find intersecting surfaces, with and without the overlap box",
        "",
        "| query | oaabb | oaabb, no overlap box | ratio without/with | bvh (default) | seed: with | seed: without | seed ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for q, (sw, so) in SEED_TABLE1.items():
        row = r["table1"][q]
        w, wo, b = row["oaabb"]["ms_per_step"], row["oaabb-no-obox"]["ms_per_step"], row["bvh"]["ms_per_step"]
        lines.append(f"| {q} | {fmt(w)} | {fmt(wo)} | {wo / w:.1f}x | {fmt(b)} | {sw} | {so} | {so / sw:.1f}x |")
    lines += [
        "",
        "## Table 2: operations per step (mean over all steps; sum over the step's part pairs)",
        "",
        "| counter | first: oaabb | first: no box | all: oaabb | all: no box | all: bvh | seed first: with / without | seed all: with / without |",
        "|---|---|---|---|---|---|---|---|",
    ]
    t2 = r["table2"]
    for label, key, seed_key in (("box tests", "box_tests", "box tests"), ("box updates", "box_updates", "box updates")):
        f1, f2 = t2["first"]["oaabb"][key], t2["first"]["oaabb-no-obox"][key]
        a1, a2, a3 = t2["all"]["oaabb"][key], t2["all"]["oaabb-no-obox"][key], t2["all"]["bvh"][key]
        sf, sa = SEED_TABLE2[seed_key]["first"], SEED_TABLE2[seed_key]["all"]
        lines.append(f"| {label} | {f1:,.0f} | {f2:,.0f} | {a1:,.0f} | {a2:,.0f} | {a3:,.0f} | {sf[0]:,} / {sf[1]:,} | {sa[0]:,} / {sa[1]:,} |")
    for label, key in (("triangle tests", "tri_tests"), ("nodes visited (bvh: node pairs)", "nodes")):
        f1, f2 = t2["first"]["oaabb"][key], t2["first"]["oaabb-no-obox"][key]
        a1, a2, a3 = t2["all"]["oaabb"][key], t2["all"]["oaabb-no-obox"][key], t2["all"]["bvh"][key]
        lines.append(f"| {label} | {f1:,.0f} | {f2:,.0f} | {a1:,.0f} | {a2:,.0f} | {a3:,.0f} | | |")
    nv = t2["node_visits"]
    lines += [
        "",
        f"Node visits per query (all pairs), on {nv['oaabb']['queries']} colliding (part pair, step) queries "
        f"from {len(nv['steps'])} steps with contact:",
        "",
        "| strategy | A: most visits of one node | A: mean visits per visited node | A: visited nodes visited more than once | B: most visits of one node |",
        "|---|---|---|---|---|",
    ]
    for name in ("oaabb", "oaabb-no-obox"):
        v = nv[name]
        lines.append(
            f"| {name} | {v['A_max_visits_per_node']:,} | {v['A_mean_visits_per_visited_node']:.1f} | "
            f"{100 * v['A_share_of_visited_nodes_visited_more_than_once']:.0f}% | {v['B_max_visits_per_node']} |"
        )
    lines += [
        "",
        "## Table 3: ms per step, first triangle pair / all triangle pairs",
        "",
        "| method | first triangle | all triangles |",
        "|---|---|---|",
    ]
    t3 = r["table3"]
    labels = {
        "oaabb": "collisionkit oaabb (seed's method), batched per pair",
        "oaabb-m4": "collisionkit oaabb, m = 4, batched",
        "oaabb-m16": "collisionkit oaabb, m = 16, batched",
        "oaabb-no-obox": "collisionkit oaabb without overlap box, batched",
        "bvh": "collisionkit bvh (default), batched per pair",
        "oaabb-loop": "collisionkit oaabb, one call per pair and step",
        "bvh-loop": "collisionkit bvh, one call per pair and step",
        "coal-obbrss": "Coal (OBBRSS), one call per pair and step",
        "fcl": "python-fcl (OBBRSS), one call per pair and step",
    }
    for key, label in labels.items():
        if key in t3["first triangle"]:
            lines.append(f"| {label} | {fmt(t3['first triangle'][key]['ms_per_step'])} | {fmt(t3['all triangles'][key]['ms_per_step'])} |")
    for key in ("oaabb-loop", "bvh-loop"):
        if key in t3.get("boolean", {}):
            lines.append(f"| {labels[key]}, boolean `intersects` | {fmt(t3['boolean'][key]['ms_per_step'])} | |")
    for name, (f, a) in SEED_TABLE3.items():
        lines.append(f"| seed: {name} (other machine) | {f} | {a} |")
    if r.get("peer_agreement"):
        lines += ["", "Peers' all-pairs answers against ours (per part pair over all steps):", ""]
        for name, v in r["peer_agreement"].items():
            lines.append(
                f"- {name}: identical on {v['pairs_of_parts_identical']}/{v['of']} part pairs; "
                f"{v['extra_pairs']} extra and {v['missing_pairs']} missing triangle pairs in all"
            )
    if r.get("sweep_m"):
        lines += ["", "## Node capacity m (oaabb, ms per step)", "", "| m | first triangle | all triangles |", "|---|---|---|"]
        for m, v in r["sweep_m"].items():
            lines.append(f"| {m} | {fmt(v['first triangle'])} | {fmt(v['all triangles'])} |")
    lines += ["", f"Total run time {r['total_s']:.0f} s (warm-up {r['warmup_s']:.0f} s).", ""]
    return "\n".join(lines)


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return x


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=None, help="trajectory steps (default 300; --quick 60)")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved timing rounds, fastest reported (default 3; --quick 1)")
    ap.add_argument("--quick", action="store_true", help="60 steps, 1 round; writes files only with --out")
    ap.add_argument("--sweep-m", action="store_true", help="also time node capacities 4, 8, 16")
    ap.add_argument("--visit-steps", type=int, default=10, help="steps with contact sampled for node visits")
    ap.add_argument("--out", default=None, help="folder for seed000.md/.json (default benchmarks/results)")
    ap.add_argument("--png", default=None, help="picture of the step with most contacts (default docs/img/seed-000-cell.png)")
    args = ap.parse_args(argv)
    args.steps = args.steps or (60 if args.quick else 300)
    args.rounds = args.rounds or (1 if args.quick else 3)
    write = args.out is not None or not args.quick
    out_dir = args.out or os.path.join(HERE, "results")
    if args.png is None and write:
        args.png = os.path.join(HERE, "..", "docs", "img", "seed-000-cell.png")
    report = run(args)
    report["argv"] = " ".join(argv if argv is not None else sys.argv[1:])
    from .pairs import provenance, stamp

    report["provenance"] = provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.seed000")
    text = stamp(render(report), report["provenance"])
    print(text)
    if write:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "seed000.md"), "w") as f:
            f.write(text)
        with open(os.path.join(out_dir, "seed000.json"), "w") as f:
            json.dump(_jsonable(report), f, indent=1)
        print(f"# wrote {out_dir}/seed000.md, seed000.json" + (f", {report.get('png')}" if report.get("png") else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
