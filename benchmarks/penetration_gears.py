"""Penetration depth of two large non-convex meshes: two meshing spur gears.

Issue 18, item 8. Gear a: 30 teeth, 15,360 triangles; gear b: 40 teeth, 57,600
triangles (``collisionkit.primitives.gear_mesh``), b's centre 2.05 from a's on
x and 0.05 up, so the teeth interpenetrate. Times one warm call of each
method (after a warm-up call that compiles and builds the trees), median of
``--rounds``, and prints the answers so that "faster but wrong" shows.

    python -m benchmarks.penetration_gears [--rounds 3] [--sampled]

``--sampled`` also times the older sampled method (seconds per call).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import time

import numpy as np

import collisionkit as ck


def gears() -> tuple[ck.Mesh, ck.Mesh, np.ndarray]:
    a = ck.primitives.gear_mesh(teeth=30, samples=64, layers=1)
    b = ck.primitives.gear_mesh(
        teeth=40, outer_radius=4 / 3, root_radius=4 / 3 - 0.15, bore_radius=0.4, samples=120, layers=2
    )
    return a, b, ck.translation([2.05, 0.0, 0.05])


def _time(fn, rounds: int) -> tuple[float, float, object]:
    """(median wall seconds, median CPU seconds of the process, last answer) of warm calls."""
    fn()  # compile, build trees and caches
    wall, cpu, out = [], [], None
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sampled", action="store_true", help="also time method='sampled' (slow)")
    args = ap.parse_args(argv)
    a, b, Tb = gears()
    try:
        commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout
    except OSError:
        commit = "?"
    print(
        f"commit {commit.strip() or '?'}; {platform.machine()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}; gears {a.n_faces} + {b.n_faces} triangles; median of {args.rounds}"
    )
    runs = [("bounds", {"method": "bounds"}), ("bounds, refine", {"method": "bounds", "refine": True})]
    if args.sampled:
        runs.append(("sampled", {"method": "sampled"}))
    for name, kw in runs:
        t, c, p = _time(lambda kw=kw: ck.penetration(a, b, None, Tb, **kw), args.rounds)
        print(
            f"{name:16s} {t * 1e3:9.1f} ms (CPU {c * 1e3:8.1f} ms)  depth_lower {p.depth_lower:.6f}  depth_upper {p.depth_upper:.6f}  "
            f"direction {np.round(p.direction, 4).tolist()}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
