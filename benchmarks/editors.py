"""Do the editors learned from human counterfactuals flip labels? The shipped editor against today's few-shot
prompted SmolLM2 (CORE's prompt, ``local_llm``) on the same held-out CAD dev edits.

    python -m benchmarks.editors [--tasks sentiment nli] [--n 100] [--candidates 1 2 4 8 16]

For each task, ``--n`` seeded held-out edits (sentiment: CAD IMDb dev sentences the annotators changed, with their
neighbours as context; NLI: CAD-SNLI dev hypotheses with a target label, premise as context) are rewritten by

* ``trained editor``: the shipped ``Editor`` (4 sampled candidates; the shipped flip checker picks one), and
* ``few-shot SmolLM2``: ``local_llm()`` with CORE's few-shot prompt for the same target (one answer, parsed as CORE
  parses it), the editor every automatic row before this one used.

Reported per editor: the share of edits with an output, the flip rate (the shipped checker's top label is the
target, over all edits), the word-level edit size against the original, and the perplexity of the outputs under
SmolLM2-135M; the human counterfactuals of the same rows give the reference figures. 50 outputs of the trained
editor go to ``benchmarks/results/editors_sample_<task>.jsonl`` for reading by hand. Load time: ``Editor.default``
against the bare base (``Generator.from_base``), each in a fresh process after the imports, median of 3.
``--candidates 1 2 4 8 16`` measures only the flip rate when the checker chooses among the first k sampled
candidates, for each k (one sampling run at the largest k; candidate j has its own seed, so every k is a prefix).
Each point is judged twice: by the picking checker, and by an **independent judge** that did not choose the
candidate (`FrozenJudge`: a head over frozen all-MiniLM-L6-v2 features, the frozen yardstick's model, trained on
CAD train: sentiment the changed sentences and their edits, NLI all_combined pairs; a different model and
training procedure from the LoRA checker; its accuracy on CAD test is recorded). The human counterfactuals of the same rows are judged too, as the judge's own ceiling; NLI
is also reported per target label.
``--editor FOLDER --label NAME`` measures a saved editor in place of the shipped one (e.g. the quarter-0 editor the
benchmarks use, ``benchmarks/results/crossfit_editors/nli-q0``), its curve recorded under NAME, and 50 of its outputs
chosen among 4 written to ``benchmarks/results/editors_sample_<task>_<NAME>.jsonl`` for reading by hand.
Writes benchmarks/results/editors_quality.{json,md}.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import harness
from benchmarks.harness import RESULTS

from scripts.shared_data import cad_nli_edit_rows, cad_sentiment_edit_rows

CHECKER_TASK = {"sentiment": "sentiment-analysis", "nli": "natural-language-inference"}


def held_out(task: str, n: int) -> Any:
    from cfaug_hf.training import edit_pairs

    if task == "sentiment":
        rows = edit_pairs(cad_sentiment_edit_rows("dev"), level="sentence", neighbours=1)
    else:
        rows = edit_pairs(cad_nli_edit_rows("dev").rename_column("premise", "context"), context_column="context")
    return rows.shuffle(seed=0).select(range(min(n, len(rows))))


def editor_for(task: str, folder: Path | None = None) -> Any:
    """The editor measured: the one saved in ``folder`` (``--editor``), else the one the package ships."""
    from cfaug_hf import Editor

    return Editor.from_pretrained(folder) if folder else Editor.default(task)


def trained_outputs(task: str, rows: Any, checker: Any, folder: Path | None = None) -> tuple[list[str | None], float]:
    from cfaug_hf.components.editor import rank_by_checker

    editor = editor_for(task, folder)
    start = time.perf_counter()
    outs = editor.edit(rows["text"], rows["target"], contexts=rows["context"], seeds=list(range(len(rows))))
    premises = rows["context"] if task == "nli" else None
    ranked = rank_by_checker(outs, rows["target"], checker, premises)
    return [r[0][0] if r else None for r in ranked], time.perf_counter() - start


def flips(task: str, rows: Any, outputs: list[str | None], checker: Any) -> float:
    """Share (%) of rows whose output the checker labels with the row's target (no output counts as no flip)."""
    done = [(i, o) for i, o in enumerate(outputs) if o]
    if not done:
        return 0.0
    texts = [o for _, o in done]
    labels = (checker.predict([rows[i]["context"] for i, _ in done], texts) if task == "nli"
              else checker.predict(texts))
    return round(100 * sum(lab == rows[i]["target"] for (i, _), lab in zip(done, labels)) / len(rows), 1)


