"""Check an INSTALLED platform wheel: its first queries compile nothing (the release workflow's test step).

    python tools/check_wheel.py [--query NAME ...] [--json OUT]

Run it with the Python of a fresh environment where the wheel was installed (cibuildwheel's
test step does exactly that), from outside the source tree. It checks:

* the installed package ships precompiled kernels (``collisionkit/_compiled/manifest.json``)
  for this Python, this numba, these kernel sources and this platform
  (``collisionkit._shipped.status()``), and the distribution pins ``numba==`` the version
  they were compiled with;
* per query (intersects, contacts, distance, penetration, classify, time_of_impact, a
  World step; the groups ``collisionkit warmup`` compiles), in a new process with an
  empty cache folder of its own (``COLLISIONKIT_CACHE_DIR``) and nothing of the user's
  cache: numba compiles nothing (no ``numba:compile`` event, no cache miss of a
  collisionkit kernel) and writes no kernel into the user cache, and the answers are
  the ones the pure-Python references give (a hit, a miss, a distance).

Exit status 0 when every check passes, 1 otherwise (each failure is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Common set-up of every process: the meshes a user would bring, one pose, a batch.
_SETUP = """
import json, sys, time
t0 = time.perf_counter()
from numba.core import event
compiled = []

class _Compiles(event.Listener):
    def on_start(self, ev):
        d = ev.data.get("dispatcher")
        compiled.append(getattr(getattr(d, "py_func", None), "__qualname__", repr(d)))

    def on_end(self, ev):
        pass

event.register("numba:compile", _Compiles())
import numpy as np
import collisionkit as ck
from collisionkit.geometry.primitives import uv_sphere_mesh, torus_mesh
from collisionkit.geometry.transforms import translation
a = torus_mesh(1.0, 0.3)
b = uv_sphere_mesh(0.5, rings=24, segments=48)
T = translation([1.2, 0.0, 0.0])
poses = np.repeat(T[None], 256, axis=0)
poses[:, 0, 3] = np.linspace(0.0, 2.5, 256)
"""

#: Query -> (body run once; an assertion on its answers). The sphere (radius 0.5) at x = 1.2
#: overlaps the torus' tube (1.0 +- 0.3); at x = 0 (the hole) and x = 2.5 it is clear of it.
QUERIES = {
    "intersects": (
        "r1 = ck.intersects(a, b, None, T); r2 = ck.intersects(a, b, None, poses)",
        "assert bool(r1) and r2.any() and not bool(r2[0]) and not bool(r2[-1])",
    ),
    "contacts": (
        "r1 = ck.contacts(a, b, None, T); r2 = ck.contacts(a, b, None, poses)",
        "assert len(r1) > 0",
    ),
    "distance": (
        "r1 = ck.distance(a, b, None, translation([2.5, 0, 0])); r2 = ck.distance(a, b, None, poses)",
        "assert abs(float(r1.distance) - 0.7) < 1e-2 and float(r2.distance.min()) == 0.0",
    ),
    "penetration": (
        "r1 = ck.penetration(a, b, None, T); r2 = ck.penetration(a, b, None, poses[:32])",
        "assert float(r1.depth) > 0",
    ),
    "classify": (
        "r1 = ck.classify(a, b, None, T); r2 = ck.classify(a, b, None, poses[:32])",
        "assert r1.labels == 'penetrating'",
    ),
    "time_of_impact": (
        "r1 = ck.time_of_impact(a, b, None, None, translation([4.0, 0, 0]), translation([0.5, 0, 0]))",
        "assert bool(r1.colliding) and 0.0 < float(r1.t) < 1.0",
    ),
    "world": (
        "w = ck.World(); w.add('a', a); w.add('b', b, T); w.add('box', ck.Box([0.5, 0.5, 0.5]), "
        "translation([0, 3.0, 0])); r1 = w.colliding_pairs()",
        "assert len(r1) == 1",
    ),
}

_REPORT = """
from collisionkit import _shipped
from collisionkit._numba import cache_dir
written = sorted(str(p) for p in cache_dir().rglob("*.nbi"))
print("RESULT " + json.dumps({"seconds": time.perf_counter() - t0, "compiled": compiled,
      "status": _shipped.status(), "written": written}))
