"""Robots with thousands of links: load, first self-collision check, two configurations
(issue 31 item 6).

    python -m benchmarks.many_links [--links 1000,2000,5000] [--kind chain] [--before OLD_TREE]

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


def crossover(sizes: list[int], n: int = 200, seed: int = 7) -> list[dict]:
    """Per configuration, one call at a time: the checker listing its self pairs
    (``listed=True``: hit-ordered pairs, a box test each) against the sweep, on chains of
    ``sizes`` links (configurations: every joint uniform in +-1.5 rad, scaled by a uniform
    factor per configuration: free and colliding ones). Thread CPU microseconds, the best
    of 5 passes; answers equal (refereed)."""
    import collisionkit as ck
    from collisionkit.robot import checker as checker_mod

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for m in sizes:
            path = os.path.join(tmp, f"c{m}.urdf")
            Path(path).write_text(many_links_urdf(m))
            robot = ck.Robot.load(path)
            rng = np.random.default_rng(seed)
            Q = rng.uniform(-1.5, 1.5, (n, robot.dof)) * rng.uniform(0, 1, (n, 1))
            saved = checker_mod.SWEEP_MIN_LINKS
            checker_mod.SWEEP_MIN_LINKS = 2
            try:
                sweep = checker_mod.RobotChecker(robot)
                listed = checker_mod.RobotChecker(robot, listed=True)
            finally:
                checker_mod.SWEEP_MIN_LINKS = saved
            a = [listed.check(q) for q in Q]
            b = [sweep.check(q) for q in Q]
            row = {"links": m, "pairs": int(listed._pairs.shape[0]), "colliding": float(np.mean(a)), "ok": a == b}
            for name, chk in (("listed_us", listed), ("sweep_us", sweep)):
                best = np.inf
                for _ in range(5):
                    t = time.thread_time_ns()
                    for q in Q:
                        chk.check(q)
                    best = min(best, (time.thread_time_ns() - t) / n / 1e3)
                row[name] = best
            rows.append(row)
            print(
                f"{m:5d} links: listed {row['listed_us']:.2f} us, sweep {row['sweep_us']:.2f} us, {row['colliding']:.2f} colliding",
                flush=True,
            )
    return rows


def _child(n: int, kind: str, referee: int, src: str | None) -> dict:
    """``measure(n)`` in a fresh process (collisionkit from ``src``/src when given)."""
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.path.join(os.path.abspath(src), "src")
    cmd = [sys.executable, "-m", "benchmarks.many_links", "--one", str(n), "--kind", kind, "--referee", str(referee)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=root, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _line(r: dict) -> str:
    return (
        f"| {r['links']} | {r['load_s']:.2f} | {r['first_check_s']:.2f} | {r['two_configs_s'] * 1e3:.2f} | "
        f"{r['total_s']:.2f} | {r['peak_rss_mb']:.0f} | {'ok' if r['ok'] else 'FAIL'}{' (refereed)' if 'referee' in r else ''} |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.many_links", description=__doc__.split("\n")[0])
    ap.add_argument("--links", default="1000,2000,5000", help="comma-separated link counts")
    ap.add_argument("--kind", default="chain", choices=("chain", "tree"))
    ap.add_argument("--referee", type=int, default=1000, help="sizes up to this are refereed by the per-pair path")
    ap.add_argument(
        "--crossover",
        default="8,16,32,64,96,128,256",
        help="chain sizes where listed and swept self pairs are compared",
    )
    ap.add_argument(
        "--before", help="a source tree (its src/ imported) measured as 'before', e.g. a worktree of an older commit"
    )
    ap.add_argument("--before-label", help="what --before is, for the results file (default: its path)")
    ap.add_argument(
        "--before-links", default="1000,2000", help="sizes measured on --before (the old path is quadratic)"
    )
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child process: one size, JSON on stdout
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args(argv)
    if args.one is not None:
        print(json.dumps(measure(args.one, args.kind, args.referee)))
        return 0
    runs = [("after", None, args.links)] + ([("before", args.before, args.before_links)] if args.before else [])
    rows: dict[str, list[dict]] = {}
    for label, src, sizes in runs:
        for n in (int(s) for s in sizes.split(",")):
            row = _child(n, args.kind, args.referee if label == "after" else 0, src)
            rows.setdefault(label, []).append(row)
            print(
                f"{label:6s} {n:6d} links ({args.kind}): load {row['load_s']:.2f} s, first check {row['first_check_s']:.2f} s, "
                f"2 configs {row['two_configs_s'] * 1e3:.2f} ms, total {row['total_s']:.2f} s, peak RSS "
                f"{row['peak_rss_mb']:.0f} MB, {'ok' if row['ok'] else 'FAIL'}",
                flush=True,
            )
    cross = crossover([int(s) for s in args.crossover.split(",")]) if args.crossover else []
    ok = all(r["ok"] for rs in rows.values() for r in rs) and all(r["ok"] for r in cross)
    if args.no_write:
        return 0 if ok else 1
    from .pairs import provenance, stamp

    meta = {"machine": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()}
    meta["provenance"] = provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.many_links")
    head = "| links | load (s) | first check (s) | 2 configurations (ms) | total (s) | peak RSS (MB) | answers |\n|---:|---:|---:|---:|---:|---:|---|"
    lines = [
        "# Robots with thousands of links (issue 31 item 6)",
        "",
        "`python -m benchmarks.many_links`: a generated chain of box links (`many_links_urdf`), each size in a",
        "fresh process: `Robot.load`, the first `Robot.check` (the checker's preparation included), then two",
        "configurations (straight: free; folded: colliding), and the process's peak resident memory.",
        "The issue measured 308 s and 6.3 GB for 2 configurations of a 5,000-link robot before the fix.",
        "",
        "## After (self pairs swept per configuration in the compiled checker)",
        "",
        head,
        *[_line(r) for r in rows["after"]],
    ]
    if "before" in rows:
        lines += [
            "",
            f"## Before ({args.before_label or args.before}: every self pair listed in Python, each tested per call)",
            "",
            head,
            *[_line(r) for r in rows["before"]],
        ]
    if cross:
        lines += [
            "",
            "## Listed against swept self pairs, one configuration a call (`SWEEP_MIN_LINKS`)",
            "",
            "Chains of box links, 200 configurations (every joint uniform in +-1.5 rad times a uniform factor",
            "per configuration), thread CPU microseconds a call (best of 5 passes); answers equal.",
            "",
            "| links | listed pairs | colliding | listed (us) | swept (us) |",
            "|---:|---:|---:|---:|---:|",
            *[
                f"| {r['links']} | {r['pairs']} | {r['colliding']:.2f} | {r['listed_us']:.2f} | {r['sweep_us']:.2f}{'' if r['ok'] else ' FAIL'} |"
                for r in cross
            ],
        ]
    lines += ["", f"Machine: {meta['machine']}, Python {meta['python']}, {meta['cpus']} CPUs (shared)."]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "many_links.md").write_text(stamp("\n".join(lines) + "\n", meta["provenance"]))
    (RESULTS / "many_links.json").write_text(
        json.dumps({"meta": meta, "rows": rows, "crossover": cross}, indent=1) + "\n"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
