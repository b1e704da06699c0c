"""Rerun every benchmark and rewrite the figures that README.md and docs/ quote, in one command.

Usage (from the repository root, the bench extra installed)::

    python -m benchmarks.regenerate                 # every benchmark, then every figure block
    python -m benchmarks.regenerate --only pairs,queries
    python -m benchmarks.regenerate --docs-only     # rewrite the blocks from the results files, run nothing
    python -m benchmarks.regenerate --check         # exit 1 when a block differs from its results file
    python -m benchmarks.regenerate --list          # the benchmarks, their commands and rough run times

Figures in README.md and docs/*.md live between markers::

    <!-- bench:NAME -->
    ...generated from benchmarks/results/..., with its provenance...
    <!-- /bench:NAME -->

and are written only by this module (:data:`BLOCKS`: NAME -> renderer over the results
files), so a figure is never hand-copied. Each block states the results file it comes from,
its commit, kernel-source hash, date and command (the file's provenance line). After a merge
that changes the kernels (a new kernel-source hash), rerun this and commit the results and
the docs together; ``tests/test_bench_provenance.py`` fails until then for the figures the
README quotes, and checks that every block matches its results file.

Exit status: 0 when every benchmark run exited 0 (every referee passed) and every block
was written from results at the current kernel-source hash; 1 otherwise (the failing runs
and the stale blocks are named; a stale block is still written, marked STALE).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"

#: name -> (command arguments after ``python -m``, rough minutes on the 2-core VM, results files)
JOBS: dict[str, tuple[list[str], int, list[str]]] = {
    "pairs": (["benchmarks.pairs"], 4, ["pairs.md", "pairs.json"]),
    "queries": (["benchmarks.queries"], 8, ["queries.md", "queries.json"]),
    "obb_tests": (["benchmarks.obb_tests"], 2, ["obb_tests.md", "obb_tests.json"]),
    "gap_profile": (["benchmarks.gap_profile"], 3, ["gap_profile.md", "gap_profile.json"]),
    "robot": (["benchmarks.robot"], 5, ["robot.md", "robot.json"]),
    "robot_batch": (["benchmarks.robot_batch", "--rounds", "3"], 3, ["robot_batch.md", "robot_batch.json"]),
    "seed000": (["benchmarks.seed000", "--sweep-m"], 8, ["seed000.md", "seed000.json"]),
    "seed002": (["benchmarks.seed002"], 6, ["seed002.md", "seed002.json"]),
    "seed003": (["benchmarks.seed003"], 15, ["seed003.md", "seed003.json"]),
    "bv_report": (["benchmarks.bv_report"], 15, ["bv_report.md"]),
    "broadphase": (["benchmarks.broadphase"], 60, ["broadphase.md", "broadphase.json"]),
    "trimesh_manager": (["benchmarks.trimesh_manager"], 8, ["trimesh_manager.md", "trimesh_manager.json"]),
}

PROV = re.compile(r"^Provenance: .*$", re.M)
HASH = re.compile(r"kernel-source hash `?([0-9a-f]{16})`?")
BLOCK = re.compile(r"(<!-- bench:([\w.-]+) -->\n)(.*?)(<!-- /bench:\2 -->)", re.S)


def current_hash() -> str:
    from collisionkit._numba import kernel_source_hash

    return kernel_source_hash()


# --- renderers: results files -> markdown ---------------------------------------------------


def _read(name: str) -> str:
    return (RESULTS / name).read_text(encoding="utf-8")


def _provenance(md_name: str) -> str:
    m = PROV.search(_read(md_name))
    return m.group(0) if m else "Provenance: not recorded (a run before issue 20)."


def _provenance_text(md_name: str) -> str:
    """The results file's provenance line without its label, the kernel hash in code font."""
    pv = _provenance(md_name).removeprefix("Provenance: ").rstrip(".")
    return HASH.sub(lambda m: f"kernel-source hash `{m.group(1)}`", pv)


