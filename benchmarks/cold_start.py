"""Cold start: how long a new user waits for the first answer (issue 16).

    python -m benchmarks.cold_start [--wheel PATH] [--jit]

Builds the platform wheel (``make wheel``: every kernel precompiled for the generic CPU)
unless ``--wheel`` (or ``$COLLISIONKIT_WHEEL``) names one, installs it into a new
virtual environment, and then, in a fresh process per row, outside the repository,
with an empty cache folder of its own (nothing cached anywhere), times the first call
of each query from the moment ``python`` starts (import included) to the answer.
Each process then repeats its query (the "warm" column) and reports the numba
dispatchers it ran and which of them compiled (``dispatcher.stats.cache_misses``).
``--jit`` adds the same rows with the shipped code turned off
(``COLLISIONKIT_COMPILED_DIR=none``): what a source install pays (many minutes).

Targets (issue 16): intersects, contacts and ``collisionkit check a.stl b.stl`` within
5 s; every other first call within 10 s; a warm call within 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Common set-up of every row: meshes a user would bring (a tessellated sphere and
#: torus, not boxes), one pose, and a batch of poses long enough for the parallel path.
_SETUP = """
import time, json, gc, resource
t0 = time.perf_counter()
import numpy as np
import collisionkit as ck
from collisionkit.geometry.primitives import uv_sphere_mesh, torus_mesh
from collisionkit.geometry.transforms import translation
a = torus_mesh(1.0, 0.3)
b = uv_sphere_mesh(0.5, rings=24, segments=48)
T = translation([1.2, 0.0, 0.0])
poses = np.repeat(T[None], 512, axis=0)
poses[:, 0, 3] = np.linspace(0.0, 2.5, 512)
"""

_REPORT = """
t1 = time.perf_counter()
again = time.perf_counter(); query(); warm = time.perf_counter() - again
from numba.core.registry import CPUDispatcher
ds = [d for d in gc.get_objects() if isinstance(d, CPUDispatcher) and (d.stats.cache_hits or d.stats.cache_misses)]
misses = sorted(f"{d.py_func.__module__}.{d.__name__}" for d in ds if d.stats.cache_misses)
from collisionkit import _shipped
print("RESULT " + json.dumps({"in_process": t1 - t0, "warm": warm, "dispatchers": len(ds), "cache_misses": misses,
      "status": _shipped.status(), "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

#: Row -> the body of ``query()``: a single pose and a batch, default options.
QUERIES = {
    "intersects": "ck.intersects(a, b, None, T); ck.intersects(a, b, None, poses)",
    "contacts": "ck.contacts(a, b, None, T); ck.contacts(a, b, None, poses)",
    "distance": "ck.distance(a, b, None, T); ck.distance(a, b, None, poses)",
    "penetration": "ck.penetration(a, b, None, T); ck.penetration(a, b, None, poses[:64])",
    "classify": "ck.classify(a, b, None, T); ck.classify(a, b, None, poses[:64])",
    "time_of_impact": "ck.time_of_impact(a, b, None, None, translation([4.0, 0, 0]), translation([0.5, 0, 0])); "
    "s = poses[:64].copy(); s[:, 0, 3] += 3.0; ck.time_of_impact(a, b, None, None, s, T)",
    "world step": "w = ck.World(); w.add('a', a); w.add('b', b, T); w.add('box', ck.Box([0.5, 0.5, 0.5]), "
    "translation([0, 1.0, 0])); w.add('ball', ck.Sphere(0.4), translation([0, 0, 1.0])); w.colliding_pairs()",
    "trimesh drop-in": "import trimesh; from collisionkit.trimesh import CollisionManager; m = CollisionManager(); "
    "ta = trimesh.Trimesh(a.vertices, a.faces); tb = trimesh.Trimesh(b.vertices, b.faces); m.add_object('a', ta); "
    "m.add_object('b', tb, T); m.in_collision_internal(); m.min_distance_internal(); m.set_transform('b', T); "
    "m.min_distance_internal(); m.in_collision_single(tb, T); m.min_distance_single(tb, T)",
    "Robot.check": "robot = ck.Robot.load(URDF); w = ck.World(); w.add('wall', ck.Box([0.1, 1, 1]), "
    "translation([0.3, 0, 0.3])); robot.check(np.zeros(robot.dof), w); robot.check(np.zeros((256, robot.dof)), w)",
    "intersects(margin=)": "ck.intersects(a, b, None, T, margin=0.05); ck.intersects(a, b, None, poses, margin=0.05)",
    "Robot margin and edges": "robot = ck.Robot.load(URDF); w = ck.World(); "
    "w.add('plate', ck.primitives.box_mesh([0.1, 1, 1]), translation([0.3, 0, 0.3])); q = np.zeros(robot.dof); "
    "robot.check(q, w, margin=0.02); robot.check(np.zeros((256, robot.dof)), w, margin=0.02); "
    "robot.clearance(q, w); robot.check_motion(q, np.full(robot.dof, 0.5), w)",
}
TARGET_S = {"intersects": 5.0, "contacts": 5.0, "collisionkit check a.stl b.stl": 5.0}
OTHER_TARGET_S = 10.0
WARM_TARGET_S = 1.0


def _kernel_hash() -> str:
    sys.path.insert(0, str(ROOT / "src"))
    from collisionkit._numba import kernel_source_hash

    return kernel_source_hash()


def _wheel_hash(wheel: Path) -> str | None:
    with zipfile.ZipFile(wheel) as z:
        try:
            return json.loads(z.read("collisionkit/_compiled/manifest.json"))["kernel_hash"]
        except KeyError:
            return None


def wheel_path(build: bool = True) -> Path:
    """``$COLLISIONKIT_WHEEL``, else the newest platform wheel in dist/ built from the current
    kernel sources, else (``build``) a new one made as ``make wheel`` makes it."""
    if os.environ.get("COLLISIONKIT_WHEEL"):
        return Path(os.environ["COLLISIONKIT_WHEEL"])
    want = _kernel_hash()
    for wheel in sorted((ROOT / "dist").glob("collisionkit-*-cp*-*.whl"), key=os.path.getmtime, reverse=True):
        if _wheel_hash(wheel) == want:
            return wheel
    if not build:
        raise FileNotFoundError(f"no wheel for kernels {want} in dist/; run `make wheel`")
    build_wheel()
    return wheel_path(build=False)


def build_wheel() -> None:
    """What ``make wheel`` does: compile every kernel for the generic CPU, then pack the wheel."""
    print("building the platform wheel (make wheel; about 10 minutes on 2 cores) ...", flush=True)
    compiled = ROOT / "build" / "compiled"
    cmd = [sys.executable, "-m", "collisionkit", "warmup", "--ship", str(compiled), "--ship-cache", str(ROOT / "build" / "ship-cache")]
    subprocess.run(cmd, cwd=ROOT, check=True)
    env = dict(os.environ, COLLISIONKIT_SHIP_DIR=str(compiled))
    cmd = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(ROOT / "dist"), str(ROOT)]
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)


def fresh_venv(path: Path, wheel: Path) -> Path:
    """A new venv at ``path`` with ``wheel`` and its dependencies installed; returns its python."""
    venv.create(path, with_pip=True, clear=True)
    python = path / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], check=True)
    return python


