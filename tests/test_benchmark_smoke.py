"""The benchmarks run: each here at its smallest setting, so a move in the library that breaks one fails a test
instead of the next person who runs it (the figures themselves are the benchmarks' business, not the suite's).

Every benchmark runs end to end on its tiny ``--smoke`` workload (`benchmarks.harness.BenchmarkParser`), writing into
a temporary folder and never over the committed results. A new benchmark is picked up by its ``main()``; one that
cannot run here says why in `NOT_HERE`."""

from __future__ import annotations

import importlib.util
import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import harness
from needs import shared_data

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.long
def test_pipeline_overhead_runs_its_children_and_writes_a_table(tmp_path):
    # each setting runs in a child process started as `python -m benchmarks.pipeline_overhead --child ...`
    out = tmp_path / "po"
    proc = subprocess.run([sys.executable, "-m", "benchmarks.pipeline_overhead", "--rows", "200", "--repeats", "1",
                           "--settings", "augment()", "bare map", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    runs = json.loads(out.with_suffix(".json").read_text())
    text = out.with_suffix(".md").read_text()
    assert "| 200 | augment() |" in text and "| 200 | bare map |" in text
    runs = runs["runs"]["200"]
    # the bare map is built to write exactly the augmenter's rows: the same count, or the comparison is void
    assert runs["augment()"][0]["rows_out"] == runs["bare map"][0]["rows_out"] > 200


def test_the_engine_benchmark_writes_its_results_under_the_name_it_was_given(tmp_path, monkeypatch):
    """`benchmarks.engines` wrote each run under the name of its last setting (a loop variable shadowed the file
    name: `ctranslate2-int8.json`); rendered again from a committed run, the files are NAME.json and NAME.md and the
    Markdown holds both tables."""
    from benchmarks import engines, harness

    monkeypatch.setattr(harness, "RESULTS", tmp_path)
    saved = json.loads((ROOT / "benchmarks" / "results" / "engines_2026-11-28.json").read_text())
    engines.write(saved, "mine")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.json", "mine.md"]
    text = (tmp_path / "mine.md").read_text()
    assert "| shared-prefix | 1.35 | 2.12 | 2.62x | 130 | 26% |" in text
    assert "| ctranslate2-float32 (auto) | 0.66 | 1.14x | 124 | 26% | 100% | 100% |" in text
    assert json.loads((tmp_path / "mine.json").read_text()) == saved


def test_the_icda_precision_table_renders_from_a_committed_run_into_another_folder(tmp_path):
    """`--results-dir` is a Path, and the run wrote `vars(args)` with plain json.dumps: the end of a run of hours
    crashed before the JSON was written. Rendered again from a committed run into tmp_path: both files, the same
    table rows as the committed Markdown."""
    import argparse
    import contextlib
    import io

    from benchmarks import icda_precision

    saved = json.loads((ROOT / "benchmarks" / "results" / "icda_precision_connect.json").read_text())
    args = argparse.Namespace(**{**saved["args"], "results_dir": tmp_path / "out", "suffix": "_again"})
    with contextlib.redirect_stdout(io.StringIO()):
        icda_precision.write(saved["results"], saved["overhead"], args, saved["device"])
    written = json.loads((tmp_path / "out" / "icda_precision_again.json").read_text())
    assert written["results"] == saved["results"] and written["args"]["results_dir"] == str(tmp_path / "out")
    committed = (ROOT / "benchmarks" / "results" / "icda_precision_connect.md").read_text()
    rows = [ln for ln in (tmp_path / "out" / "icda_precision_again.md").read_text().splitlines() if ln.startswith("|")]
    assert len(rows) > 4 and all(ln in committed for ln in rows)


def test_every_benchmark_table_goes_through_the_one_helper():
    """Tables written by hand drifted (a loop variable renamed the results file, empty cells spaced two ways):
    every Markdown table under benchmarks/ and scripts/ is rendered by `benchmarks.harness.markdown_table`."""
    by_hand = [f"{path.relative_to(ROOT)}:{i}" for folder in ("benchmarks", "scripts")
               for path in sorted((ROOT / folder).rglob("*.py")) if path.name != "harness.py"
               for i, line in enumerate(path.read_text().splitlines(), 1) if "|---" in line or '"---|"' in line]
    assert not by_hand, by_hand


#: Benchmarks the suite does not run, and why (each reason is checked where it can be).
NOT_HERE = {
    "gpu_suite": "has its own smoke run (`gpu_suite run --smoke`, run by hand before a device call, which needs the "
                 "prepared carry); its parts, carry and slimming are tested in tests/test_frozen_yardstick.py",
    "served_llm": "serves the model through vLLM's CPU build in a second environment (scripts/setup_vllm.sh)",
    "ray_scaling": "needs Ray, an optional extra" if importlib.util.find_spec("ray") is None else "",
    "demo_time_memory": "times `cfaug demo` under /usr/bin/time, which this machine lacks"
    if not Path("/usr/bin/time").is_file() else "",
}
#: Smoke settings that still train, convert or start processes (a minute or more each on 2 shared cores, measured
#: 2026-11-29): run with ``scripts/test.sh --smoke-all``, not in the default suite's ten minutes.
HEAVY = {"race_intrinsic": 495, "load_time": 237, "llm_fewshot": 212, "ray_scaling": 184, "icda_precision": 135,
         "generator_base": 82, "quickstart_time": 79, "demo_time_memory": 60}


def benchmarks() -> list[str]:
    """Every runnable benchmark: a module of benchmarks/ with a ``main()``, and the debias package."""
    found = [p.stem for p in sorted((ROOT / "benchmarks").glob("*.py")) if "\ndef main(" in p.read_text()]
    return [*found, "debias"]


def test_every_benchmark_is_found_and_the_exemptions_name_real_ones():
    names = benchmarks()
    assert {"engines", "leaderboard", "debias", "linear_time"} <= set(names)
    assert set(NOT_HERE) <= set(names) and set(HEAVY) <= set(names)


def _committed() -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in harness.RESULTS.rglob("*") if p.is_file()}


@pytest.mark.shipped_checker  # the benchmarks measure the shipped components, checker included
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.heavy_smoke) if n in HEAVY else n
                                  for n in benchmarks()])
