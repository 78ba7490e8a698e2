"""Gather every ``benchmarks/results/debias_*.json`` into one leaderboard, ``benchmarks/results/LEADERBOARD.md``.

    python -m benchmarks.leaderboard [--results benchmarks/results]

One table per task and model: a row per training set (none, EDA, re-weighting, human CAD where it exists, each
method and variant), a column per test (in-domain first, then the contrast and out-of-distribution sets), each cell
the mean ± standard deviation over seeds with the gain over ``none`` in points. Where human counterfactuals exist
(IMDb, SNLI) the last column is the share of the human-CAD gain a row recovers on the contrast tests (mean over
them). Methods add their rows by running ``benchmarks/debias/`` with their row names. The few-shot runs of
``benchmarks/llm_fewshot.py`` (LLM-prompted counterfactuals, CFGen), when present, get one table per task and k.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from benchmarks import harness
from benchmarks.debias.rows import registered_rows, row_title  # noqa: F401  (also read from here)
from benchmarks.debias.validity import VALIDITY, measurable, summary_of, validity, validity_note  # noqa: F401
from benchmarks.harness import RESULTS
TASK_NAMES = {"sentiment": "Sentiment (CAD IMDb)", "nli": "NLI (CAD SNLI)", "fv": "Fact verification (FEVEROUS)",
              "fever": "Fact verification (FEVER, paper setup)",
              "fv-ood": "Fact verification out of domain (train FEVEROUS; RACE's Table 2 shape)"}


#: Rows kept in the raw JSON but left out of the tables, with why: made with components the release no longer ships.
SUPERSEDED = {("fv", "crossaug"): "made with a negative-claim generator and filters the release no longer ships",
              ("fv", "crossaug+balance"): "made with a negative-claim generator and filters the release no longer "
                                          "ships"}


def _minutes(rows: dict[str, Any]) -> float | None:
    seconds = [row.get("seconds") for row in rows.values()]
    if not seconds or any(x is None for x in seconds):
        return None
    seeds = [len(next(iter(row["accuracy"].values()))) for row in rows.values()]
    return round(sum(sec * n for sec, n in zip(seconds, seeds)) / 60, 1)


def _mean(values: list[float]) -> float:
    return statistics.mean(values) * 100


def _cell(values: list[float], base: list[float] | None) -> str:
    spread = statistics.stdev(values) * 100 if len(values) > 1 else 0.0
    text = f"{_mean(values):.1f} ± {spread:.1f}"
    if base is not None:
        gain = f"{_mean(values) - _mean(base):+.1f}"
        text += f" (**{gain}**)" if measurable(values, base) else f" ({gain})"
    return text


def _recovered(acc: dict[str, list[float]], base: dict[str, list[float]], ceiling: dict[str, list[float]],
               tests: list[str], draws: int = 2000) -> str:
    """The share of ``ceiling``'s gain over ``base`` that ``acc``'s gain recovers, averaged over the contrast
    ``tests`` where both gains exceed 2 sd, with a 95% interval from resampling each row's seeds (bootstrap);
    "—" where either gain is within 2 sd on every test (a ratio of noise is not a figure)."""
    import random

    kept = [t for t in tests if measurable(acc[t], base[t]) and measurable(ceiling[t], base[t])]
    if not kept:
        return "—"

    def share(a: dict[str, list[float]], b: dict[str, list[float]], c: dict[str, list[float]]) -> float | None:
        values = [(_mean(a[t]) - _mean(b[t])) / (_mean(c[t]) - _mean(b[t])) for t in kept
                  if abs(_mean(c[t]) - _mean(b[t])) > 1e-9]
        return statistics.mean(values) if values else None

    rng = random.Random(0)
    pick = lambda rows: {t: [rng.choice(rows[t]) for _ in rows[t]] for t in kept}  # noqa: E731
    boot = sorted(x for x in (share(pick(acc), pick(base), pick(ceiling)) for _ in range(draws)) if x is not None)
    point = share(acc, base, ceiling)
    if point is None or not boot:
        return "—"
    low, high = boot[int(0.025 * len(boot))], boot[int(0.975 * len(boot)) - 1]
    return f"{100 * point:.0f}% ({100 * low:.0f} to {100 * high:.0f})"


#: A results subfolder is gathered into the leaderboard when it holds this file: ``{"title": what its tables' titles
#: add, "order": its place among the folders}``; a new folder of tables needs no edit here.
FOLDER_FILE = "leaderboard.json"


def subfolders(results_dir: Path) -> dict[str, str]:
    """The subfolders of ``results_dir`` that declare themselves (`FOLDER_FILE`), in their order, with their titles."""
    found = []
    for path in results_dir.glob(f"*/{FOLDER_FILE}"):
        try:
            declared = json.loads(path.read_text())
            found.append((declared.get("order", 0), path.parent.name, str(declared["title"])))
        except (ValueError, KeyError, TypeError) as e:
            raise SystemExit(f"{path}: expected {{\"title\": TEXT, \"order\": N}} ({e})") from e
    return {name: title for _, name, title in sorted(found)}


def table(result: dict[str, Any]) -> list[str]:
    """The Markdown lines of one results file."""
    tests = list(result["tests"])
    rows = result["rows"]
    base = rows.get("none", {}).get("accuracy")
    human = rows.get("human", {}).get("accuracy")
    same = {name: rows[r.same_rows]["accuracy"] for name, r in registered_rows().items()
            if r.same_rows and name in rows and r.same_rows in rows}
    contrast = tests[1:]  # the first test is in-domain
    model = {"bow": "bag of words"}.get(result["model"], result["model"])
    if result["model"] == "frozen":
        model = f"frozen MiniLM, {(result.get('settings') or {}).get('head', 'lr')} head"
    title = TASK_NAMES.get(result["config"], result["config"])
    where = result.get("device") or ("CPU" if result["model"] in ("bow", "frozen") else "")
    seeds = len(result["seeds"])
    check = result.get("validity") or validity(result["config"], result)
    verdict = "" if check is None else (" (validity checks passed)" if check["passed"] else
                                        " (validity checks FAILED: cannot show a debiasing effect)")
    made = (f"Made {result['date']} at commit `{str(result.get('git_commit'))[:10]}`"
            + (" with uncommitted changes." if result.get("uncommitted_changes") else ".")
            if result.get("git_commit") else "Made before results recorded their commit and components.")
    dropped = {name: why for (config, name), why in SUPERSEDED.items() if config == result["config"]
               and name in result["rows"]}
    rows = {name: row for name, row in rows.items() if name not in dropped}
    folder = f" ({result['_title']})" if result.get("_title") else ""
    lines = [f"### {title}: {model}{folder}{verdict}", "", made, "",
             f"Accuracy %, mean ± sd over {seeds} seeds{f' ({where})' if where else ''}; in brackets the gain over "
             f"`none` in points, in bold where it exceeds 2 sd of the difference (each row's sd over seeds, "
             f"combined as for independent runs); a gain not in bold is no measurable effect. A share of a "
             f"gain recovered is given only where both gains exceed 2 sd (else —), with a 95% interval from "
             f"resampling the seeds."
             + (f" {result['note']}" if result.get("note") else "")
             + (f" Augmentation rows (CORE, CrossAug, RACE) edit a seeded sample of {result['augment_limit']} training rows."
                if result.get("augment_limit") else "")
             + (f" Training and scoring the heads took {_minutes(rows)} minutes in all, on 2 CPU cores with the "
                f"encodings cached (the first encoding and any generation are not counted)."
                if result["model"] == "frozen" and _minutes(rows) is not None else ""), ""]
    table = []
    for name, row in rows.items():
        acc = row["accuracy"]
        cells = [row_title(name), row["train_rows"],
                 *(_cell(acc[t], None if name == "none" or base is None else base[t]) for t in tests)]
        if human:
            cells.append(None if name in ("none", "human") or base is None else _recovered(acc, base, human, contrast))
        if same:
            cells.append(_recovered(acc, base, same[name], contrast) if name in same and base else None)
        table.append(cells)
    lines += harness.table_lines(["training data", "rows", *tests, *(["human-CAD gain recovered"] if human
                                                                      else []), *(["same rows"] if same else [])],
                                 table)
    for name, why in dropped.items():
        lines += ["", f"Row `{name}` left out: {why} (raw figures in the JSON)."]
    if check is not None:
        lines += ["", f"Validity: {summary_of(check)}"
                      + (": passed." if check["passed"] else ": failed")
                      + (f" ({check['why']})." if check.get("why") else ("" if check["passed"] else "."))]
    if not dropped:
        for probe, p in result.get("probes", {}).items():
            lines += ["", f"{probe}: {_cell(p['none_model'], None)} % of {p['rows']} generated rows, by the `none` "
                          f"model."]
    for name, row in rows.items():
        notes = row.get("augmentation") or {}
        if "rows_edited" in notes:
            skipped = ", ".join(f"{k} {v}" for k, v in notes.get("skipped", {}).items())
            filtered = ", ".join(f"{k} {v}" for k, v in notes.get("filtered", {}).items())
            if not skipped:  # never "none" for rows whose fate was not recorded
                missing = notes["rows_edited"] - notes["counterfactuals"]
                skipped = (f"not recorded ({missing} of {notes['rows_edited']} rows gave no counterfactual)"
                           if missing > 0 and not filtered else "none recorded")
            lines += ["", f"{row_title(name)}: {notes['counterfactuals']} counterfactuals from "
                          f"{notes['rows_edited']} rows; skipped: {skipped}"
                          + (f"; rejected by filters: {filtered}." if filtered else ".")]
        if "blocked_words" in notes:
            words = ", ".join(f"`{w}` {n}" for w, n in notes["blocked_words"].items()) or "none"
            lines += ["", f"{row_title(name)}: {notes['counterfactuals_dropped']} of {notes['of']} "
                          f"counterfactuals dropped; words that caused drops: {words}."]
    return lines + [""]


FEWSHOT_ROWS = {"none": "none (k-shot rows)", "cfgen": "+ CFGen entity replacement",
                 "llm": "+ LLM counterfactuals (constraint filter)", "llm+filter": "+ LLM, consistency-filtered",
                 "llm-cot": "+ LLM, chain of thought"}
FEWSHOT_TASKS = {"sentiment": "Sentiment (CAD IMDb)", "nli": "NLI (CAD SNLI)", "ner": "NER (CoNLL-2003)",
                 "re": "Relation extraction (SemEval-2010 Task 8)"}


def fewshot_tables(result: dict[str, Any]) -> list[str]:
    """Few-shot tables of ``llm_fewshot.json``: a row per training set, a column per test, for each task and k."""
    runs = result.get("runs", [])
    lines: list[str] = []
    for task in dict.fromkeys(r["task"] for r in runs):
        for k in sorted({r["k"] for r in runs if r["task"] == task}):
            rs = [r for r in runs if r["task"] == task and r["k"] == k]
            tests = list(rs[0]["scores"])
            by_row: dict[str, dict[str, list[float]]] = {}
            for r in rs:
                for t in tests:
                    by_row.setdefault(r["row"], {}).setdefault(t, []).append(r["scores"][t] / 100)
            base = by_row.get("none")
            lines += [f"## {FEWSHOT_TASKS.get(task, task)}, {k}-shot, {result.get('llm', 'LLM')}", "",
                      *harness.table_lines(
                          ["training set", "seeds", *tests],
                          [[FEWSHOT_ROWS.get(row, row), len(acc[tests[0]]),
                            *(_cell(acc[t], base[t] if base and row != "none" else None) for t in tests)]
                           for row, acc in by_row.items()])]
            lines.append("")
    return lines


#: Plyler and Chi (AAAI 2025), Table 2 (the LLM-generated datasets): rationale precision of MMI, CDA and ICDA.
ICDA_PAPER = {"restaurant": (54.6, 51.5, 57.4), "connect": (50.3, 57.9, 63.2)}


def icda_tables(results_dir: Path) -> list[str]:
    """ICDA rationale precision from every ``icda_precision*.json``: a row per file, task and path."""
    import statistics as st

    def cell(values: list[float], runs: int) -> str:
        values = [100 * v for v in values if v is not None]
        if not values:
            return ""
        return (f"{st.mean(values):.1f}" + (f" ± {st.stdev(values):.1f}" if len(values) > 1 else "")
                + (f" (n = {len(values)})" if len(values) != runs else ""))

    rows = []
    for f in sorted(results_dir.glob("icda_precision*.json")):
        data = json.loads(f.read_text())
        args = data.get("args", {})
        for r in data.get("results", []):
            runs = [x for x in r.get("runs", []) if "mmi" in x]
            if not runs:
                continue
            paper = ICDA_PAPER.get(r["task"])
            setting = (f"{r['path']}, {r.get('gate', 'softmax')} gate"  # results older than the option: softmax
                       + (f" + Gumbel {r['selection_noise']}" if r.get("selection_noise") else "")
                       + f", lr {args.get('lr')}, {r.get('train')} docs")
            n = len(runs)
            rows.append([r["task"], setting, n, cell([x["mmi"] for x in runs], n),
                         cell([x.get("cda") for x in runs], n), cell([x.get("icda") for x in runs], n),
                         " / ".join(str(v) for v in paper) if paper else "", f"`{f.name}` ({data.get('device')})"])
    if not rows:
        return []
    return ["# ICDA rationale precision", "",
            "Share of selected sentences that are true rationales on the test split, % (mean ± sd over runs); "
            "`benchmarks/icda_precision.py`. Paper: Plyler and Chi (2025), Table 2, MMI / CDA / ICDA, with their "
            "set-up (three seeds and a warm start per iteration, lr 1e-6, a fine-tuned six-layer BERT): these rows "
            "use other settings (the setting column) and are not reproductions. Where a column holds fewer runs than "
            "the runs column (a run stopped before that iteration), its n is given. Two-way-gate "
            "rows were made before the fix of the selection tie-break (their trained selectors chose by index).", "",
            *harness.table_lines(["task", "setting", "runs", "MMI (it. 0)", "CDA (it. 1)", "ICDA (final)", "paper",
                                    "file"], rows), ""]


def _share_interval(gain: dict[str, float], human: dict[str, float] | None, share: float | None) -> str | None:
    """A coverage cell's share of the human gain with an approximate 95% interval (the two gains' 2 sd carried
    through the ratio as for independent estimates; they share the `none` row, so this is wide); None where
    either gain is within its 2 sd."""
    if share is None or human is None or not gain["gain"] > gain["two_sd"] > 0 or \
            not human["gain"] > human["two_sd"] > 0:
        return None
    rel = ((gain["two_sd"] / 2 / gain["gain"]) ** 2 + (human["two_sd"] / 2 / human["gain"]) ** 2) ** 0.5
    return f"{share:.0f}%, {share * (1 - 2 * rel):.0f} to {share * (1 + 2 * rel):.0f}"


def _coverage_cell(point: dict[str, Any], row: str, test: str) -> str:
    """A row's gain at one share: ± 2 sd, bold beyond it, and its share of the human gain where both are beyond."""
    g = point["gains"].get(row, {}).get(test)
    if g is None:
        return ""
    value = f"{g['gain']:+.1f}"
    value = f"**{value}**" if g["gain"] > g["two_sd"] > 0 else value
    share = _share_interval(g, point["gains"].get("human", {}).get(test),
                            point.get("recovered_of_full_human", {}).get(row))
    return f"{value} ± {g['two_sd']:.1f}" + (f" ({share})" if share else "")