def flip_by_candidates(task: str, rows: Any, checker: Any, ks: list[int], judge_head: str | None = None,
                       folder: Path | None = None, sample_to: Path | None = None,
                       sample_at: tuple[int, ...] = (4,), neutral_additions: int | None = None,
                       judge_test_rows: int | None = None) -> dict[str, Any]:
    """Flip rate when the checker chooses among the first k sampled candidates, for each k in ``ks``. Candidate j
    of a row is sampled from its own seed (the row's seed and j), so the first 4 of 16 are the shipped default's
    4 and one sampling run at max(ks) serves every k. ``sample_to``: where 50 of the outputs chosen among 4 go
    (for another k of ``sample_at``, the same file name ending in ``_k<k>``: the same 50 rows, for reading by hand
    what more candidates buy). ``judge_test_rows``: check the judge on only the first N CAD test rows (the smoke
    run's setting: encoding all 5,524 sentiment test sentences takes two minutes on 2 cores)."""
    from cfaug_hf.components.editor import candidates, rank_by_checker

    judge = FrozenJudge(task, judge_head or JUDGE_HEAD[task], judge_test_rows)  # before sampling, so a judge that cannot be built fails in seconds
    editor = editor_for(task, folder)
    own = editor.config.neutral_additions
    additions = 0 if task != "nli" else own if neutral_additions is None else neutral_additions
    # Sampled candidates without the neutral additions, so that every k is a prefix of one run; the additions
    # (`Editor.neutral_candidates`) join every k's candidates, as `Editor.edit` adds them to its own.
    editor.configure(num_return_sequences=max(ks), neutral_additions=0)
    # The candidates are cached, so judging them again (another judge) needs no new sampling.
    cache = harness.cache_dir() / f"editor-candidates-{task}-{len(rows)}-{max(ks)}-{editor.fingerprint()[:12]}.json"
    if cache.is_file():
        saved = json.loads(cache.read_text())
        raw, seconds = saved["candidates"], saved["seconds"]
    else:
        start = time.perf_counter()
        raw = editor.edit_with_info(rows["text"], rows["target"], contexts=rows["context"],
                                    seeds=list(range(len(rows)))).texts
        seconds = time.perf_counter() - start
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"candidates": raw, "seconds": seconds}))
    premises = rows["context"] if task == "nli" else None
    extra = [[] for _ in raw]
    if additions:
        start = time.perf_counter()
        extra = editor.configure(neutral_additions=additions).neutral_candidates(
            rows["text"], rows["target"], premises, seeds=list(range(len(rows))))
        seconds += time.perf_counter() - start
    out: dict[str, Any] = {"sampling_seconds": round(seconds, 1), "flip_rate": {},
                           "editor": {"fingerprint": editor.fingerprint()[:12],
                                      "weights": editor.weights_fingerprint()[:12],
                                      "data": editor.training_info.get("data"),
                                      "train_rows": editor.training_info.get("train_rows"),
                                      "neutral_additions": additions}}
    out["judge"] = judge.description
    out["judge_flip_rate"] = {"human": judged(task, rows, rows["counterfactual"], judge)}
    for k in ks:
        options = [candidates(t, r[:k] + more) for t, r, more in zip(rows["text"], raw, extra)]
        ranked = rank_by_checker(options, rows["target"], checker, premises)
        chosen = [r[0][0] if r else None for r in ranked]
        out["flip_rate"][str(k)] = flips(task, rows, chosen, checker)
        out["judge_flip_rate"][str(k)] = judged(task, rows, chosen, judge)
        if additions:
            out.setdefault("neutral_additions_chosen", {})[str(k)] = additions_chosen(rows["target"], chosen, extra)
        print(json.dumps({task: {"k": k, "checker": out["flip_rate"][str(k)],
                                 "judge": out["judge_flip_rate"][str(k)]}}), flush=True)
        if k in sample_at and sample_to:
            write_sample(sample_to if k == 4 else sample_to.with_name(f"{sample_to.stem}_k{k}.jsonl"), rows, chosen)
    return out


