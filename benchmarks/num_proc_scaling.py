"""``augment(num_proc=2)`` against one process, on a CPU-bound generator.

    python -m benchmarks.num_proc_scaling [--rows 4000] [--lm-rows 48] [--repeats 3]

Two generators:

* ``pure-Python rewrite``: a rule rewrite that also spends a fixed amount of pure-Python work per claim (a stand-in
  for a rule-based or dictionary augmenter); one process is bound by the GIL, so two processes can use both cores;
* ``SmolLM2-135M greedy``: the real model, greedy decoding, 24 new tokens. One process already runs torch on every
  core, and each ``num_proc`` worker runs one torch thread, so the gain is what running whole batches side by
  side adds over intra-op threading.

Each pair runs ``--repeats`` times in interleaved order; the table gives medians and the speed-up (target >= 1.7x
with 2 processes on 2 cores). The machine should be otherwise idle; the JSON records the load average before and
after. Writes ``benchmarks/results/num_proc_scaling.{json,md}``.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time

from benchmarks import harness


class BusyRewrite:
    """Changes the first number (else appends ' not'), after ``work`` rounds of pure-Python hashing per claim."""

    def __init__(self, work: int) -> None:
        self.work = work

    def __call__(self, claims: list[str]) -> list[str]:
        import re

        out = []
        for c in claims:
            h = 0
            for i in range(self.work):
                h = (h * 31 + i + len(c)) % 1_000_003
            m = re.search(r"\b\d+\b", c)
            out.append(c[:m.start()] + str(int(m.group()) + 1 + h % 2) + c[m.end():] if m else c + " not")
        return out


def main() -> None:
    ap = harness.parser(__doc__, smoke={"rows": 40, "work": 10, "lm_rows": 2, "repeats": 1})
    ap.add_argument("--rows", type=int, default=4000, help="rows for the pure-Python generator")
    ap.add_argument("--work", type=int, default=20_000, help="hashing rounds per claim")
    ap.add_argument("--lm-rows", type=int, default=48, help="rows for the SmolLM2 generator")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    from datasets import concatenate_datasets, disable_progress_bars

    from cfaug_hf import CrossAugAugmenter, Generator, TaskSchema
    from cfaug_hf.data import load_feverous_sample
    from cfaug_hf.methods.crossaug.recipes import NEGATION_TEMPLATE
    from cfaug_hf.pretrained import SMOLLM2

    disable_progress_bars()
    load_before = os.getloadavg()
    sample = load_feverous_sample().select_columns(["id", "claim", "evidence", "label"])
    copies = -(-args.rows // len(sample))
    big = concatenate_datasets([sample.map(lambda i, k=k: {"id": f"{i}-{k}"}, input_columns="id")
                                for k in range(copies)]).select(range(args.rows))
    lm_data = sample.filter(lambda lab: lab == "SUPPORTS", input_columns="label").select(range(args.lm_rows))
    schema = TaskSchema.fact_verification(id_column="id")
    busy = CrossAugAugmenter(BusyRewrite(args.work), schema)
    gen = Generator.from_base(SMOLLM2, input_template=NEGATION_TEMPLATE, num_beams=1, max_new_tokens=24,
                              batch_size=8)
    lm = CrossAugAugmenter(gen, schema)

    cases = {"pure-Python rewrite": (busy, big), "SmolLM2-135M greedy": (lm, lm_data)}
    times = {case: {1: [], 2: []} for case in cases}
    outputs = {}
    for _ in range(args.repeats):
        for case, (augmenter, data) in cases.items():
            for procs in (1, 2):
                t0 = time.perf_counter()
                out = augmenter.augment(data, num_proc=procs if procs > 1 else None, load_from_cache_file=False)
                times[case][procs].append(time.perf_counter() - t0)
                outputs[(case, procs)] = out["claim"]
                print(case, procs, round(times[case][procs][-1], 2), flush=True)
    load_after = os.getloadavg()
    same = {case: outputs[(case, 1)] == outputs[(case, 2)] for case in cases}
    med = {case: {p: statistics.median(v) for p, v in t.items()} for case, t in times.items()}
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, CPU only"
    lines = [f"augment(num_proc=2) against one process; median of {args.repeats} interleaved runs; {machine}; load "
             f"average {load_before[0]:.2f} before, {load_after[0]:.2f} after.", "",
             harness.markdown_table(
                 ["generator", "rows", "1 process s", "2 processes s", "speed-up", "same output"],
                 [[case, len(data), f"{med[case][1]:.2f}", f"{med[case][2]:.2f}", f"{med[case][1] / med[case][2]:.2f}x",
                   same[case]] for case, (_, data) in cases.items()])]
    text = "\n".join(lines) + "\n"
    print(text)
    harness.results_dir().mkdir(exist_ok=True)
    (harness.results_dir() / "num_proc_scaling.json").write_text(json.dumps({
        "machine": machine, "repeats": args.repeats, "work": args.work, "seconds": times,
        "load_average_before": load_before, "load_average_after": load_after, "same_output": same}, indent=2) + "\n")
    (harness.results_dir() / "num_proc_scaling.md").write_text(text)


if __name__ == "__main__":
    main()
