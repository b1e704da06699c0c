"""Where a per-call query's time goes, against the time the 2x target allows (issue 15).

Usage (from the repository root, the bench extra installed)::

    python -m benchmarks.gap_profile                       # the pairs scenes, writes results/
    python -m benchmarks.gap_profile --scenes soccer-soccer,assembly-near-contacts --poses 30
    python -m benchmarks.gap_profile --no-write

For each scene, on its first ``--poses`` poses, medians of interleaved rounds:

* ``api``: ``ck.intersects(a, b, Ta, Tb)`` / ``ck.contacts(...)`` per call, as a user calls it
  (default threads: a query too small to split runs on one);
* ``kernel``: the per-call kernel alone, through ``query.batch.Pinned`` as the API calls it:
  for booleans ``kernels.traverse.descent.intersect_one`` on ``query.pair.single_call_args``
  (the API's arguments with the serial budget NO_BUDGET: a large query does not split over
  the threads, as the API's does after SPLIT_WORK units), for contacts the serial
  ``kernels.traverse.descent.contacts_one`` with its buffers made outside the loop;
* ``dispatch``: a no-op ``@njit`` with the same arguments, pinned the same way (the floor of
  calling compiled code from Python with that many arguments);
* ``api1``: the same with ``threads=1`` (the serial path);
* ``wrapper`` = api - kernel (booleans), api1 - kernel (contacts); ``traversal`` = kernel -
  dispatch - leaves;
  ``leaves`` ~= n_p * c_p: the triangle tests the query ran (``ck.query_stats``) times the
  measured cost of one (``bvh.quality.unit_costs`` on the query's trees; an estimate: the
  unit cost is measured on the tree's own triangle pairs, placed to overlap half the time);
* ``peer``: the fastest of python-fcl, Coal (OBBRSS, OBB) and trueform per call on the same poses, objects
  built outside the timed region (``benchmarks.peers``); ``allowed`` = peer / 2, the time the
  ">= 2x" target leaves us; ``gap`` = api - allowed (> 0: the target is missed by that much).

Answers are checked before timing: the kernel agrees with the API on every pose, and the
peers' booleans agree with ours (their all-pairs lists carry Coal's 1e-6 tolerance, so only
booleans are compared here; ``benchmarks.pairs`` referees them exactly).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import peers as P
from benchmarks import scenes as S
from benchmarks.pairs import machine, provenance, provenance_line

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_SCENES = ["env-rob", "bunny-bunny", "duck-shelf", "soccer-soccer", "large-bunny-soccer", "assembly-near-contacts"]


def _per_call(fn: Callable[[Any], Any], items: list, min_s: float = 0.02) -> float:
    """Seconds per call of ``fn(item)`` averaged over ``items``, repeated to >= min_s."""
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            for it in items:
                fn(it)
        dt = time.perf_counter() - t0
        if dt >= min_s or reps >= 1 << 16:
            return dt / (reps * len(items))
        reps *= 2


def _noop(n_args: int):
    import numba

    from collisionkit.query.batch import Pinned

    names = [f"x{i}" for i in range(n_args)]
    ns: dict[str, Any] = {}
    exec(f"def noop({', '.join(names)}):\n    return 0\n", ns)  # noqa: S102
    return Pinned(numba.njit(ns["noop"]))


def profile_scene(name: str, n_poses: int, rounds: int) -> dict[str, Any]:
    import collisionkit as ck
    from collisionkit.bvh import pair_volume, tree_for
    from collisionkit.bvh.quality import unit_costs
    from collisionkit.constants import MODE_ALL, NO_BUDGET
    from collisionkit.kernels.core.layout import N_STATS
    from collisionkit.kernels.traverse.descent import contacts_one, intersect_one
    from collisionkit.query.batch import Pinned
    from collisionkit.query.pair import single_call_args

    sc = S.make_scene(name)
    a = ck.Mesh(sc.mesh_a.vertices, sc.mesh_a.faces)
    b = ck.Mesh(sc.mesh_b.vertices, sc.mesh_b.faces)
    Ta = np.ascontiguousarray(sc.poses_a[0] if sc.poses_a.ndim == 3 else sc.poses_a, dtype=np.float64)
    poses = [np.ascontiguousarray(p) for p in sc.poses_b[:n_poses]]
    bv = pair_volume(a, b)
    ta, tb = tree_for(a, bv), tree_for(b, bv)
    x, y = ta.arrays, tb.arrays

    # --- the argument lists, built outside every timed loop, checked against the API
    one = Pinned(intersect_one)
    bool_args = [single_call_args(a, b, Ta, p) for p in poses]  # the API's arguments, the serial budget
    keys = np.empty(1 << 16, np.int64)
    front = np.zeros((0, 2), np.int32)
    stats = np.zeros((1, N_STATS), np.int64)
    pair_args = [(*x, Ta, *y, p, ta.bv_code, 0, MODE_ALL, -1, keys, NO_BUDGET, front, 0, stats) for p in poses]
    cone = Pinned(contacts_one)
    hits = [bool(ck.intersects(a, b, Ta, p, threads=1)) for p in poses]
    counts = [int(ck.contacts(a, b, Ta, p, threads=1).counts) for p in poses]
    for args, h in zip(bool_args, hits, strict=True):
        if (one.call(*args) == 1) != h:
            raise AssertionError(f"{name}: intersect_one disagrees with ck.intersects")
    for args, c in zip(pair_args, counts, strict=True):
        r, _ = cone.call(*args)
        if r != c:
            raise AssertionError(f"{name}: contacts_one found {r} pairs, ck.contacts {c}")
    noop_b, noop_p = _noop(len(bool_args[0])), _noop(len(pair_args[0]))
    noop_b.call(*bool_args[0])
    noop_p.call(*pair_args[0])

    peers = [e for e in (P.FCL(), P.CoalOBBRSS(), P.CoalOBB(), P.Trueform()) if e.available()]
    for e in peers:
        e.setup(sc.mesh_a, sc.mesh_b)
        got = [bool(e.intersects_one(Ta, p)) for p in poses]
        if got != hits:
            raise AssertionError(f"{name}: {e.name} booleans differ from collisionkit's")
        e.all_pairs_raw(Ta, poses[0])

    # --- counters and unit costs
    s_any = ck.query_stats(a, b, Ta, np.stack(poses), mode="any", threads=1)
    s_all = ck.query_stats(a, b, Ta, np.stack(poses), mode="all", threads=1)
    uc = unit_costs(ta, tb)

    samples: dict[str, list[float]] = {}

    def rec(key: str, fn: Callable[[Any], Any], items: list) -> None:
        samples.setdefault(key, []).append(_per_call(fn, items))

    for _ in range(rounds):
        rec("bool_api", lambda p: ck.intersects(a, b, Ta, p), poses)
        rec("bool_api1", lambda p: ck.intersects(a, b, Ta, p, threads=1), poses)  # shown, not used
        rec("bool_kernel", lambda args: one.call(*args), bool_args)
        rec("bool_dispatch", lambda args: noop_b.call(*args), bool_args)
        rec("pairs_api", lambda p: ck.contacts(a, b, Ta, p), poses)
        rec("pairs_api1", lambda p: ck.contacts(a, b, Ta, p, threads=1), poses)
        rec("pairs_kernel", lambda args: cone.call(*args), pair_args)
        rec("pairs_dispatch", lambda args: noop_p.call(*args), pair_args)
        for e in peers:
            rec(f"bool_{e.name}", lambda p, e=e: e.intersects_one(Ta, p), poses)
            rec(f"pairs_{e.name}", lambda p, e=e: e.all_pairs_raw(Ta, p), poses)
    med = {k: float(np.median(v)) for k, v in samples.items()}

    out: dict[str, Any] = {
        "scene": name, "poses": len(poses), "bv": bv, "colliding": int(sum(hits)),
        "unit_costs_ns": {"c_v": uc.c_v * 1e9, "c_p": uc.c_p * 1e9, "c_u": uc.c_u * 1e9},
    }  # fmt: skip
    for q, st in (("bool", s_any), ("pairs", s_all)):
        n_v, n_p, n_u = (float(np.mean(getattr(st, f))) for f in ("bv_tests", "tri_tests", "bv_updates"))
        leaves = n_p * uc.c_p
        kernel, disp, api, api1 = med[f"{q}_kernel"], med[f"{q}_dispatch"], med[f"{q}_api"], med[f"{q}_api1"]
        peer_name = min((e.name for e in peers), key=lambda n: med[f"{q}_{n}"], default=None)
        peer = med[f"{q}_{peer_name}"] if peer_name else float("nan")
        out[q] = {
            # the boolean kernel runs as the API runs it (split when large): wrapper = API - kernel;
            # the contacts kernel runs serially: wrapper = API 1 thread - kernel
            "api_us": api * 1e6, "api1_us": api1 * 1e6, "wrapper_us": ((api if q == "bool" else api1) - kernel) * 1e6,
            "dispatch_us": disp * 1e6,
            "traversal_us": (kernel - disp - leaves) * 1e6, "leaves_us": leaves * 1e6,
            "n_v": n_v, "n_p": n_p, "n_u": n_u,
            "peer": peer_name, "peer_us": peer * 1e6, "ratio": peer / api,
            "allowed_us": peer / 2 * 1e6, "gap_us": (api - peer / 2) * 1e6,
        }  # fmt: skip
    return out


def render(report: dict[str, Any]) -> str:
    L = [
        "# Per-call gap profile: where the time goes against the 2x target",
        "",
        report["provenance"],
        "",
        f"Machine: {report['machine'].get('cpu_model', '?')}, {report['machine'].get('cpu_affinity', '?')} cores; "
        f"load average at start {report['machine'].get('loadavg_start', '?')}.",
        "",
        f"Default options, {report['rounds']} interleaved rounds (medians), {report['poses']} poses a scene. "
        "API: the default call (a query past `SPLIT_WORK` runs on every thread); API 1 thread: "
        "`threads=1`. Boolean: the kernel runs on the API's own arguments (split when large: its "
        "traversal is then wall time on every thread), wrapper = API - kernel; all pairs: the "
        "serial kernel, wrapper = API 1 thread - kernel; "
        "dispatch = a no-op compiled call with the same arguments; "
        "leaves ~= n_p x c_p (triangle tests x the measured cost of one); traversal = kernel - "
        "dispatch - leaves; allowed = fastest peer / 2 (the >= 2x target); gap = API - allowed "
        "(> 0: missed by that much). `python -m benchmarks.gap_profile`.",
        "",
        "| scene | query | API us | API 1 thread | wrapper | dispatch | traversal | leaves (n_p) | fastest peer us | ratio | allowed | gap |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in report["scenes"]:
        for q, label in (("bool", "boolean"), ("pairs", "all pairs")):
            r = s[q]
            L.append(
                f"| {s['scene']} ({s['bv']}) | {label} | {r['api_us']:.2f} | {r['api1_us']:.2f} | {r['wrapper_us']:.2f} | {r['dispatch_us']:.2f} | "
                f"{r['traversal_us']:.2f} | {r['leaves_us']:.2f} ({r['n_p']:.0f}) | {r['peer_us']:.2f} {r['peer']} | "
                f"{r['ratio']:.2f}x | {r['allowed_us']:.2f} | {r['gap_us']:+.2f} |"
            )
    L += ["", "Unit costs (ns, `bvh.quality.unit_costs` on each scene's trees):", ""]
    for s in report["scenes"]:
        u = s["unit_costs_ns"]
        L.append(f"- {s['scene']} ({s['bv']}): c_v {u['c_v']:.1f}, c_u {u['c_u']:.1f}, c_p {u['c_p']:.1f}")
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", default=",".join(DEFAULT_SCENES))
    ap.add_argument("--poses", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    scenes = []
    for name in a.scenes.split(","):
        print(f"gap_profile: {name} ...", file=sys.stderr, flush=True)
        scenes.append(profile_scene(name, a.poses, a.rounds))
    argv = sys.argv[1:] if argv is None else argv
    report = {
        "provenance": provenance_line(provenance(argv, "benchmarks.gap_profile")), "machine": machine(),
        "rounds": a.rounds, "poses": a.poses, "scenes": scenes,
    }  # fmt: skip
    text = render(report)
    print(text)
    if not a.no_write:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "gap_profile.md").write_text(text, encoding="utf-8")
        (RESULTS / "gap_profile.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
