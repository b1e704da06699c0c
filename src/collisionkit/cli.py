"""Command line: ``collisionkit`` / ``python -m collisionkit``.

Every command has ``--help``; results print as a readable table, or as JSON with
``--json``. Exit codes: 0 no collision (or success), 1 collision found, 2 error.
``check``, ``contacts``, ``scene``, ``trajectory`` and ``sweep`` answer 0 or 1; so do ``distance``
and ``penetration`` (1 when the surfaces intersect at some pose) and ``classify`` (1 when
some pose is penetrating or contained); ``render``, ``bv-report``, ``demo``, ``warmup``
and ``bench`` exit 0 on success. Every error (a bad option,
a missing file, an unreadable mesh, malformed YAML/CSV, a wrong joint count, or a
bug) prints one line naming the file, line or option on stderr and exits 2, so a
script never reads a crash as a collision; ``--debug`` adds the traceback. Options
are checked before any work starts.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

EXIT_CLEAR, EXIT_COLLISION, EXIT_ERROR = 0, 1, 2

#: Broad phases ``--broadphase`` accepts (``world.BROADPHASES``; a test keeps them
#: equal, so the parser needs no import of the compiled layers).
BROADPHASE_NAMES = ("brute", "grid", "hash", "octree", "sap", "tree")

#: Longest error line printed (a bad value may be huge).
_MAX_ERROR = 400


class CliError(Exception):
    """An error the command line reports in one line (exit code 2)."""


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad option in one line (exit 2), not usage + error."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see --help)\n")


def positive_int(text: str) -> int:
    """argparse type: an int >= 1."""
    return _int_at_least(text, 1)


def count_int(text: str) -> int:
    """argparse type: an int >= 0."""
    return _int_at_least(text, 0)


def _int_at_least(text: str, low: int) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text[:40]!r}") from None
    if v < low:
        raise argparse.ArgumentTypeError(f"must be >= {low}, got {v}")
    return v


def nonneg_float(text: str) -> float:
    """argparse type: a finite float >= 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text[:40]!r}") from None
    if not (np.isfinite(v) and v >= 0.0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text[:40]!r}")
    return v


def png_path(text: str) -> str:
    """argparse type: a .png file name in an existing (or creatable) place."""
    if Path(text).suffix.lower() != ".png":
        raise argparse.ArgumentTypeError(f"must name a .png file, got {text[:80]!r}")
    parent = Path(text).parent
    if parent.exists() and not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{str(parent)[:80]!r} is not a folder")
    return text


