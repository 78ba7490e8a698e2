"""Wall time and peak memory of the main job (`cfaug demo`), as a newcomer runs it.

    python -m benchmarks.demo_time_memory [--rows 100] [--backend auto] [--note "2 cores, idle"]
        [--env MALLOC_MMAP_THRESHOLD_=4194304] [--tag mmap4]

Runs ``cfaug demo --rows N`` in a fresh process under ``/usr/bin/time -v`` (offline, the shipped generator and
checker, the default backend), and writes the wall time, CPU time, peak resident memory and the demo's own timings
to ``benchmarks/results/demo_time_memory.{json,md}`` (``demo_time_memory_TAG.*`` with ``--tag``). ``--env
NAME=VALUE`` (repeatable) sets a variable for the demo's process only, e.g. one of glibc's ``MALLOC_*`` tunables.
Targets (issue 29/30): at most 3 minutes warm on 2 cores, at most 2 GB of memory.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT


def main() -> None:
    ap = harness.parser(__doc__, smoke={"rows": 2})
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--note", default=f"CPU, {os.cpu_count()} cores")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--backend", default="auto", choices=["auto", "ctranslate2", "transformers"],
                    help="the demo's --backend (auto: what a newcomer gets)")
    ap.add_argument("--env", action="append", default=[], type=_assignment, metavar="NAME=VALUE",
                    help="an environment variable for the demo's process only (repeatable)")
    ap.add_argument("--tag", default="", help="written as demo_time_memory_TAG.{json,md} (default: no suffix)")
    args = ap.parse_args()
    cfaug = Path(sys.executable).with_name("cfaug")
    with tempfile.TemporaryDirectory(prefix="cfaug-demo-bench-") as tmp:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
               **dict(args.env)}
        start = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-v", str(cfaug), "demo", "--out", f"{tmp}/demo", "--rows",
                               str(args.rows), "--backend", args.backend], capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(done.stderr[-2000:])
        summary = json.loads(Path(tmp, "demo", "stats.json").read_text())

    def field(name: str) -> float:
        return float(re.search(rf"{re.escape(name)}: ([\d.:]+)", done.stderr).group(1).split(":")[-1])

    result = {"rows": args.rows, "note": args.note, "env": dict(args.env), "wall_s": round(wall, 1),
              "user_s": field("User time (seconds)"), "system_s": field("System time (seconds)"),
              "peak_rss_gb": round(field("Maximum resident set size (kbytes)") / 2**20, 2),
              "demo_timings": summary["timings"], "backend": summary["backend"],
              "counterfactuals": summary["stats"]["counterfactuals"]}
    verdict = {"time": "met" if wall <= 180 else "missed", "memory": "met" if result["peak_rss_gb"] <= 2 else "missed"}
    lines = ["# The demo's wall time and peak memory", "",
             f"`cfaug demo --rows {args.rows}` in a fresh process ({args.note}"
             + "".join(f"; {k}={v}" for k, v in args.env) + "); backend "
             f"{result['backend'].get('engine')} {result['backend'].get('compute_type', '')}.", "",
             harness.markdown_table(
                 ["wall (s)", "CPU user + system (s)", "peak RSS (GB)", "counterfactuals", "target 180 s",
                  "target 2 GB"],
                 [[result["wall_s"], f"{result['user_s'] + result['system_s']:.0f}", result["peak_rss_gb"],
                   result["counterfactuals"], verdict["time"], verdict["memory"]]]), ""]
    text = "\n".join(lines)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "demo_time_memory" + (f"_{args.tag}" if args.tag else "")
    (args.out / f"{stem}.md").write_text(text)
    (args.out / f"{stem}.json").write_text(json.dumps({**result, "verdict": verdict}, indent=1) + "\n")


def _assignment(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise argparse.ArgumentTypeError(f"takes NAME=VALUE (a variable name, then =), got {text!r}")
    return name, value


if __name__ == "__main__":
    main()
