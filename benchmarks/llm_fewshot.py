"""Few-shot effect of LLM-prompted counterfactuals (Li et al. 2024's protocol, CPU-reduced).

    python -m benchmarks.llm_fewshot [--tasks sentiment nli ner re] [--shots 10 5] [--seeds 0 1 2]

For each task, seed and k: k training rows per class (NER: greedy sampling until every entity type has k
mentions, Yang and Katiyar 2020) are drawn from the training split, nested (the k=5 set is part of the k=10 set,
so one generation serves both); a MiniLM classifier (token classifier for NER) is fine-tuned (8 epochs, at least 100 steps of 16, lr 1e-4) on

* ``none``: the k-shot rows;
* ``cfgen`` (NER): + CFGen in-dataset entity replacement (lexicon of the k-shot rows);
* ``llm``: + LLM counterfactuals after the constraint filter;
* ``llm+filter``: + the same, kept only where the ``none`` model (trained on the same rows) predicts the target
  label (NER: finds exactly the entities): the paper's consistency filtering;
* ``llm-cot`` (sentiment, NLI): + counterfactuals from the chain-of-thought prompt;

and evaluated on dev data: sentiment on CAD IMDb dev originals and their human counterfactuals (accuracy), NLI on
CAD-SNLI dev originals and revised hypotheses (accuracy), NER on CoNLL-2003 valid (entity micro-F1), RE on
held-out SemEval-2010 train rows (micro-F1 over the relations other than Other). The LLM is the offline default
(SmolLM2-135M-Instruct, plain continuation of the few-shot prompt, sampling at 0.7); ``--llm-url URL
[--llm-model NAME] [--llm-api-key-env VAR]`` uses an OpenAI-compatible endpoint instead (a larger model served
with vLLM, say). Writes benchmarks/results/llm_fewshot.{json,md} after every run.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks import harness

from scripts.shared_data import cad_nli, cad_sentiment, shared_dir



def cache() -> Path:
    """Where this benchmark keeps what it trains or fetches (`benchmarks.harness.cache_dir`; a smoke run's own)."""
    return harness.cache_dir() / "llm_fewshot"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
EPOCHS, MIN_STEPS = 8, 100
SENTIMENT_CHARS = 400  # training reviews are cut to their first 400 characters (the LLM sees all of it)

# The paper's BERT rows at k = 5, 10 (Tables 8-11: SST-2/IMDB, SNLI, CoNLL03, SemEval), for the table's side.
PAPER = {"sentiment": {"none": {5: 57.05, 10: 57.14}, "llm": {5: 57.48, 10: 66.98}},
         "nli": {"none": {5: 37.67, 10: 38.77}, "llm": {5: 41.81, 10: 45.11}},
         "ner": {"none": {5: 40.62, 10: 56.53}, "cfgen": {5: 47.79, 10: 58.50}, "llm": {5: 49.13, 10: 62.14}},
         "re": {"none": {5: 30.49, 10: 41.69}, "llm": {5: 28.89, 10: 41.51}}}


# ---------------------------------------------------------------------------------------------------- data
def conll(split: str) -> Any:
    from datasets import Dataset

    rows, tokens, tags = [], [], []
    for line in (shared_dir() / "conll2003" / f"{split}.txt").read_text().splitlines() + [""]:
        if not line.strip() or line.startswith("-DOCSTART-"):
            if tokens:
                rows.append({"id": f"{split}-{len(rows)}", "tokens": tokens, "ner_tags": tags})
            tokens, tags = [], []
            continue
        parts = line.split()
        tokens.append(parts[0])
        tags.append(parts[-1])
    return Dataset.from_list(rows)


def semeval(dev_rows: int = 1000) -> tuple[Any, Any]:
    from datasets import Dataset

    lines = (shared_dir() / "semeval2010_task8" / "TRAIN_FILE.TXT").read_text().splitlines()
    rows = []
    for i in range(0, len(lines) - 1, 4):
        ident, text = lines[i].split("\t", 1)
        rows.append({"id": f"semeval-{ident}", "text": text.strip().strip('"'), "label": lines[i + 1].strip()})
    return Dataset.from_list(rows[:-dev_rows]), Dataset.from_list(rows[-dev_rows:])


def task_data(task: str) -> dict[str, Any]:
    from cfaug_hf import TaskSchema

    if task == "sentiment":
        dev = cad_sentiment("orig", "dev")
        return {"schema": TaskSchema.sentiment(id_column="id"), "train": cad_sentiment("orig", "train"),
                "evals": {"CAD dev": dev, "CAD dev counterfactual": cad_sentiment("new", "dev")}, "metric": "accuracy"}
    if task == "nli":
        return {"schema": TaskSchema.nli(id_column="id"), "train": cad_nli("original", "train"),
                "evals": {"CAD-SNLI dev": cad_nli("original", "dev"),
                          "revised hypothesis": cad_nli("revised_hypothesis", "dev")}, "metric": "accuracy"}
    if task == "ner":
        return {"schema": TaskSchema.token_classification(id_column="id"), "train": conll("train"),
                "evals": {"CoNLL valid": conll("valid").select(range(800))}, "metric": "entity micro-F1"}
    train, dev = semeval()
    return {"schema": TaskSchema.relation_extraction(id_column="id"), "train": train,
            "evals": {"SemEval held-out": dev.select(range(600))}, "metric": "micro-F1 (no Other)"}


def sample_k(data: Any, schema: Any, k: int, seed: int) -> list[int]:
    """Indices of a k-per-class sample (NER: greedy until every type has k mentions); a prefix order, so the
    sample for a smaller k is inside it."""
    from cfaug_hf.text.entities import iob2_spans

    order = list(range(len(data)))
    random.Random(seed).shuffle(order)
    chosen: list[int] = []
    if schema.is_token_level:
        counts: Counter = Counter()
        types = {t[2:] for t in schema.label_names if t != "O"}
        for i in order:
            row = data[i]
            found = Counter(e.type for e in iob2_spans(row["tokens"], row["ner_tags"]))
            if any(counts[t] < k for t in found):
                chosen.append(i)
                counts.update(found)
            if all(counts[t] >= k for t in types):
                break
        return chosen
    labels = data[schema.label_column]
    per: Counter = Counter()
    for i in order:
        if per[labels[i]] < k:
            chosen.append(i)
            per[labels[i]] += 1
    return chosen


def shorten(data: Any) -> Any:
    return data.map(lambda t: {"text": t[:SENTIMENT_CHARS].rsplit(" ", 1)[0]}, input_columns="text")


# -------------------------------------------------------------------------------------------------- models
def make_llm(url: str | None = None, model: str = "default", api_key_env: str | None = None) -> tuple[Any, str]:
    """The LLM the rows are written with: the endpoint given on the command line (allowed for this run, as the
    user named it), else the offline default."""
    from cfaug_hf import OpenAICompatibleLLM, allow_endpoints, local_llm

    if url:
        allow_endpoints([url])
        return OpenAICompatibleLLM(base_url=url, model=model, api_key_env=api_key_env,
                                   chat=True, max_tokens=160, stop=["\n"],
                                   cache_dir=str(cache() / "http")), f"endpoint {model}"
    return local_llm(chat=False, max_new_tokens=96, batch_size=8), "SmolLM2-135M-Instruct (offline)"


def train_model(task: str, data: Any, schema: Any, seed: int, min_steps: int = MIN_STEPS) -> Any:
    from cfaug_hf.training import train_checker, train_tagger

    quiet = {"disable_tqdm": True, "logging_strategy": "no"}
    # 8 epochs, but at least 100 steps: a handful of rows would otherwise get a dozen updates.
    steps = max(min_steps, EPOCHS * -(-len(data) // 16))
    if task == "ner":
        return train_tagger(MINILM, data, schema, max_steps=steps, learning_rate=1e-4, seed=seed,
                            training_args=quiet)
    return train_checker(MINILM, data, schema, max_steps=steps, learning_rate=1e-4, seed=seed,
                         max_length=128 if task == "sentiment" else 96, training_args=quiet)


def evaluate(task: str, model: Any, data: Any, schema: Any) -> float:
    from cfaug_hf.text.entities import iob2_spans

    if task == "ner":
        predicted = model([list(t) for t in data["tokens"]])
        tp = fp = fn = 0
        for tokens, gold, pred in zip(data["tokens"], data["ner_tags"], predicted):
            g = {(e.start, e.end, e.type) for e in iob2_spans(tokens, gold)}
            p = {(e.start, e.end, e.type) for e in iob2_spans(tokens, pred)}
            tp, fp, fn = tp + len(g & p), fp + len(p - g), fn + len(g - p)
        return 100 * 2 * tp / max(1, 2 * tp + fp + fn)
    cols = schema.text_columns
    second = list(data[cols[1]]) if len(cols) > 1 else None
    pred = model.predict(list(data[cols[0]]), second)
    gold = [schema.label_name(x) for x in data[schema.label_column]]
    if task == "re":
        tp = sum(p == g and g != "Other" for p, g in zip(pred, gold))
        n_pred = sum(p != "Other" for p in pred)
        n_gold = sum(g != "Other" for g in gold)
        return 100 * 2 * tp / max(1, n_pred + n_gold)
    return 100 * sum(p == g for p, g in zip(pred, gold)) / len(gold)


# ------------------------------------------------------------------------------------------------ augmenting
def augment(task: str, variant: str, rows: Any, schema: Any, llm: Any, seed: int, llm_name: str) -> Any:
    """The counterfactual rows of ``variant`` for ``rows`` (cached on disk by task, seed and variant)."""
    from datasets import Dataset

    from cfaug_hf import CFGenAugmenter, LLMCounterfactualAugmenter

    path = cache() / f"{task}-{variant}-seed{seed}-{len(rows)}-{llm_name.split()[0]}.jsonl"
    if path.exists():
        return Dataset.from_json(str(path)), json.loads(path.with_suffix(".stats.json").read_text())
    start = time.perf_counter()
    if variant == "cfgen":
        aug = CFGenAugmenter.from_dataset(rows, schema, keep_original=False, seed=seed)
    else:
        kwargs = {"cot": variant == "llm-cot", "seed": seed, "keep_original": False}
        if task == "sentiment":
            kwargs["max_input_chars"] = SENTIMENT_CHARS
        if task == "re":
            kwargs.update(targets="balanced", exclude_targets=["Other"])
        aug = LLMCounterfactualAugmenter(llm, schema, **kwargs)
    out = aug.augment(rows, load_from_cache_file=False)
    stats = {**aug.stats.to_dict(), "seconds": round(time.perf_counter() - start, 1)}
    cache().mkdir(parents=True, exist_ok=True)
    out.to_json(str(path))
    path.with_suffix(".stats.json").write_text(json.dumps(stats))
    return out, stats


def consistency_filter(task: str, cfs: Any, sources: Any, schema: Any, model: Any) -> tuple[Any, int]:
    """Keep the counterfactuals the model trained on the original rows agrees with (the library's filters)."""
    from cfaug_hf.filters import LabelFlipFilter, Pair, TagConsistencyFilter

    if len(cfs) == 0:
        return cfs, 0
    by_id = {r["id"]: r for r in sources}
    pairs = []
    for r in cfs:
        src = by_id[r["id"]]
        label = schema.row_label(r[schema.label_column])
        pairs.append(Pair(src, r, label, schema.row_label(src[schema.label_column]), schema.edit_columns,
                          schema.text_columns, 0))
    filt = TagConsistencyFilter(model) if task == "ner" else LabelFlipFilter(model)
    keep, _ = filt.keep(pairs)
    return cfs.select([i for i, k in enumerate(keep) if k]), len(cfs) - sum(keep)


def training_rows(task: str, base: Any, extra: Any | None) -> Any:
    from datasets import concatenate_datasets

    cols = base.column_names
    if extra is None or len(extra) == 0:
        return base
    extra = extra.select_columns(cols).cast(base.features)
    if task == "sentiment":
        extra = shorten(extra)
    return concatenate_datasets([base, extra])


# ------------------------------------------------------------------------------------------------------ main
def main() -> None:
    parser = harness.parser(__doc__, smoke={
        "tasks": ["sentiment"], "shots": [1], "seeds": [0], "min_steps": 1, "no_cot": True, "eval_rows": 4})
    parser.add_argument("--tasks", nargs="+", default=["sentiment", "nli", "ner", "re"])
    parser.add_argument("--shots", nargs="+", type=int, default=[10, 5])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--min-steps", type=int, default=MIN_STEPS,
                        help="fewest training steps a run takes (100; 50 where CPU time ran short)")
    parser.add_argument("--eval-rows", type=int, default=None, help="score on the first N rows of each dev set [all]")
    parser.add_argument("--no-cot", action="store_true", help="leave out the chain-of-thought row")
    parser.add_argument("--out", default="llm_fewshot",
                        help="results file stem; runs in parallel processes write their own and --merge joins them")
    parser.add_argument("--merge", action="store_true",
                        help="join benchmarks/results/llm_fewshot*.json into llm_fewshot.json and its table, then stop")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: all cores)")
    parser.add_argument("--device-note", default="CPU, 2 cores")
    parser.add_argument("--llm-url", default=None, help="an OpenAI-compatible endpoint to write the rows with (a "
                                                        "larger model served with vLLM, say) instead of the offline "
                                                        "SmolLM2; the run sends the prompts there")
    parser.add_argument("--llm-model", default="default", help="the model name the endpoint serves")
    parser.add_argument("--llm-api-key-env", default=None, help="environment variable holding its API key")
    args = parser.parse_args()
    if args.merge:
        merged: dict[str, Any] = {"runs": []}
        for path in sorted(harness.results_dir().glob("llm_fewshot*.json")):
            part = json.loads(path.read_text())
            merged.update({k: v for k, v in part.items() if k != "runs"})
            seen = {(r["task"], r["k"], r["seed"], r["row"]) for r in merged["runs"]}
            merged["runs"] += [r for r in part["runs"] if (r["task"], r["k"], r["seed"], r["row"]) not in seen]
        write(merged, args.device_note)
        for path in [*harness.results_dir().glob("llm_fewshot_*.json"), *harness.results_dir().glob("llm_fewshot_*.md")]:
            path.unlink()
        return

    import torch

    torch.set_num_threads(args.threads or max(1, os.cpu_count() or 1))
    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()
    out_json = harness.results_dir() / f"{args.out}.json"
    results = json.loads(out_json.read_text()) if out_json.exists() else {"runs": []}
    done = {(r["task"], r["k"], r["seed"], r["row"]) for r in results["runs"]}
    llm, llm_name = make_llm(args.llm_url, args.llm_model, args.llm_api_key_env)
    results["llm"], results["device"] = llm_name, args.device_note
    k_max = max(args.shots)
    for task in args.tasks:
        spec = task_data(task)
        if args.eval_rows:
            spec["evals"] = {n: ev.select(range(min(args.eval_rows, len(ev)))) for n, ev in spec["evals"].items()}
        schema, train = spec["schema"], spec["train"]
        variants = ["none", *(["cfgen"] if task == "ner" else []), "llm", "llm+filter",
                    *(["llm-cot"] if task in ("sentiment", "nli") and not args.no_cot else [])]
        for seed in args.seeds:
            order = sample_k(train, schema, k_max, seed)
            pool = train.select(order)
            generated = {}
            if all((task, k, seed, v) in done for k in args.shots for v in variants):
                continue
            for variant in variants:
                if variant in ("llm", "llm-cot", "cfgen"):
                    generated[variant] = augment(task, variant, pool, schema, llm, seed, llm_name)
            for k in sorted(args.shots):
                if all((task, k, seed, v) in done for v in variants):
                    continue
                ids = set(pool.select(sample_k(pool, schema, k, seed))["id"]) if k != k_max else set(pool["id"])
                base = pool.filter(lambda i: i in ids, input_columns="id")
                if task == "sentiment":
                    base = shorten(base)
                none_model = None
                for variant in variants:
                    if (task, k, seed, variant) in done and variant != "none":
                        continue
                    start = time.perf_counter()
                    note: dict[str, Any] = {}
                    extra = None
                    if variant != "none":
                        cfs, stats = generated["llm" if variant == "llm+filter" else variant]
                        cfs = cfs.filter(lambda i: i in ids, input_columns="id")
                        note = {"generation": stats}
                        if variant == "llm+filter":
                            cfs, dropped = consistency_filter(task, cfs, base, schema, none_model)
                            note = {"consistency_dropped": dropped}
                        extra = cfs
                    data = training_rows(task, base, extra)
                    model = train_model(task, data, schema, seed, args.min_steps)
                    if variant == "none":
                        none_model = model
                        if (task, k, seed, "none") in done:
                            continue
                    scores = {name: round(evaluate(task, model, ev, schema), 2) for name, ev in spec["evals"].items()}
                    run = {"task": task, "k": k, "seed": seed, "row": variant, "min_steps": args.min_steps,
                           "train_rows": len(base),
                           "counterfactuals": len(data) - len(base), "scores": scores,
                           "seconds": round(time.perf_counter() - start, 1), **note}
                    print(json.dumps({k2: v for k2, v in run.items() if k2 != "generation"}), flush=True)
                    results["runs"].append(run)
                    done.add((task, k, seed, variant))
                    write(results, args.device_note, args.out)


def write(results: dict[str, Any], device: str, out: str = "llm_fewshot") -> None:
    harness.results_dir().mkdir(parents=True, exist_ok=True)
    (harness.results_dir() / f"{out}.json").write_text(json.dumps(results, indent=1) + "\n")
    lines = ["# LLM-prompted counterfactuals: few-shot effect", "",
             f"Where: {device}. LLM: {results.get('llm')}. Model: MiniLM-L6 (all-MiniLM-L6-v2) fine-tuned 8 epochs "
             "(at least the minimum steps of 16 rows given under each task) at lr 1e-4; mean ± sd over seeds (n = seeds). Dev data, not the held-back test splits. The paper's "
             "BERT figures (GPT-3.5 as the LLM; SST-2/IMDB, SNLI, CoNLL03, SemEval test sets) are for reference, "
             "not comparable row for row.", ""]
    runs = results["runs"]
    for task in dict.fromkeys(r["task"] for r in runs):
        trs = [r for r in runs if r["task"] == task]
        evals = list(trs[0]["scores"])
        floors = sorted({r.get("min_steps", 100) for r in trs})
        table = []
        for k in sorted({r["k"] for r in trs}):
            for row in dict.fromkeys(r["row"] for r in trs if r["k"] == k):
                rs = [r for r in trs if r["k"] == k and r["row"] == row]
                cells = []
                for e in evals:
                    vals = [r["scores"][e] for r in rs]
                    sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
                    cells.append(f"{statistics.mean(vals):.1f} ± {sd:.1f}")
                paper = PAPER.get(task, {}).get(row, {}).get(k)
                n_cf = statistics.mean(r["counterfactuals"] for r in rs)
                table.append([k, row, len(rs), *cells, f"{n_cf:.0f}", paper])
        lines += [f"## {task}", "", f"Training: at least {' / '.join(map(str, floors))} steps.", "",
                  harness.markdown_table(["k", "row", "n", *evals, "counterfactuals", "paper (BERT)"], table), ""]
        gens = [r["generation"] for r in trs if "generation" in r and r["row"] in ("llm", "llm-cot")]
        if gens:
            lines.append("Generation outcomes (summed over seeds, largest k):")
            for row in ("llm", "llm-cot"):
                g = [r["generation"] for r in trs if r["row"] == row and "generation" in r
                     and r["k"] == max(x["k"] for x in trs)]
                if g:
                    total: Counter = Counter()
                    for s in g:
                        for key in ("skipped", "filtered", "target", "re", "cot", "nli_constraints", "re_constraints",
                                    "ner_constraints", "produced"):
                            for name, n in (s.get(key) or {}).items():
                                total[f"{key}:{name}"] += n
                    rows_in = sum(s["rows_in"] for s in g)
                    lines.append(f"- {row}: {rows_in} rows in, {dict(sorted(total.items()))}, "
                                 f"{sum(s['seconds'] for s in g):.0f} s")
            dropped = [r["consistency_dropped"] for r in trs if "consistency_dropped" in r
                       and r["k"] == max(x["k"] for x in trs)]
            if dropped:
                lines.append(f"- consistency filter (largest k): {sum(dropped)} counterfactuals dropped over seeds")
            lines.append("")
    (harness.results_dir() / f"{out}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
