"""How well the shipped flip checkers keep true counterfactuals and reject false ones.

For each checker in ``cfaug_hf/data/checkers/`` (built by ``scripts/build_checkers.py``):

* **kept human flips**: held-out human counterfactuals, each with its flipped label; the share the checker accepts
  (the label-flip filter's rule: the label is the checker's top prediction, or its probability is at least the
  threshold). Claims: VitaminC's held-out cases (REFUTES rows written as minimal edits of a supported claim)
  and every edited row of FEVER-Symmetric v0.2 dev (claim or evidence rewritten by people so the label flips); NLI: CAD-SNLI dev revised premises and hypotheses; sentiment: CAD IMDb dev counterfactuals.
* **rejected same-meaning rewrites**: ``tests/fixtures/same_meaning_rewrites.jsonl`` (hand-labelled synonyms,
  paraphrases, inflections and garbled edits, each with the flipped label an augmenter would have given it); the
  share the checker does not accept.
* accuracy on the held-out originals, for scale.

Targets (issue 26): keep at least 90% of human flips, reject at least 70% of same-meaning rewrites.

    python -m benchmarks.flip_checker [--thresholds none 0.5 0.7]   # CPU, 2 cores: about 5 minutes
    python -m benchmarks.flip_checker --task natural-language-inference \
        --checkers benchmarks/.cache/checkers-every-layer --tag every-layer   # a candidate, before it ships

``--checkers FOLDER`` scores the checkers built into FOLDER (``scripts/build_checkers.py --out FOLDER``, the same
layout as ``cfaug_hf/data/checkers/``) instead of the shipped ones; ``--tag TAG`` writes
``flip_checker_TAG.{json,md}``, so a candidate's figures sit beside the shipped checker's instead of replacing them.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchmarks import harness
from benchmarks.harness import RESULTS, ROOT
from cfaug_hf.data import CHECKER_DIR, CHECKER_TASKS
from scripts.checker_data import accepted, held_out, texts
from scripts.shared_data import cad_nli
FIXTURE = ROOT / "tests" / "fixtures" / "same_meaning_rewrites.jsonl"
#: A task whose human flips edit one of two sides: each side is also scored apart (the NLI checkers read revised
#: premises less well than revised hypotheses, and the premise editor's rows rest on them).
BY_SIDE = {"natural-language-inference": {"human flips: revised premises": "revised_premise",
                                          "human flips: revised hypotheses": "revised_hypothesis"}}


def share(flags: list[bool]) -> float:
    return round(100 * sum(flags) / max(len(flags), 1), 1)


def evaluate(task: str, thresholds: list[float | None], limit: int | None = None,
             checkers: Path = CHECKER_DIR) -> dict[str, Any]:
    from cfaug_hf import LabelChecker
    from cfaug_hf.fingerprint import digest_object

    folder = checkers / CHECKER_TASKS[task]
    checker = LabelChecker.from_pretrained(folder)
    shown = folder.resolve().relative_to(ROOT) if folder.resolve().is_relative_to(ROOT) else folder
    out: dict[str, Any] = {"checker": str(shown), "digest": digest_object(checker),
                           "training": checker.training_info, "sets": {}}
    start = time.time()
    for name, (rows, what) in held_out(task).items():
        rows = rows[:limit] if limit else rows
        first, second = texts(task, rows)
        probs = checker.predict_proba(first, second)
        labels = [r["label"] for r in rows]
        if name == "partial flips":  # to be rejected when given the label they were being flipped to
            from scripts.build_checkers import wrong_labels

            rows, labels = wrong_labels(task, rows)
            probs = checker.predict_proba(*texts(task, rows))
            out["sets"][name] = {"what": what, "rows": len(rows), "rejected": {
                str(t): round(100 - share(accepted(checker, probs, labels, t)), 1) for t in thresholds}}
            continue
        out["sets"][name] = {"what": what, "rows": len(rows),
                             "accepted": {str(t): share(accepted(checker, probs, labels, t)) for t in thresholds}}
    for name, split in BY_SIDE.get(task, {}).items():  # the same human flips, each side apart
        rows = [dict(r) for r in cad_nli(split, "dev")][:limit or None]
        probs = checker.predict_proba(*texts(task, rows))
        out["sets"][name] = {"what": f"CAD-SNLI dev {split.replace('_', ' ')}s", "rows": len(rows), "accepted": {
            str(t): share(accepted(checker, probs, [r["label"] for r in rows], t)) for t in thresholds}}
    fixture = [json.loads(ln) for ln in FIXTURE.read_text().splitlines() if ln.strip()]
    fixture = [r for r in fixture if r["task"] == task]
    if task == "natural-language-inference":
        first, second = [r["context"] for r in fixture], [r["rewrite"] for r in fixture]
    elif task == "fact-verification":
        first, second = [r["rewrite"] for r in fixture], [r["context"] for r in fixture]
    else:
        first, second = [r["rewrite"] for r in fixture], None
    probs = checker.predict_proba(first, second)
    rejected = {}
    for t in thresholds:
        keep = accepted(checker, probs, [r["intended_label"] for r in fixture], t)
        rejected[str(t)] = share([not k for k in keep])
        by_kind: dict[str, list[bool]] = {}
        for r, k in zip(fixture, keep):
            by_kind.setdefault(r["kind"], []).append(not k)
        rejected[f"{t} by kind"] = {kind: share(v) for kind, v in sorted(by_kind.items())}
    out["same-meaning rewrites"] = {"rows": len(fixture), "rejected": rejected}
    out["seconds"] = round(time.time() - start, 1)
    return out


def markdown(results: dict[str, Any]) -> str:
    thresholds = results["thresholds"]
    which = results.get("checkers_folder")
    lines = [f"# {'Flip checkers in ' + which if which else 'Shipped flip checkers'}: kept human flips, rejected "
             "same-meaning rewrites",
             "", f"{results['provenance']}. CPU. Rule: the label's probability is at least the threshold, or with "
             f"`none` the label is the checker's top prediction; `shipped` is each checker's own calibrated "
             f"threshold (what the augmenters use: the best keep + reject rate on held-out human flips and held-out "
             f"originals given a wrong label, scripts/build_checkers.py). "
             f"Targets: keep ≥ 90% of human flips, reject ≥ 70% of same-meaning rewrites.",
             ""]
    table = []
    for task, res in results["checkers"].items():
        for name, s in res["sets"].items():
            verb = "accuracy" if name == "originals" else "kept" if "accepted" in s else \
                "rejected given the label they were being flipped to"
            values = s.get("accepted") or s["rejected"]
            table.append([task, f"{name}: {verb} (%)", s["rows"], *(values[str(t)] for t in thresholds)])
        rej = res["same-meaning rewrites"]
        table.append([task, "same-meaning rewrites: rejected (%)", rej["rows"],
                      *(rej["rejected"][str(t)] for t in thresholds)])
    lines.append(harness.markdown_table(["checker", "set", "rows", *(f"threshold {t}" for t in thresholds)], table))
    lines += ["", f"Rejected same-meaning rewrites by kind (threshold {thresholds[0]}):", ""]
    for task, res in results["checkers"].items():
        kinds = res["same-meaning rewrites"]["rejected"][f"{thresholds[0]} by kind"]
        lines.append(f"- {task}: " + ", ".join(f"{k} {v}%" for k, v in kinds.items()))
    lines += ["", "Training of each checker (from its `cfaug_checker.json`):", ""]
    for task, res in results["checkers"].items():
        t = res["training"]
        lines.append(f"- {task}: {t.get('train_rows')} rows, {t.get('num_train_epochs')} epochs, lr "
                     f"{t.get('learning_rate')}, LoRA r {(t.get('lora') or {}).get('r')}, {t.get('train_seconds')} s; "
                     f"accept threshold {(t.get('eval_calibration') or t.get('calibration') or {}).get('accept_threshold')}; {t.get('data')}")
    return "\n".join(lines) + "\n"


def main() -> None:
    from benchmarks.debias.run import provenance

    parser = harness.parser(__doc__, smoke={"task": ["natural-language-inference"], "thresholds": ["shipped"],
                                                    "rows": 4})
    parser.add_argument("--task", choices=sorted(CHECKER_TASKS), action="append")
    parser.add_argument("--thresholds", nargs="+", default=["shipped", "none", "0.25", "0.5"],
                        help="'shipped' (the checker's calibrated accept_threshold, what the augmenters use), "
                             "'none' (top prediction) and/or probabilities")
    parser.add_argument("--rows", type=int, default=None, help="score the first N rows of each held-out set [all]")
    parser.add_argument("--checkers", type=Path, default=CHECKER_DIR,
                        help="a folder of checkers laid out as cfaug_hf/data/checkers/ (scripts/build_checkers.py "
                             "--out FOLDER) [the shipped ones]")
    parser.add_argument("--tag", default="", help="written as flip_checker_TAG.{json,md} (default: no suffix)")
    args = parser.parse_args()
    if not args.checkers.is_dir():
        parser.error(f"--checkers {args.checkers}: no such folder (build one with scripts/build_checkers.py --out)")
    name = f"flip_checker{'_' + args.tag if args.tag else ''}"
    thresholds = [None if t == "none" else t if t == "shipped" else float(t) for t in args.thresholds]
    prov = provenance()
    results: dict[str, Any] = {**prov, "thresholds": thresholds, "checkers": {}}
    if args.checkers.resolve() != CHECKER_DIR.resolve():
        results["checkers_folder"] = str(args.checkers)
    saved = RESULTS / f"{name}.json"
    if args.task and saved.is_file():  # one task measured again: the others' rows are kept
        before = json.loads(saved.read_text())
        if before.get("thresholds") == thresholds:
            results["checkers"] = before.get("checkers", {})
    for task in args.task or CHECKER_TASKS:
        if not (args.checkers / CHECKER_TASKS[task]).is_dir():
            print(f"{task}: no checker in {args.checkers} yet (scripts/build_checkers.py), skipped")
            continue
        results["checkers"][task] = evaluate(task, thresholds, args.rows, args.checkers)
        print(json.dumps(results["checkers"][task]["sets"], indent=1), flush=True)
    results["provenance"] = f"Made {prov['date']} at commit {str(prov['git_commit'])[:10]}"
    (harness.results_dir() / f"{name}.json").write_text(json.dumps(results, indent=2) + "\n")
    md = markdown(results)
    (harness.results_dir() / f"{name}.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