def coverage_tables(results_dir: Path) -> list[str]:
    """The gain-against-coverage curves of `benchmarks.coverage_curve` (each task's own head), one table each: a
    row per training set, a column per share of the rows covered; a curve whose yardstick fails its validity check
    says so above its table."""

    lines: list[str] = []
    for path in sorted(results_dir.glob("coverage_*.json")):
        summary = json.loads(path.read_text())
        if path.stem != f"coverage_{summary['task']}":  # another head's curve (kept for the record, not ranked)
            continue
        test, points = summary["contrast_test"], summary["points"]
        rows = [r for r in registered_rows() if any(r in p["gains"] for p in points)]
        human = any(p.get("recovered_of_full_human") for p in points)
        lines += [f"## {TASK_NAMES.get(summary['task'], summary['task'])}: gain against coverage", "",
                  f"From `{path.name}` (`benchmarks/coverage_curve.py`; {summary['yardstick']}): gain over `none` on "
                  f"{test} in points (± 2 sd of the difference; **bold**: beyond it)"
                  + (", and, where it and the all-human gain are beyond 2 sd, the share of the all-human gain it "
                     "recovers with an approximate 95% interval (both gains' 2 sd carried through the ratio)," if
                     human else ",")
                  + f" by the share of the {summary['covered_rows']} {summary['covers']} the augmented rows cover. "
                  "Rows without coverage repeat in every column.", *validity_note(summary), "",
                  *harness.table_lines(["training data", *(f"{p['share']:g}% ({p['rows_covered']})" for p in points)],
                                         [[row_title(row), *(_coverage_cell(p, row, test) for p in points)]
                                          for row in rows]), ""]
    return lines


