"""Print README.md's benchmark table from ``results/pairs.json`` (so the README quotes the
results file, never hand-copied figures): ``python -m benchmarks.readme_table``."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
CK, CK1 = "collisionkit", "collisionkit-t1"


def _us(t: float | None) -> str:
    if t is None:
        return "-"
    v = t * 1e6
    return f"{v / 1e3:.2f} ms" if v >= 1000 else (f"{v:.1f} us" if v < 100 else f"{v:.0f} us")


def _x(r: dict, e: str) -> str:
    x = r.get("ratio", {}).get(e)
    return "no ratio" if x is None else f"{x:.2f}x"


def _geo(xs: list[float]) -> str:
    xs = [x for x in xs if x]
    return f"{math.exp(sum(map(math.log, xs)) / len(xs)):.2f}x" if xs else "-"


def table(report: dict) -> str:
    pv = report["provenance"]
    command = pv["command"].split(" --note ")[0].strip()  # the note is in the results file
    L = [
        f"Figures from [benchmarks/results/pairs.md](benchmarks/results/pairs.md): commit "
        f"{pv['commit'][:12]}, kernel-source hash `{pv['kernel_source_hash']}`, {pv['date'][:10]}, "
        f"`{command}`; {report['machine']['cpu_model']}, {report['machine']['cpu_count']} cores; "
        f"{report['config']['rounds']} interleaved rounds, medians; \"x\" = fastest peer's time / "
        "collisionkit's time, the fastest of Coal (OBBRSS, OBB), python-fcl and trueform that passed "
        "the referee on that scene; every engine asked for the same answer (ids only).",
        "",
        "| scene (triangles) | boolean per call | all pairs per call | boolean batch, 1 thread / 2 | all pairs batch, 1 / 2 | answers |",
        "|---|---|---|---|---|---|",
    ]
    cols: dict[str, list[float]] = {}
    for sc in report["scenes"]:
        r = sc["ratios"]
        if "bool_call" not in r:
            continue
        med = sc["medians_s"]
        cells = [
            f"{_us(med['bool_call'].get(CK))}, {_x(r['bool_call'], CK)}",
            f"{_us(med['pairs_call'].get(CK))}, {_x(r['pairs_call'], CK)}",
            f"{_x(r['bool_batch'], CK1)} / {_x(r['bool_batch'], CK)}",
            f"{_x(r['pairs_batch'], CK1)} / {_x(r['pairs_batch'], CK)}",
        ]
        for key, cat, e in (("bc", "bool_call", CK), ("pc", "pairs_call", CK), ("bb1", "bool_batch", CK1),
                            ("bb", "bool_batch", CK), ("pb1", "pairs_batch", CK1), ("pb", "pairs_batch", CK)):  # fmt: skip
            cols.setdefault(key, []).append(r[cat].get("ratio", {}).get(e))
        verdicts = sc["verify"].get("verdicts", {})
        bad = sorted({k.split(" ")[0] for k, v in verdicts.items() if v["status"] == "FAIL"})
        why = sorted({w for v in verdicts.values() for w in v.get("explained", {})})
        ans = "FAIL: " + ", ".join(bad) if bad else ("all exact" if not why else "refereed: " + "; ".join(why))
        L.append(f"| {sc['name']} ({sc['tris_a']:,} / {sc['tris_b']:,}) | " + " | ".join(cells) + f" | {ans} |")
    L.append(
        f"| geometric mean | {_geo(cols['bc'])} | {_geo(cols['pc'])} | {_geo(cols['bb1'])} / {_geo(cols['bb'])} | "
        f"{_geo(cols['pb1'])} / {_geo(cols['pb'])} | |"
    )
    return "\n".join(L)


if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) > 1 else "pairs.json"
    print(table(json.loads((RESULTS / name).read_text())))
