"""A practitioner's first dataset-scale run, as a user would make it: killed half way, resumed, checked.

Steps, each a ``cfaug`` command in a fresh process (``bash scripts/dataset_scale.sh`` from a fresh clone):

1. every preflight error a first run on one's own file tends to hit (columns named otherwise, a label the method
   does not know, a bad ``--push-to-hub`` id), timed: each must come back before any model loads;
2. ``cfaug augment claims.jsonl --method crossaug`` on ``--rows`` claims (default 2,000: FEVER's paper dev set when
   the benchmark data is present, else the embedded FEVEROUS sample cycled with fresh ids), uninterrupted, with the
   progress bar's updates timed (the longest gap between two updates);
3. the same command in a second cache, killed with SIGKILL once about half its parts are written, then run again: it
   must say how many rows it read back and write output identical, row for row, to the uninterrupted run.

Writes ``runs/NAME.json`` and, with ``--record``, ``benchmarks/results/NAME.json`` (``--name``, default
``dataset_scale``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def claims(n: int, path: Path) -> str:
    """``n`` claims written to ``path``; says where they came from."""
    from datasets import concatenate_datasets

    from cfaug_hf.data import load_feverous_sample

    try:
        from scripts.shared_data import fever_paper

        rows = fever_paper()[0].select_columns(["id", "claim", "evidence", "label"])
        source = "FEVER paper dev (decontaminated), training part"
    except (SystemExit, FileNotFoundError, ImportError):
        sample = load_feverous_sample().select_columns(["id", "claim", "evidence", "label"])
        copies = [sample.map(lambda r, k=k: {"id": f"{r['id']}-{k}"}) for k in range(n // len(sample) + 1)]
        rows, source = concatenate_datasets(copies), "the embedded FEVEROUS sample, cycled with fresh ids"
    rows = rows.select(range(min(n, len(rows))))
    rows.to_json(str(path), lines=True)
    return f"{len(rows)} rows of {source}"


def run(argv: list[str], env: dict[str, str], *, kill_when: Any = None) -> dict:
    """One command: its status, seconds, the longest gap between two progress-bar updates, and its output;
    killed with SIGKILL as soon as ``kill_when()`` is true."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    os.set_blocking(proc.stderr.fileno(), False)
    err, updates, killed = b"", [], False
    while proc.poll() is None:
        chunk = proc.stderr.read() or b""
        if re.search(rb"\d+/\d+ \[", chunk):  # a tqdm update of a bar with a total
            updates.append(time.perf_counter() - start)
        err += chunk
        if kill_when is not None and not killed and kill_when():
            proc.send_signal(signal.SIGKILL)
            killed = True
        time.sleep(0.2)
    err += proc.stderr.read() or b""
    out = proc.stdout.read().decode(errors="replace")
    gaps = [b - a for a, b in zip(updates, updates[1:])]
    return {"status": proc.returncode, "seconds": round(time.perf_counter() - start, 1), "killed": killed,
            "bar_updates": len(updates), "longest_bar_gap_s": round(max(gaps), 1) if gaps else None,
            "stdout": out[-2000:], "stderr_tail": err.decode(errors="replace")[-1500:]}


