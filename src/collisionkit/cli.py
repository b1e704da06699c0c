"""Command line: ``collisionkit`` / ``python -m collisionkit``.

Exit codes: 0 success / no collision, 1 collision found, 2 error.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    if args_in[:1] == ["bv-report"]:
        # its own parser (positional meshes, many options): collisionkit bv-report --help
        from .bv_report import main as bv_report_main

        return bv_report_main(args_in[1:])
    parser = argparse.ArgumentParser(prog="collisionkit", description="Exact, batched collision detection.")
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="check built-in objects at many random poses, with timings")
    p_demo.add_argument("--poses", type=int, default=100_000, help="poses per object pair (default 100000)")
    p_check = sub.add_parser("check", help="do two mesh files intersect (identity poses)?")
    p_check.add_argument("a")
    p_check.add_argument("b")
    sub.add_parser(
        "bv-report",
        help="every bounding volume x split rule on MESH [MESH2]: build, tightness, counts, times, PNG chart",
    )
    sub.add_parser("bench", help="run the pair benchmark (python -m benchmarks.pairs; needs the repository)")
    args, rest = parser.parse_known_args(args_in)

    if args.command == "demo":
        from .demo import run

        run(args.poses)
        return 0
    if args.command == "check":
        from .errors import CollisionKitError
        from .geometry.mesh import Mesh
        from .query.pair import contacts

        try:
            a, b = Mesh.load(args.a), Mesh.load(args.b)
        except CollisionKitError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        c = contacts(a, b)
        print(f"{args.a} vs {args.b}: {'COLLIDING' if len(c) else 'no collision'} ({len(c)} triangle pairs)")
        return 1 if len(c) else 0
    if args.command == "bench":
        try:
            from benchmarks.pairs import main as bench_main
        except ImportError:
            print("error: the benchmarks package is not importable; run from the repository root", file=sys.stderr)
            return 2
        return int(bench_main(rest) or 0)
    return 2  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
