"""Compile every kernel for the generic CPU with THIS Python: the release workflow's before-build step.

    python tools/ship_kernels.py [PROJECT] [--out build/compiled] [--jobs N] [--ship-cache DIR]

What ``make wheel``'s first line does, made to run under cibuildwheel on every platform
(no shell syntax, so the same command works in the manylinux container, on macOS and in
Windows' cmd): install the project as a pure package with its runtime dependencies
(``COLLISIONKIT_SHIP_DIR`` removed for that install, so no stale shipped folder is
packed into it), then run ``collisionkit warmup --ship OUT`` from outside the source
tree, then check that the manifest names this Python. The wheel build that follows
(``COLLISIONKIT_SHIP_DIR=build/compiled``, setup.py) packs ``OUT`` into a platform
wheel pinned to the numba installed here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python tools/ship_kernels.py", description=__doc__.split("\n")[0])
    ap.add_argument("project", nargs="?", default=str(Path(__file__).resolve().parents[1]))
    ap.add_argument("--out", default=None, help="default: PROJECT/build/compiled")
    ap.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    ap.add_argument("--ship-cache", default=None, help="a compile cache kept between builds (default a new temporary one)")
    args = ap.parse_args(argv)
    project = Path(args.project).resolve()
    out = Path(args.out).resolve() if args.out else project / "build" / "compiled"
    env = {k: v for k, v in os.environ.items() if k not in ("COLLISIONKIT_SHIP_DIR", "COLLISIONKIT_COMPILED_DIR")}
    print(f"ship_kernels: installing {project} (pure) for {sys.executable}", flush=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", str(project)], env=env, check=True)
    with tempfile.TemporaryDirectory(prefix="collisionkit-ship-cwd-") as cwd:  # import the installed package
        cmd = [sys.executable, "-m", "collisionkit", "warmup", "--jobs", str(args.jobs), "--ship", str(out)]
        if args.ship_cache:
            cmd += ["--ship-cache", str(Path(args.ship_cache).resolve())]
        print("ship_kernels: " + " ".join(cmd), flush=True)
        subprocess.run(cmd, env=env, cwd=cwd, check=True)
    manifest = json.loads((out / "manifest.json").read_text())
    if manifest["cache_tag"] != sys.implementation.cache_tag:
        raise SystemExit(f"ship_kernels: {out} was compiled by {manifest['cache_tag']}, not {sys.implementation.cache_tag}")
    print(f"ship_kernels: {out}: {manifest['files']} files, kernels {manifest['kernel_hash']}, numba {manifest['numba']}, "
          f"{manifest['magic_tuple'][0]} cpu {manifest['magic_tuple'][1]}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
