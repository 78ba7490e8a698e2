"""What every benchmark shares: where the repository, its results and its caches are, where the benchmark data lies,
the argument parser's preamble, provenance (commit, date, machine) and writing results as JSON plus one Markdown
table.

Examples:
    >>> print(markdown_table(["row", "accuracy"], [["none", 71.2], ["human", 80.04]]))
    | row | accuracy |
    |---|---|
    | none | 71.2 |
    | human | 80.04 |
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "RESULTS", "CACHE", "parser", "results_dir", "provenance", "markdown_table", "write_results"]

#: The repository root.
ROOT = Path(__file__).resolve().parents[1]
#: Where results are written (``--results-dir`` of the benchmarks that take it changes it for one run).
RESULTS = ROOT / "benchmarks" / "results"
#: Cached intermediate work (trained heads, encoded corpora, generated counterfactuals); ignored by git.
CACHE = ROOT / "benchmarks" / ".cache"


#: Where results go instead of `RESULTS` in a ``--smoke`` run (set when such a run parses its options).
SMOKE_OUT: Path | None = None
#: The options that name a folder a benchmark writes to: a ``--smoke`` run points them at `SMOKE_OUT` (one that is
#: a file name, not a folder, already lands there through `results_dir`).
OUTPUT_OPTIONS = ("out", "results_dir", "save")


class BenchmarkParser(argparse.ArgumentParser):
    """A benchmark's options plus ``--smoke``: the benchmark's tiny workload (its ``smoke`` values replace the
    options they name), written to a temporary folder instead of over the committed results, so the test suite can
    run every benchmark end to end in seconds (tests/test_benchmark_smoke.py)."""

    def __init__(self, doc: str | None = None, smoke: dict[str, Any] | None = None, **kwargs: Any) -> None:
        # argparse builds sub-command parsers with this class and its own keywords (prog=...): pass them on
        super().__init__(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)
        self.smoke = smoke or {}
        self.add_argument("--smoke", action="store_true",
                          help="a tiny workload that checks the benchmark runs end to end ("
                               + (", ".join(f"--{k.replace('_', '-')} {v}" for k, v in self.smoke.items()) or "as is")
                               + "); results go to a temporary folder, never over benchmarks/results")

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        global SMOKE_OUT
        parsed = super().parse_args(args, namespace)
        if getattr(parsed, "smoke", False):
            for name, value in self.smoke.items():
                if not hasattr(parsed, name):
                    raise ValueError(f"smoke setting {name!r} names no option of this benchmark")
                setattr(parsed, name, value)
            import tempfile

            SMOKE_OUT = Path(tempfile.mkdtemp(prefix="cfaug-smoke-"))
            for name in OUTPUT_OPTIONS:
                if isinstance(getattr(parsed, name, None), Path):
                    setattr(parsed, name, SMOKE_OUT)
            print(f"smoke run: results in {SMOKE_OUT}", flush=True)
        return parsed


def parser(doc: str | None, smoke: dict[str, Any] | None = None) -> BenchmarkParser:
    """An argument parser whose help is the benchmark module's docstring, with ``--smoke`` (`BenchmarkParser`):
    ``smoke`` maps option names (argparse's ``dest``) to the values of the benchmark's tiny workload."""
    return BenchmarkParser(doc, smoke or {})


def results_dir() -> Path:
    """Where a benchmark writes its results: `RESULTS`, or the smoke run's temporary folder."""
    return SMOKE_OUT or RESULTS


def cache_dir() -> Path:
    """Where a benchmark keeps what it trains or builds for later runs: `CACHE`, or (a smoke run, whose tiny models
    must not stand in for real ones) a folder inside its temporary one."""
    return SMOKE_OUT / "cache" if SMOKE_OUT else CACHE


#: What counts as the measured code when asking whether the tree had uncommitted changes (results are not code).
CODE = ("cfaug_hf", "trainer_callbacks", "benchmarks", ":!benchmarks/results", ":!benchmarks/logs")


def provenance(commit: str | None = None) -> dict[str, Any]:
    """The commit the run measured (``commit`` when the tree was copied elsewhere, e.g. to a GPU machine, whose
    ``.git`` may be stale), whether the measured code (`CODE`) had uncommitted changes, the date and the machine."""
    machine = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    if commit:
        return {"git_commit": commit, "uncommitted_changes": None, "date": time.strftime("%Y-%m-%d"),
                "machine": machine}
    try:
        found = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", *CODE], cwd=ROOT, capture_output=True,
                                    text=True, check=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        found, dirty = None, None
    return {"git_commit": found, "uncommitted_changes": dirty, "date": time.strftime("%Y-%m-%d"), "machine": machine}


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """One Markdown table (cells as given; ``None`` or ``""`` as an empty cell, written ``| |``)."""
    def line(cells: Sequence[Any]) -> str:
        return "|" + "|".join(" " if c is None or c == "" else f" {c} " for c in cells) + "|"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(row) for row in rows)])


def table_lines(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """`markdown_table` as a list of lines, for the renderers that return lines."""
    return markdown_table(header, rows).splitlines()


def write_results(name: str, data: dict[str, Any], markdown: str, *, results: Path | None = None) -> Path:
    """``<results>/<name>.json`` and ``.md`` (each written whole, then moved into place, so a killed run never leaves
    half a file); returns the JSON's path."""
    folder = results or results_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    for target, text in ((path, json.dumps(data, indent=2, default=str) + "\n"),
                         (folder / f"{name}.md", markdown.rstrip("\n") + "\n")):
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, target)
    return path