def build(results_dir: Path) -> str:
    folders = subfolders(results_dir)
    files = sorted(results_dir.glob("debias_*.json")) + [f for sub in folders
                                                          for f in sorted(results_dir.glob(f"{sub}/debias_*.json"))]
    if not files:
        raise SystemExit(f"No debias_*.json in {results_dir}; run benchmarks/debias/ first.")
    results = [{**json.loads(f.read_text()), "_folder": f.parent.name if f.parent != results_dir else None,
                "_title": folders.get(f.parent.name) if f.parent != results_dir else None} for f in files]
    order = list(TASK_NAMES)
    results.sort(key=lambda r: (order.index(r["config"]) if r["config"] in order else len(order),
                                r["model"] != "frozen", r["model"] != "bow", r["model"],
                                str((r.get("settings") or {}).get("head")), r["_folder"] or ""))
    lines = ["# Debiasing leaderboard", "",
             "Gathered by `benchmarks/leaderboard.py` from " + ", ".join(f"`{f.relative_to(results_dir)}`" for f in files) + ". Each "
             "table trains one classifier per row and seed and tests it in-domain and on contrast or "
             "out-of-distribution sets (`benchmarks/debias/`). Flip-checked rows name their checker by digest in "
             "the notes under each table; the sentiment checker the package ships was rebuilt on 2026-11-28 "
             "(single sentences added, `scripts/build_checkers.py`), so flip-checked sentiment rows made before "
             "that date used the earlier checker and were not re-run with it.", ""]
    for r in results:
        lines += table(r)
    lines += coverage_tables(results_dir)
    lines += icda_tables(results_dir)
    race = results_dir / "race_intrinsic.md"
    if race.exists():  # written by benchmarks/race_intrinsic.py with its settings; taken whole
        lines += [race.read_text().rstrip(), "", f"From `{race.name}` (`benchmarks/race_intrinsic.py`).", ""]
    fewshot = results_dir / "llm_fewshot.json"
    if fewshot.exists():
        lines += ["# Few-shot effect of LLM-prompted counterfactuals", "",
                  "From `llm_fewshot.json` (`benchmarks/llm_fewshot.py`): MiniLM fine-tuned on k rows per class, "
                  "dev sets; see `llm_fewshot.md` for the generation outcomes and the paper's figures.", ""]
        lines += fewshot_tables(json.loads(fewshot.read_text()))
    return "\n".join(lines)


def main() -> None:
    ap = harness.parser(__doc__, smoke={})
    ap.add_argument("--results", type=Path, default=RESULTS, help="folder with debias_*.json")
    ap.add_argument("--out", type=Path, default=None, help="where LEADERBOARD.md goes [the --results folder]")
    args = ap.parse_args()
    text = build(args.results)
    # beside its input by default; a smoke run of the default input writes into its own folder
    target = args.out or (harness.results_dir() if args.results == RESULTS else args.results)
    target.mkdir(parents=True, exist_ok=True)
    (target / "LEADERBOARD.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
