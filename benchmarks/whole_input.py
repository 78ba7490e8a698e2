"""Do the counterfactuals flip the whole input? The editor as documented (a fixed number of edited sentences) against
the edit-until-flipped loop, each behind a flip checker, judged whole by an independent judge.

    python -m benchmarks.whole_input [--n 50] [--parts checkers rows] [--configs fixed-3 until-flipped ...]

Parts (each cached in ``benchmarks/.cache/whole_input/``, so a killed run resumes where it stopped):

* ``checkers``: each flip checker on CAD IMDb dev, at its own accept threshold: the share of the annotators' full
  counterfactuals it accepts with their new label, and the share it rejects of constructed partial flips
  (`cfaug_hf.training.partial_flips`, seed 0: some of the annotator's sentence changes made, given the label they
  were being flipped to) and of originals given the label they do not have.
* ``rows``: ``--n`` CAD IMDb dev reviews (seeded, half of each label) rewritten by the shipped sentiment editor
  through ``COREAugmenter(mode="editor_only")`` (the configurations ending "distilled editor": that editor
  fine-tuned on its own best outputs, `EDITORS`), once per configuration (`CONFIGS`). For each: the share of reviews
  with a kept counterfactual, the independent judge's whole-input flip rate over all reviews and over the kept
  ones, its ceiling (the judge on the annotators' counterfactuals of the same reviews), the share of words changed,
  and seconds per review. Each configuration's rows go to ``benchmarks/results/whole_input_rows_<config>.jsonl``
  for reading by hand.

The judge is ``benchmarks/results/judges/sentiment-cross-encoder`` (`scripts/build_judge.py`): all-MiniLM-L6-v2
fine-tuned end to end on CAD IMDb train, whole reviews; it did not pick any candidate. The checkers: ``sentence``
(``benchmarks/.cache/checker-sentiment-192``, the checker shipped before whole-input checking: CAD train, 192
tokens), ``whole`` (shipped from 2026-11-28 01:00 to 05:00: 512 tokens, partial flips as negatives; a copy in
``benchmarks/.cache/checker-whole-2026-11-28``) and ``whole + sentences`` (the checker shipped now: the same recipe
plus 9000 single sentences, `cfaug_hf.training.sentence_verdicts`, so that the loop's per-sentence ranking and
residual check read sentences; ``python -m scripts.build_checkers --task sentiment-analysis``), and ``whole +
sentences, sentence checker``: the same checker carrying a sentence checker (`LabelChecker.sentence_checker`) that
the loop asks about single sentences, ``benchmarks/.cache/sentence-checker-every``
(``python -m scripts.build_sentence_checker --variant every``). For a checker with a sentence checker, the
``checkers`` part also measures its residual check used as a filter (accept when the checker gives the target and
no sentence read alone gives the old label at the residual or more).

Writes benchmarks/results/whole_input.{json,md}.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

from benchmarks import harness
from benchmarks.harness import CACHE, RESULTS, ROOT

JUDGE = RESULTS / "judges" / "sentiment-cross-encoder"
SHIPPED = ROOT / "cfaug_hf" / "data" / "checkers" / "sentiment"
CHECKERS = {"sentence": CACHE / "checker-sentiment-192",
            "whole": CACHE / "checker-whole-2026-11-28",
            "whole + sentences": SHIPPED,
            "whole + sentences, sentence checker": SHIPPED}
#: checker name -> the sentence checker it reads single sentences with (`LabelChecker.sentence_checker`; built by
#: scripts/build_sentence_checker.py); a checker not named here reads them itself, even where its folder ships one
SENTENCE_CHECKERS = {"whole + sentences, sentence checker": CACHE / "sentence-checker-every"}
#: precision first: edit every unit that reads as the old label, edit again once a unit whose edit still does, keep a
#: review only when no unit reads as the old label at all (residual 0.5)
STRICT = {"until_flipped": True, "residual": 0.5, "retries": 1, "max_edits": 0, "ratings": False}
#: name -> (COREAugmenter settings, checker): the editor as documented, then the loop.
CONFIGS: dict[str, tuple[dict[str, Any], str]] = {
    "fixed-3 + sentence checker": ({"edit_sentences": 3}, "sentence"),
    "fixed-3 + whole checker": ({"edit_sentences": 3}, "whole"),
    "until-flipped, no residual check + whole checker": (
        {"until_flipped": True, "residual": 1.0, "ratings": False}, "whole"),
    "until-flipped + whole checker": ({"until_flipped": True, "ratings": False}, "whole"),
    "until-flipped + whole checker, occlusion": (
        {"until_flipped": True, "rank_units": "occlusion", "ratings": False}, "whole"),
    "fixed-3 + whole + sentences checker": ({"edit_sentences": 3}, "whole + sentences"),
    "until-flipped + whole + sentences checker": ({"until_flipped": True, "ratings": False}, "whole + sentences"),
    "until-flipped, residual 0.65, 10 edits + whole + sentences checker": (
        {"until_flipped": True, "residual": 0.65, "max_edits": 10, "ratings": False}, "whole + sentences"),
    "until-flipped + ratings + whole + sentences checker": (
        {"until_flipped": True, "ratings": True}, "whole + sentences"),
    "until-flipped + sentence checker": ({"until_flipped": True}, "whole + sentences, sentence checker"),
    "until-flipped, 3 a round, 12 edits + sentence checker": (
        {"until_flipped": True, "edits_per_round": 3, "max_edits": 12}, "whole + sentences, sentence checker"),
    "until-flipped, residual 0.65, 3 a round, 12 edits + sentence checker": (
        {"until_flipped": True, "edits_per_round": 3, "max_edits": 12, "residual": 0.65},
        "whole + sentences, sentence checker"),
    "until-flipped, strict + whole + sentences checker": (STRICT, "whole + sentences"),
    "until-flipped, strict, ratings + whole + sentences checker": ({**STRICT, "ratings": True}, "whole + sentences"),
    "until-flipped, strict + sentence checker": (STRICT, "whole + sentences, sentence checker"),
    "until-flipped, clauses + whole + sentences checker": (
        {"until_flipped": True, "ratings": False, "units": "clauses"}, "whole + sentences"),
    "until-flipped, strict, clauses + whole + sentences checker": ({**STRICT, "units": "clauses"}, "whole + sentences"),
    "fixed-3 + whole + sentences checker, distilled editor": ({"edit_sentences": 3}, "whole + sentences"),
    "until-flipped + whole + sentences checker, distilled editor": (
        {"until_flipped": True, "ratings": False}, "whole + sentences"),
}
#: config name -> the editor it uses in place of the shipped one: the shipped editor fine-tuned on its own best
#: outputs (``python -m scripts.distill_editor --task sentiment``)
EDITORS = {name: CACHE / "editors" / "sentiment-distilled" / "sentiment" for name in CONFIGS
           if name.endswith("distilled editor")}


def reviews(n: int) -> Any:
    """``n`` CAD IMDb dev reviews with their human counterfactuals, half of each label (seeded)."""
    from scripts.shared_data import cad_sentiment_edit_rows

    rows = cad_sentiment_edit_rows("dev")
    order = list(range(len(rows)))
    random.Random(0).shuffle(order)
    pos = [i for i in order if rows[i]["label"] == "positive"][:n // 2]
    neg = [i for i in order if rows[i]["label"] == "negative"][:n - n // 2]
    return rows.select(sorted(pos + neg))


def load_checker(name: str) -> Any:
    from cfaug_hf import LabelChecker

    folders = [CHECKERS[name]] + ([SENTENCE_CHECKERS[name]] if name in SENTENCE_CHECKERS else [])
    for folder in folders:
        if not (folder / "cfaug_checker.json").is_file():
            raise SystemExit(f"checker {name!r}: {folder} is missing (see the module docstring for how it is made)")
    checker = LabelChecker.from_pretrained(folders[0])
    checker.sentence_checker = LabelChecker.from_pretrained(folders[1]) if len(folders) > 1 else None
    return checker


def checker_part(name: str) -> dict[str, Any]:
    from scripts.build_checkers import wrong_labels
    from scripts.checker_data import accepted, held_out, texts

    checker = load_checker(name)
    sets = held_out("sentiment-analysis")
    out: dict[str, Any] = {"folder": str(CHECKERS[name].relative_to(ROOT)),
                           "accept_threshold": checker.config.accept_threshold,
                           "max_length": checker.config.max_length}
    flips = sets["human flips"][0]
    p = checker.predict_proba(*texts("sentiment-analysis", flips))
    out["accepts_human_flips"] = _pct(accepted(checker, p, [r["label"] for r in flips], "shipped"))
    for key, what in (("partial flips", "rejects_partial_flips"), ("originals", "rejects_originals")):
        rows, names = wrong_labels("sentiment-analysis", sets[key][0])
        p = checker.predict_proba(*texts("sentiment-analysis", rows))
        out[what] = round(100 - _pct(accepted(checker, p, names, "shipped")), 1)
        out[what.replace("rejects_", "") + "_rows"] = len(rows)
    out["human_flips_rows"] = len(flips)
    out.update(sentence_reading(checker.sentence_checker or checker))  # what the loop asks about one sentence
    return out


#: residual thresholds measured for a checker with a sentence checker: a text is accepted when the checker gives it
#: the target and no sentence, read alone by the sentence checker, gives the old label at least this probability
RESIDUALS = (0.8, 0.9, 0.95)


def residual_part(name: str) -> dict[str, Any]:
    """The checker's acceptance with the sentence checker's residual check added (the loop's stopping rule, used as
    a filter): human flips (to keep), constructed partial flips and originals given the other label (to reject)."""
    import numpy as np
    from scripts.build_checkers import wrong_labels
    from scripts.checker_data import accepted, held_out, texts

    from cfaug_hf.methods.until_flipped import input_units

    checker = load_checker(name)
    reader = checker.sentence_checker
    sets = held_out("sentiment-analysis")
    other = {"positive": "negative", "negative": "positive"}
    out: dict[str, Any] = {}
    for what, (rows, targets) in {"human flips": (sets["human flips"][0], [r["label"] for r in sets["human flips"][0]]),
                                  "partial flips": wrong_labels("sentiment-analysis", sets["partial flips"][0]),
                                  "originals": wrong_labels("sentiment-analysis", sets["originals"][0])}.items():
        whole = np.array(accepted(checker, checker.predict_proba(*texts("sentiment-analysis", rows)), targets,
                                  "shipped"))
        units = [input_units(r["text"]) for r in rows]
        probs = reader.predict_proba([u for us in units for u in us])
        worst, k = [], 0
        for us, target in zip(units, targets):
            worst.append(float(probs[k:k + len(us), reader.label_id(other[target])].max()) if us else 0.0)
            k += len(us)
        kept = {"checker alone": round(100 * whole.mean(), 1)}
        kept.update({f"residual {r}": round(100 * (whole & (np.array(worst) < r)).mean(), 1) for r in RESIDUALS})
        out[what] = {"rows": len(rows), "accepted": kept}
    return out


def sentence_reading(checker: Any) -> dict[str, Any]:
    """How the checker reads single sentences of CAD IMDb dev (what the loop's ranking and residual check ask it):
    the share of the sentences the annotators changed that it gives their side's label (old sentence: the review's
    label; new: the target), and the share of sentences both sides share (mostly plot and cast) that it leaves
    under the loop's residual (0.8) for both labels, so that the loop would not edit them (a three-way reader's
    ``none`` is no verdict)."""
    from scripts.shared_data import cad_sentiment_edit_rows

    from cfaug_hf.training import sentence_verdicts

    rows = sentence_verdicts(cad_sentiment_edit_rows("dev"), unchanged_per_pair=2, seed=0)
    changed = [i for i, k in enumerate(rows["kind"]) if k != "unchanged"]
    shared = sorted({rows["text"][i] for i, k in enumerate(rows["kind"]) if k == "unchanged"})
    p = checker.predict_proba([rows["text"][i] for i in changed])
    right = [p[j][checker.label_id(rows["label"][i])] > 0.5 for j, i in enumerate(changed)]
    q = checker.predict_proba(shared)
    verdicts = [checker.label_id(name) for name in ("negative", "positive")]  # a reader's "none" is no verdict
    calm = [max(row[i] for i in verdicts) < 0.8 for row in q]
    return {"reads_changed_sentences": _pct(right), "changed_sentences": len(changed),
            "leaves_shared_sentences": _pct(calm), "shared_sentences": len(shared)}


def _pct(flags: list[bool]) -> float:
    return round(100 * sum(flags) / max(1, len(flags)), 1)


def words_changed(old: str, new: str) -> float:
    """Share of the original's words replaced or deleted, plus words inserted, over the original's length."""
    from cfaug_hf.text.diff import word_diff

    a, b = old.split(), new.split()
    changed = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in word_diff(a, b))
    return changed / max(1, len(a))


def rows_part(name: str, rows: Any) -> dict[str, Any]:
    from datasets import Dataset

    from cfaug_hf import COREAugmenter

    from cfaug_hf import Editor

    settings, checker_name = CONFIGS[name]
    editor = Editor.from_pretrained(EDITORS[name]) if name in EDITORS else "default"
    aug = COREAugmenter(mode="editor_only", checker=load_checker(checker_name), editor=editor, **settings)
    data = Dataset.from_dict({"id": [f"dev-{i}" for i in range(len(rows))], "text": rows["text"],
                              "label": rows["label"]})
    start = time.perf_counter()
    out = aug.augment(data, batch_size=8)
    seconds = time.perf_counter() - start
    cfs = {r["cf_source_id"]: r for r in out if r["cf_is_counterfactual"]}
    ids = [r["cf_source_id"] for r in out if not r["cf_is_counterfactual"]]
    outputs = [cfs[i]["text"] if i in cfs else None for i in ids]
    edits = [json.loads(cfs[i]["cf_edit"]) if i in cfs else None for i in ids]
    return {"outputs": outputs, "edits": edits, "seconds": round(seconds, 1),
            "events": dict(aug.stats.events), "settings": settings, "checker": checker_name}


#: The judge's confident reading: its probability of the target at least this. Trained on whole reviews only, the
#: judge gives about half of the constructed partial flips of CAD dev the label they were being flipped to (top
#: label); at 0.9 it keeps 86.5% of CAD dev's human counterfactuals and rejects 65.6% of those partial flips.
CONFIDENT = 0.9


def judge_part(rows: Any, outputs: list[str | None], judge: Any) -> dict[str, Any]:
    kept = [(i, o) for i, o in enumerate(outputs) if o]
    probs = judge.predict_proba([o for _, o in kept]) if kept else []
    p_target = [float(p[judge.label_id(rows[i]["target"])]) for (i, _), p in zip(kept, probs)]
    top = [p > 0.5 for p in p_target]
    sure = [p >= CONFIDENT for p in p_target]
    return {"kept": len(kept), "judge_flip_rate_all": round(100 * sum(top) / len(rows), 1),
            "judge_certifies_kept": round(100 * sum(top) / max(1, len(kept)), 1),
            "judge_confident_all": round(100 * sum(sure) / len(rows), 1),
            "judge_confident_kept": round(100 * sum(sure) / max(1, len(kept)), 1),
            "judged": {str(i): round(p, 3) for (i, _), p in zip(kept, p_target)}}


def cached(name: str, make: Any) -> Any:
    path = harness.cache_dir() / "whole_input" / f"{name.replace(' ', '_').replace(',', '')}.json"
    if path.is_file():
        return json.loads(path.read_text())
    value = make()
    (harness.cache_dir() / "whole_input").mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(value))
    tmp.replace(path)
    return value


def main() -> None:
    ap = harness.parser(__doc__, smoke={
        "n": 2, "parts": ["rows"], "configs": ["fixed-3 + whole + sentences checker"], "checkers": ["whole + sentences"]})
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--parts", nargs="+", choices=["checkers", "rows"], default=["checkers", "rows"])
    ap.add_argument("--configs", nargs="+", choices=sorted(CONFIGS), default=list(CONFIGS), metavar="CONFIG")
    ap.add_argument("--checkers", nargs="+", choices=sorted(CHECKERS), default=list(CHECKERS))
    args = ap.parse_args()
    path = harness.results_dir() / "whole_input.json"
    results: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    results["provenance"] = harness.provenance()
    if "checkers" in args.parts:
        results.setdefault("checkers", {})
        for name in args.checkers:
            results["checkers"][name] = cached(f"checker-{name}-{_digest(name)}",
                                               lambda: checker_part(name))
            print(json.dumps({name: results["checkers"][name]}), flush=True)
            _write(results)
    if "checkers" in args.parts:
        results.setdefault("residual_filter", {})
        for name in [n for n in args.checkers if n in SENTENCE_CHECKERS]:
            results["residual_filter"][name] = cached(f"residual-{name}-{_digest(name)}", lambda: residual_part(name))
            print(json.dumps({name: results["residual_filter"][name]}), flush=True)
            _write(results)
    if "rows" in args.parts:
        from cfaug_hf import LabelChecker

        rows = reviews(args.n)
        made_by = {name: cached(f"rows-{name}-{args.n}-{_digest(CONFIGS[name][1])}{_editor_digest(name)}",
                                lambda: rows_part(name, rows)) for name in args.configs}
        if not (JUDGE / "cfaug_checker.json").is_file():
            raise SystemExit(f"The rows are made and cached; judging them needs the judge ({JUDGE}: "
                             f"python -m scripts.build_judge).")
        judge = LabelChecker.from_pretrained(JUDGE)
        ceiling = judge_part(rows, list(rows["counterfactual"]), judge)
        results["judge"] = {"folder": str(JUDGE.relative_to(ROOT)), "ceiling_same_reviews": ceiling[
            "judge_flip_rate_all"], "confident_ceiling_same_reviews": ceiling["judge_confident_all"],
            "confident_at": CONFIDENT, "ceiling_cad": judge.training_info.get("eval_ceiling"), "rows": len(rows)}
        results.setdefault("configs", {})
        for name in args.configs:
            made = made_by[name]
            judged = judge_part(rows, made["outputs"], judge)
            share = [words_changed(rows[i]["text"], o) for i, o in enumerate(made["outputs"]) if o]
            results["configs"][name] = {
                "reviews": len(rows), **{k: v for k, v in judged.items() if k != "judged"},
                "words_changed_share": round(100 * sum(share) / max(1, len(share)), 1),
                "seconds_per_review": round(made["seconds"] / len(rows), 2), "events": made["events"],
                "settings": made["settings"], "checker": made["checker"]}
            with (harness.results_dir() / f"whole_input_rows_{_slug(name)}.jsonl").open("w") as f:
                for i, (o, e) in enumerate(zip(made["outputs"], made["edits"])):
                    f.write(json.dumps({"row": i, "label": rows[i]["label"], "target": rows[i]["target"],
                                        "text": rows[i]["text"], "output": o,
                                        "judge_p_target": judged["judged"].get(str(i)),
                                        "edited": [(s["old"], s["new"]) for s in (e or {}).get("sentences", [])],
                                        "human": rows[i]["counterfactual"]}, ensure_ascii=False) + "\n")
            print(json.dumps({name: results["configs"][name]}), flush=True)
            _write(results)
    _write(results)


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name).strip("-").replace("--", "-")


def _editor_digest(name: str) -> str:
    """The weights of the editor config ``name`` uses in place of the shipped one ("" for the shipped editor, whose
    parts were cached before this existed)."""
    if name not in EDITORS:
        return ""
    from cfaug_hf import Editor

    if not (EDITORS[name] / "cfaug_editor.json").is_file():
        raise SystemExit(f"{name}: no editor in {EDITORS[name]}; python -m scripts.distill_editor --task sentiment")
    return "-" + Editor.from_pretrained(EDITORS[name]).weights_fingerprint()[:12]


def _digest(checker: str) -> str:
    """The checker's saved config (and its sentence checker's, where it has one): what names its cached parts.
    A shipped folder's own sentences/ is left out, as the benchmark drops it for checkers not in SENTENCE_CHECKERS."""
    from cfaug_hf.fingerprint import digest_json

    configs = []
    for folder in [CHECKERS[checker]] + ([SENTENCE_CHECKERS[checker]] if checker in SENTENCE_CHECKERS else []):
        path = folder / "cfaug_checker.json"
        if not path.is_file():
            return "missing"
        config = json.loads(path.read_text())
        config.pop("sentence_checker", None)
        configs.append(config)
    return digest_json(configs[0] if len(configs) == 1 else configs)[:8]


