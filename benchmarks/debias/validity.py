"""Whether a table can show an effect at all (its validity check) and whether one difference is an effect (beyond
2 sd): the statistics the leaderboard, the coverage curves and ``python -m benchmarks.debias`` share."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from .claim_only import RIGHT, WRONG


@dataclass(frozen=True)
class Check:
    """What a table must show to count as a yardstick for its task (every part that is set must pass)."""

    #: The contrast set the checks read.
    test: str
    #: A row that must beat ``none`` on ``test`` by more than 2 sd (a known remedy the yardstick must see).
    row: str | None = None
    #: (in-domain test set, minimum accuracy of ``none`` on it).
    in_domain: tuple[str, float] | None = None
    #: (test where the shortcut gives the right label, test where it gives the wrong one, minimum gap in points):
    #: ``none`` must be better on the first by at least this much and by more than 2 sd (the bias is visible).
    bias_gap: tuple[str, str, float] | None = None


#: The checks per configuration. FEVER's (stated 2026-11-29, before the fine-tuned CPU yardstick's first run): the
#: model must learn the task (``none`` >= 80% on FEVER held-out) and visibly follow the claim-only shortcut on
#: FEVER-Symmetric (at least 10 points better where a claim-only model is right than where it is wrong, beyond
#: 2 sd). It used to ask re-weighting to beat ``none`` instead; even MiniLM fine-tuned end to end on every row on a
#: GPU gives re-weighting +1.5 (2 sd 2.2), so that asked about the remedy's strength on a small model, not about
#: whether the yardstick sees the bias. Re-weighting stays a row of the table.
VALIDITY = {"sentiment": Check("contrast dev", row="human"), "nli": Check("revised_hypothesis/test", row="human"),
            "fever": Check("fever-symmetric", in_domain=("fever held-out", 0.80), bias_gap=(RIGHT, WRONG, 10.0)),
            "fv": Check("fever-symmetric", row="reweight")}


def difference(a: list[float], b: list[float]) -> tuple[float, float]:
    """Mean of ``a`` minus mean of ``b`` and 2 sd of that difference, in points (each list's sd over seeds,
    combined as for independent runs; 0 with fewer than two seeds)."""
    sd = (statistics.stdev(a) ** 2 + statistics.stdev(b) ** 2) ** 0.5 if len(a) > 1 and len(b) > 1 else 0.0
    return round((statistics.mean(a) - statistics.mean(b)) * 100, 2), round(2 * sd * 100, 2)


def validity(name: str, results: dict[str, Any]) -> dict[str, Any] | None:
    """Whether the table can see shortcuts, by its configuration's `Check` (None where it has none, or where the
    table lacks ``none`` or the reference row). ``summary`` says what was measured against what was needed."""
    check, rows = VALIDITY.get(name), results["rows"]
    if check is None or "none" not in rows or (check.row and check.row not in rows):
        return None
    none = rows["none"]["accuracy"]
    out: dict[str, Any] = {"test": check.test, "passed": True}
    parts = []
    if check.row:
        if check.test not in rows[check.row]["accuracy"] or check.test not in none:
            return None
        a, b = rows[check.row]["accuracy"][check.test], none[check.test]
        out["row"] = check.row
        out["gain"], out["two_sd"] = difference(a, b)
        out["passed"] = len(a) > 1 and out["two_sd"] > 0 and out["gain"] > out["two_sd"]
        parts.append(f"`{check.row}` minus `none` on {check.test} = {out['gain']:+.1f} points "
                     f"(needs > 2 sd = {out['two_sd']:.1f})")
        if out["two_sd"] == 0:  # one deterministic run repeated (a bag of words), or one seed
            out["why"] = "the seeds do not vary the result, so there is no spread to compare the gain with"
    if check.bias_gap:
        right, wrong, minimum = check.bias_gap
        if right in none and wrong in none:
            gap, two_sd = difference(none[right], none[wrong])
            ok = len(none[right]) > 1 and gap >= minimum and gap > two_sd
        else:
            gap, two_sd, ok = None, None, False
            out["why"] = f"the table has no '{right}' and '{wrong}' columns (made before the claim-only split)"
        out["bias_gap"] = {"gap": gap, "two_sd": two_sd, "minimum": minimum}
        out["passed"] = out["passed"] and ok
        parts.append("`none` on " + check.test + " where a claim-only model is right minus where it is wrong = "
                     + (f"{gap:+.1f} points" if gap is not None else "not measured")
                     + f" (needs >= {minimum:.0f} and > 2 sd" + (f" = {two_sd:.1f})" if two_sd is not None else ")"))
    if check.in_domain and check.in_domain[0] in none:
        held = statistics.mean(none[check.in_domain[0]])
        out["in_domain"] = {"test": check.in_domain[0], "none": round(held * 100, 2),
                            "minimum": check.in_domain[1] * 100}
        out["passed"] = out["passed"] and held >= check.in_domain[1]
        parts.append(f"`none` in-domain on {check.in_domain[0]} {held * 100:.1f}% "
                     f"(needs >= {check.in_domain[1] * 100:.0f}%)")
    out["passed"] = bool(out["passed"])
    out["summary"] = "; ".join(parts)
    return out


def measurable(values: list[float], base: list[float]) -> bool:
    """Whether the difference of the means exceeds 2 sd of the difference (each row's sd over seeds, combined as
    for independent runs); a difference within it is "no measurable effect"."""
    if len(values) < 2 or len(base) < 2:
        return False
    gain, two_sd = difference(values, base)
    return abs(gain) > two_sd > 0


def summary_of(check: dict[str, Any]) -> str:
    """What a check measured against what it needed (tables written before ``summary`` was recorded included)."""
    if check.get("summary"):
        return check["summary"]
    held = check.get("in_domain") or {}
    return (f"`{check['row']}` minus `none` on {check['test']} = {check['gain']:+.1f} points "
            f"(needs > 2 sd = {check['two_sd']:.1f})"
            + (f"; `none` in-domain on {held['test']} {held['none']:.1f}% (needs >= {held['minimum']:.0f}%)"
               if held else ""))


def validity_note(summary: dict) -> list[str]:
    """A line saying the yardstick fails its validity check, where it does (its figures cannot show an effect)."""
    check = summary.get("validity")
    if not check or check["passed"]:
        return []
    return ["", f"**This yardstick fails its validity check** ({summary_of(check)}): no figure here can show a "
                "debiasing effect."]