def _clean_env(work: Path, row: str, jit: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "COLLISIONKIT_", "PYTHON"))}
    env["COLLISIONKIT_CACHE_DIR"] = str(work / "cache" / row.replace(" ", "_").replace(".", "_"))
    env["XDG_CACHE_HOME"] = str(work / "xdg")  # nothing of the user's own cache either
    if jit:
        env["COLLISIONKIT_COMPILED_DIR"] = "none"
    return env


def first_calls(python: Path, work: Path, jit: bool = False, rows: list[str] | None = None) -> dict[str, dict]:
    """Row -> {seconds, in_process, warm, dispatchers, cache_misses, peak_rss_mb, ok}: one fresh
    process per row, started in ``work`` (outside the repository) with an empty cache."""
    work.mkdir(parents=True, exist_ok=True)
    from collisionkit.warmup import ARM_URDF

    (work / "arm.urdf").write_text(ARM_URDF)
    results = {}
    for row in rows or [*QUERIES, "collisionkit check a.stl b.stl"]:
        env = _clean_env(work, row, jit)
        if row.startswith("collisionkit check"):
            results[row] = _cli_check(python, work, env)
            continue
        script = f"{_SETUP}\nURDF = {str(work / 'arm.urdf')!r}\ndef query():\n    {QUERIES[row]}\nquery()\n{_REPORT}"
        t0 = time.perf_counter()
        r = subprocess.run([str(python), "-c", script], cwd=work, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        line = next((x for x in r.stdout.splitlines() if x.startswith("RESULT ")), None)
        rec = json.loads(line[7:]) if line else {"cache_misses": None, "error": r.stderr[-2000:]}
        results[row] = {"seconds": seconds, "ok": r.returncode == 0 and line is not None, **rec}
    return results


def _cli_check(python: Path, work: Path, env: dict[str, str]) -> dict:
    import trimesh

    for name, mesh in (("a.stl", trimesh.creation.icosphere(3)), ("b.stl", trimesh.creation.torus(1.0, 0.3))):
        mesh.export(work / name)
    cli = python.parent / "collisionkit"
    t0 = time.perf_counter()
    r = subprocess.run([str(cli), "check", "a.stl", "b.stl"], cwd=work, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    compiled = "compiling" in r.stderr  # the CLI prints the compile notice on stderr
    return {"seconds": seconds, "ok": r.returncode in (0, 1), "warm": None, "dispatchers": None,
            "cache_misses": ["(compile notice printed)"] if compiled else [], "peak_rss_mb": None}  # fmt: skip


#: Issue 32 item 3: ``import collisionkit`` and a warm process's first ``intersects`` answer,
#: both from ``python`` starting (seconds).
IMPORT_TARGET_S = 0.7
WARM_START_TARGET_S = 1.0

_WARM_START = """
import time
import collisionkit as ck
imported = time.time()
a = ck.primitives.box_mesh([1.0, 1.0, 1.0])
hit = ck.intersects(a, a, None, ck.translation([0.5, 0.2, 0.1]))
print("WARM", imported, time.time(), hit)
"""


def warm_starts(python: Path, work: Path, runs: int = 7) -> dict[str, float]:
    """Medians over ``runs`` fresh processes, each timed from its spawn: ``import collisionkit``
    done, and one pose's ``intersects`` answered. The cache is the one ``first_calls`` left for
    the intersects row (what a user's second process finds); nothing compiles."""
    env = _clean_env(work, "intersects", jit=False)
    imports, answers = [], []
    for _ in range(runs):
        t0 = time.time()
        r = subprocess.run([str(python), "-c", _WARM_START], cwd=work, env=env, capture_output=True, text=True)
        line = next((x for x in r.stdout.splitlines() if x.startswith("WARM ")), None)
        if r.returncode != 0 or line is None or not line.endswith("True"):
            raise RuntimeError(f"warm start failed: {r.stderr[-2000:]}")
        _, imported, answered, _ = line.split()
        imports.append(float(imported) - t0)
        answers.append(float(answered) - t0)
    return {"import_s": sorted(imports)[runs // 2], "answer_s": sorted(answers)[runs // 2], "runs": runs}


def _warm_lines(w: dict[str, float]) -> list[str]:
    def verdict(value: float, target: float) -> str:
        return f"{value:.2f} s (target {target}: {'yes' if value <= target else '**no**'})"

    return [
        f"Warm start (medians of {w['runs']} fresh processes on the wheel's venv, timed from the spawn): "
        f"`import collisionkit` {verdict(w['import_s'], IMPORT_TARGET_S)}, the first `intersects` answer "
        f"(one pose of two boxes) {verdict(w['answer_s'], WARM_START_TARGET_S)}.",
        "",
    ]


def _table(results: dict[str, dict], label: str) -> list[str]:
    lines = [f"| first call ({label}) | seconds | target | warm call (s) | compiled kernels | peak RSS (MB) |",
             "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for row, r in results.items():
        target = TARGET_S.get(row, OTHER_TARGET_S)
        met = "yes" if r["ok"] and r["seconds"] <= target else "**no**"
        warm = "" if r.get("warm") is None else f"{r['warm']:.3f}" + (" (**over**)" if r["warm"] > WARM_TARGET_S else "")
        misses = "error" if r.get("cache_misses") is None else str(len(r["cache_misses"]))
        rss = "" if r.get("peak_rss_mb") is None else f"{r['peak_rss_mb']:.0f}"
        lines.append(f"| {row} | {r['seconds']:.2f} | {target:.0f} ({met}) | {warm} | {misses} | {rss} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.cold_start", description=__doc__.split("\n\n")[0])
    p.add_argument("--wheel", type=Path, default=None, help="a built platform wheel (default: dist/ or make wheel)")
    p.add_argument("--jit", action="store_true", help="also time the rows with the shipped code turned off (slow)")
    p.add_argument("--only", default=None, help="comma-separated rows (default all)")
    p.add_argument("--no-write", action="store_true", help="do not write benchmarks/results/cold_start.md")
    args = p.parse_args(argv)
    if args.wheel:
        os.environ["COLLISIONKIT_WHEEL"] = str(args.wheel)
    wheel = wheel_path(build=True)
    rows = args.only.split(",") if args.only else None
    with tempfile.TemporaryDirectory(prefix="collisionkit-cold-") as tmp:
        t0 = time.perf_counter()
        python = fresh_venv(Path(tmp) / "venv", wheel)
        print(f"wheel {wheel.name} ({wheel.stat().st_size / 1e6:.1f} MB), venv + pip install {time.perf_counter() - t0:.0f} s")
        sets = [("shipped", first_calls(python, Path(tmp) / "work", rows=rows))]
        warm = warm_starts(python, Path(tmp) / "work") if "intersects" in sets[0][1] else None
        if args.jit:
            sets.append(("JIT", first_calls(python, Path(tmp) / "work-jit", jit=True, rows=rows)))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    provenance = (
        f"Provenance: commit {commit.strip()}, kernel-source hash `{_wheel_hash(wheel)}`, date "
        f"{time.strftime('%Y-%m-%d')}, command `python -m benchmarks.cold_start`, {os.cpu_count()} cores, "
        f"Python {sys.version.split()[0]}, wheel {wheel.name} ({wheel.stat().st_size / 1e6:.1f} MB)."
    )
    print("\n" + provenance)
    failed = False
    report = ["# Cold start: first answers from a fresh install", "", provenance, ""]
    for label, results in sets:
        print("\n".join(["", *_table(results, label)]))
        report += [*_table(results, label), ""]
        for row, r in results.items():
            if not r["ok"]:
                failed = True
                print(f"{row}: failed: {r.get('error', '')}")
            elif label == "shipped" and r["cache_misses"]:
                print(f"{row}: compiled {r['cache_misses']}")
    if warm is not None:
        print("\n".join(["", *_warm_lines(warm)]))
        report += _warm_lines(warm)
    report += [
        "Each row: a new process started outside the repository with an empty cache folder of its own,",
        "timed from `python` starting (import included) to the answer of a single pose and a batch; the",
        "warm call repeats the query in the same process; compiled kernels counts the numba dispatchers",
        "with a cache miss (0: everything loaded from the wheel).",
        "",
    ]
    if not args.no_write and not failed:
        (ROOT / "benchmarks" / "results" / "cold_start.md").write_text("\n".join(report), encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
