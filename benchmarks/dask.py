"""Scale-out on Dask (issue 17): 1M poses and 1M robot configurations on 1 and 2 workers.

    python -m benchmarks.dask [--poses 1000000] [--configs 1000000] [--quick]

Two workloads, each a Dask array chunked along the batch axis, computed on a
LocalCluster of W worker processes (one thread each; ``collisionkit.distributed.
local_cluster``) for W = 1 and 2:

* **poses**: ``ck.intersects(env, rob, None, P)`` on the env-rob scene
  (benchmarks.scenes; about half the poses collide);
* **configurations**: ``kuka.check(Q, cell, self_collision=False)``, the KUKA iiwa in
  benchmarks.robot's obstacle cell (table, posts, shelf).

Measured, per workload and W:

* the local numpy call on one thread and on every core (the baseline);
* a fresh cluster's first computation: the first chunk's compute time on each worker
  (kernels loaded from the inherited cache, nothing compiled: the compile count is
  printed) against the median chunk;
* a warm computation's wall time (graph, shipping, compute, gather): throughput and
  the scaling efficiency ``throughput(W) / (W * throughput(1))``;
* bytes: the geometry as shipped (pickle protocol 5, with its trees), once per worker
  per computation, and the graph per chunk (the task: each chunk's items are read from a
  .npy by the task itself, ``collisionkit.distributed.from_npy``);
* per-chunk overhead: at W = 2, the same N in chunk sizes from small to large; the wall
  time's slope in the number of chunks, times W, is the worker time each chunk costs
  beyond its items.

From the per-item and per-chunk costs the results file projects 8-64 workers and
recommends a chunk size. Writes benchmarks/results/dask.md and .json (with provenance).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import collisionkit as ck

RESULTS = Path(__file__).resolve().parent / "results"


def pose_workload(n: int):
    from .scenes import make_scene

    s = make_scene("env-rob", n)
    a = ck.Mesh(s.mesh_a.vertices, s.mesh_a.faces, name="env")
    b = ck.Mesh(s.mesh_b.vertices, s.mesh_b.faces, name="rob")
    data = np.ascontiguousarray(s.poses_b)

    def run(x, threads=None):
        return ck.intersects(a, b, None, x, threads=threads)

    return {"name": "poses", "what": "intersects(env, rob) per pose", "data": data, "run": run, "geometry": (a, b)}


def robot_workload(n: int):
    from .robot import obstacles, robots

    urdf = dict(robots())["kuka_iiwa"]
    robot = ck.Robot.load(urdf)
    world = ck.World()
    for name, m, T in obstacles():
        world.add(name, m, T)
    data = robot.random_configurations(n, seed=11)

    def run(x, threads=None):
        return robot.check(x, world, self_collision=False, threads=threads)

    return {"name": "configurations", "what": "KUKA iiwa check against the cell", "data": data, "run": run, "geometry": (robot, world)}


def lazy(path: str, chunk: int, n: int | None = None):
    """The workload's items as a Dask array, each chunk read from the .npy by its task
    (``collisionkit.distributed.from_npy``: the items never pass through the scheduler)."""
    x = ck.distributed.from_npy(path, chunk)
    return x if n is None or n == x.shape[0] else x[:n]


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def task_times(stream) -> dict[str, list[float]]:
    """Compute seconds of each task per worker, in start order (chunk tasks only)."""
    per: dict[str, list[tuple[float, float]]] = {}
    for t in stream:
        for ss in t.get("startstops", ()):
            if ss.get("action") == "compute" and "chunk" in str(t.get("key", "")):
                per.setdefault(t["worker"], []).append((ss["start"], ss["stop"] - ss["start"]))
    return {w: [d for _, d in sorted(v)] for w, v in per.items()}


def measure(work, workers: int, chunk: int, sweep: list[int] | None, sweep_n: int) -> dict:
    from distributed import get_task_stream

    data, run, path = work["data"], work["run"], work["path"]
    local = run(data)
    row: dict = {"workers": workers, "chunk": chunk}
    t0 = time.perf_counter()
    client = ck.distributed.local_cluster(workers, threads_per_worker=1)
    row["cluster_start_s"] = time.perf_counter() - t0
    try:
        # first computation on fresh workers: first chunk vs the rest, per worker
        with get_task_stream(client) as ts:
            wall, got = timed(lambda: np.asarray(run(lazy(path, chunk)).compute()))
        assert np.array_equal(got, local), "the cluster's answer differs from the local one"
        per = task_times(ts.data)
        row["first_wall_s"] = wall
        row["first_chunk_s"] = {w: v[0] for w, v in per.items()}
        row["median_chunk_s"] = statistics.median([d for v in per.values() for d in v])
        row["compiled_on_workers"] = sum(sum(m.values()) for m in client.run(ck.distributed.kernel_cache_misses).values())
        # steady state
        walls = []
        for _ in range(2):
            wall, got = timed(lambda: np.asarray(run(lazy(path, chunk)).compute()))
            walls.append(wall)
        assert np.array_equal(got, local)
        row["wall_s"] = min(walls)
        row["throughput"] = data.shape[0] / row["wall_s"]
        row["geometry_bytes"] = ck.distributed.shipped_bytes(*work["geometry"])
        t_ship, _ = timed(lambda: client.scatter(list(work["geometry"]), broadcast=True, hash=False))
        row["scatter_s"] = t_ship
        import cloudpickle

        g = run(lazy(path, chunk))
        arrays = [g] if not hasattr(g, "__dataclass_fields__") else []
        graph = dict(arrays[0].__dask_graph__()) if arrays else {}
        k = -(-data.shape[0] // chunk)
        row["graph_bytes_per_chunk"] = len(cloudpickle.dumps(graph, protocol=5)) / k
        row["item_bytes_per_chunk"] = chunk * data[0].nbytes
        if sweep:
            pts = []
            for c in sweep:
                run(lazy(path, c, sweep_n)).compute()  # settle
                wall, _ = timed(lambda c=c: run(lazy(path, c, sweep_n)).compute())
                pts.append({"chunk": c, "chunks": -(-sweep_n // c), "wall_s": wall})
            row["sweep"] = pts
            x = np.array([p["chunks"] for p in pts], float)
            y = np.array([p["wall_s"] for p in pts])
            slope, intercept = np.polyfit(x, y, 1)
            row["per_chunk_overhead_s"] = max(float(slope) * workers, 0.0)
            row["sweep_n"] = sweep_n
    finally:
        client.close()
    return row


def project(item_s: float, chunk_s: float, ship_s: float, n: int, chunk: int, workers: int) -> tuple[float, float]:
    """Projected wall time and efficiency at ``workers``: every worker gets the geometry
    (``ship_s`` each, serial from the client), then ceil(k / W) chunks of ``chunk`` items."""
    k = -(-n // chunk)
    t = ship_s * workers + -(-k // workers) * (chunk * item_s + chunk_s)
    ideal = n * item_s / workers
    return t, ideal / t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--poses", type=int, default=1_000_000)
    ap.add_argument("--configs", type=int, default=1_000_000)
    ap.add_argument("--pose-chunk", type=int, default=50_000)
    ap.add_argument("--config-chunk", type=int, default=20_000)
    ap.add_argument("--quick", action="store_true", help="100,000 poses and 50,000 configurations")
    args = ap.parse_args(argv)
    if args.quick:
        args.poses, args.configs = min(args.poses, 100_000), min(args.configs, 50_000)
        args.pose_chunk, args.config_chunk = min(args.pose_chunk, 10_000), min(args.config_chunk, 5_000)
    out = {"meta": {}, "workloads": []}
    import tempfile

    tmp = tempfile.TemporaryDirectory(prefix="ck-bench-dask-")
    load_before = os.getloadavg()[0]
    for work, chunk in ((pose_workload(args.poses), args.pose_chunk), (robot_workload(args.configs), args.config_chunk)):
        data, run = work["data"], work["run"]
        work["path"] = os.path.join(tmp.name, work["name"] + ".npy")
        np.save(work["path"], data)
        n = data.shape[0]
        run(data[:1000], threads=1)  # load kernels, build trees
        t1, _ = timed(lambda run=run, data=data: run(data, threads=1))
        tall, _ = timed(lambda run=run, data=data: run(data))
        rec = {"name": work["name"], "what": work["what"], "n": n, "local_1_thread_s": t1, "local_all_cores_s": tall}
        print(json.dumps(rec), flush=True)
        sweep_n = min(n, 200_000 if work["name"] == "poses" else 40_000)
        sizes = sorted({max(sweep_n // d, 1) for d in (200, 50, 10, 2)})
        rec["runs"] = []
        for w in (1, 2):
            r = measure(work, w, chunk, sizes if w == 2 else None, sweep_n)
            print(json.dumps(r), flush=True)
            rec["runs"].append(r)
        one, two = rec["runs"]
        rec["efficiency_2"] = two["throughput"] / (2 * one["throughput"])
        # per-item worker time from the one-worker run (its wall includes one chunk overhead per chunk)
        k = -(-n // chunk)
        rec["item_s"] = max((one["wall_s"] - k * two.get("per_chunk_overhead_s", 0.0)) / n, 1e-12)
        rec["ship_s"] = two["scatter_s"] / 2
        out["workloads"].append(rec)
    from importlib.metadata import version

    from .pairs import provenance, stamp

    meta = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, shared with other sessions",
        "python": platform.python_version(),
        "dask": version("dask"),
        "distributed": version("distributed"),
        "threads": ck.threading_layer(),
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "provenance": provenance(sys.argv[1:] if argv is None else list(argv), prog="benchmarks.dask"),
    }
    out["meta"] = meta
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dask.json").write_text(json.dumps(out, indent=2, default=str))
    md = report(out, args)
    (RESULTS / "dask.md").write_text(stamp(md, meta["provenance"]))
    print(md)
    return 0


def recommend(item_s: float, chunk_s: float) -> int:
    """The smallest round chunk size (1, 2 or 5 times a power of ten) whose per-chunk
    overhead is at most 5% of its compute (Dask's rule of thumb: tasks of 100 ms or more)."""
    want = chunk_s / (0.05 * item_s)
    mag = 10 ** int(np.floor(np.log10(max(want, 1))))
    for m in (1, 2, 5, 10):
        if m * mag >= want:
            return int(m * mag)
    return int(want)


def report(out: dict, args) -> str:
    meta = out["meta"]
    lines = [
        f"# Scale-out on Dask ({meta['date']}, {meta['machine']})",
        "",
        f"`python -m benchmarks.dask{' --quick' if args.quick else ''}` (poses {args.poses:,}, configurations {args.configs:,}): "
        f"dask {meta['dask']}, distributed {meta['distributed']}, Python {meta['python']}, numba threading layer {meta['threads']}. "
        "LocalCluster of worker processes, one thread each, on loopback; the answers equal the local numpy ones (checked). "
        f"Load average (1 min) before and after the run: {meta['load_average'][0]} and {meta['load_average'][1]} "
        "(other sessions share the two cores: 'local all cores' shows how much of a second core was free).",
        "",
        "| workload | items | chunk | local 1 thread | local all cores | workers | cluster start | first computation | "
        "first chunk per worker (median chunk) | compiled | warm wall | items/s | efficiency |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for w in out["workloads"]:
        for r in w["runs"]:
            first = ", ".join(f"{v:.3f}" for v in r["first_chunk_s"].values())
            eff = "1 (ref.)" if r["workers"] == 1 else f"{w['efficiency_2']:.2f}"
            lines.append(
                f"| {w['name']} ({w['what']}) | {w['n']:,} | {r['chunk']:,} | {w['local_1_thread_s']:.2f} s | "
                f"{w['local_all_cores_s']:.2f} s | {r['workers']} | {r['cluster_start_s']:.1f} s | {r['first_wall_s']:.2f} s | "
                f"{first} s ({r['median_chunk_s']:.3f} s) | {r['compiled_on_workers']} | {r['wall_s']:.2f} s | "
                f"{r['throughput']:,.0f} | {eff} |"
            )
    lines += ["", "## Bytes sent per computation", "",
              "| workload | geometry, pickled with its trees (to each worker, once) | graph per chunk (the task) | items per chunk (read by the worker from the .npy) |",
              "|---|---|---|---|"]  # fmt: skip
    for w in out["workloads"]:
        r = w["runs"][-1]
        lines.append(
            f"| {w['name']} | {r['geometry_bytes'] / 1e6:.2f} MB | {r['graph_bytes_per_chunk'] / 1e3:.2f} kB | "
            f"{r['item_bytes_per_chunk'] / 1e3:.1f} kB |"
        )
    lines += ["", "## Per-chunk overhead (2 workers)", "",
              "| workload | items | chunk size: wall | per-chunk overhead (worker time) | per-item time | recommended chunk (overhead <= 5%) |",
              "|---|---|---|---|---|---|"]  # fmt: skip
    for w in out["workloads"]:
        r = w["runs"][-1]
        sweep = ", ".join(f"{p['chunk']:,}: {p['wall_s']:.2f} s" for p in r["sweep"])
        rec = recommend(w["item_s"], r["per_chunk_overhead_s"])
        w["recommended_chunk"] = rec
        lines.append(
            f"| {w['name']} | {r['sweep_n']:,} | {sweep} | {r['per_chunk_overhead_s'] * 1e3:.1f} ms | "
            f"{w['item_s'] * 1e6:.2f} us | {rec:,} |"
        )
    lines += ["", "## Projection to 8-64 workers", "",
              "From the measured per-item time, per-chunk overhead and geometry shipping time per worker "
              "(scattered serially from the client): T(W) = W * ship + ceil(k / W) * (chunk * item + overhead), "
              "efficiency = (N * item / W) / T(W). It assumes the workers are as fast as these and a scheduler "
              "that keeps up (a few thousand tasks per second: at the recommended chunk size the tasks are far fewer). "
              "The chunk is the recommended one, or N / W when that is smaller.",
              "",
              "| workload | items | 8 workers: wall (efficiency; chunk) | 16 | 32 | 64 |",
              "|---|---|---|---|---|---|"]  # fmt: skip
    for w in out["workloads"]:
        r = w["runs"][-1]
        rec = recommend(w["item_s"], r["per_chunk_overhead_s"])
        for n in (w["n"], 100 * w["n"]):
            cells = []
            for W in (8, 16, 32, 64):
                chunk = min(rec, -(-n // W))  # every worker gets work
                t, e = project(w["item_s"], r["per_chunk_overhead_s"], w["ship_s"], n, chunk, W)
                cells.append(f"{t:.2f} s ({e:.0%}; chunk {chunk:,})")
            lines.append(f"| {w['name']} | {n:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