def one_line(exc: BaseException) -> str:
    """An exception as one short line (messages from other libraries may span lines)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= _MAX_ERROR else text[: _MAX_ERROR - 3] + "..."


# -- argument helpers ------------------------------------------------------------------
def parse_pose(text: str | None, what: str) -> np.ndarray | None:
    """A pose from the command line: "x,y,z", "x,y,z,roll,pitch,yaw" (radians, URDF order),
    16 numbers (row-major 4x4), or a .npy/.txt/.json file holding (4, 4) or (N, 4, 4)."""
    if text is None:
        return None
    from .geometry.transforms import pose_from

    p = Path(text)
    if p.suffix.lower() in (".npy", ".txt", ".json", ".csv") or p.is_file():
        if not p.is_file():
            raise CliError(f"{what}: file not found: {text}")
        try:
            if p.suffix.lower() == ".npy":
                arr = np.load(p, allow_pickle=False)
            elif p.suffix.lower() == ".json":
                arr = np.asarray(json.loads(p.read_text()))
            else:
                arr = np.loadtxt(p, delimiter="," if p.suffix.lower() == ".csv" else None, ndmin=2)
        except RecursionError:
            raise CliError(f"{what}: cannot read {text}: nested too deeply") from None
        except (OSError, ValueError, TypeError, UnicodeDecodeError) as exc:
            raise CliError(f"{what}: cannot read {text}: {one_line(exc)}") from None
        if arr.dtype.kind not in "iuf":
            raise CliError(f"{what}: {text} holds {arr.dtype} values; expected numbers")
        arr = np.asarray(arr, dtype=np.float64)
        if arr.shape[-2:] == (4, 4) and arr.ndim in (2, 3):
            return arr
        if arr.ndim == 2 and arr.shape[1] == 16:
            return arr.reshape(-1, 4, 4)
        raise CliError(f"{what}: {text} holds shape {arr.shape}; expected (4, 4), (N, 4, 4) or (N, 16)")
    try:
        vals = [float(v) for v in text.replace(",", " ").split()]
    except ValueError:
        raise CliError(f"{what}: expected numbers like 'x,y,z[,roll,pitch,yaw]', got {text!r}") from None
    if len(vals) == 3:
        return pose_from(vals)
    if len(vals) == 6:
        return pose_from(vals[:3], vals[3:])
    if len(vals) == 16:
        return np.asarray(vals).reshape(4, 4)
    raise CliError(f"{what}: expected 3, 6 or 16 numbers, got {len(vals)}")


def load_mesh(path: str) -> Any:
    from .io import load_mesh as read_mesh

    if not Path(path).is_file():
        raise CliError(f"{path}: file not found")
    return read_mesh(path)


def emit(args: argparse.Namespace, data: dict[str, Any], text: Callable[[], str]) -> None:
    """Print ``data`` as JSON with --json, else the readable ``text()``."""
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, default=_jsonable))
    else:
        print(text())


def _jsonable(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, (np.bool_,)):
        return bool(x)
    if isinstance(x, Path):
        return str(x)
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


def table(rows: list[list[Any]], header: list[str]) -> str:
    """A plain-text table with aligned columns."""
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


# -- commands --------------------------------------------------------------------------
def cmd_demo(args: argparse.Namespace) -> int:
    from ._numba import cache_dir
    from .demo import run

    print(f"numba cache: {cache_dir()} (shared with the venv and the CLI; COLLISIONKIT_CACHE_DIR moves it)")

    run(args.poses)
    return EXIT_CLEAR


def cmd_warmup(args: argparse.Namespace) -> int:
    from .warmup import GROUPS, run

    groups = args.group or None
    unknown = sorted(set(groups or ()) - set(GROUPS))
    if unknown:
        raise CliError(f"--group: unknown group {unknown[0]!r}; choose from {', '.join(GROUPS)}")
    if getattr(args, "ship", None):
        from ._shipped import build

        cache = Path(args.ship_cache) if args.ship_cache else None
        m = build(Path(args.ship), jobs=args.jobs, groups=groups, cache=cache)
        print(
            f"wrote {args.ship}: {m['files']} files, {m['bytes'] / 1e6:.1f} MB; kernels {m['kernel_hash']}, "
            f"numba {m['numba']}, {m['magic_tuple'][0]}, cpu {m['magic_tuple'][1]}; {m['build_seconds']} s"
        )
        return EXIT_CLEAR
    records = run(groups, jobs=args.jobs)
    if getattr(args, "json", False):
        print(json.dumps(records, indent=2))
    return EXIT_ERROR if any(r["error"] for r in records) else EXIT_CLEAR


def _pair_poses(args: argparse.Namespace) -> tuple[Any, Any]:
    """--pose-a and --pose-b, checked (batches of equal length, or one single pose)."""
    pa, pb = parse_pose(args.pose_a, "--pose-a"), parse_pose(args.pose_b, "--pose-b")
    if pa is not None and pb is not None and pa.ndim == 3 and pb.ndim == 3 and pa.shape[0] != pb.shape[0]:
        raise CliError(
            f"--pose-a holds {pa.shape[0]} poses and --pose-b {pb.shape[0]}; give equal batches, or one single (4, 4) pose"
        )
    return pa, pb


def _pair_meshes(args: argparse.Namespace) -> tuple[Any, Any]:
    for path in (args.a, args.b):
        if not Path(path).is_file():
            raise CliError(f"{path}: file not found")
    return load_mesh(args.a), load_mesh(args.b)


def _pair_inputs(args: argparse.Namespace) -> tuple[Any, Any, Any, Any]:
    # poses first: a bad option is reported before any mesh is read
    pa, pb = _pair_poses(args)
    a, b = _pair_meshes(args)
    return a, b, pa, pb


def cmd_check(args: argparse.Namespace) -> int:
    from .query.pair import intersects

    a, b, pa, pb = _pair_inputs(args)
    hit = np.atleast_1d(np.asarray(ask_spec("check", intersects, args, a, b, pa, pb)))
    n_hit = int(hit.sum())
    data = {"a": args.a, "b": args.b, "poses": int(hit.size), "colliding": hit, "n_colliding": n_hit}

    def text() -> str:
        if hit.size == 1:
            return f"{args.a} vs {args.b}: {'COLLIDING' if n_hit else 'no collision'}"
        first = int(np.argmax(hit)) if n_hit else None
        tail = f"; first at pose {first}" if first is not None else ""
        return f"{args.a} vs {args.b}: {n_hit} of {hit.size} poses collide{tail}"

    emit(args, data, text)
    return EXIT_COLLISION if n_hit else EXIT_CLEAR


def cmd_contacts(args: argparse.Namespace) -> int:
    from .query.pair import contacts

    a, b, pa, pb = _pair_inputs(args)
    c = ask_spec("contacts", contacts, args, a, b, pa, pb)
    rows = np.stack([c.pose_index, c.face_a, c.face_b], axis=1)
    data = {
        "a": args.a, "b": args.b, "counts": np.atleast_1d(c.counts), "truncated": np.atleast_1d(c.truncated),
        "pairs": [{"pose_index": int(p), "face_a": int(fa), "face_b": int(fb)} for p, fa, fb in rows],
    }  # fmt: skip

    def text() -> str:
        head = f"{args.a} vs {args.b}: {len(c)} intersecting triangle pairs"
        if np.any(c.truncated):
            head += f" (capped at {args.max_pairs} per pose)"
        shown = rows[: args.show]
        body = table([list(r) for r in shown], ["pose_index", "face_a", "face_b"]) if len(shown) else ""
        more = f"\n... {len(rows) - len(shown)} more (--show N or --json for all)" if len(rows) > len(shown) else ""
        return head + ("\n" + body if body else "") + more

    emit(args, data, text)
    return EXIT_COLLISION if len(c) else EXIT_CLEAR


# -- distance, penetration, classify (issue 18, item 7) ---------------------------------
# Each command reads its result record in one small helper (``*_rows``): the records'
# field forms may change, and then only these helpers change.


def _vec(x: Any) -> list[float] | None:
    """A 3-vector as a JSON list, or None when it is not finite (no point, no direction)."""
    v = np.asarray(x, dtype=np.float64)
    return [float(c) for c in v] if np.all(np.isfinite(v)) else None


def distance_rows(d: Any) -> list[dict[str, Any]]:
    """Per-pose records of a ``ck.distance`` result."""
    dist = np.atleast_1d(np.asarray(d.distance, dtype=np.float64))
    pa, pb = np.asarray(d.point_a).reshape(-1, 3), np.asarray(d.point_b).reshape(-1, 3)
    fa, fb = np.atleast_1d(d.face_a), np.atleast_1d(d.face_b)
    return [
        {"pose_index": k, "distance": float(dist[k]), "colliding": bool(dist[k] == 0.0), "point_a": _vec(pa[k]),
         "point_b": _vec(pb[k]), "face_a": int(fa[k]), "face_b": int(fb[k])}
        for k in range(dist.size)
    ]  # fmt: skip


def penetration_rows(p: Any, hit: np.ndarray) -> list[dict[str, Any]]:
    """Per-pose records of a ``ck.penetration`` result; ``hit`` (N,) from ``ck.intersects``."""
    depth = np.atleast_1d(np.asarray(p.depth, dtype=np.float64))
    direction = np.asarray(p.direction, dtype=np.float64).reshape(-1, 3)
    exact, err = np.atleast_1d(p.exact), np.atleast_1d(np.asarray(p.error_bound, dtype=np.float64))
    method = np.broadcast_to(np.asarray(p.method), depth.shape)
    return [
        {"pose_index": k, "depth": float(depth[k]), "direction": _vec(direction[k]), "colliding": bool(hit[k]),
         "exact": bool(exact[k]), "error_bound": float(err[k]) if np.isfinite(err[k]) else None, "method": str(method[k])}
        for k in range(depth.size)
    ]  # fmt: skip


def classify_rows(c: Any) -> list[dict[str, Any]]:
    """Per-pose records of a ``ck.classify`` result."""
    labels, dist = np.atleast_1d(c.labels), np.atleast_1d(np.asarray(c.distance, dtype=np.float64))
    a_in_b, b_in_a = np.atleast_1d(c.a_inside_b), np.atleast_1d(c.b_inside_a)
    return [
        {"pose_index": k, "label": str(labels[k]), "distance": float(dist[k]), "a_inside_b": bool(a_in_b[k]),
         "b_inside_a": bool(b_in_a[k])}
        for k in range(labels.size)
    ]  # fmt: skip


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.9g}"


def _point(v: list[float] | None) -> str:
    return "-" if v is None else "(" + ", ".join(f"{c:.6g}" for c in v) + ")"


def _cell(v: Any) -> Any:
    """A table cell: points and directions (lists, None when absent), numbers, the rest as is."""
    if v is None or isinstance(v, list):
        return _point(v)
    return _num(v) if isinstance(v, float) else v


def _per_pose_text(args: argparse.Namespace, head: str, rows: list[dict[str, Any]], columns: list[str]) -> str:
    """A head line, then one table row per pose (at most --show rows)."""
    shown = rows[: args.show]
    cells = [[_cell(r[c]) for c in columns] for r in shown]
    body = "\n" + table(cells, columns) if cells else ""
    more = f"\n... {len(rows) - len(shown)} more poses (--show N or --json for all)" if len(rows) > len(shown) else ""
    return head + body + more


def cmd_distance(args: argparse.Namespace) -> int:
    from .query.distance import distance

    a, b, pa, pb = _pair_inputs(args)
    rows = distance_rows(ask_spec("distance", distance, args, a, b, pa, pb))
    n_hit = sum(r["colliding"] for r in rows)
    data = {"a": args.a, "b": args.b, "poses": len(rows), "n_colliding": n_hit, "results": rows}

    def text() -> str:
        if len(rows) == 1:
            r = rows[0]
            state = "surfaces INTERSECT" if r["colliding"] else "apart"
            return (f"{args.a} vs {args.b}: distance {_num(r['distance'])} ({state})\n"
                    f"  closest point on a: {_point(r['point_a'])} (face {r['face_a']})\n"
                    f"  closest point on b: {_point(r['point_b'])} (face {r['face_b']})")  # fmt: skip
        head = f"{args.a} vs {args.b}: {len(rows)} poses, {n_hit} with intersecting surfaces, min distance {_num(min((r['distance'] for r in rows), default=None))}"
        return _per_pose_text(args, head, rows, ["pose_index", "distance", "face_a", "face_b", "point_a", "point_b"])

    emit(args, data, text)
    return EXIT_COLLISION if n_hit else EXIT_CLEAR


def cmd_penetration(args: argparse.Namespace) -> int:
    from .query.pair import intersects
    from .query.penetration import penetration

    a, b, pa, pb = _pair_inputs(args)
    hit = np.atleast_1d(np.asarray(intersects(a, b, pa, pb)))  # the exit code: do the surfaces meet?
    rows = penetration_rows(ask_spec("penetration", penetration, args, a, b, pa, pb), hit)
    n_hit = int(hit.sum())
    data = {"a": args.a, "b": args.b, "poses": len(rows), "n_colliding": n_hit, "results": rows}

    def text() -> str:
        if len(rows) == 1:
            r = rows[0]
            state = "surfaces INTERSECT" if r["colliding"] else "surfaces apart"
            how = "exact" if r["exact"] else f"upper bound, {r['method']} directions"
            return (f"{args.a} vs {args.b}: penetration depth {_num(r['depth'])} ({state}; {how})\n"
                    f"  direction a -> b: {_point(r['direction'])}")  # fmt: skip
        head = f"{args.a} vs {args.b}: {len(rows)} poses, {n_hit} with intersecting surfaces, max depth {_num(max((r['depth'] for r in rows), default=None))}"
        return _per_pose_text(args, head, rows, ["pose_index", "depth", "direction", "exact", "method"])

    emit(args, data, text)
    return EXIT_COLLISION if n_hit else EXIT_CLEAR


def cmd_classify(args: argparse.Namespace) -> int:
    from .query.classify import classify

    a, b, pa, pb = _pair_inputs(args)
    rows = classify_rows(ask_spec("classify", classify, args, a, b, pa, pb))
    counts = {name: sum(r["label"] == name for r in rows) for name in ("disjoint", "touching", "penetrating", "contained")}
    data = {"a": args.a, "b": args.b, "poses": len(rows), "counts": counts, "results": rows}

    def text() -> str:
        if len(rows) == 1:
            r = rows[0]
            inside = " (a inside b)" if r["a_inside_b"] else " (b inside a)" if r["b_inside_a"] else ""
            return f"{args.a} vs {args.b}: {r['label'].upper()}{inside}, distance {_num(r['distance'])}"
        head = f"{args.a} vs {args.b}: {len(rows)} poses: " + ", ".join(f"{v} {k}" for k, v in counts.items() if v)
        return _per_pose_text(args, head, rows, ["pose_index", "label", "distance", "a_inside_b", "b_inside_a"])

    emit(args, data, text)
    return EXIT_COLLISION if counts["penetrating"] or counts["contained"] else EXIT_CLEAR


def _pairs_table(pairs: list[tuple[str, str]]) -> str:
    return table([[a, b] for a, b in pairs], ["object", "object"]) if pairs else ""


def cmd_scene(args: argparse.Namespace) -> int:
    from .scene import load_scene

    loaded = load_scene(args.scene)
    world = loaded.world(args.broadphase)
    pairs = list(world.colliding_pairs().names)
    data = {"scene": args.scene, "objects": list(world.names), "colliding": [list(p) for p in pairs]}

    def text() -> str:
        head = f"{args.scene}: {len(world.names)} objects, {len(pairs)} colliding pairs"
        return head + ("\n" + _pairs_table(pairs) if pairs else "")

    emit(args, data, text)
    return EXIT_COLLISION if pairs else EXIT_CLEAR


def _pick_robot(loaded, name: str | None):
    if not loaded.robots:
        raise CliError(f"{loaded.scene.path}: the scene has no robot")
    if name is None:
        if len(loaded.robots) > 1:
            raise CliError(f"{loaded.scene.path}: several robots ({', '.join(loaded.robots)}); choose one with --robot")
        name = next(iter(loaded.robots))
    if name not in loaded.robots:
        raise CliError(f"{loaded.scene.path}: no robot named {name!r} (robots: {', '.join(loaded.robots)})")
    return name


def cmd_trajectory(args: argparse.Namespace) -> int:
    from .scene import load_scene, load_trajectory, trajectory_for

    loaded = load_scene(args.scene)
    rname = _pick_robot(loaded, args.robot)
    robot, base, _ = loaded.robots[rname]
    q = trajectory_for(robot, load_trajectory(args.trajectory))
    world = loaded.world(args.broadphase, robots=False)  # obstacles: every other object (other robots at their scene joints)
    for other in loaded.robots:
        if other != rname:
            for oname, mesh, pose in loaded.robot_link_objects(other):
                world.add(oname, mesh, pose)
    ignore = [o for a, b in loaded.scene.exclude for o in ((b,) if a == rname else (a,) if b == rname else ())]
    steps = q.shape[0]
    chunk = max(1, args.chunk)
    show_progress = steps > chunk and not args.json and sys.stderr.isatty() or args.progress
    records: list[dict[str, Any]] = []
    first = None
    for s0 in range(0, steps, chunk):
        res = robot.check_detail(q[s0 : s0 + chunk], world, base=base, ignore=ignore,
                                 self_collision=not args.no_self)  # fmt: skip
        for k in np.flatnonzero(res.colliding):
            links = [robot.links[i] for i in np.flatnonzero(res.link_hits[k])]
            parts = [n for n, h in res.object_hits.items() if h[k]]
            selfp = [f"{a}+{b}" for (a, b), h in res.self_hits.items() if h[k]]
            records.append({"step": int(s0 + k), "links": links, "parts": parts, "self": selfp})
        if first is None and res.colliding.any():
            first = int(s0 + np.argmax(res.colliding))
        if show_progress:
            done = min(steps, s0 + chunk)
            print(f"\r  {done}/{steps} steps, {len(records)} colliding", end="", file=sys.stderr, flush=True)
        if args.until_first and first is not None:
            records = [r for r in records if r["step"] == first]
            break
    if show_progress:
        print(file=sys.stderr)
    data = {"scene": args.scene, "trajectory": args.trajectory, "robot": rname, "steps": steps,
            "first_contact": first, "colliding_steps": records}  # fmt: skip

    def text() -> str:
        if first is None:
            return f"{args.trajectory}: {steps} steps of {rname}, no contact"
        head = f"{args.trajectory}: {len(records)} of {steps} steps of {rname} collide; first contact at step {first}"
        rows = [[r["step"], ", ".join(r["links"]), ", ".join(r["parts"] + r["self"])] for r in records[: args.show]]
        more = f"\n... {len(records) - args.show} more steps (--show N or --json)" if len(records) > args.show else ""
        return head + "\n" + table(rows, ["step", "links", "touching"]) + more

    emit(args, data, text)
    return EXIT_COLLISION if first is not None else EXIT_CLEAR


# -- sweep: a large batch on Dask ------------------------------------------------------
def lazy_npy(path: str, chunk: int, trailing: tuple[int, ...] | None, what: str) -> Any:
    """``collisionkit.distributed.from_npy`` with its errors as one-line CLI errors."""
    from .distributed import from_npy

    try:
        return from_npy(path, chunk, row_shape=trailing)
    except (OSError, ValueError) as exc:
        raise CliError(f"{what}: {one_line(exc)}") from None


def _sweep_compute(values: list[Any], progress: bool) -> list[Any]:
    """Compute Dask collections together, with a progress bar on stderr when asked."""
    import dask

    from .distributed import active_client

    client = active_client()
    if client is None:
        if not progress:
            return list(dask.compute(*values))
        from dask.diagnostics import ProgressBar

        with ProgressBar(out=sys.stderr, dt=0.5):
            return list(dask.compute(*values))
    futures = client.compute(values)
    if progress:
        from distributed.diagnostics.progressbar import TextProgressBar

        TextProgressBar(futures, interval="0.5s", complete=True, start=True)
        print(file=sys.stderr)
    return client.gather(futures)


def cmd_sweep(args: argparse.Namespace) -> int:
    import time

    try:
        import dask.array  # noqa: F401
    except ImportError:
        raise CliError("sweep needs Dask: pip install 'collisionkit[dask]'") from None
    from . import distributed as ckd

    modes = [m for m in ("pair", "robot") if getattr(args, m) is not None]
    if len(modes) > 1:
        raise CliError("sweep: give one of --pair A B, --robot URDF [--scene SCENE], --scene SCENE")
    mode = modes[0] if modes else ("scene" if args.scene else None)
    if mode is None:
        raise CliError("sweep: give --pair A B (poses of B), --robot URDF (configurations) or --scene SCENE (frames)")
    if args.query != "intersects" and mode != "pair":
        raise CliError("sweep: --query applies to --pair only")
    if args.output is not None and Path(args.output).suffix.lower() not in (".npy", ".parquet"):
        raise CliError(f"--output: expected a .npy or .parquet file, got {args.output}")
    if args.workers is not None and args.scheduler is not None:
        raise CliError("sweep: give --workers N (a LocalCluster) or --scheduler ADDRESS, not both")
    client = None
    if args.scheduler is not None:
        client = ckd.connect(args.scheduler)
    elif args.workers:
        # NOTE: a failed task is logged by its worker (an 8-line "Compute Failed" with a
        # traceback on stderr) before the client re-raises it: the CLI prints the one-line
        # error only, and --debug the workers' logs and the traceback
        quiet = logging.WARNING if getattr(args, "debug", False) else logging.CRITICAL
        client = ckd.local_cluster(args.workers, threads_per_worker=1, silence_logs=quiet)
    progress = args.progress or (sys.stderr.isatty() and not args.json)
    try:
        start = time.perf_counter()
        columns, hit, n = _sweep_run(args, mode, progress)
        seconds = time.perf_counter() - start
    finally:
        if client is not None:
            client.close()
    if args.output:
        _write_columns(args.output, columns)
    n_hit = int(np.count_nonzero(hit))
    data = {"input": args.input, "mode": mode, "query": args.query if mode == "pair" else "check",
            "items": n, "colliding": n_hit, "seconds": seconds,
            "workers": args.workers or 0, "scheduler": args.scheduler, "output": args.output}  # fmt: skip
    what = {"pair": "poses", "robot": "configurations", "scene": "frames"}[mode]

    def text() -> str:
        where = (f"{args.workers} local workers" if args.workers else f"scheduler {args.scheduler}"
                 if args.scheduler else "local threads")  # fmt: skip
        rate = f"; {n / seconds:,.0f} {what}/s" if seconds > 0 else ""
        wrote = f"; wrote {args.output}" if args.output else ""
        return f"{args.input}: {n_hit} of {n} {what} collide ({seconds:.2f} s on {where}{rate}){wrote}"

    emit(args, data, text)
    return EXIT_COLLISION if n_hit else EXIT_CLEAR


def _sweep_run(args: argparse.Namespace, mode: str, progress: bool) -> tuple[dict[str, np.ndarray], np.ndarray, int]:
    """(output columns, per-item collision flags, items) of the sweep."""
    if mode == "pair":
        from .query.distance import distance
        from .query.pair import contacts, intersects

        a, b = load_mesh(args.pair[0]), load_mesh(args.pair[1])
        pa = parse_pose(args.pose_a, "--pose-a")
        if pa is not None and pa.ndim == 3:
            raise CliError("--pose-a: one (4, 4) pose for a sweep (the file holds b's poses)")
        P = lazy_npy(args.input, args.chunk, (4, 4), "poses")
        n = int(P.shape[0])
        if args.query == "intersects":
            (hit,) = _sweep_compute([intersects(a, b, pa, P)], progress)
            return {"pose_index": np.arange(n), "colliding": hit}, hit, n
        if args.query == "distance":
            d = distance(a, b, pa, P)
            dist, fa, fb = _sweep_compute([d.distance, d.face_a, d.face_b], progress)
            return {"pose_index": np.arange(n), "distance": dist, "face_a": fa, "face_b": fb}, dist == 0.0, n
        c = contacts(a, b, pa, P, max_pairs=args.max_pairs)
        pi, fa, fb, counts = _sweep_compute([c.pose_index, c.face_a, c.face_b, c.counts], progress)
        return {"pose_index": pi, "face_a": fa, "face_b": fb}, counts > 0, n
    if mode == "robot":
        from .robot import Robot

        if not Path(args.robot).is_file():
            raise CliError(f"--robot: file not found: {args.robot}")
        robot = Robot.load(args.robot)
        world = None
        if args.scene:
            from .scene import load_scene

            world = load_scene(args.scene).world(args.broadphase, robots=False)
        Q = lazy_npy(args.input, args.chunk, (robot.dof,), "configurations")
        (hit,) = _sweep_compute([robot.check(Q, world, self_collision=not args.no_self)], progress)
        return {"configuration": np.arange(int(Q.shape[0])), "colliding": hit}, hit, int(Q.shape[0])
    from .scene import load_scene

    world = load_scene(args.scene).world(args.broadphase)
    F = lazy_npy(args.input, args.chunk, (len(world), 4, 4), "frames")
    rows = world.run(F)
    frame, a, b, counts = _sweep_compute([rows.frame, rows.object_a, rows.object_b, rows.counts], progress)
    return {"frame": frame, "object_a": a, "object_b": b}, counts > 0, int(F.shape[0])


def _write_columns(path: str, columns: dict[str, np.ndarray]) -> None:
    """``columns`` as a parquet table, or as one .npy array ((M, k) int64 rows, or the
    one per-item column after the index)."""
    if Path(path).suffix.lower() == ".parquet":
        import pandas as pd

        try:
            pd.DataFrame(columns).to_parquet(path, index=False)
        except ImportError as exc:
            raise CliError(f"--output: writing parquet needs pyarrow: {one_line(exc)}") from None
        return
    names = list(columns)
    if names[0] in ("configuration", "pose_index") and names[1:] in (["colliding"], ["distance", "face_a", "face_b"]):
        data = columns[names[1]]  # the per-item answer; the index is its position
    else:
        data = np.stack([np.asarray(columns[n], dtype=np.int64) for n in names], axis=1)
    np.save(path, data)


def cmd_render(args: argparse.Namespace) -> int:
    if len(args.inputs) > 2:
        raise CliError(f"render takes a scene file or two mesh files, got {len(args.inputs)} files")
    if len(args.inputs) == 2:
        return _render_pair(args)
    for option, value in (("--pose-a", args.pose_a), ("--pose-b", args.pose_b)):
        if value is not None:
            raise CliError(f"{option} is for two mesh files (render A B); a scene file holds its own poses")
    return _render_scene(args)


def _render_pair(args: argparse.Namespace) -> int:
    """render A B: the intersecting triangles, or the closest faces and the segment between them."""
    from .query.distance import distance
    from .query.pair import contacts
    from .render import render_scene

    scene_only = [o for o, v in (("--trajectory", args.trajectory), ("--step", args.step), ("--robot", args.robot),
                                 ("--broadphase", args.broadphase)) if v is not None]  # fmt: skip
    if scene_only:
        raise CliError(f"{scene_only[0]} is for a scene file; render A B draws two meshes (--pose-a, --pose-b)")
    args.a, args.b = args.inputs
    pa, pb = _pair_poses(args)
    for option, pose in (("--pose-a", pa), ("--pose-b", pb)):
        if pose is not None and pose.ndim == 3:
            if pose.shape[0] != 1:
                raise CliError(f"{option} holds {pose.shape[0]} poses; render draws one pose pair")
    pa = None if pa is None else pa.reshape(4, 4)
    pb = None if pb is None else pb.reshape(4, 4)
    a, b = _pair_meshes(args)
    c = contacts(a, b, pa, pb)
    info: dict[str, Any] = {"colliding": len(c) > 0, "pairs": len(c)}
    if len(c):
        highlight = {0: np.unique(c.face_a).tolist(), 1: np.unique(c.face_b).tolist()}
        segments = None
        what = f"{len(c)} intersecting triangle pairs highlighted"
    else:
        r = distance_rows(distance(a, b, pa, pb))[0]
        highlight = {0: [r["face_a"]], 1: [r["face_b"]]}
        segments = np.array([[r["point_a"], r["point_b"]]])
        info.update(distance=r["distance"], point_a=r["point_a"], point_b=r["point_b"])
        what = f"apart: distance {_num(r['distance'])}, closest points joined"
    out = render_scene([a, b], [pa, pb], triangles=highlight, segments=segments, path=args.output,
                       title=f"{Path(args.a).name} vs {Path(args.b).name}")  # fmt: skip
    emit(args, {"output": str(out), **info}, lambda: f"wrote {out} ({what})")
    return EXIT_CLEAR  # a picture was drawn: success, whatever it shows


def _render_scene(args: argparse.Namespace) -> int:
    from .geometry.mesh import Mesh
    from .render import render_scene
    from .scene import load_scene, load_trajectory, trajectory_for

    args.scene = args.inputs[0]
    args.step = 0 if args.step is None else args.step
    args.broadphase = args.broadphase or "sap"
    loaded = load_scene(args.scene)
    if args.trajectory is not None:
        rname = _pick_robot(loaded, args.robot)
        robot, base, _ = loaded.robots[rname]
        q = trajectory_for(robot, load_trajectory(args.trajectory))
        if not 0 <= args.step < q.shape[0]:
            raise CliError(f"{args.trajectory}: --step {args.step} out of range (0..{q.shape[0] - 1})")
        loaded.robots[rname] = (robot, base, q[args.step])
    elif args.step:
        raise CliError("--step needs --trajectory")
    world = loaded.world(args.broadphase)
    contacts = world.contacts()
    faces: dict[str, set[int]] = {}
    for (a, b), c in _world_contact_faces(contacts):
        faces.setdefault(a, set()).update(c[0])
        faces.setdefault(b, set()).update(c[1])
    shapes, poses, highlight = [], [], {}
    for i, name in enumerate(world.names):
        shape = world.shape(name)
        shapes.append(shape if isinstance(shape, Mesh) else shape.mesh)  # convex shapes: their triangulation
        poses.append(world.pose(name))
        if name in faces:
            highlight[i] = sorted(faces[name]) or True
    for a, b in world.colliding_pairs().names:
        for n in (a, b):
            highlight.setdefault(world.names.index(n), True)
    out = render_scene(shapes, poses, highlight=highlight, path=args.output, title=f"{Path(args.scene).name}"
                       + (f" step {args.step}" if args.trajectory else ""))  # fmt: skip
    n_pairs = len(world.colliding_pairs().names)
    emit(args, {"output": str(out), "colliding_pairs": n_pairs},
         lambda: f"wrote {out} ({n_pairs} colliding pairs highlighted)")  # fmt: skip
    return EXIT_CLEAR  # a picture was drawn: success, whatever it shows


def _world_contact_faces(contacts: Any):
    """((name_a, name_b), (faces of a, faces of b)) per colliding mesh pair of World.contacts()."""
    for k, (a, b) in enumerate(contacts.names):
        c = contacts.pairs(k)
        yield (a, b), (c[:, 0].tolist(), c[:, 1].tolist())


#: Benchmarks ``collisionkit bench NAME`` runs (modules of the repository's benchmarks/ package).
BENCHMARKS = ("pairs", "robot", "broadphase", "queries", "seed000", "seed002", "seed003", "bv_report", "obb_tests")


def cmd_bench(args: argparse.Namespace, rest: list[str]) -> int:
    import importlib

    name = rest[0] if rest and not rest[0].startswith("-") else "pairs"
    if rest and rest[0] == name:
        rest = rest[1:]
    if name not in BENCHMARKS:
        raise CliError(f"unknown benchmark {name!r}; choose one of {', '.join(BENCHMARKS)}")
    try:
        module = importlib.import_module(f"benchmarks.{name}")
    except ImportError:
        raise CliError("the benchmarks package is not importable; run from the repository root") from None
    code = module.main(rest)
    return code if isinstance(code, int) else 0


def _spec_of(command: str) -> Any:
    """The question a pair command answers (``Spec.cli``), or None."""
    from .query.spec import SPECS

    return next((s for s in SPECS.values() if s.cli == command), None)


def _flag_type(name: str, option: Any) -> Callable[[str], Any]:
    parse = option.text or str

    def flag_type(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    flag_type.__name__ = name  # argparse names the type in some messages
    return flag_type


def add_spec_flags(p: argparse.ArgumentParser, command: str) -> None:
    """One ``--flag`` per option of the command's question marked ``cli=True``: parsed by the
    option's ``text``, restricted to its ``choices``, defaulting to its default."""
    spec = _spec_of(command)
    for name, option in spec.cli_options() if spec is not None else ():
        help_ = option.help + (f" (default {option.default})" if option.default is not None else "")
        p.add_argument(
            "--" + name.replace("_", "-"), dest=name, type=_flag_type(name, option), default=option.default,
            choices=option.choices, metavar="NAME" if option.choices else None, help=help_,
        )  # fmt: skip