def _cells(line: str) -> list[str]:
    """The stripped cells of one markdown table row."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _source(md_name: str, prefix: str = "../") -> str:
    """'Figures from [results/X.md](...): <provenance sentence>.'"""
    pv = _provenance_text(md_name)
    if pv.startswith("not recorded"):
        pv = "provenance " + pv.replace(" (", ": ", 1).rstrip(")")
    return (
        f"Figures from [benchmarks/results/{md_name}]({prefix}benchmarks/results/{md_name}) ({pv}); "
        "medians on a shared 2-core VM unless the file says otherwise."
    )


def section_tables(md_name: str, heading: str, count: int = 1) -> str:
    """The first ``count`` markdown tables under the heading that starts with ``heading``."""
    text = _read(md_name)
    i = text.index(heading)
    lines = text[i:].splitlines()[1:]
    out, tables, inside = [], 0, False
    for line in lines:
        if line.startswith("#") and not inside and tables:
            break
        if line.startswith("|"):
            out.append(line)
            inside = True
        elif inside:
            tables += 1
            inside = False
            if tables == count:
                break
            out.append("")
    return "\n".join(out).strip()


def block_pairs() -> str:
    from .readme_table import table

    return table(json.loads(_read("pairs.json")))


def block_pairs_overhead() -> str:
    """The miss-overhead, build and referee sentences under the pairs table."""
    r = json.loads(_read("pairs.json"))
    miss = next(sc for sc in r["scenes"] if sc["name"] == "miss-overhead")["medians_s"]["overhead"]
    us = {k: v * 1e6 for k, v in miss.items()}
    fastest = min((k for k in us if not k.startswith("collisionkit")), key=us.get)
    ms = r["build"]["ms"]
    coal_extra = [
        v["explained"].get("tolerance 1e-06", 0)
        for sc in r["scenes"]
        for k, v in sc["verify"].get("verdicts", {}).items()
        if k.startswith("coal")
    ]
    coal_extra = [n for n in coal_extra if n]
    exact = sorted(
        {
            k.split(" ")[0].removesuffix("-t1")
            for sc in r["scenes"]
            for k, v in sc["verify"].get("verdicts", {}).items()
            if not k.startswith("coal")
        }
        - {
            k.split(" ")[0].removesuffix("-t1")
            for sc in r["scenes"]
            for k, v in sc["verify"].get("verdicts", {}).items()
            if v["status"] != "exact"
        }
    )
    x = us["collisionkit"] / us[fastest]
    cmp = f"{fastest} is {x:.1f}x faster here" if x > 1 else f"collisionkit is {1 / x:.1f}x faster than {fastest}"
    text = (
        f"Per-call overhead when the root volumes miss (miss-overhead scene, medians): collisionkit "
        f"{us['collisionkit']:.2g} us, Coal OBBRSS {us['coal-obbrss']:.2g} us, python-fcl {us['fcl']:.2g} us"
        + (f", trueform {us['trueform']:.2g} us" if "trueform" in us else "")
        + f" ({cmp}). BVH build of the {r['build']['tris']:,}-triangle {r['build']['mesh']} (medians): "
        f"{ms['collisionkit-aabb']:.0f} ms (AABB) and {ms['collisionkit-obb']:.0f} ms (OBB) against Coal's "
        f"{ms['coal-obbrss']:.0f} ms (OBBRSS) and {ms['coal-obb']:.0f} ms (OBB), python-fcl's {ms['fcl']:.0f} ms"
        + (f"; trueform builds its tree in {ms['trueform']:.0f} ms" if "trueform" in ms else "")
        + f". The referee found every answer of {', '.join(exact)} exact on the pairs and booleans it checked"
        + (
            f"; Coal adds pairs that are disjoint but within its documented 1e-6 GJK tolerance "
            f"({min(coal_extra):,} to {max(coal_extra):,} per scene where it does, each refereed)."
            if coal_extra
            else "."
        )
    )
    pv = r["provenance"]
    text += f" (Same run as the table: commit {pv['commit'][:12]}, kernel-source hash `{pv['kernel_source_hash']}`.)"
    return _wrap(text)


def _wrap(text: str, width: int = 92) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False))


def block_queries() -> str:
    rows = json.loads(_read("queries.json"))["rows"]
    pv = json.loads(_read("queries.json")).get("provenance") or {}
    head = (
        f"Against the fastest of Coal and python-fcl whose answers passed the referee "
        f"([results](benchmarks/results/queries.md): commit {pv.get('commit', '?')[:12]}, kernel-source hash "
        f"`{pv.get('kernel_source_hash', '?')}`, {pv.get('date', '?')[:10]}, `python -m benchmarks.queries`; "
        "medians of interleaved rounds on a shared 2-core VM; x = fastest peer's time / ours):"
    )

    def x(cat: str, scene: str) -> str:
        for r in rows:
            if r["category"] == cat and r["scene"] == scene:
                v = r["speedup_vs_fastest_peer"]
                return "no ratio" if v is None else f"{v:.2f}x"
        return "-"

    d = [r["scene"] for r in rows if r["category"] == "distance_call"]
    p = [r["scene"] for r in rows if r["category"] == "penetration_call"]
    t = [r["scene"] for r in rows if r["category"] == "toi_call"]
    lines = [
        head,
        "",
        "| query | scenes | per call | batched (per pose) | answers |",
        "|---|---|---|---|---|",
        f"| mesh distance | {' / '.join(d)} | {' / '.join(x('distance_call', s) for s in d)} | "
        f"{' / '.join(x('distance_batch', s) for s in d)} | {_verdicts(rows, 'distance_call')} |",
        f"| convex penetration | {' / '.join(p)} | {' / '.join(x('penetration_call', s) for s in p)} | "
        f"{' / '.join(x('penetration_batch', s) for s in p)} | {_verdicts(rows, 'penetration_call')} |",
        f"| time of impact vs python-fcl's 100 samples | {' / '.join(t)} | {' / '.join(x('toi_call', s) for s in t)} "
        f"| - | {_verdicts(rows, 'toi_call')} |",
        f"| time of impact at tolerance 1e-2 vs fcl's 100 samples | {' / '.join(t)} | "
        f"{' / '.join(x('toi_call_loose', s) for s in t)} | - | {_verdicts(rows, 'toi_call_loose')} |",
    ]
    return "\n".join(lines)


def _verdicts(rows: list[dict], cat: str) -> str:
    if any("verdicts" not in r for r in rows if r["category"] == cat):
        return "unrefereed (a run before the queries referee)"
    failed = sorted({k for r in rows if r["category"] == cat for k in r.get("failed", [])})
    if failed:
        return "FAIL: " + ", ".join(failed)
    explained = sorted(
        {
            f"{k}: {v}"
            for r in rows
            if r["category"] == cat
            for k, v in r.get("verdicts", {}).items()
            if v.startswith("ok")
        }
    )
    return "all refereed" + ("; " + "; ".join(explained) if explained else "")


def block_broadphase() -> str:
    from .broadphase import markdown

    report = json.loads(_read("broadphase.json"))
    md = markdown(report)
    start = md.index("| scene |")
    table = md[start : md.index("\n## ", start)].strip()
    provs = sorted(
        {
            (sc.get("commit", "?")[:12], sc.get("kernel_source_hash", "?"), sc.get("date", "?"), sc.get("command", "?"))
            for sc in report["scenes"]
        }
    )
    where = "; ".join(f"commit {c}, kernel-source hash `{h}`, {d}, `{cmd.strip()}`" for c, h, d, cmd in provs)
    return (
        f"Figures from [benchmarks/results/broadphase.md](../benchmarks/results/broadphase.md) ({where}; each "
        "scene's provenance is in the file; medians over frames on a shared 2-core VM):\n\n" + table
    )


def _doc_block(md_name: str, heading: str, count: int = 1) -> Callable[[], str]:
    return lambda: _source(md_name) + "\n\n" + section_tables(md_name, heading, count)


def subsection_tables(md_name: str, heading: str, level: str = "####") -> str:
    """Every ``###`` subsection's tables under the ``##`` heading that starts with ``heading``,
    each under its subheading (written at ``level``), in the file's order."""
    text = _read(md_name)
    i = text.index(heading)
    body = text[i:].split("\n", 1)[1]
    end = re.search(r"^## ", body, re.M)
    body = body[: end.start()] if end else body
    out = []
    for m in re.finditer(r"^### (.*)\n((?:(?!^##).*\n?)*)", body, re.M):
        tables = "\n".join(line for line in m.group(2).splitlines() if line.startswith("|") or not line.strip())
        tables = re.sub(r"\n{3,}", "\n\n", tables).strip()
        if tables:
            out += [f"{level} {m.group(1).strip()}", "", tables, ""]
    if not out:
        raise ValueError(f"{md_name}: no subsection tables under {heading!r}")
    return "\n".join(out).strip()