def same_rows(a: Path, b: Path) -> bool:
    from datasets import load_from_disk

    return load_from_disk(str(a)).to_list() == load_from_disk(str(b)).to_list()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--checkpoint-rows", type=int, default=200)
    ap.add_argument("--record", action="store_true", help="also write benchmarks/results/NAME.json")
    ap.add_argument("--name", default="dataset_scale", help="the results' file name (default dataset_scale)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cfaug-dataset-scale-"))
    data = work / "claims.jsonl"
    where = claims(args.rows, data)
    cfaug = [sys.executable, "-m", "cfaug_hf.cli"]
    base = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1"}
    env_a = {**base, "HF_DATASETS_CACHE": str(work / "cache-a")}
    env_b = {**base, "HF_DATASETS_CACHE": str(work / "cache-b")}
    record: dict = {"rows": where, "cpus": os.cpu_count(), "checkpoint_rows": args.checkpoint_rows}

    bad = work / "reviews.jsonl"
    bad.write_text('{"review": "Dull.", "sentiment": "negative"}\n{"review": "Fine.", "sentiment": "positive"}\n')
    wrong_label = work / "labels.jsonl"
    wrong_label.write_text('{"claim": "a", "evidence": "b", "label": "TRUE"}\n')
    preflight = {
        "columns named otherwise": cfaug + ["augment", str(bad), "--method", "core", "--mode", "editor_only",
                                            "--out", str(work / "x1")],
        "a label the method does not know": cfaug + ["augment", str(wrong_label), "--method", "crossaug",
                                                     "--out", str(work / "x2")],
        "a bad --push-to-hub id": cfaug + ["augment", str(data), "--method", "crossaug", "--out", str(work / "x3"),
                                           "--push-to-hub", "not a repo"],
    }
    record["preflight"] = {}
    for name, argv in preflight.items():
        done = run(argv, env_a)
        line = [ln for ln in done["stderr_tail"].splitlines() if ln.startswith("cfaug")]
        record["preflight"][name] = {"status": done["status"], "seconds": done["seconds"],
                                     "message": line[-1] if line else done["stderr_tail"][-300:]}
        print(f"preflight  {done['seconds']:6.1f} s  status {done['status']}  {name}", flush=True)

    command = cfaug + ["augment", str(data), "--method", "crossaug", "--checkpoint-rows", str(args.checkpoint_rows)]
    whole = run(command + ["--out", str(work / "whole")], env_a)
    print(f"whole run  {whole['seconds']:6.1f} s  status {whole['status']}  longest bar gap "
          f"{whole['longest_bar_gap_s']} s", flush=True)
    total = -(-args.rows // args.checkpoint_rows)

    def half_done() -> bool:  # about half the parts finished: the kill lands in the middle of the run
        return len(list((work / "cache-b").rglob("part-*.arrow"))) >= total // 2

    killed = run(command + ["--out", str(work / "resumed")], env_b, kill_when=half_done)
    parts = sorted((work / "cache-b").rglob("part-*.arrow"))
    print(f"killed at  {killed['seconds']:6.1f} s  ({len(parts)} finished parts kept)", flush=True)
    resumed = run(command + ["--out", str(work / "resumed")], env_b)
    said = re.search(r"Resumed: (\d+) of (\d+) rows", resumed["stdout"])
    identical = whole["status"] == resumed["status"] == 0 and same_rows(work / "whole" / "data",
                                                                        work / "resumed" / "data")
    print(f"resumed    {resumed['seconds']:6.1f} s  status {resumed['status']}  "
          f"{said.group(0) if said else 'no resume line'}; identical to the whole run: {identical}", flush=True)
    record.update({
        "whole_run": {k: whole[k] for k in ("status", "seconds", "bar_updates", "longest_bar_gap_s")},
        "killed_run": {"seconds": killed["seconds"], "killed": killed["killed"], "parts_kept": len(parts),
                       "parts_in_all": total},
        "resumed_run": {k: resumed[k] for k in ("status", "seconds", "longest_bar_gap_s")}
        | {"said": said.group(0) if said else None},
        "identical_output": identical,
        "targets": {"every preflight error under 3 s": all(p["seconds"] < 3 and p["status"] == 2
                                                            for p in record["preflight"].values()),
                    "bar moves at least every 10 s": (whole["longest_bar_gap_s"] or 0) <= 10,
                    "resumed output identical": identical}})
    (ROOT / "runs").mkdir(exist_ok=True)
    text = json.dumps(record, indent=1) + "\n"
    (ROOT / "runs" / f"{args.name}.json").write_text(text)
    if args.record:
        (ROOT / "benchmarks" / "results" / f"{args.name}.json").write_text(text)
    print(json.dumps(record["targets"], indent=1))
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