def test_benchmark_runs_its_smoke_setting(name, monkeypatch):
    if NOT_HERE.get(name):
        pytest.skip(NOT_HERE[name])
    data = shared_data()
    monkeypatch.setattr(harness, "SMOKE_OUT", None)
    monkeypatch.setattr(sys, "argv", [f"benchmarks.{name}", "--smoke"])
    before = _committed()
    runpy.run_module(f"benchmarks.{name}", run_name="__main__", alter_sys=False)
    out = harness.SMOKE_OUT
    assert out is not None, f"benchmarks.{name} did not parse --smoke through harness.parser"
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written, f"benchmarks.{name} --smoke wrote nothing into {out}"
    changed = sorted(set(_committed().items()) - set(before.items()))
    assert not changed, f"benchmarks.{name} --smoke changed benchmarks/results: {changed}"


class _Parsed(Exception):
    """Raised in place of running the workload, once the options are parsed."""


@pytest.mark.parametrize("name", sorted(HEAVY))
def test_a_heavy_benchmark_imports_and_parses_its_smoke_setting(name, monkeypatch):
    """The heavy smoke runs are left to --smoke-all; in the default suite each heavy benchmark is still imported and
    its --smoke setting parsed (every smoke value must name one of its options), so a move or a renamed option that
    breaks one fails here."""
    parse = harness.BenchmarkParser.parse_args

    def parse_and_stop(self, *args, **kwargs):
        raise _Parsed(parse(self, *args, **kwargs))

    monkeypatch.setattr(harness.BenchmarkParser, "parse_args", parse_and_stop)
    monkeypatch.setattr(harness, "SMOKE_OUT", None)
    monkeypatch.setattr(sys, "argv", [f"benchmarks.{name}", "--smoke"])
    with pytest.raises(_Parsed) as parsed:
        runpy.run_module(f"benchmarks.{name}", run_name="__main__", alter_sys=False)
    options = parsed.value.args[0]
    assert options.smoke and harness.SMOKE_OUT is not None
    assert harness.SMOKE_OUT.is_dir() and not any(harness.SMOKE_OUT.iterdir())


def _commands(name: str) -> list[list[str]]:
    """The command lines whose help a benchmark must print: its own, and each sub-command's (gpu_suite's)."""
    if name == "gpu_suite":
        return [[], ["prepare"], ["slim"], ["unslim"], ["run"]]
    return [[]]