def _doc_subsections(md_name: str, heading: str, level: str = "####") -> Callable[[], str]:
    return lambda: _source(md_name) + "\n\n" + subsection_tables(md_name, heading, level)


# --- bounding volumes (benchmarks/results/bv_report.md: one "## scene" section per scene) ---------

_BV_SPLITS = ("sah", "minmax", "minsum", "splatter", "mean", "median", "longest")


def _num(cell: str) -> str:
    """A results-file number with thousands separators (``12345`` -> ``12,345``; ``0.5`` stays)."""
    try:
        v = float(cell)
    except ValueError:
        return cell
    if "." not in cell and abs(v) >= 1000:
        return f"{int(v):,}"
    if "." in cell and abs(v) >= 1000:
        return f"{v:,.0f}"
    return cell


def _bv_section(scene: str) -> str:
    """The text of ``scene``'s "## scene" section in bv_report.md."""
    m = re.search(rf"^## {re.escape(scene)}\n(.*?)(?=^## |\Z)", _read("bv_report.md"), re.M | re.S)
    if not m:
        raise ValueError(f"bv_report.md: no section for scene {scene!r}")
    return m.group(1)


def bv_scene(scene: str) -> tuple[str, list[list[str]], list[list[str]]]:
    """(description line, rows of the kind x split x build table, rows of the Coal table) of ``scene``."""
    body = _bv_section(scene)
    desc = next((line for line in body.splitlines() if line.startswith("a = ")), "")
    rows, coal, table = [], [], None
    for line in body.splitlines():
        if line.startswith("| bv | split |"):
            table = rows
        elif line.startswith("| engine |"):
            table = coal
        elif line.startswith("|---"):
            continue
        elif line.startswith("|") and table is not None:
            table.append(_cells(line))
        else:
            table = None
    return desc, rows, coal


