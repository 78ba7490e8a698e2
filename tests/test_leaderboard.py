"""benchmarks/leaderboard.py on fixture results: means, spreads, gains and the share of the human-CAD gain."""

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_leaderboard():
    return importlib.import_module("benchmarks.leaderboard")


def result(config, model, rows, tests=("in-domain", "contrast")):
    return {"config": config, "model": model, "seeds": [0, 1], "train_rows": 100,
            "tests": {t: 50 for t in tests},
            "rows": {name: {"train_rows": n, "seconds": 1.0, "accuracy": dict(zip(tests, accs))}
                     for name, (n, accs) in rows.items()}}


def test_leaderboard_gathers_every_results_file(tmp_path):
    (tmp_path / "debias_sentiment_bow.json").write_text(json.dumps(result("sentiment", "bow", {
        "none": (100, ([0.80, 0.80], [0.50, 0.60])),
        "human": (200, ([0.80, 0.80], [0.85, 0.85])),
        "crossaug": (180, ([0.82, 0.80], [0.65, 0.65])),
    })))
    fever = result("fever", "minilm", {"none": (100, ([0.9, 0.9], [0.5, 0.5])),
                                       "reweight": (100, ([0.88, 0.9], [0.6, 0.62])),
                                       "crossaug+balance": (150, ([0.9, 0.9], [0.55, 0.55]))})
    fever["rows"]["crossaug+balance"]["augmentation"] = {"counterfactuals_dropped": 7, "of": 57,
                                                         "blocked_words": {"not": 5, "only": 2}}
    fever["probes"] = {"flip rate": {"rows": 40, "none_model": [0.5, 0.7]}}
    (tmp_path / "debias_fever_minilm.json").write_text(json.dumps({**fever, "device": "CPU, 1 epoch"}))
    (tmp_path / "unrelated.json").write_text("{}")
    text = load_leaderboard().build(tmp_path)
    assert text.index("Sentiment (CAD IMDb): bag of words") < text.index("FEVER, paper setup")
    # none: contrast mean 55.0 ± 7.1; human +30 points; crossaug +10, within its 2 sd: no share of it is given
    assert "| none (original data) | 100 | 80.0 ± 0.0 | 55.0 ± 7.1 | |" in text
    # a gain beyond 2 sd of the difference is in bold; +10 against 2 sd = 14.1 is no measurable effect
    assert "| + human CAD | 200 | 80.0 ± 0.0 (+0.0) | 85.0 ± 0.0 (**+30.0**) | |" in text
    assert "| + CrossAug | 180 | 81.0 ± 1.4 (+1.0) | 65.0 ± 0.0 (+10.0) | — |" in text
    # no human CAD: no recovery column; the device is reported
    assert "| claim-only re-weighting (Schuster et al.) | 100 | 89.0 ± 1.4 (-1.0) | 61.0 ± 1.4 (**+11.0**) |" in text
    assert "2 seeds (CPU, 1 epoch)" in text
    # probes scored by the none model and the balancing filter's drops are reported under the table
    assert "flip rate: 60.0 ± 14.1 % of 40 generated rows, by the `none` model." in text
    assert "+ CrossAug, shortcut-balanced: 7 of 57 counterfactuals dropped; words that caused drops: `not` 5, " \
           "`only` 2." in text


def test_core_rows_are_also_compared_with_human_counterfactuals_of_the_same_rows(tmp_path):
    nli = result("nli", "bow", {"none": (100, ([0.8, 0.8], [0.40, 0.40])),
                                "human": (300, ([0.8, 0.8], [0.80, 0.80])),
                                "human (same rows)": (120, ([0.8, 0.8], [0.50, 0.50])),
                                "core": (118, ([0.8, 0.8], [0.45, 0.45]))})
    nli["augment_limit"] = 20
    nli["rows"]["core"]["augmentation"] = {"rows_edited": 20, "counterfactuals": 18, "skipped": {"llm_unchanged": 2}}
    (tmp_path / "debias_nli_bow.json").write_text(json.dumps(nli))
    text = load_leaderboard().build(tmp_path)
    # core: +5 of human's +40 and of the same rows' human +10, but seeds that do not vary give no spread to
    # measure a gain against: no share
    assert "| + CORE (CF-DPR + SmolLM2 editor) | 118 | 80.0 ± 0.0 (+0.0) | 45.0 ± 0.0 (+5.0) | — | — |" in text
    assert "Augmentation rows (CORE, CrossAug, RACE) edit a seeded sample of 20 training rows." in text
    assert "18 counterfactuals from 20 rows; skipped: llm_unchanged 2." in text