@pytest.mark.parametrize("name", benchmarks())
def test_every_benchmark_and_sub_command_prints_its_help(name, monkeypatch, capsys):
    """gpu_suite's parser could not be built at all for a while (argparse builds sub-command parsers with the
    harness's class and passes ``prog=``, which it refused), and no test saw it because the suite is exempt from the
    smoke runs: every benchmark, exempt or heavy, and each of its sub-commands answers ``--help``."""
    for command in _commands(name):
        monkeypatch.setattr(harness, "SMOKE_OUT", None)
        monkeypatch.setattr(sys, "argv", [f"benchmarks.{name}", *command, "--help"])
        with pytest.raises(SystemExit) as done:
            runpy.run_module(f"benchmarks.{name}", run_name="__main__", alter_sys=False)
        assert done.value.code in (0, None), (name, command)
        assert "usage:" in capsys.readouterr().out, (name, command)


@pytest.mark.parametrize("text, expected", [("MALLOC_ARENA_MAX=2", ("MALLOC_ARENA_MAX", "2")),
                                            ("EMPTY=", ("EMPTY", "")), ("A=b=c", ("A", "b=c"))])
def test_demo_time_memory_takes_environment_assignments(text, expected):
    from benchmarks.demo_time_memory import _assignment

    assert _assignment(text) == expected


@pytest.mark.parametrize("text", ["MALLOC_ARENA_MAX", "=2", "2X=1", "A B=1", ""])
def test_demo_time_memory_refuses_what_is_not_an_assignment(text):
    import argparse

    from benchmarks.demo_time_memory import _assignment

    with pytest.raises(argparse.ArgumentTypeError, match="takes NAME=VALUE"):
        _assignment(text)


@pytest.mark.shipped_checker
def test_the_flip_checker_benchmark_scores_a_candidate_folder_under_its_own_name(tmp_path, monkeypatch, capsys):
    """A checker built with `scripts/build_checkers.py --out FOLDER` is scored before it ships (``--checkers
    FOLDER``) and written beside the shipped checker's figures (``--tag``), not over them; a folder that is not there
    is refused naming the option."""
    import shutil

    from cfaug_hf.data import CHECKER_DIR, CHECKER_TASKS

    data = shared_data()
    nli = CHECKER_TASKS["natural-language-inference"]
    shutil.copytree(CHECKER_DIR / nli, tmp_path / "candidate" / nli)
    monkeypatch.setattr(harness, "SMOKE_OUT", None)
    monkeypatch.setattr(sys, "argv", ["benchmarks.flip_checker", "--smoke", "--checkers",
                                      str(tmp_path / "candidate"), "--tag", "cand"])
    runpy.run_module("benchmarks.flip_checker", run_name="__main__", alter_sys=False)
    out = harness.SMOKE_OUT
    assert sorted(p.name for p in out.glob("flip_checker*")) == ["flip_checker_cand.json", "flip_checker_cand.md"]
    written = json.loads((out / "flip_checker_cand.json").read_text())
    assert written["checkers_folder"] == str(tmp_path / "candidate")
    assert written["checkers"]["natural-language-inference"]["checker"] == str(tmp_path / "candidate" / nli)
    assert (out / "flip_checker_cand.md").read_text().startswith(f"# Flip checkers in {tmp_path / 'candidate'}:")

    monkeypatch.setattr(sys, "argv", ["benchmarks.flip_checker", "--checkers", str(tmp_path / "absent")])
    with pytest.raises(SystemExit):
        runpy.run_module("benchmarks.flip_checker", run_name="__main__", alter_sys=False)
    assert f"--checkers {tmp_path / 'absent'}: no such folder" in capsys.readouterr().err


def test_the_editor_workloads_ceiling_counts_prompts_once_and_shared_candidate_prefixes_once():
    """The floor counts every token of every candidate; `work_of` adds what an engine must also read (the prompt)
    and removes what the sampler computes once (a prefix the candidates share), for the share a perfect engine
    would show."""
    from benchmarks.engines import work_of

    class Words:  # a token per word
        def __call__(self, text, add_special_tokens=False):
            return {"input_ids": [hash(w) % 1000 for w in text.split()]}

    work = work_of(Words(), ["x y z"], [["a b", "a c", "a b"]])
    # counted: 3 candidates of 2 words plus their end; distinct: a, a b, a b<end>, a c, a c<end>
    assert work == {"counted_tokens": 9, "prompt_tokens": 3, "distinct_candidate_tokens": 5,
                    "ceiling_share_of_floor": 9 / 8}