def bv_scenes() -> list[str]:
    return re.findall(r"^## (\S+)\s*$", _read("bv_report.md"), re.M)


def block_bv_kinds(scene: str, builds: tuple[str, ...] = ("topdown",)) -> Callable[[], str]:
    """Every bounding-volume kind with SAH splits (and the given builds) on one scene."""

    def render() -> str:
        desc, rows, _ = bv_scene(scene)
        multi = len(builds) > 1
        head = "| kind |" + (" build |" if multi else "") + " mem KB | rho | bool N_v / N_p | bool us | "
        head += "all-pairs N_v / N_p / N_u |" + (" all-pairs us |" if multi else "") + " static bool us | static all-pairs us |"
        out = [_source("bv_report.md"), "", f"Scene: {desc}" if desc else f"Scene: {scene}.", "", head]
        out.append("|" + "---|" * (head.count("|") - 1))
        picked = [r for b in builds for r in rows if r[1] == "sah" and r[2] == b]
        picked.sort(key=lambda r: [x[0] for x in rows].index(r[0]))
        for r in picked:
            n = [_num(c) for c in r]
            out.append(
                f"| {r[0]} |" + (f" {r[2]} |" if multi else "") + f" {n[4]} | {r[8]} | {n[10]} / {n[11]} | {n[9]} | "
                f"{n[15]} / {n[16]} / {n[17]} |" + (f" {n[14]} |" if multi else "") + f" {n[19]} | {n[20]} |"
            )
        if not picked:
            raise ValueError(f"bv_report.md: no SAH rows for {scene!r}")
        return "\n".join(out)

    return render


