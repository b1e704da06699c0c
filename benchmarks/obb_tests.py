"""The three OBB-OBB overlap tests on millions of random box pairs: agreement, speed, operations.

Usage::

    python -m benchmarks.obb_tests            # 3 x 1,000,000 pairs, writes results/obb_tests.{md,json}
    python -m benchmarks.obb_tests --quick    # 3 x 100,000 pairs, writes nothing unless --out

Tests (kernels/volumes/obb_tests.py): the 15-axis separating-axis test (exact up to
rounding: the reference), the 144 edge/face tests of seed 004's Theorem 1 plus
a containment check, and seed 004's 60-test front-face variant plus the
containment check; the two edge/face tests are also run without the
containment check (as the seed states them) to show what it catches.

Scenes (uniform random rotations; half extents 0.05-1, one box in four long
and thin, 2-4):
* ``spread-2``: centres uniform in [-2, 2]^3 (about 1 pair in 5 overlaps);
* ``spread-0.75``: centres in [-0.75, 0.75]^3 (most pairs overlap);
* ``nested``: b shrunk to 5-20% and centred near a's centre (containment is common).

Timings: one single-threaded pass per test after a warm-up, nanoseconds per
pair including the loop over the batch (the same overhead for every test).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
METHODS = ["sat", "edge_face", "front_faces", "edge_face_only", "front_faces_only"]


def make_scene(name: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from collisionkit.kernels.volumes.obb_tests import random_boxes

    a = np.empty((n, 15))
    b = np.empty((n, 15))
    spread = {"spread-2": 2.0, "spread-0.75": 0.75, "nested": 0.0}[name]
    random_boxes(np.int64(n), np.int64(seed), spread, a)
    random_boxes(np.int64(n), np.int64(seed + 1), spread, b)
    if name == "nested":
        rng = np.random.default_rng(seed)
        b[:, 12:15] *= rng.uniform(0.05, 0.2, (n, 1))
        b[:, :3] = a[:, :3] + rng.uniform(-0.3, 0.3, (n, 3))
    return a, b


def run(n: int, seed: int = 7) -> dict:
    from collisionkit.kernels.volumes import obb_tests as T

    codes = {
        "sat": T.OBB_TEST_SAT,
        "edge_face": T.OBB_TEST_EDGE_FACE,
        "front_faces": T.OBB_TEST_FRONT_FACES,
        "edge_face_only": T.OBB_TEST_EDGE_FACE_ONLY,
        "front_faces_only": T.OBB_TEST_FRONT_FACES_ONLY,
    }
    # warm-up / compile
    wa, wb = make_scene("spread-2", 64, 1)
    for code in codes.values():
        T.obb_overlap_batch(wa, wb, np.int64(code), True, np.empty(64, np.bool_), np.zeros(2, np.int64))
    report: dict = {"pairs_per_scene": n, "scenes": {}}
    for scene in ["spread-2", "spread-0.75", "nested"]:
        a, b = make_scene(scene, n, seed)
        results = {}
        rows = {}
        for name, code in codes.items():
            out = np.empty(n, np.bool_)
            ops = np.zeros(2, np.int64)
            T.obb_overlap_batch(a, b, np.int64(code), True, out, ops)
            timing = np.empty(n, np.bool_)
            t0 = time.perf_counter()
            T.obb_overlap_batch(a, b, np.int64(code), False, timing, np.zeros(2, np.int64))
            dt = time.perf_counter() - t0
            assert np.array_equal(out, timing)
            results[name] = out
            rows[name] = {"ns_per_pair": dt / n * 1e9, "tests_per_pair": ops[0] / n, "flops_per_pair": ops[1] / n}
        ref = results["sat"]
        for name in codes:
            r = results[name]
            rows[name]["false_positive"] = int(np.count_nonzero(r & ~ref))
            rows[name]["false_negative"] = int(np.count_nonzero(~r & ref))
            rows[name]["agree"] = bool(np.array_equal(r, ref))
        report["scenes"][scene] = {"overlap_fraction": float(ref.mean()), "methods": rows}
    return report


def to_markdown(rep: dict) -> str:
    lines = [
        "# OBB-OBB overlap tests: SAT vs edge/face (Theorem 1) vs front faces (seed 004)",
        "",
        f"{rep['pairs_per_scene']:,} random box pairs per scene; machine: {rep.get('machine', '?')}; date {rep.get('date', '?')}.",
        "Command: `python -m benchmarks.obb_tests" + (" --quick" if rep.get("quick") else "") + "`.",
        "",
        "tests = axis tests (SAT) or edge/face solves + face-orientation cosines + containment checks;",
        "flops = multiplications, additions, divisions, abs/compares as executed (early exits stop counting).",
        "`*_only` = the seed's test without the containment check.",
        "",
    ]
    for scene, s in rep["scenes"].items():
        lines += [
            f"## {scene} (overlapping: {100 * s['overlap_fraction']:.1f}%)",
            "",
            "| test | agrees with SAT | false positives | false negatives | ns/pair | x SAT | tests/pair | flops/pair |",
            "|---|---|---|---|---|---|---|---|",
        ]
        sat_ns = s["methods"]["sat"]["ns_per_pair"]
        for name, m in s["methods"].items():
            lines.append(
                f"| {name} | {'yes' if m['agree'] else 'NO'} | {m['false_positive']:,} | {m['false_negative']:,} | "
                f"{m['ns_per_pair']:.0f} | {m['ns_per_pair'] / sat_ns:.1f} | {m['tests_per_pair']:.1f} | {m['flops_per_pair']:.0f} |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="100,000 pairs per scene, no files unless --out")
    p.add_argument("--pairs", type=int, default=None, help="pairs per scene (default 1,000,000; quick 100,000)")
    p.add_argument("--out", type=Path, default=None, help="folder for obb_tests.md/.json (default benchmarks/results)")
    args = p.parse_args(argv)
    n = args.pairs or (100_000 if args.quick else 1_000_000)
    rep = run(n)
    rep["quick"] = args.quick
    rep["machine"] = f"{platform.machine()} VM, {__import__('os').cpu_count()} cores ({platform.processor() or 'cpu'})"
    rep["date"] = _dt.date.today().isoformat()
    from .pairs import provenance, stamp

    rep["provenance"] = provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.obb_tests")
    md = stamp(to_markdown(rep), rep["provenance"])
    print(md)
    out = args.out if args.out is not None else (None if args.quick else HERE / "results")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "obb_tests.md").write_text(md + "\n")
        (out / "obb_tests.json").write_text(json.dumps(rep, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