def _write(results: dict[str, Any]) -> None:
    lines = ["# Whole-input counterfactuals: fixed edits against edit-until-flipped", ""]
    if results.get("checkers"):
        lines += ["Flip checkers on CAD IMDb dev at their own accept threshold (%):", "",
                  harness.markdown_table(
                      ["checker", "max tokens", "threshold", "accepts human flips", "rejects partial flips",
                       "rejects originals", "changed sentences read right", "shared sentences left alone"],
                      [[n, c["max_length"], c["accept_threshold"],
                        f"{c['accepts_human_flips']} ({c['human_flips_rows']})",
                        f"{c['rejects_partial_flips']} ({c['partial_flips_rows']})",
                        f"{c['rejects_originals']} ({c['originals_rows']})",
                        f"{c['reads_changed_sentences']} ({c['changed_sentences']})" if "changed_sentences" in c
                        else "", f"{c['leaves_shared_sentences']} ({c['shared_sentences']})"
                        if "shared_sentences" in c else ""]
                       for n, c in results["checkers"].items()]), "",
                  "Single sentences (the loop's ranking and residual check ask about one sentence at a time): the "
                  "share of the sentences the annotators changed that the checker gives their side's label, and "
                  "the share of sentences both sides share that it scores under 0.8 for both labels.", ""]
    if results.get("residual_filter"):
        lines += ["The checker with its sentence checker's residual check as a filter (accepted when the checker gives "
                  "the target and no sentence read alone gives the old label at the residual or more), CAD IMDb dev, "
                  "%:", "",
                  harness.markdown_table(
                      ["checker", "rule", "accepts human flips", "rejects partial flips", "rejects originals"],
                      [[n, rule, r["human flips"]["accepted"][rule],
                        round(100 - r["partial flips"]["accepted"][rule], 1),
                        round(100 - r["originals"]["accepted"][rule], 1)]
                       for n, r in results["residual_filter"].items() for rule in r["human flips"]["accepted"]]), ""]
    if results.get("configs"):
        j = results["judge"]
        lines += [f"{j['rows']} CAD IMDb dev reviews (seeded, half of each label), the shipped sentiment editor "
                  "through "
                  f"COREAugmenter(mode='editor_only'); judged whole by {j['folder']} (ceiling: it gives "
                  f"{j['ceiling_same_reviews']}% of the annotators' counterfactuals of these reviews their new label "
                  f"as its top label, {j['confident_ceiling_same_reviews']}% with probability at least "
                  f"{j['confident_at']}). Flip rate over all reviews (no output counts as no flip) and over the kept "
                  "outputs, top label and confident; words changed over the original's length, kept outputs.", "",
                  harness.markdown_table(
                      ["configuration", "kept", "judge top: / all", "/ kept", f"judge >= {j['confident_at']}: / all",
                       "/ kept", "words changed %", "s / review"],
                      [[n, f"{c['kept']}/{c['reviews']}", c["judge_flip_rate_all"], c["judge_certifies_kept"],
                        c.get("judge_confident_all"), c.get("judge_confident_kept"), c["words_changed_share"],
                        c["seconds_per_review"]] for n, c in results["configs"].items()])]
    harness.write_results("whole_input", results, "\n".join(lines))


if __name__ == "__main__":
    main()