def additions_chosen(targets: list[str], chosen: list[str | None], extra: list[list[str]]) -> dict[str, Any]:
    """Of the neutral edits, the share (%) whose chosen candidate is an addition, and how often each added detail
    was chosen: one detail chosen for most rows would teach a model that word as the mark of "neutral"."""
    from collections import Counter

    from cfaug_hf.text.additions import ADJECTIVES, CIRCUMSTANCES

    neutral = [i for i, t in enumerate(targets) if t == "neutral"]
    picked = [chosen[i] for i in neutral if chosen[i] and chosen[i] in extra[i]]
    details = Counter(next((d for d in (*CIRCUMSTANCES, *ADJECTIVES) if re.search(rf"\b{d}\b", text.lower())), "?")
                      for text in picked)
    return {"neutral_rows": len(neutral), "from_additions": round(100 * len(picked) / max(1, len(neutral)), 1),
            "details": dict(details.most_common())}


def write_sample(path: Path, rows: Any, chosen: list[str | None]) -> None:
    """50 seeded rows with the editor's chosen output beside the human one, for reading by hand."""
    with path.open("w") as f:
        for i in random.Random(0).sample(range(len(rows)), min(50, len(rows))):
            f.write(json.dumps({"text": rows[i]["text"], "target": rows[i]["target"], "context": rows[i]["context"],
                                "editor": chosen[i], "human": rows[i]["counterfactual"]}, ensure_ascii=False) + "\n")


FLIP = {"negative": "positive", "positive": "negative"}
#: The judge's head per task: the one more accurate on CAD test (2026-11-26: sentiment lr 75.9% against mlp 73.7%;
#: NLI mlp 51.4% against lr 48.4%), chosen on rows the curve is not measured on.
JUDGE_HEAD = {"sentiment": "lr", "nli": "mlp"}
#: The judges' fitted heads (`FrozenJudge`), committed so that every session judges with the same one.
JUDGES = RESULTS / "judges"


def judge_rows(task: str, split: str) -> Any:
    """What the judge learns from (train) or is checked on (test): NLI, CAD-SNLI all_combined pairs; sentiment, the
    sentences CAD's annotators changed, each original sentence with the review's label and its edit with the
    flipped one (the editor's outputs are sentences, so the judge reads sentences too)."""
    from datasets import Dataset
    from scripts.shared_data import cad_nli

    from cfaug_hf.training import edit_pairs

    if task == "nli":
        return cad_nli("all_combined", split)
    pairs = edit_pairs(cad_sentiment_edit_rows(split), level="sentence", neighbours=0)
    return Dataset.from_dict({"text": list(pairs["text"]) + list(pairs["counterfactual"]),
                              "label": [FLIP[t] for t in pairs["target"]] + list(pairs["target"])})