def ask_spec(command: str, fn: Callable[..., Any], args: argparse.Namespace, a: Any, b: Any, pa: Any, pb: Any) -> Any:
    """``fn(a, b, pa, pb, **flags)`` with the command's spec flags; an option ``fn`` does not
    name yet (one a spec gained at run time) goes through the driver (``query.driver.ask``)."""
    import inspect

    spec = _spec_of(command)
    flags = {name: getattr(args, name) for name, _ in spec.cli_options()} if spec is not None else {}
    params = inspect.signature(fn).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()) or all(k in params for k in flags):
        return fn(a, b, pa, pb, **flags)
    from .query.driver import ask

    return ask(spec, a, b, pa, pb, **flags)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="collisionkit",
        description="Exact, batched collision detection. Exit codes: 0 no collision (or success), "
        "1 collision, 2 error (one line; --debug shows the traceback).",
    )
    parser.add_argument("--debug", action="store_true", help="on an error, also print the traceback")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("demo", help="check built-in objects at many random poses, with timings")
    p.add_argument("--poses", type=positive_int, default=100_000, help="poses per object pair (default 100000)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("warmup", help="compile every query's kernels now (parallel processes), with a table of times",
                       description="Compile (or load from the cache) the kernels of every query, one process per "
                       "query group, so later calls start at once. Exit 0 on success, 2 on an error.")  # fmt: skip
    p.add_argument("--jobs", type=positive_int, default=2, help="processes at once (default 2)")
    p.add_argument("--group", action="append", metavar="NAME", help="only this query group (repeatable)")
    p.add_argument("--json", action="store_true", help="also print the records as JSON")
    p.add_argument("--ship", metavar="DIR", default=None,
                   help="instead compile for this platform's baseline CPU into DIR, with a manifest: "
                   "the precompiled kernels a platform wheel ships (make wheel)")  # fmt: skip
    p.add_argument("--ship-cache", metavar="DIR", default=None,
                   help="with --ship: a compile cache kept between builds (default a new temporary one)")  # fmt: skip
    p.set_defaults(func=cmd_warmup)

    pose_help = (
        "pose: 'x,y,z', 'x,y,z,roll,pitch,yaw' (radians), 16 numbers (row-major 4x4), "
        "or a .npy/.json/.txt file of (4,4) or (N,4,4) poses (default identity)"
    )
    for name, func, help_ in [
        ("check", cmd_check, "do two mesh files intersect?"),
        ("contacts", cmd_contacts, "list the intersecting triangle pairs of two mesh files"),
        ("distance", cmd_distance, "distance and closest points of two mesh files (exit 1 when the surfaces intersect)"),
        ("penetration", cmd_penetration, "penetration depth and direction of two mesh files (exit 1 when the surfaces intersect)"),
        ("classify", cmd_classify, "disjoint, touching, penetrating or contained? (exit 1 when penetrating or contained)"),
    ]:
        p = sub.add_parser(name, help=help_, description=help_)
        p.add_argument("a", help="mesh file (anything trimesh reads: STL, OBJ, PLY, GLB, ...)")
        p.add_argument("b", help="mesh file")
        p.add_argument("--pose-a", help=pose_help)
        p.add_argument("--pose-b", help=pose_help)
        p.add_argument("--json", action="store_true", help="print JSON instead of a table")
        add_spec_flags(p, name)  # the question's options marked cli=True (query/spec.py)
        if name != "check":
            p.add_argument("--show", type=count_int, default=20, help="rows to print in the table (default 20)")
        p.set_defaults(func=func)

    sub.add_parser(
        "bv-report",
        help="every bounding volume x split rule on MESH [MESH2]: build, tightness, counts, times, PNG chart",
        add_help=False,
    )
    bp_help = "broad phase of the World: sap (default), brute, grid, hash, octree, tree"
    p = sub.add_parser("scene", help="report every colliding pair of a scene file", description="Report every colliding pair "
                       "of a scene file (YAML: meshes, convex shapes, robots with poses).")  # fmt: skip
    p.add_argument("scene", help="scene file (YAML)")
    p.add_argument("--broadphase", default="sap", choices=BROADPHASE_NAMES, metavar="NAME", help=bp_help)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_scene)

    p = sub.add_parser("trajectory", help="play a robot's joint trajectory in a scene; report contacts per step",
                       description="Play a robot's joint trajectory (CSV: one row of joint values per step, optional "
                       "header of joint names) in a scene; report which links and parts collide at each step.")  # fmt: skip
    p.add_argument("scene", help="scene file (YAML) with the robot")
    p.add_argument("trajectory", help="CSV file: one row per step")
    p.add_argument("--robot", help="which robot of the scene moves (default: the only one)")
    p.add_argument("--until-first", action="store_true", help="stop at the first step with a contact")
    p.add_argument("--no-self", action="store_true", help="skip self-collision between non-adjacent links")
    p.add_argument("--chunk", type=positive_int, default=256, help="steps per batched call (default 256)")
    p.add_argument("--progress", action="store_true", help="show progress even when stderr is not a terminal")
    p.add_argument("--show", type=count_int, default=20, help="colliding steps to print in the table (default 20)")
    p.add_argument("--broadphase", default="sap", choices=BROADPHASE_NAMES, metavar="NAME", help=bp_help)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_trajectory)

    p = sub.add_parser("render", help="draw a scene (optionally at a trajectory step), or two mesh files, to PNG, "
                       "contacts highlighted", description="render SCENE.yaml: every object, colliding parts orange and "
                       "their intersecting triangles red. render A B: two mesh files at --pose-a/--pose-b, the "
                       "intersecting triangles red, or, when they do not intersect, the closest faces red and the "
                       "segment between the closest points in blue.")  # fmt: skip
    p.add_argument("inputs", nargs="+", metavar="SCENE | A B", help="a scene file (YAML), or two mesh files")
    p.add_argument("-o", "--output", type=png_path, default="scene.png", help="PNG file to write (default scene.png)")
    p.add_argument("--pose-a", help="two meshes: " + pose_help + "; one pose only")
    p.add_argument("--pose-b", help="two meshes: like --pose-a")
    p.add_argument("--trajectory", help="scene: CSV trajectory of the scene's robot")
    p.add_argument("--step", type=count_int, default=None, help="scene: trajectory step to draw (default 0)")
    p.add_argument("--robot", help="scene: which robot follows the trajectory (default: the only one)")
    p.add_argument("--broadphase", default=None, choices=BROADPHASE_NAMES, metavar="NAME", help="scene: " + bp_help)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("sweep", help="a large .npy of poses, configurations or frames on Dask (a LocalCluster "
                       "or a cluster), with a progress bar, results to .npy or parquet",
                       description="Run a large .npy against a pair of meshes (--pair A B: (N, 4, 4) poses of B), "
                       "a robot (--robot URDF: (N, dof) configurations, optional --scene obstacles) or a scene "
                       "(--scene SCENE: (F, N, 4, 4) frames of its N objects) on Dask: local threads by default, "
                       "--workers N for a LocalCluster, --scheduler ADDRESS for a running cluster (its workers "
                       "read the file at the same path). Exit 1 when anything collides. .npy output: the per-item "
                       "answer (intersects, check: (N,) bool; distance: (N,) float64), or int64 rows (contacts: "
                       "pose, face_a, face_b; scene: frame, a, b).")  # fmt: skip
    p.add_argument("input", help=".npy file: (N, 4, 4) poses, (N, dof) configurations or (F, N, 4, 4) frames")
    p.add_argument("--pair", nargs=2, metavar=("A", "B"), help="two mesh files: the poses are b's")
    p.add_argument("--pose-a", help="--pair: a's pose (default identity); " + pose_help.split(", or a")[0])
    p.add_argument("--query", default="intersects", choices=("intersects", "contacts", "distance"),
                   help="--pair: the query (default intersects)")  # fmt: skip
    p.add_argument("--max-pairs", type=positive_int, default=None, help="--query contacts: pairs kept per pose")
    p.add_argument("--robot", metavar="URDF", help="a robot: the rows are its configurations")
    p.add_argument("--scene", help="scene file (YAML): the frames' objects, or with --robot the obstacles")
    p.add_argument("--no-self", action="store_true", help="--robot: skip self-collision")
    p.add_argument("--broadphase", default="sap", choices=BROADPHASE_NAMES, metavar="NAME", help=bp_help)
    p.add_argument("--workers", type=count_int, default=None, help="start a LocalCluster of N worker processes")
    p.add_argument("--scheduler", metavar="ADDRESS", help="a running cluster's scheduler, e.g. tcp://host:8786")
    p.add_argument("--chunk", type=positive_int, default=50_000, help="rows per task (default 50000)")
    p.add_argument("-o", "--output", help="write the results: .npy or .parquet")
    p.add_argument("--progress", action="store_true", help="show progress even when stderr is not a terminal")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser(
        "bench",
        help=f"run a benchmark and write its report: bench [{'|'.join(BENCHMARKS)}] [--quick ...] (needs the repository)",
    )
    p.set_defaults(func=None)
    return parser


