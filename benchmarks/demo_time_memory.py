"""Wall time and peak memory of the main job (`cfaug demo`), as a newcomer runs it.

    python -m benchmarks.demo_time_memory [--rows 100] [--backend auto] [--note "2 cores, idle"]

Runs ``cfaug demo --rows N`` in a fresh process under ``/usr/bin/time -v`` (offline, the shipped generator and
checker, the default backend), and writes the wall time, CPU time, peak resident memory and the demo's own timings
to ``benchmarks/results/demo_time_memory.{json,md}``. Targets (issue 29/30): at most 3 minutes warm on 2 cores,
at most 2 GB of memory.
"""

from __future__ import annotations

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
    args = ap.parse_args()
    cfaug = Path(sys.executable).with_name("cfaug")
    with tempfile.TemporaryDirectory(prefix="cfaug-demo-bench-") as tmp:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        start = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-v", str(cfaug), "demo", "--out", f"{tmp}/demo", "--rows",
                               str(args.rows), "--backend", args.backend], capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(done.stderr[-2000:])
        summary = json.loads(Path(tmp, "demo", "stats.json").read_text())

    def field(name: str) -> float:
        return float(re.search(rf"{re.escape(name)}: ([\d.:]+)", done.stderr).group(1).split(":")[-1])

    result = {"rows": args.rows, "note": args.note, "wall_s": round(wall, 1),
              "user_s": field("User time (seconds)"), "system_s": field("System time (seconds)"),
              "peak_rss_gb": round(field("Maximum resident set size (kbytes)") / 2**20, 2),
              "demo_timings": summary["timings"], "backend": summary["backend"],
              "counterfactuals": summary["stats"]["counterfactuals"]}
    verdict = {"time": "met" if wall <= 180 else "missed", "memory": "met" if result["peak_rss_gb"] <= 2 else "missed"}
    lines = ["# The demo's wall time and peak memory", "",
             f"`cfaug demo --rows {args.rows}` in a fresh process ({args.note}); backend "
             f"{result['backend'].get('engine')} {result['backend'].get('compute_type', '')}.", "",
             harness.markdown_table(
                 ["wall (s)", "CPU user + system (s)", "peak RSS (GB)", "counterfactuals", "target 180 s",
                  "target 2 GB"],
                 [[result["wall_s"], f"{result['user_s'] + result['system_s']:.0f}", result["peak_rss_gb"],
                   result["counterfactuals"], verdict["time"], verdict["memory"]]]), ""]
    text = "\n".join(lines)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "demo_time_memory.md").write_text(text)
    (args.out / "demo_time_memory.json").write_text(json.dumps({**result, "verdict": verdict}, indent=1) + "\n")


if __name__ == "__main__":
    main()