"""


def installed() -> dict:
    """Where collisionkit is installed, its manifest, and the numba pin of its distribution."""
    from importlib import metadata

    import numba

    import collisionkit

    pkg = Path(collisionkit.__file__).resolve().parent
    path = pkg / "_compiled" / "manifest.json"
    manifest = json.loads(path.read_text()) if path.exists() else None
    requires = metadata.requires("collisionkit") or []
    pins = [r for r in requires if r.replace(" ", "").startswith("numba==")]
    return {"package": str(pkg), "manifest": manifest, "numba": numba.__version__, "pins": pins}


def run_query(name: str, work: Path) -> dict:
    """One fresh process: the query's first call, from ``python`` starting; what it compiled."""
    body, check = QUERIES[name]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "COLLISIONKIT_", "PYTHON"))}
    env["COLLISIONKIT_CACHE_DIR"] = str(work / "cache" / name)
    env["XDG_CACHE_HOME"] = str(work / "xdg")
    code = _SETUP + body + "\n" + check + "\n" + _REPORT
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
    if p.returncode != 0 or line is None:
        return {"ok": False, "wall": wall, "error": (p.stderr or p.stdout)[-2000:]}
    r = json.loads(line[len("RESULT ") :])
    r["wall"] = wall
    r["ok"] = not r["compiled"] and not r["written"] and r["status"].startswith("precompiled kernels")
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python tools/check_wheel.py", description=__doc__.split("\n")[0])
    ap.add_argument("--query", action="append", choices=list(QUERIES), help="default: every query")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args(argv)
    failures: list[str] = []
    info = installed()
    m = info["manifest"]
    print(f"check_wheel: collisionkit at {info['package']}; numba {info['numba']}; requires {info['pins']}")
    if m is None:
        failures.append("no collisionkit/_compiled/manifest.json: a pure install (sdist, git or editable)")
    else:
        print(f"check_wheel: shipped kernels {m['kernel_hash']} for {m['cache_tag']}, numba {m['numba']}, "
              f"{m['magic_tuple'][0]} cpu {m['magic_tuple'][1]} ({m['files']} files)")  # fmt: skip
        if m["numba"] != info["numba"]:
            failures.append(f"installed numba {info['numba']}, the kernels were compiled with {m['numba']}")
        if info["pins"] != [f"numba=={m['numba']}"]:
            failures.append(f"the distribution requires {info['pins']}, not numba=={m['numba']}")
        if m["cache_tag"] != sys.implementation.cache_tag:
            failures.append(f"kernels for {m['cache_tag']}, this Python is {sys.implementation.cache_tag}")
    results = {}
    with tempfile.TemporaryDirectory(prefix="collisionkit-check-wheel-") as tmp:
        for name in args.query or list(QUERIES):
            r = results[name] = run_query(name, Path(tmp))
            if r["ok"]:
                print(f"check_wheel: {name:15s} first answer {r['seconds']:.2f} s in process ({r['wall']:.2f} s wall), "
                      "nothing compiled")  # fmt: skip
                continue
            why = r.get("error") or (
                f"compiled {len(r['compiled'])} ({', '.join(r['compiled'][:8])}), wrote {len(r['written'])} cache "
                f"indexes, status: {r['status']}"
            )
            failures.append(f"{name}: {why}")
            print(f"check_wheel: {name:15s} FAILED: {why}")
    if args.json:
        args.json.write_text(json.dumps({"installed": info, "queries": results, "failures": failures}, indent=1) + "\n")
    for f in failures:
        print(f"check_wheel: FAIL: {f}", file=sys.stderr)
    print("check_wheel: " + ("OK" if not failures else f"{len(failures)} failure(s)"))
    return 0 if not failures else 1


if __name__ == "__main__":
    raise SystemExit(main())
