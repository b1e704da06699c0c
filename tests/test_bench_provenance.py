"""The README quotes benchmark figures only from results taken on the current kernels.

README.md's benchmark section names its results file (``benchmarks/results/pairs.md``) and
that file's kernel-source hash (likewise the queries table, ``results/queries.md``); both must match: the README's hash is the file's, and the
file's is ``collisionkit._numba.kernel_source_hash()`` now. When the kernels change, this
fails until ``python -m benchmarks.pairs`` is rerun and the README's table updated.
"""

from __future__ import annotations

import re
from pathlib import Path

from collisionkit._numba import kernel_source_hash

ROOT = Path(__file__).resolve().parents[1]
HASH = re.compile(r"kernel-source\s+hash `?([0-9a-f]{16})`?")


def _section(text: str, title: str) -> str:
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start : end if end >= 0 else None]


def test_readme_figures_come_from_results_at_the_current_kernels():
    bench = _section((ROOT / "README.md").read_text(encoding="utf-8"), "## Benchmarks")
    quoted = sorted(set(re.findall(r"\(benchmarks/results/([\w.-]+\.md)\)", bench)))
    assert quoted == ["pairs.md"], quoted
    results = (ROOT / "benchmarks" / "results" / "pairs.md").read_text(encoding="utf-8")
    provenance = next(line for line in results.splitlines() if line.startswith("Provenance:"))
    for field in ("commit ", "kernel-source hash ", "date ", "command `python -m benchmarks.pairs"):
        assert field in provenance, field
    file_hash = HASH.search(provenance).group(1)
    readme_hashes = set(HASH.findall(bench))
    assert readme_hashes == {file_hash}, (readme_hashes, file_hash)
    assert file_hash == kernel_source_hash(), (
        f"benchmarks/results/pairs.md was measured on kernels {file_hash}, the kernels are now "
        f"{kernel_source_hash()}: rerun `python -m benchmarks.pairs` and update README.md"
    )
    assert "FAIL" not in results, "a published run has answers that failed the referee"


def test_readme_query_figures_come_from_results_at_the_current_kernels():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    i = readme.index("(benchmarks/results/queries.md)")
    quoted = HASH.search(readme, i, i + 400).group(1)  # the hash stated with the link
    results = (ROOT / "benchmarks" / "results" / "queries.md").read_text(encoding="utf-8")
    provenance = next(line for line in results.splitlines() if line.startswith("Provenance:"))
    file_hash = HASH.search(provenance).group(1)
    assert quoted == file_hash == kernel_source_hash(), (quoted, file_hash, kernel_source_hash())


def test_results_written_by_a_run_do_not_mark_it_dirty():
    """A regeneration writes results and markdown as it goes: only code changes mark a run."""
    from benchmarks.pairs import code_changed

    assert not code_changed("")
    assert not code_changed(" M benchmarks/results/pairs.md\n M benchmarks/results/seed002.png\n M docs/seed-000.md")
    assert not code_changed("M benchmarks/results/pairs.md\nMM docs/seed-000.md")  # output stripped, staged
    assert code_changed(" M benchmarks/results/pairs.md\n M src/collisionkit/robot/check.py")
    assert code_changed(" M benchmarks/pairs.py")
    assert code_changed("R  docs/a.md -> benchmarks/b.py")
