"""``intersects(margin=d)`` against ``intersects`` on the pairs workloads (issue 30 item 2).

    python -m benchmarks.margins [--scenes env-rob,bunny-bunny,duck-shelf] [--fraction 0.01] [--poses 200]

Per scene (``benchmarks.scenes``: the same meshes and calibrated poses as
``benchmarks.pairs``), the margin d is ``--fraction`` of B's bounding-box diagonal. Timed in
the same process, interleaved, median of 5 rounds: one pose per call (a loop over the poses)
and the whole batch (one call, all threads) of ``intersects(a, b, None, T, margin=d)`` and of
``intersects(a, b, None, T)``; for reference, the full distance per call
(``distance(a, b, None, T).distance <= d``), what a margin cost without the threshold
descent. Refereed first: every margin answer equals ``distance(...).distance <= d`` and every
plain answer is within the margin answers.

Writes benchmarks/results/margins.md and .json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import collisionkit as ck

from .scenes import make_scene

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_SCENES = ("env-rob", "bunny-bunny", "duck-shelf")


def _rounds(fns: dict, rounds: int = 5) -> dict[str, float]:
    """Median seconds of each of ``fns`` over ``rounds`` rounds, the functions interleaved."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t)
    return {k: float(np.median(v)) for k, v in times.items()}


def run_scene(name: str, fraction: float, poses: int) -> dict:
    sc = make_scene(name, poses)
    a = ck.Mesh(sc.mesh_a.vertices, sc.mesh_a.faces)
    b = ck.Mesh(sc.mesh_b.vertices, sc.mesh_b.faces)
    lo, hi = sc.mesh_b.bbox
    d = float(fraction * np.linalg.norm(hi - lo))
    P = np.ascontiguousarray(sc.poses_b)
    n = P.shape[0]
    singles = [np.ascontiguousarray(T) for T in P]
    # referee
    dist = np.asarray(ck.distance(a, b, None, P).distance)
    within = np.asarray(ck.intersects(a, b, None, P, margin=d))
    plain = np.asarray(ck.intersects(a, b, None, P))
    assert np.array_equal(within, dist <= d), f"{name}: margin answers differ from distance <= d"
    assert np.array_equal([ck.intersects(a, b, None, T, margin=d) for T in singles], within)
    assert not (plain & ~within).any()
    fns = {
        "margin_call": lambda: [ck.intersects(a, b, None, T, margin=d) for T in singles],
        "plain_call": lambda: [ck.intersects(a, b, None, T) for T in singles],
        "distance_call": lambda: [ck.distance(a, b, None, T).distance <= d for T in singles],
        "margin_batch": lambda: ck.intersects(a, b, None, P, margin=d),
        "plain_batch": lambda: ck.intersects(a, b, None, P),
    }
    t = _rounds(fns)
    return {
        "scene": name, "poses": n, "margin": d, "fraction": fraction,
        "colliding": int(plain.sum()), "within": int(within.sum()),
        **{f"{k}_us": v / n * 1e6 for k, v in t.items()},
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", default=",".join(DEFAULT_SCENES))
    ap.add_argument("--fraction", type=float, default=0.01)
    ap.add_argument("--poses", type=int, default=200)
    args = ap.parse_args(argv)
    rows = [run_scene(s, args.fraction, args.poses) for s in args.scenes.split(",") if s]
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} cores"}
    from .pairs import provenance, stamp

    meta["provenance"] = provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.margins")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "margins.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2))
    lines = [
        f"# intersects(margin=d) vs intersects ({meta['date']}, {meta['machine']})",
        "",
        f"`python -m benchmarks.margins --scenes {args.scenes} --fraction {args.fraction:g} --poses {args.poses}`: "
        "d = fraction x B's bounding-box diagonal; us per pose, medians of 5 interleaved rounds. Refereed: "
        "every margin answer equals `distance(...).distance <= d`.",
        "",
        "| scene | d | colliding / within / poses | per call: margin | plain | ratio | full distance | "
        "batch: margin | plain | ratio |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['scene']} | {r['margin']:.3g} | {r['colliding']} / {r['within']} / {r['poses']} | "
            f"{r['margin_call_us']:.1f} | {r['plain_call_us']:.1f} | {r['margin_call_us'] / r['plain_call_us']:.2f} | "
            f"{r['distance_call_us']:.1f} | {r['margin_batch_us']:.2f} | {r['plain_batch_us']:.2f} | "
            f"{r['margin_batch_us'] / r['plain_batch_us']:.2f} |"
        )
    (RESULTS / "margins.md").write_text(stamp("\n".join(lines) + "\n", meta["provenance"]))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