class FrozenJudge:
    """The independent judge: a head over frozen MiniLM features (the frozen yardstick's model) trained on CAD
    train (`judge_rows`), so it neither picked the candidates nor shares the checker's weights or training
    procedure. ``validity``: its accuracy on CAD test (`judge_rows(task, "test")`), rows no editor, checker or
    judge was trained on, and not the dev rows the curve is measured on.

    The fitted head is kept in ``benchmarks/results/judges/<task>-<head>.safetensors`` (`SavedHead`) with a digest
    of the rows it learned from, so every later measurement, in any session, is judged by the same head; it is
    fitted again only when those rows change (or the file is deleted)."""

    def __init__(self, task: str, head: str = "lr", test_rows: int | None = None) -> None:
        import numpy as np
        from benchmarks.frozen_yardstick import EncodingStore, SavedHead, features, train_head

        from cfaug_hf import TaskSchema
        from cfaug_hf.fingerprint import digest_json

        self.task, self.head, self.features = task, head, features
        self.store = EncodingStore(max_length=256)
        self.schema = TaskSchema.sentiment() if task == "sentiment" else TaskSchema.nli()
        train = judge_rows(task, "train")
        rows_digest = digest_json(train.to_dict())[:16]
        path = JUDGES / f"{task}-{head}.safetensors"
        saved = SavedHead.load(path) if path.is_file() else None
        if saved is None or saved.metadata.get("train_rows_digest") != rows_digest:
            y = np.array([self.schema.label_id(v) for v in train[self.schema.label_column]])
            saved = SavedHead.from_pipeline(train_head(features(self.store, train, self.schema), y, 0, head),
                                            {"task": task, "head": head, "train_rows_digest": rows_digest,
                                             "fitted": time.strftime("%Y-%m-%d")})
            saved.save(path)
        self.model, self.fitted = saved, saved.metadata.get("fitted")
        test = judge_rows(task, "test")
        test = test.select(range(min(test_rows, len(test)))) if test_rows else test
        gold = np.array([self.schema.label_id(v) for v in test[self.schema.label_column]])
        self.validity = round(100 * float((self.model.predict(features(self.store, test, self.schema)) == gold).mean()),
                              1)
        self.description = (f"frozen all-MiniLM-L6-v2 + {head} head trained on CAD train "
                            f"({'changed sentences and their edits' if task == 'sentiment' else 'all_combined pairs'}; "
                            f"{len(train)} rows; fitted {self.fitted}); accuracy on CAD test {self.validity}%"
                            + (f" (its first {len(test)} rows)" if test_rows else ""))

    def predict(self, texts: list[str], contexts: list[str] | None = None) -> list[str]:
        from datasets import Dataset

        cols = ({"premise": contexts, "hypothesis": texts} if self.task == "nli" else {"text": texts})
        ids = self.model.predict(self.features(self.store, Dataset.from_dict(cols), self.schema))
        return [self.schema.label_names[int(i)] for i in ids]


def judged(task: str, rows: Any, outputs: list[str | None], judge: Any) -> dict[str, Any]:
    """Flip rate (%) of ``outputs`` by ``judge`` over all rows, and for NLI per target label."""
    done = [(i, o) for i, o in enumerate(outputs) if o]
    labels = (judge.predict([o for _, o in done], [rows[i]["context"] for i, _ in done] if task == "nli" else None)
              if done else [])
    hit = {i for (i, _), lab in zip(done, labels) if lab == rows[i]["target"]}
    out: dict[str, Any] = {"all": round(100 * len(hit) / len(rows), 1)}
    if task == "nli":
        for target in sorted(set(rows["target"])):
            idx = [i for i, t in enumerate(rows["target"]) if t == target]
            out[target] = round(100 * sum(i in hit for i in idx) / len(idx), 1)
    return out


def few_shot_outputs(task: str, rows: Any) -> tuple[list[str | None], float]:
    from cfaug_hf import local_llm
    from cfaug_hf.methods.core import build_prompt, parse_answer

    llm = local_llm(max_new_tokens=64 if task == "sentiment" else 40, batch_size=16)
    prompts = []
    for r in rows:
        row = ({"premise": r["context"], "hypothesis": r["text"], "label": "?"} if task == "nli"
               else {"text": r["text"], "label": "?"})
        prompts.append(build_prompt(task, row, r["target"], None))
    start = time.perf_counter()
    answers = llm.generate(prompts, seeds=list(range(len(rows))))
    out = []
    for r, answer in zip(rows, answers):
        text, _ = parse_answer(answer[0], r["text"], task)
        out.append(text)
    return out, time.perf_counter() - start


def score(task: str, rows: Any, outputs: list[str | None], checker: Any) -> dict[str, Any]:
    from cfaug_hf.metrics.intrinsic import edit_distance, perplexity

    done = [(i, o) for i, o in enumerate(outputs) if o]
    texts = [o for _, o in done]
    if task == "nli":
        labels = checker.predict([rows[i]["context"] for i, _ in done], texts) if done else []
    else:
        labels = checker.predict(texts) if done else []
    flipped = sum(lab == rows[i]["target"] for (i, _), lab in zip(done, labels))
    dist = edit_distance(texts, [rows[i]["text"] for i, _ in done]) if done else {}
    ppl = perplexity(texts) if done else {}
    return {"edits": len(rows), "with_output": len(done), "flip_rate": round(100 * flipped / len(rows), 1),
            "edit_distance": round(dist["edit_distance"], 3) if dist else None,
            "perplexity": round(float(ppl["median"]), 1) if ppl else None}