def block_bv_splits() -> str:
    """Boolean AABB volume tests (N_v) per split rule, top-down builds, every scene."""
    out = [_source("bv_report.md"), "", "| scene | " + " | ".join(_BV_SPLITS) + " |", "|---|" + "---|" * len(_BV_SPLITS)]
    for scene in bv_scenes():
        _, rows, _ = bv_scene(scene)
        nv = {r[1]: _num(r[10]) for r in rows if r[0] == "aabb" and r[2] == "topdown"}
        if nv:
            out.append(f"| {scene} | " + " | ".join(nv.get(sp, "-") for sp in _BV_SPLITS) + " |")
    return "\n".join(out)


def block_bv_coal() -> str:
    """Each scene's collisionkit combinations against Coal (the report's "Against Coal" tables)."""
    out = [_source("bv_report.md"), ""]
    head = None
    for scene in bv_scenes():
        lines = [line for line in _bv_section(scene).splitlines() if line.startswith("|")]
        i = next((k for k, line in enumerate(lines) if line.startswith("| engine |")), None)
        if i is None:
            continue
        if head is None:
            head = "| scene " + lines[i]
            out += [head, "|---" + lines[i + 1]]
        for line in lines[i + 2 :]:
            cells = [_num(c) for c in _cells(line)]
            out.append(f"| {scene} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def _md_rows(md_name: str, heading: str) -> list[dict[str, str]]:
    """The first table under ``heading`` as dicts (header -> cell)."""
    lines = section_tables(md_name, heading).splitlines()
    head = _cells(lines[0])
    return [dict(zip(head, _cells(line), strict=False)) for line in lines[2:]]


def block_hard_cases() -> str:
    """README's sentence on the hard cases: AABB against OBB triangle tests, and the default's ratios."""
    tests = _md_rows("hard_cases.md", "## Tests per pose")
    summary = _md_rows("hard_cases.md", "## Summary")
    obb = [float(r["AABB/OBB tri tests"]) for r in tests if r["auto picks"] == "obb"]
    scenes = sorted({r["scene"] for r in tests if r["auto picks"] == "obb"})
    ratios = [float(r["ck"].rstrip("x")) for r in summary if r["ck"].endswith("x")]
    losses = sorted({f"{r['scene']} {r['workload']}" for r in summary if r["ck"].endswith("x") and float(r["ck"].rstrip("x")) < 1})
    pv = _provenance_text("hard_cases.md")
    text = (
        f"On the scenes where `auto` picks OBB trees ({', '.join(scenes)}), AABB trees ran "
        f"{min(obb):.1f}-{max(obb):.1f}x more triangle tests than OBB trees near contact; with its pick, "
        f"the default ran {min(ratios):.2f}x-{max(ratios):.2f}x the speed of the fastest peer whose answers "
        "passed the referee, per scene and workload"
        + (f" (slower on {', '.join(losses)})" if losses else "")
        + f". Figures from [benchmarks/results/hard_cases.md](benchmarks/results/hard_cases.md) ({pv})."
    )
    return _wrap(text)


def block_cold_start() -> str:
    """README's first-run sentence, from benchmarks/results/cold_start.md (a fresh venv, the platform wheel)."""
    rows = _md_rows("cold_start.md", "# Cold start")
    first = {r["first call (shipped)"]: float(r["seconds"]) for r in rows}
    compiled = sum(int(r["compiled kernels"] or 0) for r in rows)
    cli = next((k for k in first if k.startswith("collisionkit ")), None)
    others = [k for k in first if k not in ("intersects", cli)]
    pv = _provenance_text("cold_start.md")
    text = (
        f"In a new venv with no cache anywhere, the first `intersects` answered {first['intersects']:.1f} s after "
        f"`python` started (import included), the first "
        + ", ".join(f"`{k}`" if " " not in k else k for k in others)
        + f" within {min(first[k] for k in others):.1f} to {max(first[k] for k in others):.1f} s"
        + (f", and `{cli}` in {first[cli]:.1f} s" if cli else "")
        + (", with nothing compiled" if compiled == 0 else f", with {compiled} kernels compiled")
        + f" ([benchmarks/results/cold_start.md](benchmarks/results/cold_start.md): {pv})."
    )
    warm = re.search(
        r"Warm start \(medians of (\d+) .*?`import collisionkit` ([\d.]+) s .*?answer .*? ([\d.]+) s \(target",
        _read("cold_start.md"), re.S,
    )  # fmt: skip
    if warm:
        text += (
            f" A later process, its kernels loaded from the cache, finished `import collisionkit` "
            f"{warm.group(2)} s after `python` started and answered its first `intersects` at "
            f"{warm.group(3)} s (medians of {warm.group(1)})."
        )
    return _wrap(text)


def block_compile_times() -> str:
    """README's compile-time sentence, from the "after" column of benchmarks/results/compile_times.md."""
    rows = _md_rows("compile_times.md", "## Before and after")
    cpu = {r["entry point"]: float(r["CPU s after"]) for r in rows if not r["entry point"].startswith("**")}
    rss = max(float(r["after"]) for r in rows if not r["entry point"].startswith("**"))
    text = _read("compile_times.md")
    heading = re.search(r"^## A user's first call of each query.*$", text, re.M)
    if heading:  # a query's first call alone where measured, not its whole warm-up group
        for r in _md_rows("compile_times.md", heading.group(0)):
            cpu[r["entry point"].removeprefix("first-").replace("-", "_")] = float(r["CPU s"])
    slow = [k for k in ("distance", "classify", "time_of_impact") if k in cpu]
    m = re.search(r"after = commit (\w+)\s*\(kernel-source hash (\w+)\)", text)
    d = re.search(r"date (\d{4}-\d\d-\d\d)", text)
    where = (
        f"commit {m.group(1)}, kernel-source hash `{m.group(2)}`" if m else "provenance not recorded"
    ) + (f", {d.group(1)}" if d else "")
    first = cpu.get("first-intersects", cpu["intersects"])
    # CPU seconds depend on the day's machine: the same-day sums before and after, where measured
    total = next((r for r in rows if r["entry point"].startswith("**")), None)
    cpu_rows = [r for r in rows if not r["entry point"].startswith("**")]
    same_day = (
        f"; all {len(cpu_rows)} warm-up groups, each from an empty cache, together "
        f"{float(total['CPU s after']):.0f} CPU s, against "
        f"{float(total['CPU s before']):.0f} for the code before the change, measured side by side that day: "
        "CPU seconds differ about 2x from one shared VM to another, so compare figures of one day"
        if total and total.get("CPU s before") else ""
    )
    # the planner's calls (issue 32, wave three's users): a configuration, an edge
    calls = {
        "robot_check": "`Robot.check`",
        "robot_clearance": "`Robot.clearance`",
        "robot_motion": "`Robot.check_motion`",
    }
    robot = [(name, cpu[k]) for k, name in calls.items() if k in cpu]
    said = [f"{name} {t:.0f}" for name, t in robot]
    planner = (", a planner's first " + ", ".join(said[:-1]) + (" and " if len(said) > 1 else "") + said[-1]) if said else ""
    if "robot_motion" in cpu and "robot_motion_free" in cpu:  # an edge with a witness, and a free one
        planner += f" (an edge with a witness; {cpu['robot_motion_free']:.0f} for a free one)"
    out = (
        f"About {first:.0f} CPU seconds before the first `intersects`, "
        f"{min(cpu[k] for k in slow):.0f} to {max(cpu[k] for k in slow):.0f} before the first "
        + ", ".join(f"`{k}`" for k in slow[:-1])
        + f" or `{slow[-1]}`{planner}, at most {rss:.0f} MiB per group "
        f"([benchmarks/results/compile_times.md](benchmarks/results/compile_times.md): {where}, "
        f"`python -m benchmarks.compile_times --first`{same_day})."
    )
    return _wrap(out)


def block_trimesh_manager() -> str:
    """README's drop-in table: every default-manager row of benchmarks/results/trimesh_manager.json."""
    r = json.loads(_read("trimesh_manager.json"))
    pv = r["provenance"]
    rows = [x for x in r["rows"] if not x["opt_in"]]
    out = [
        "`python -m benchmarks.trimesh_manager`, both managers on the same scenes, answers refereed first "
        f"([benchmarks/results/trimesh_manager.md](benchmarks/results/trimesh_manager.md): commit {pv['commit'][:12]}, "
        f"kernel-source hash `{pv['kernel_source_hash']}`, {pv['date'][:10]}; medians of {r['repeats']} on a shared "
        "2-core VM; x = FCL's time / ours):",
        "",
        "| scene | query | trimesh + fcl | collisionkit | x | answers |",
        "|---|---|---:|---:|---:|---|",
    ]
    for x in rows:
        ratio = f"{x['ratio']:.2f}x" if x["ratio"] is not None else "FAIL"
        verdict = "refereed" if x["ok"] else "FAIL"
        note = " (FCL stops at its first overlap)" if x.get("overlap_first") else ""
        out.append(
            f"| {x['scene']} | `{x['query']}`{note} | {x['fcl_s'] * 1e3:.2f} ms | {x['ck_s'] * 1e3:.2f} ms | {ratio} | {verdict} |"
        )
    return "\n".join(out)


#: block name -> renderer. A block is written wherever its markers appear.
BLOCKS: dict[str, Callable[[], str]] = {
    "pairs": block_pairs,
    "pairs-overhead": block_pairs_overhead,
    "queries": block_queries,
    "broadphase": block_broadphase,
    "seed000-table1": _doc_block("seed000.md", "## Table 1"),
    "seed000-table3": _doc_block("seed000.md", "## Table 3"),
    "seed002-table1": _doc_block("seed002.md", "## Table 1"),
    "seed000-table2": _doc_block("seed000.md", "## Table 2", 2),
    "seed000-node-capacity": _doc_block("seed000.md", "## Node capacity"),
    "seed002-table2": _doc_block("seed002.md", "## Table 2"),
    "seed002-speedup": _doc_block("seed002.md", "## Speed-up and efficiency"),
    "seed002-contacts": _doc_block("seed002.md", "## All intersecting triangle pairs"),
    "seed002-counters": _doc_block("seed002.md", "## Cost-model counters"),
    "seed003-table2": _doc_block("seed003.md", "## Table 2"),
    "seed003-table3": _doc_subsections("seed003.md", "## Table 3"),
    "obb_tests": lambda: _source("obb_tests.md") + "\n\n" + _all_tables("obb_tests.md"),
    "robot": _doc_block("robot.md", "# Robot"),
    "hard-cases": block_hard_cases,
    "cold-start": block_cold_start,
    "compile-times": block_compile_times,
    "trimesh-manager": block_trimesh_manager,
    "dask-runs": _doc_block("dask.md", "Provenance:"),
    "dask-bytes": _doc_block("dask.md", "## Bytes sent"),
    "dask-overhead": _doc_block("dask.md", "## Per-chunk overhead"),
    "dask-projection": _doc_block("dask.md", "## Projection"),
    "bv-kinds-bunny": block_bv_kinds("bunny"),
    "bv-kinds-kuka-shelf": block_bv_kinds("kuka-shelf"),
    "bv-builds-monastery-kuka": block_bv_kinds("monastery-kuka", ("topdown", "bottomup")),
    "bv-splits": block_bv_splits,
    "bv-coal": block_bv_coal,
}


def _all_tables(md_name: str) -> str:
    text = _read(md_name)
    out = []
    for m in re.finditer(r"^## (.*)\n\n((?:\|.*\n)+)", text, re.M):
        out += [f"**{m.group(1)}**", "", m.group(2).rstrip(), ""]
    return "\n".join(out).strip()


def block_hashes(text: str) -> set[str]:
    return set(HASH.findall(text))


def rewrite(paths: list[Path], check: bool = False) -> tuple[list[str], list[str]]:
    """Rewrite every block in ``paths``; returns (changed or differing blocks, stale blocks)."""
    now = current_hash()
    changed, stale = [], []
    for path in paths:
        text = path.read_text(encoding="utf-8")

        def sub(m: re.Match, path: Path = path) -> str:
            name = m.group(2)
            try:
                body = BLOCKS[name]().rstrip() + "\n"
            except (FileNotFoundError, KeyError, ValueError) as exc:
                raise SystemExit(f"{path.name}: block {name}: {type(exc).__name__}: {exc}") from exc
            hashes = block_hashes(body)
            if hashes != {now}:
                stale.append(f"{path.relative_to(ROOT)}:{name} ({', '.join(sorted(hashes)) or 'no hash'})")
                measured = (
                    f"measured at kernels {', '.join(sorted(hashes))}"
                    if hashes
                    else "no kernel-source hash recorded in the results file"
                )
                body = f"**STALE: {measured}, the kernels are now {now}.**\n\n" + body
            if body != m.group(3):
                changed.append(f"{path.relative_to(ROOT)}:{name}")
            return m.group(1) + body + m.group(4)

        new = BLOCK.sub(sub, text)
        if new != text and not check:
            path.write_text(new, encoding="utf-8")
    return changed, stale


def doc_paths() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), HERE / "README.md"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.regenerate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help=f"comma-separated, from {','.join(JOBS)}")
    ap.add_argument("--skip", default="", help="comma-separated benchmarks not to run")
    ap.add_argument("--docs-only", action="store_true", help="run nothing; rewrite the blocks from the results")
    ap.add_argument("--check", action="store_true", help="run nothing; exit 1 when a block differs from its results")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        for name, (cmd, minutes, files) in JOBS.items():
            print(f"{name:11s} python -m {' '.join(cmd):40s} ~{minutes} min  -> {', '.join(files)}")
        return 0
    failed: list[str] = []
    if not (args.docs_only or args.check):
        only = [s for s in args.only.split(",") if s] or list(JOBS)
        skip = {s for s in args.skip.split(",") if s}
        unknown = sorted(set(only) - set(JOBS))
        if unknown:
            ap.error(f"unknown benchmarks: {unknown}")
        for name in only:
            if name in skip:
                continue
            cmd = [sys.executable, "-m", *JOBS[name][0]]
            print(f"== {name}: {' '.join(cmd[1:])} (about {JOBS[name][1]} min on 2 cores)", flush=True)
            t0 = time.perf_counter()
            rc = subprocess.run(cmd, cwd=ROOT, env=os.environ.copy()).returncode
            print(f"== {name}: exit {rc} after {time.perf_counter() - t0:.0f} s", flush=True)
            if rc != 0:
                failed.append(f"{name} (exit {rc})")
    changed, stale = rewrite(doc_paths(), check=args.check)
    print(("differ: " if args.check else "rewritten: ") + (", ".join(changed) or "none"))
    for s in stale:
        print(f"STALE block: {s}", file=sys.stderr)
    for f in failed:
        print(f"FAILED run: {f}", file=sys.stderr)
    return 1 if failed or stale or (args.check and changed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
