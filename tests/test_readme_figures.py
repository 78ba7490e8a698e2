"""Every effect figure in the README's method table is found in a committed results JSON, with the set-up the README
states (rows edited, seeds, iterations, runs), and a gain the README presents as an effect exceeds 2 sd of the
difference. A rerun that changes a figure, or an edit that changes the README's words, fails here."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
README = (ROOT / "README.md").read_text()

# (README text, results file, row, test, expected gain in points, set-up fields the JSON must show)
GAINS = [
    ("+1.8 flip-checked", "every_row/debias_fever_frozen-lr.json", "crossaug+checker", "fever-symmetric", 1.8,
     {"of": 9254, "seeds": 5}),  # the checker read every counterfactual of the unchecked row's 9672 rows
    ("+2.2 unchecked", "every_row/debias_fever_frozen-lr.json", "crossaug", "fever-symmetric", 2.2,
     {"rows_augmented": 9672, "seeds": 5}),
    ("FEVER-Symmetric +6.5 flip-checked", "fever_cpu/debias_fever_all-MiniLM-L6-v2.json", "crossaug+checker",
     "fever-symmetric", 6.5, {"kept": 1004, "seeds": 5}),
    ("IMDb contrast dev +7.2", "debias_sentiment_frozen-lr.json", "editor+checker", "contrast dev", 7.2,
     {"rows_edited": 300, "seeds": 5}),
    ("human CAD on every row +9.2", "debias_sentiment_frozen-lr.json", "human", "contrast dev", 9.2, {"seeds": 5}),
    ("CAD test +9.1", "debias_sentiment_frozen-lr.json", "amplify", "new/test (CAD)", 9.1,
     {"rows_edited": 300, "seeds": 5}),
    ("contrast dev +4.8", "debias_sentiment_frozen-lr.json", "amplify", "contrast dev", 4.8, {"seeds": 5}),
    ("revised hypotheses +6.1", "nli_all_targets/debias_nli_frozen-top1.json", "editor+checker (all targets)",
     "revised_hypothesis/test", 6.1, {"rows_edited": 1250, "counterfactuals": 2002, "seeds": 5}),
    ("revised premises +4.4", "nli_all_targets/debias_nli_frozen-top1.json", "editor+checker (both sides)",
     "revised_premise/test", 4.4, {"seeds": 5}),
    ("revised premises +5.7", "nli_all_targets/debias_nli_frozen-top1.json", "crossfit (premises)",
     "revised_premise/test", 5.7, {"seeds": 5}),
    ("revised premises +7.4", "nli_all_targets/debias_nli_frozen-top1.json",
     "amplify (both sides, 2 premises a target)", "revised_premise/test", 7.4, {"seeds": 5}),
    ("IMDb contrast dev +3.8", "debias_sentiment_frozen-lr.json", "core+editor", "contrast dev", 3.8,
     {"rows_edited": 300, "seeds": 5}),
    ("CAD test +5.1", "debias_sentiment_frozen-lr.json", "core+editor", "new/test (CAD)", 5.1,
     {"rows_edited": 300, "seeds": 5}),
    ("SNLI revised hypotheses +0.6", "debias_nli_frozen-top1.json", "core+editor", "revised_hypothesis/test", 0.6,
     {"rows_edited": 200, "seeds": 5}),
    ("contrast dev +6.4", "debias_sentiment_frozen-lr.json", "icda", "contrast dev", 6.4, {"seeds": 5}),
    ("in-domain −7.4", "debias_sentiment_frozen-lr.json", "icda", "orig/test", -7.4, {"seeds": 5}),
    ("−3.3 in domain", "debias_fv-ood_frozen-lr.json", "race", "feverous dev", -3.3,
     {"augment_limit": 500, "seeds": 5}),
    ("FEVER-Symmetric +3.5 over `none`", "fever_cpu/debias_fever_all-MiniLM-L6-v2.json", "race (shipped)",
     "fever-symmetric", 3.5, {"rows_augmented": 2000, "seeds": 5}),
]


def _two_sd(a: list[float], b: list[float]) -> float:
    return 2 * 100 * (statistics.stdev(a) ** 2 + statistics.stdev(b) ** 2) ** 0.5


def _claimed_two_sd(text: str) -> float | None:
    """The '2 sd X' the README gives right after a figure, if any."""
    at = README.index(text) + len(text)
    found = re.match(r"[^|;]*?2 sd(?: of the difference)? (\d+\.\d)", README[at:at + 40])
    return float(found.group(1)) if found else None


@pytest.mark.parametrize("text,file,row,test,gain,setup", GAINS, ids=[g[0] for g in GAINS])
def test_each_readme_gain_is_in_its_results_file_with_its_setup(text, file, row, test, gain, setup):
    assert text in README, f"the README no longer says {text!r}"
    data = json.loads((RESULTS / file).read_text())
    acc, base = data["rows"][row]["accuracy"][test], data["rows"]["none"]["accuracy"][test]
    measured = statistics.mean(acc) * 100 - statistics.mean(base) * 100  # as the leaderboard prints it
    assert float(f"{measured:+.1f}") == gain, f"{file} {row} {test}: {measured:.2f}, README {gain}"
    notes = data["rows"][row].get("augmentation") or {}
    for field, value in setup.items():
        got = len(data["seeds"]) if field == "seeds" else notes.get(field, data.get(field))
        assert got == value, f"{file} {row}: {field} is {got}, the README says {value}"
    claimed = _claimed_two_sd(text)
    if claimed is not None:
        assert round(_two_sd(acc, base), 1) == claimed
    # a gain within 2 sd must not be presented as an effect: the README says so of this figure itself
    if abs(measured) <= _two_sd(acc, base):
        assert _said_of(text, "no measurable effect"), f"{text!r} is within 2 sd but its own words do not say so"


def _said_of(text: str, words: str) -> bool:
    """Whether ``words`` are said of the figure ``text`` itself: in its own clause (up to the next ';', ')' or
    table cell), or as the opening of a parenthesis that holds it ("no measurable effect (+2.2 unchecked, ...")."""
    start = README.index(text)
    at = start + len(text)
    end = min(i for i in (README.find(c, at) for c in ";)|") if i >= 0)
    if words in README[at:end]:
        return True
    opened = README.rfind(words + " (", 0, start)
    return opened >= 0 and ")" not in README[opened:start] and "|" not in README[opened:start]


def test_the_no_measurable_effect_check_reads_each_figure_on_its_own():
    global README
    saved = README
    try:
        README = "| a +1.0 (2 sd 3.0, no measurable effect); b +2.0 (2 sd 3.0) |"
        assert _said_of("a +1.0", "no measurable effect") and not _said_of("b +2.0", "no measurable effect")
        README = "| no measurable effect (c +1.0, 2 sd 3.0; d +0.5) | e +0.2 |"
        assert _said_of("c +1.0", "no measurable effect") and _said_of("d +0.5", "no measurable effect")
        assert not _said_of("e +0.2", "no measurable effect")
    finally:
        README = saved


def test_the_readme_icda_precision_figures_and_their_setup():
    connect = json.loads((RESULTS / "icda_precision_connect_gumbel.json").read_text())
    runs = connect["results"][0]["runs"]
    args = connect["args"]
    assert (args["lr"], args["seeds"], args["max_iterations"], args["runs"]) == (0.001, 1, 3, 3)
    assert connect["results"][0]["train"] == 1020 and "1020 of the connect training documents" in README

    def cell(key):
        values = [100 * r[key] for r in runs if r.get(key) is not None]
        return f"{statistics.mean(values):.1f} ± {statistics.stdev(values):.1f}", len(values)

    assert f"MMI {cell('mmi')[0]}" in README
    assert f"CDA {cell('cda')[0]} ({cell('cda')[1]} runs)" in README and cell("cda")[1] == 2
    assert f"final {cell('icda')[0]}" in README
    assert sum(r["iterations"] == 1 for r in runs) == 1 and "one of which never iterated" in README
    restaurant = json.loads((RESULTS / "icda_precision_restaurant_gumbel.json").read_text())["results"][0]
    assert len(restaurant["runs"]) == 1 and f"{100 * restaurant['runs'][0]['icda']:.1f}" == "30.4"
    random_sentence = 100 * restaurant["baselines"]["random"]
    assert f"below a random sentence ({random_sentence:.1f}" in README


def test_the_fever_gain_over_an_equal_size_control_is_in_both_results_files():
    """The README's "+3.3 (2 sd 2.5)": CrossAug + checker on the CPU FEVER yardstick against `none` trained on as many
    original rows (3004), a table of its own."""
    assert "as many original rows +3.3 (2 sd 2.5)" in README
    augmented = json.loads((RESULTS / "fever_cpu/debias_fever_all-MiniLM-L6-v2.json").read_text())
    control = json.loads((RESULTS / "fever_cpu_3004/debias_fever_all-MiniLM-L6-v2.json").read_text())
    acc = augmented["rows"]["crossaug+checker"]["accuracy"]["fever-symmetric"]
    base = control["rows"]["none"]["accuracy"]["fever-symmetric"]
    assert control["rows"]["none"]["train_rows"] == augmented["rows"]["crossaug+checker"]["train_rows"] == 3004
    assert float(f"{(statistics.mean(acc) - statistics.mean(base)) * 100:+.1f}") == 3.3
    assert round(_two_sd(acc, base), 1) == 2.5


def test_races_fever_figures_against_more_original_rows_are_in_both_results_files():
    """The README's RACE row on the CPU FEVER yardstick: "+0.3, 2 sd 1.8" on FEVER-Symmetric against `none` trained
    on as many original rows (3355, a table of its own), and "6.3 points lower in domain"."""
    assert "as many original rows (3355) no measurable effect (+0.3, 2 sd 1.8) and 6.3 points lower in domain" in README
    race = json.loads((RESULTS / "fever_cpu/debias_fever_all-MiniLM-L6-v2.json").read_text())["rows"]["race (shipped)"]
    control = json.loads((RESULTS / "fever_cpu_3355/debias_fever_all-MiniLM-L6-v2.json").read_text())["rows"]["none"]
    assert control["train_rows"] == race["train_rows"] == 3355
    gains = {t: (statistics.mean(race["accuracy"][t]) - statistics.mean(control["accuracy"][t])) * 100
             for t in ("fever-symmetric", "fever held-out")}
    assert float(f"{gains['fever-symmetric']:+.1f}") == 0.3 and float(f"{gains['fever held-out']:.1f}") == -6.3
    assert round(_two_sd(race["accuracy"]["fever-symmetric"], control["accuracy"]["fever-symmetric"]), 1) == 1.8
