"""Check a shipped-kernel wheel and give it its final platform tag: the release workflow's repair step.

    python tools/retag_wheel.py WHEEL DEST_DIR [--manylinux 2_28]

The wheel holds no extension module (numba's cache files are loaded by llvmlite inside
numba's own process), so auditwheel and delocate have nothing to repair: auditwheel
refuses such a wheel outright. This step instead checks what the wheel must hold
(``collisionkit/_compiled/manifest.json`` for this exact Python tag, and ``numba`` pinned
with ``==`` to the manifest's version in METADATA) and, on Linux, renames the
``linux_<arch>`` tag that setuptools gives to ``manylinux_<glibc>_<arch>`` (the policy of
the manylinux image it was built in; the kernels need nothing of the system beyond
what numba's own manylinux wheels need). Other platforms' wheels are copied as they
are. Only the standard library is used (it runs in the build container's Python).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import shutil
import sys
import zipfile
from pathlib import Path

MANIFEST = "collisionkit/_compiled/manifest.json"


def check(wheel: Path) -> dict:
    """The wheel's manifest, after checking the wheel holds shipped kernels for its own tag."""
    m = re.match(r"^(?P<name>[^-]+)-(?P<ver>[^-]+)-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>.+)\.whl$", wheel.name)
    if not m:
        raise SystemExit(f"retag_wheel: not a wheel name: {wheel.name}")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        if MANIFEST not in names:
            raise SystemExit(f"retag_wheel: {wheel.name} has no {MANIFEST}: built without COLLISIONKIT_SHIP_DIR?")
        manifest = json.loads(z.read(MANIFEST))
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    kernels = [n for n in names if n.startswith("collisionkit/_compiled/kernels/") and n.endswith(".nbi")]
    if not kernels:
        raise SystemExit(f"retag_wheel: {wheel.name} ships no kernel index files")
    tag = manifest["cache_tag"]  # e.g. cpython-312
    want = "cp" + tag.split("-")[1]
    if m["py"] != want or m["abi"] != "none":
        raise SystemExit(f"retag_wheel: {wheel.name} is tagged {m['py']}-{m['abi']}, its kernels are for {tag}")
    pins = re.findall(r"^Requires-Dist: numba\s*\(?==\s*([^\s;)]+)", meta, re.M)
    if pins != [manifest["numba"]]:
        raise SystemExit(f"retag_wheel: numba pinned to {pins}, the kernels were compiled with numba {manifest['numba']}")
    print(f"retag_wheel: {wheel.name}: {len(kernels)} kernel indexes, kernels {manifest['kernel_hash']}, "
          f"numba=={manifest['numba']}, {manifest['magic_tuple'][0]}")  # fmt: skip
    return manifest


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def retag(wheel: Path, dest: Path, platform: str) -> Path:
    """A copy of ``wheel`` in ``dest`` with its platform tag replaced (file name, WHEEL, RECORD)."""
    parts = wheel.name[: -len(".whl")].split("-")
    old = parts[-1]
    parts[-1] = platform
    out = dest / ("-".join(parts) + ".whl")
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        record_name = next(n for n in src.namelist() if n.endswith(".dist-info/RECORD"))
        lines = []
        for info in src.infolist():
            if info.filename == record_name:
                continue
            data = src.read(info.filename)
            if info.filename.endswith(".dist-info/WHEEL"):
                text = data.decode()
                if f"-{old}" not in text:
                    raise SystemExit(f"retag_wheel: WHEEL names no {old} tag")
                data = text.replace(f"-{old}", f"-{platform}").encode()
            dst.writestr(info, data)
            lines.append(_record_line(info.filename, data))
        lines.append(f"{record_name},,")
        dst.writestr(record_name, "\n".join(lines) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python tools/retag_wheel.py", description=__doc__.split("\n")[0])
    ap.add_argument("wheel", type=Path)
    ap.add_argument("dest", type=Path)
    ap.add_argument("--manylinux", default="2_28", help="glibc policy of the build image (cibuildwheel: manylinux_2_28)")
    args = ap.parse_args(argv)
    check(args.wheel)
    args.dest.mkdir(parents=True, exist_ok=True)
    plat = args.wheel.name[: -len(".whl")].split("-")[-1]
    linux = re.fullmatch(r"linux_(x86_64|aarch64)", plat)
    if linux:
        out = retag(args.wheel, args.dest, f"manylinux_{args.manylinux}_{linux[1]}")
        check(out)
    elif plat.startswith("linux"):
        raise SystemExit(f"retag_wheel: unexpected Linux platform tag {plat}")
    else:
        out = Path(shutil.copy2(args.wheel, args.dest))
    print(f"retag_wheel: wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