def load_seconds(what: str, task: str = "sentiment") -> float:
    """Seconds to load ``what`` ("editor": the shipped editor; "base": SmolLM2 alone) in a fresh process."""
    import subprocess

    code = ("import json, time\nfrom cfaug_hf import Editor, Generator\nt = time.perf_counter()\n"
            + (f"Editor.default({task!r})" if what == "editor" else
               "Generator.from_base('HuggingFaceTB/SmolLM2-135M-Instruct')")
            + "\nprint(json.dumps(time.perf_counter() - t))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(proc.stdout.strip().splitlines()[-1])


def curve_tables(results: dict[str, Any]) -> list[str]:
    """The flip-rate-by-candidates tables, a row per (task, editor): the picking checker's, then the judge's."""
    curves = {(task, label): c for task, r in results.items() for label, c in r.get("curves", {}).items()}
    if not curves:
        return []
    ks = sorted({int(k) for c in curves.values() for k in c["flip_rate"]})
    lines = ["", "Flip rate (%) when the checker chooses among the first k sampled candidates (the shipped default is "
             "4; candidate j of a row has its own seed, so each k is a prefix of the same samples):", "",
             *harness.table_lines(["task", "editor", "rows", *(f"k={k}" for k in ks), "sampling seconds (max k)"],
                                    [[task, label, c["rows"], *(c["flip_rate"].get(str(k), "") for k in ks),
                                      c["sampling_seconds"]] for (task, label), c in curves.items()])]
    judged = {key: c for key, c in curves.items() if "judge_flip_rate" in c}
    if not judged:
        return lines
    judges = {task: c["judge"] for (task, _), c in judged.items()}
    lines += ["", "The same candidates judged independently (" + "; ".join(f"{t}: {j}" for t, j in judges.items())
              + "; it did not choose them); `human`: the human counterfactuals of the same rows by that judge, its "
              "own ceiling. NLI per target label in brackets.", "",
              ]

    def cell(v: Any) -> str:
        if not v:
            return ""
        rest = ", ".join(f"{lab} {x}" for lab, x in v.items() if lab != "all")
        return f"{v['all']}" + (f" ({rest})" if rest else "")

    lines += harness.table_lines(["task", "editor", "human", *(f"k={k}" for k in ks)],
                                 [[task, label, cell(c["judge_flip_rate"]["human"]),
                                   *(cell(c["judge_flip_rate"].get(str(k))) for k in ks)]
                                  for (task, label), c in judged.items()])
    return lines


def main() -> None:
    from cfaug_hf.components.checker import default_checker

    ap = harness.parser(__doc__, smoke={"tasks": ["sentiment"], "n": 2, "candidates": [1], "sample_at": [1], "label": "smoke",
                                        "judge_test_rows": 16})
    ap.add_argument("--tasks", nargs="+", default=["sentiment", "nli"])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--candidates", type=int, nargs="+", default=None,
                    help="only measure the flip rate when the checker chooses among the first k sampled candidates, "
                         "for each k given (e.g. 1 2 4 8 16), and add it to the results")
    ap.add_argument("--judge-head", choices=["lr", "mlp"], default=None,
                    help="the independent judge's head over frozen MiniLM features (see FrozenJudge); default: the "
                         "head with the better CAD test accuracy for the task (JUDGE_HEAD)")
    ap.add_argument("--judge-test-rows", type=int, default=None, metavar="N",
                    help="with --candidates: check the independent judge on the first N CAD test rows only (default: "
                         "all; the judge's accuracy then describes those N)")
    ap.add_argument("--editor", type=Path, default=None,
                    help="measure the editor saved in this folder instead of the shipped one (e.g. "
                         "benchmarks/results/crossfit_editors/nli-q0); one task at a time")
    ap.add_argument("--sample-at", type=int, nargs="+", default=None, metavar="K",
                    help="with --candidates: write the 50-row sample for reading by hand of the outputs chosen among "
                         "the first K candidates, for each K (default 4; another K's file name ends in _k<K>)")
    ap.add_argument("--neutral-additions", type=int, default=None, metavar="N",
                    help="NLI with --candidates: the editor's neutral_additions (default: its own setting; 0 measures "
                         "its own candidates only)")
    ap.add_argument("--label", default="shipped",
                    help="the name the --candidates curve is recorded under (default: shipped)")
    args = ap.parse_args()
    if args.editor and len(args.tasks) != 1:
        ap.error("--editor: name the one task it edits with --tasks")
    if args.sample_at and not set(args.sample_at) <= set(args.candidates or []):
        ap.error(f"--sample-at {' '.join(map(str, args.sample_at))}: each K must be one of --candidates "
                 f"(given: {' '.join(map(str, args.candidates or [])) or 'none'})")
    path = harness.results_dir() / "editors_quality.json"
    results = json.loads(path.read_text()) if path.is_file() else {}
    for task in args.tasks:
        checker = default_checker(CHECKER_TASK[task])
        rows = held_out(task, args.n)
        if args.candidates:
            curve = {"rows": len(rows), "where": "CPU, 2 cores",
                     **flip_by_candidates(task, rows, checker, sorted(args.candidates), args.judge_head, args.editor,
                                         harness.results_dir() / f"editors_sample_{task}_{args.label.replace(' ', '-')}.jsonl",
                                         tuple(args.sample_at or [4]), args.neutral_additions, args.judge_test_rows)}
            results.setdefault(task, {}).setdefault("curves", {})[args.label] = curve
            print(json.dumps({task: {args.label: curve}}), flush=True)
            path.write_text(json.dumps(results, indent=1) + "\n")
            continue
        trained, t_seconds = trained_outputs(task, rows, checker, args.editor)
        few, f_seconds = few_shot_outputs(task, rows)
        results[task] = {
            **{k: v for k, v in results.get(task, {}).items() if k == "curves"},
            "rows": len(rows), "where": "CPU, 2 cores",
            "trained editor": {**score(task, rows, trained, checker), "seconds": round(t_seconds, 1)},
            "few-shot SmolLM2": {**score(task, rows, few, checker), "seconds": round(f_seconds, 1)},
            "human": score(task, rows, rows["counterfactual"], checker)}
        write_sample(harness.results_dir() / f"editors_sample_{task}.jsonl", rows, trained)
        runs = {w: sorted(load_seconds(w, task) for _ in range(3)) for w in ("editor", "base")}
        results[task]["load_seconds"] = {w: round(v[1], 2) for w, v in runs.items()}
        print(json.dumps({task: results[task]}, indent=1), flush=True)
        path.write_text(json.dumps(results, indent=1) + "\n")
    lines = ["# Editors learned from human counterfactuals vs few-shot prompting", "",
             "Held-out CAD dev edits (seeded sample); flip rate: the shipped flip checker's top label is the target, "
             "over all edits; edit distance: word-level Levenshtein distance to the original over the longer length "
             "(0 = same); perplexity: median "
             "under SmolLM2-135M. CPU, 2 cores.", "",
             harness.markdown_table(
                 ["task", "editor", "edits", "with output", "flip rate %", "edit distance", "perplexity", "seconds"],
                 [[task, who, e["edits"], e["with_output"], e["flip_rate"], e["edit_distance"], e["perplexity"],
                   e.get("seconds", "")] for task, r in results.items()
                  for who, e in ((who, r[who]) for who in ("trained editor", "few-shot SmolLM2", "human") if who in r)])]
    lines += ["", "Load time in a fresh process (median of 3, seconds): " + "; ".join(
        f"{task} editor {r['load_seconds']['editor']} (base alone {r['load_seconds']['base']})"
        for task, r in results.items() if "load_seconds" in r) + "."]
    lines += curve_tables(results)
    (harness.results_dir() / "editors_quality.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
