"""Robots with thousands of links: load, first self-collision check, two configurations
(issue 31 item 6).

    python -m benchmarks.many_links [--links 1000,5000] [--kind chain] [--out results]

A generated URDF (``many_links_urdf``): a chain (or a tree) of ``n`` small box links on
revolute joints, each box 0.1 long, its joint at the previous box's tip. Per size, in a
fresh process (so each peak RSS is that size's alone): the time to load the robot
(``Robot.load``), to answer the first ``Robot.check`` (the checker's preparation included)
and two more configurations, one straight (free) and one folded (colliding), plus the
process's peak resident memory. Answers are refereed first: the straight chain is free,
the folded one collides, and on sizes up to ``--referee`` links every answer equals the
per-pair path's (``robot/check.py``).

The issue measured 308 s and 6.3 GB for 2 configurations of a 5,000-link robot before the
fix (self-collision pairs built in Python, every pair tested every call).

Writes benchmarks/results/many_links.md and .json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def many_links_urdf(n: int, kind: str = "chain", length: float = 0.1, width: float = 0.04) -> str:
    """A URDF of ``n`` box links (``width`` x ``width`` x ``length``), each on a revolute
    joint at the previous box's tip (axes alternating x and y).

    ``kind="chain"``: one serial chain. ``kind="tree"``: link k hangs from link
    ``(k - 1) // 2`` (a binary tree), the two children of a link tilted +-0.6 rad apart, so
    that at q = 0 nearby branches meet and deeper ones cross.
    """
    parts = [f'<robot name="many_{kind}_{n}">']
    for k in range(n):
        parts.append(
            f'<link name="l{k}"><collision><origin xyz="0 0 {length / 2}"/>'
            f'<geometry><box size="{width} {width} {length}"/></geometry></collision></link>'
        )
    for k in range(1, n):
        parent = k - 1 if kind == "chain" else (k - 1) // 2
        tilt = 0.0 if kind == "chain" else (0.6 if k % 2 else -0.6)
        axis = "1 0 0" if k % 2 else "0 1 0"
        parts.append(
            f'<joint name="j{k}" type="revolute"><parent link="l{parent}"/><child link="l{k}"/>'
            f'<origin xyz="0 0 {length}" rpy="{tilt} 0 0"/><axis xyz="{axis}"/>'
            f'<limit lower="-3" upper="3" effort="1" velocity="1"/></joint>'
        )
    parts.append("</robot>")
    return "\n".join(parts)


def folded(dof: int) -> np.ndarray:
    """A configuration that folds a chain onto itself (every joint bent 1.2 rad about its
    axis: the chain coils and crosses its earlier links)."""
    return np.full(dof, 1.2)


def _peak_rss_mb() -> float:
    """Peak resident memory of this process, MB (ru_maxrss: kB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def measure(n: int, kind: str, referee: int) -> dict:
    """One size in this process: load, first check, two configurations (seconds), peak RSS."""
    import collisionkit as ck

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "robot.urdf")
        Path(path).write_text(many_links_urdf(n, kind))
        t0 = time.perf_counter()
        robot = ck.Robot.load(path)
        t1 = time.perf_counter()
    q0 = np.zeros(robot.dof)
    first = bool(robot.check(q0))
    t2 = time.perf_counter()
    q1 = folded(robot.dof)
    answers = [bool(robot.check(q0)), bool(robot.check(q1))]
    t3 = time.perf_counter()
    row = {
        "links": n, "kind": kind, "load_s": t1 - t0, "first_check_s": t2 - t1, "two_configs_s": t3 - t2,
        "total_s": t3 - t0, "peak_rss_mb": _peak_rss_mb(), "answers": [first, *answers],
    }  # fmt: skip
    ok = kind != "chain" or (not first and answers == [False, True])
    if n <= referee:
        from collisionkit.robot.check import check_configurations

        ref = [bool(check_configurations(robot, q)) for q in (q0, q0, q1)]
        ok = ok and ref == row["answers"]
        row["referee"] = "per-pair path"
    row["ok"] = bool(ok)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.many_links", description=__doc__.split("\n")[0])
    ap.add_argument("--links", default="1000,2000,5000", help="comma-separated link counts")
    ap.add_argument("--kind", default="chain", choices=("chain", "tree"))
    ap.add_argument("--referee", type=int, default=1000, help="sizes up to this are refereed by the per-pair path")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child process: one size, JSON on stdout
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args(argv)
    if args.one is not None:
        print(json.dumps(measure(args.one, args.kind, args.referee)))
        return 0
    rows = []
    for n in (int(s) for s in args.links.split(",")):
        cmd = [
            sys.executable,
            "-m",
            "benchmarks.many_links",
            "--one",
            str(n),
            "--kind",
            args.kind,
            "--referee",
            str(args.referee),
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[1])
        row = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(
            f"{n:6d} links ({args.kind}): load {row['load_s']:.2f} s, first check {row['first_check_s']:.2f} s, "
            f"2 configs {row['two_configs_s'] * 1e3:.2f} ms, total {row['total_s']:.2f} s, peak RSS "
            f"{row['peak_rss_mb']:.0f} MB, {'ok' if row['ok'] else 'FAIL'}",
            flush=True,
        )
    if args.no_write:
        return 0 if all(r["ok"] for r in rows) else 1
    from .pairs import provenance, stamp

    meta = {"machine": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()}
    meta["provenance"] = provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.many_links")
    lines = [
        "# Robots with thousands of links (issue 31 item 6)",
        "",
        "`python -m benchmarks.many_links`: a generated chain of box links (`many_links_urdf`), each size in a",
        "fresh process: `Robot.load`, the first `Robot.check` (the checker's preparation included), then two",
        "configurations (straight: free; folded: colliding), and the process's peak resident memory.",
        "Before the fix the issue measured 308 s and 6.3 GB for 2 configurations of a 5,000-link robot.",
        "",
        "| links | load (s) | first check (s) | 2 configurations (ms) | total (s) | peak RSS (MB) | answers |",
        "|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['links']} | {r['load_s']:.2f} | {r['first_check_s']:.2f} | {r['two_configs_s'] * 1e3:.2f} | "
            f"{r['total_s']:.2f} | {r['peak_rss_mb']:.0f} | {'ok' if r['ok'] else 'FAIL'}{' (refereed)' if 'referee' in r else ''} |"
        )
    lines += ["", f"Machine: {meta['machine']}, Python {meta['python']}, {meta['cpus']} CPUs."]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "many_links.md").write_text(stamp("\n".join(lines) + "\n", meta["provenance"]))
    (RESULTS / "many_links.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
