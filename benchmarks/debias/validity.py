"""Whether a table can show an effect at all (its validity check) and whether one difference is an effect (beyond
2 sd): the statistics the leaderboard, the coverage curves and ``python -m benchmarks.debias`` share."""

from __future__ import annotations

import statistics
from typing import Any

#: The checks a table must pass to count as a yardstick for its task: (row that must beat ``none``, test set,
#: minimum held-out accuracy of ``none`` on the in-domain set or None).
VALIDITY = {"sentiment": ("human", "contrast dev", None), "nli": ("human", "revised_hypothesis/test", None),
            "fever": ("reweight", "fever-symmetric", ("fever held-out", 0.80)),
            "fv": ("reweight", "fever-symmetric", None)}


def validity(name: str, results: dict[str, Any]) -> dict[str, Any] | None:
    """Whether the table can see shortcuts: the reference row beats ``none`` on the contrast set by more than 2 sd
    of the difference (sd of each row over seeds, combined as for independent runs)."""
    check = VALIDITY.get(name)
    rows = results["rows"]
    if check is None or "none" not in rows or check[0] not in rows:
        return None
    row, test, floor = check
    if test not in rows[row]["accuracy"] or test not in rows["none"]["accuracy"]:
        return None
    a, b = rows[row]["accuracy"][test], rows["none"]["accuracy"][test]
    sd = (statistics.stdev(a) ** 2 + statistics.stdev(b) ** 2) ** 0.5 if len(a) > 1 and len(b) > 1 else 0.0
    gain = statistics.mean(a) - statistics.mean(b)
    out = {"row": row, "test": test, "gain": round(gain * 100, 2), "two_sd": round(2 * sd * 100, 2),
           "passed": bool(len(a) > 1 and sd > 0 and gain > 2 * sd)}
    if sd == 0:  # one deterministic run repeated (a bag of words), or one seed: no spread to compare with
        out["why"] = "the seeds do not vary the result, so there is no spread to compare the gain with"
    if floor and floor[0] in rows["none"]["accuracy"]:
        held = statistics.mean(rows["none"]["accuracy"][floor[0]])
        out["in_domain"] = {"test": floor[0], "none": round(held * 100, 2), "minimum": floor[1] * 100}
        out["passed"] = out["passed"] and held >= floor[1]
    return out


def measurable(values: list[float], base: list[float]) -> bool:
    """Whether the difference of the means exceeds 2 sd of the difference (each row's sd over seeds, combined as
    for independent runs); a difference within it is "no measurable effect"."""
    if len(values) < 2 or len(base) < 2:
        return False
    sd = (statistics.stdev(values) ** 2 + statistics.stdev(base) ** 2) ** 0.5
    return abs(statistics.mean(values) - statistics.mean(base)) > 2 * sd > 0


def validity_note(summary: dict) -> list[str]:
    """A line saying the yardstick fails its validity check, where it does (its figures cannot show an effect)."""
    check = summary.get("validity")
    if not check or check["passed"]:
        return []
    held = check.get("in_domain") or {}
    return ["", f"**This yardstick fails its validity check** (`{check['row']}` minus `none` on {check['test']} "
                f"{check['gain']:+.1f}, needs > 2 sd = {check['two_sd']:.1f}"
                + (f"; `none` {held['none']:.1f}% on {held['test']}, needs >= {held['minimum']:.0f}%" if held else "")
                + "): no figure here can show a debiasing effect."]