def test_a_share_of_the_human_gain_comes_with_a_bootstrap_interval_over_seeds(tmp_path):
    sentiment = result("sentiment", "bow", {"none": (100, ([0.8] * 5, [0.40, 0.42, 0.41, 0.39, 0.40])),
                                            "human": (200, ([0.8] * 5, [0.80, 0.82, 0.81, 0.79, 0.80])),
                                            "crossaug": (150, ([0.8] * 5, [0.60, 0.62, 0.61, 0.59, 0.60]))})
    (tmp_path / "debias_sentiment_bow.json").write_text(json.dumps(sentiment))
    text = load_leaderboard().build(tmp_path)
    row = next(line for line in text.splitlines() if line.startswith("| + CrossAug"))
    share = re.search(r"\| (\d+)% \((\d+) to (\d+)\) \|$", row)
    assert share, row
    point, low, high = map(int, share.groups())
    assert point == 50 and low <= 50 <= high and high - low < 20


def test_few_shot_runs_get_a_table_per_task_and_k(tmp_path):
    (tmp_path / "debias_sentiment_bow.json").write_text(json.dumps(result("sentiment", "bow", {
        "none": (100, ([0.80, 0.80], [0.50, 0.60]))})))
    runs = [{"task": "ner", "k": 5, "seed": s, "row": row, "scores": {"CoNLL valid": score + s}}
            for s in (0, 1) for row, score in (("none", 40.0), ("cfgen", 45.0), ("llm", 42.0))]
    (tmp_path / "llm_fewshot.json").write_text(json.dumps({"llm": "SmolLM2", "runs": runs}))
    text = load_leaderboard().build(tmp_path)
    assert "## NER (CoNLL-2003), 5-shot, SmolLM2" in text
    assert "| + CFGen entity replacement | 2 | 45.5 ± 0.7 (**+5.0**) |" in text
    assert "| none (k-shot rows) | 2 | 40.5 ± 0.7 |" in text


def test_frozen_tables_say_when_and_whether_they_can_see_shortcuts_and_drop_superseded_rows(tmp_path):
    frozen = result("sentiment", "frozen", {"none": (100, ([0.8, 0.8], [0.5, 0.52])),
                                            "human": (200, ([0.8, 0.8], [0.51, 0.5]))})
    frozen.update(git_commit="abcdef1234567", date="2026-11-25", settings={"head": "mlp"},
                  validity={"row": "human", "test": "contrast", "gain": -0.5, "two_sd": 2.0, "passed": False})
    (tmp_path / "debias_sentiment_frozen-mlp.json").write_text(json.dumps(frozen))
    old = result("fv", "bow", {"none": (100, ([0.7, 0.7], [0.5, 0.5])), "crossaug": (150, ([0.7, 0.7], [0.6, 0.6]))})
    (tmp_path / "debias_fv_bow.json").write_text(json.dumps(old))
    text = load_leaderboard().build(tmp_path)
    assert "frozen MiniLM, mlp head (validity checks FAILED" in text and "commit `abcdef1234`" in text
    assert "Row `crossaug` left out" in text and "+ CrossAug |" not in text
    assert "Made before results recorded their commit" in text


def test_headings_say_uncommitted_changes_rows_account_for_every_input_and_columns_give_their_n(tmp_path):
    data = result("sentiment", "frozen", {"none": (100, ([0.8, 0.8], [0.5, 0.6])),
                                          "editor+checker": (120, ([0.8, 0.8], [0.6, 0.6]))})
    data.update(git_commit="0123456789abcdef", uncommitted_changes=True, date="2026-11-26")
    data["rows"]["editor+checker"]["augmentation"] = {"rows_edited": 30, "counterfactuals": 20, "skipped": {}}
    (tmp_path / "debias_sentiment_frozen-lr.json").write_text(json.dumps(data))
    (tmp_path / "icda_precision_x.json").write_text(json.dumps({"args": {"lr": 1e-3}, "device": "CPU", "results": [
        {"task": "connect", "path": "frozen", "train": 10, "runs": [{"mmi": 0.5, "cda": 0.7, "icda": 0.6},
                                                                     {"mmi": 0.6}]}]}))
    text = load_leaderboard().build(tmp_path)
    assert "at commit `0123456789` with uncommitted changes." in text
    assert "skipped: not recorded (10 of 30 rows gave no counterfactual)" in text and "skipped: none" not in text
    assert "| 2 | 55.0 ± 7.1 | 70.0 (n = 1) | 60.0 (n = 1) |" in text
    assert "Table 2" in text and "not reproductions" in text