def _log_to_stderr() -> None:
    """Print the library's notices (a compile starting: collisionkit._numba) on stderr."""
    logger = logging.getLogger("collisionkit")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 clear or success, 1 collision, 2 error).

    A bad option exits through argparse (``SystemExit(2)``, one line on
    stderr); ``--help`` through ``SystemExit(0)``.
    """
    args_in = sys.argv[1:] if argv is None else list(argv)
    # --debug anywhere (before or after the command, bv-report included)
    debug = "--debug" in args_in
    args_in = [a for a in args_in if a != "--debug"]
    _log_to_stderr()
    try:
        if args_in[:1] == ["bv-report"]:
            # its own parser (positional meshes, many options): collisionkit bv-report --help
            from .bv_report import main as bv_report_main

            return bv_report_main(args_in[1:])
        parser = build_parser()
        args, rest = parser.parse_known_args(args_in)
        if rest and args.command != "bench":
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        if args.command == "bench":
            return cmd_bench(args, rest)
        args.debug = debug
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # the reader went away (`collisionkit contacts ... | head`): not an error of ours;
        # point stdout at devnull so the interpreter's final flush does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except (Exception, RecursionError) as exc:
        # Every error exits 2 (never 1, the collision code); ours name the file,
        # line or option; anything else is a bug, reported in one line too.
        from .errors import CollisionKitError

        if debug:
            traceback.print_exc()
        ours = isinstance(exc, (CliError, CollisionKitError))
        kind = "" if ours else f"{type(exc).__name__}: "
        hint = "" if ours or debug else " (an unexpected error; --debug shows the traceback)"
        print(f"error: {kind}{one_line(exc)}{hint}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