def test_coverage_curves_join_the_leaderboard(tmp_path):
    """Each task's gain-against-coverage curve (its valid head) is a table: a column per share, bold only beyond
    2 sd, with the share of the full human gain; another head's curve stays out."""
    point = lambda share, editor: {  # noqa: E731
        "share": share, "rows_covered": int(share * 10), "gains": {
            "human": {"contrast": {"gain": 9.0, "two_sd": 7.0}},
            "editor+checker": {"contrast": {"gain": editor, "two_sd": 6.0}}},
        "recovered_of_full_human": {"editor+checker": round(100 * editor / 9.0, 1)}}
    summary = {"task": "sentiment", "covered_rows": 1000, "covers": "unannotated rows", "yardstick": "frozen, lr head",
               "contrast_test": "contrast", "points": [point(50, 4.0), point(100, 10.4)]}
    (tmp_path / "coverage_sentiment.json").write_text(json.dumps(summary))
    (tmp_path / "coverage_sentiment_mlp.json").write_text(json.dumps(summary))
    lines = load_leaderboard().coverage_tables(tmp_path)
    assert sum("gain against coverage" in line for line in lines) == 1
    assert "| 50% (500) | 100% (1000) |" in "\n".join(lines)
    editor = next(line for line in lines if line.startswith("| + learned editor"))
    # a gain within 2 sd gets no share; a measurable one gets its interval (both gains' 2 sd through the ratio)
    assert "| +4.0 ± 6.0 | **+10.4** ± 6.0 (116%, 4 to 228) |" in editor


def test_a_coverage_curve_on_a_yardstick_that_fails_validity_says_so_and_claims_no_human_share(tmp_path):
    point = lambda share, gain: {  # noqa: E731
        "share": share, "rows_covered": int(share * 96.72), "gains": {
            "reweight": {"fever-symmetric": {"gain": 0.1, "two_sd": 2.7}},
            "crossaug": {"fever-symmetric": {"gain": gain, "two_sd": 0.9}}}}
    summary = {"task": "fever", "covered_rows": 9672, "covers": "training rows", "yardstick": "frozen, lr head",
               "contrast_test": "fever-symmetric", "points": [point(25, 0.4), point(100, 1.0)],
               "validity": {"row": "reweight", "test": "fever-symmetric", "gain": 0.1, "two_sd": 2.7, "passed": False,
                            "in_domain": {"test": "fever held-out", "none": 67.5, "minimum": 80.0}}}
    (tmp_path / "coverage_fever.json").write_text(json.dumps(summary))
    text = "\n".join(load_leaderboard().coverage_tables(tmp_path))
    assert "fails its validity check" in text and "on fever held-out 67.5% (needs >= 80%)" in text
    assert "of the 9672 training rows" in text and "human gain" not in text
    crossaug = next(line for line in text.splitlines() if line.startswith("| + CrossAug |"))
    assert crossaug == "| + CrossAug | +0.4 ± 0.9 | **+1.0** ± 0.9 |"


def test_a_run_over_every_training_row_sits_beside_the_sampled_one_and_says_so(tmp_path):
    rows = {"none": (100, ([0.7, 0.7], [0.55, 0.55])), "crossaug": (150, ([0.7, 0.7], [0.56, 0.56]))}
    sampled = {**result("fever", "bow", rows), "augment_limit": 20}
    (tmp_path / "debias_fever_bow.json").write_text(json.dumps(sampled))
    (tmp_path / "every_row").mkdir()
    (tmp_path / "every_row" / "debias_fever_bow.json").write_text(json.dumps(result("fever", "bow", rows)))
    (tmp_path / "every_row" / "leaderboard.json").write_text('{"title": "CrossAug over every training row"}')
    (tmp_path / "undeclared").mkdir()  # a folder without leaderboard.json is not gathered
    (tmp_path / "undeclared" / "debias_fever_bow.json").write_text(json.dumps(result("fever", "bow", rows)))
    text = load_leaderboard().build(tmp_path)
    assert "undeclared" not in text
    plain = text.index("### Fact verification (FEVER, paper setup): bag of words")
    every = text.index("### Fact verification (FEVER, paper setup): bag of words (CrossAug over every training row)")
    assert plain < every and "`every_row/debias_fever_bow.json`" in text
    assert "a seeded sample of 20 training rows" in text[plain:every] and "seeded sample" not in text[every:]


def test_a_folder_declaration_without_a_title_is_refused_naming_the_file(tmp_path):
    (tmp_path / "debias_fever_bow.json").write_text(json.dumps(result("fever", "bow", {"none": (10, ([0.7], [0.5]))})))
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "leaderboard.json").write_text('{"order": 1}')
    with pytest.raises(SystemExit, match=r"mine/leaderboard.json: expected"):
        load_leaderboard().build(tmp_path)
