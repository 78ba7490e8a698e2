"""How much does augmentation add as it covers more of the training rows? The gain as a curve in coverage.

    python -m benchmarks.coverage_curve [--task sentiment|nli|fever] [--shares 25 50 100] [--seeds 0 1 2 3 4] [--plot]

Each task's curve is a ``Curve`` in ``CURVES`` (its test, head, rows and what a share is a share of). FEVER's is
CrossAug (the default generator, and flip-checked) over a growing share of the 9672 training rows, beside ``none`` and
claim-only re-weighting, with ``--augment-limit``; the rest of this note is the editors' curves (sentiment, NLI).

For each share of the rows outside the annotated quarter (sentiment: 1280 CAD IMDb training reviews; NLI: the
CAD-SNLI originals outside it), ``benchmarks/debias/`` on the frozen yardstick (its head per task: ``Curve.head``)
trains on

* ``none``: the original rows;
* ``editor+checker``: + the quarter-0 editor's counterfactuals of the covered rows (COREAugmenter, editor_only, the
  shipped checker choosing among 4 candidates and filtering);
* ``human (editor rows)``: + the human counterfactuals of the same rows (the twin: what annotation of those rows
  would give);
* ``amplify``: + the annotated quarter's human counterfactuals + the editor's of the covered rows;
* ``human (quarter)`` and ``human``: the quarter's, and every row's, human counterfactuals (coverage-free);
* ``eda``: one EDA-style copy of every row (coverage-free): the generic augmentation of the same size as
  ``human``, which the editor rows must beat by 3 points (issue 41's target);
* ``crossfit`` (only with ``--rows crossfit``, only at 100%): no human counterfactual at all; every training row gets
  one from an editor that never saw its human pair (the quarter-0 editor for the unannotated rows, the editor of
  annotation quarter 1 for the annotated quarter: ``python -m scripts.build_editors --task TASK --quarter 1``);
* ``crossfit (halves)`` (the same, with ``--rows "crossfit (halves)"``): two folds; the editor trained on quarters 0
  and 1 writes quarters 2 and 3 and the other way round (``--quarter 0 1`` and ``--quarter 2 3``), so each editor
  learned from twice the pairs of the quarter editors: how the data-set effect grows with the editor's pairs.

The covered rows are a prefix of one seeded order, so each share's counterfactuals are the smaller share's plus
new ones (``debias.editor_subset``); the share-free rows (none, human, human quarter) are trained once, with the
largest share; generation is cached and resumable in parts of 20 rows, so the first run of
the largest share is the long one (CPU, 2 cores: about 1.5 s a review). Each share's table goes to
``benchmarks/results/coverage/<task>-<share>/``; this script then writes ``benchmarks/results/coverage_<task>.{json,md}``
(each row's gain over ``none`` on every test, with 2 sd of the difference, and the share of the full human gain
recovered) and, with ``--plot``, ``docs/img/coverage_<task>.png``.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks import harness
from benchmarks.debias.validity import validity_note
from benchmarks.harness import RESULTS, ROOT

@dataclass(frozen=True)
class Curve:
    """How one task's curve is measured: the test it is read on, the yardstick's head, its rows and what a share
    is a share of."""

    contrast: str
    #: The frozen yardstick's head: the one whose validity checks pass in the leaderboard where one does.
    head: str
    #: Every row the curve can run, ``none`` first.
    rows: tuple[str, ...]
    #: Rows that do not depend on the share: trained once, with the largest share, and read from there for the others.
    shared_rows: tuple[str, ...]
    #: The benchmarks.debias option that sets how many rows are covered.
    limit_option: str
    #: What the share is a share of: the rows outside the annotated quarter (editor rows), or every training row.
    covers: str
    #: Rows drawn as curves, and share-free rows drawn as levels: (row, line style, legend).
    plotted: tuple[str, ...]
    levels: tuple[tuple[str, str, str], ...] = ()
    #: The row whose gain is "the full gain" the others recover a share of (None: no such row).
    reference: str | None = None


_EDITOR_ROWS = ("none", "human", "human (quarter)", "eda", "editor+checker", "human (editor rows)", "amplify",
                "crossfit", "crossfit (halves)")
_EDITOR_CURVE = dict(rows=_EDITOR_ROWS, shared_rows=("none", "human", "human (quarter)", "eda"),
                     limit_option="--editor-limit", covers="training rows outside the annotated quarter",
                     plotted=("editor+checker", "human (editor rows)", "amplify", "crossfit", "crossfit (halves)"),
                     levels=(("human", "--", "every row's human counterfactuals"), ("eda", ":", "EDA copy of every row")),
                     reference="human")
#: One curve per task. On NLI the lr head shows no gain even for every row's human counterfactuals, so it cannot
#: measure coverage (top1 can); FEVER's yardstick fails its validity check on every frozen head (lr is the cheap one,
#: and its curve is labelled as failing).
CURVES = {
    "sentiment": Curve("contrast dev", "lr", **_EDITOR_CURVE),
    # NLI also runs the quarter-0 editor toward every other label (neutral by addition): the NLI rows that moved the
    # revised hypotheses at full coverage (rows/editor_all_targets.py; a share reads a prefix of its archived run)
    "nli": Curve("revised_hypothesis/test", "top1", **{
        **_EDITOR_CURVE, "rows": _EDITOR_ROWS + ("editor+checker (all targets)", "amplify (all targets)",
                                                 "crossfit (all targets)"),
        "plotted": _EDITOR_CURVE["plotted"] + ("editor+checker (all targets)", "amplify (all targets)",
                                               "crossfit (all targets)")}),
    "fever": Curve("fever-symmetric", "lr", rows=("none", "reweight", "crossaug", "crossaug+checker"),
                   shared_rows=("none", "reweight"), limit_option="--augment-limit", covers="training rows",
                   plotted=("crossaug", "crossaug+checker"),
                   levels=(("reweight", "--", "claim-only re-weighting"),)),
}


def full_only_rows() -> tuple[str, ...]:
    """Rows that exist only at full coverage (``registry.row(full_coverage_only=True)``): the cross-fitting editors
    rewrite every row there (a smaller share's sample of a quarter or half is not a prefix of a larger one's)."""
    from benchmarks.debias.rows import registered_rows

    return tuple(name for name, r in registered_rows().items() if r.full_coverage_only)


def covered_population(task: str) -> int:
    """How many rows a 100% share covers."""
    from benchmarks import debias

    if CURVES[task].covers == "training rows":
        return len(debias.CONFIGS[task]()["train"])
    return unannotated(task)


def unannotated(task: str) -> int:
    from benchmarks import debias

    train = debias.CONFIGS[task]()["train"]
    return len(train) - len(debias.annotated_rows(train, task))


def share_dir(task: str, share: float) -> Path:
    return RESULTS / "coverage" / f"{task}-{share:g}"


def shares_run(task: str, head: str) -> list[float]:
    """The shares an earlier run of this task and head wrote a table for."""
    found = [float(d.name.rpartition("-")[2]) for d in (RESULTS / "coverage").glob(f"{task}-*")
             if (d / result_name(task, head)).is_file()]
    return sorted(found)


def result_name(task: str, head: str) -> str:
    return f"debias_{task}_frozen-{head}.json"


def summary_name(task: str, head: str) -> str:
    """``coverage_<task>`` for the task's own head, ``coverage_<task>_<head>`` for another."""
    return f"coverage_{task}" + ("" if head == CURVES[task].head else f"_{head}")


def finished_rows(path: Path, seeds: list[int]) -> set[str]:
    """The rows an earlier run of this share wrote for every one of ``seeds`` (a killed run resumes after them),
    less those made with a component that has changed since (`stale_rows`): they are run again."""
    from benchmarks.debias.augmented import stale_rows

    if not path.is_file():
        return set()
    result = json.loads(path.read_text())
    if result.get("seeds") != seeds:
        return set()
    stale, _ = stale_rows(result)
    return {row for row, r in result["rows"].items()
            if row not in stale and all(len(v) == len(seeds) for v in r["accuracy"].values())}


def run_share(task: str, share: float, total: int, seeds: list[int], head: str, rows: list[str]) -> Path:
    out = share_dir(task, share)
    out.mkdir(parents=True, exist_ok=True)
    limit = round(total * share / 100)
    done = finished_rows(out / result_name(task, head), seeds)
    rows = [r for r in rows if r not in done]
    if not rows:  # an earlier run finished this share
        return out / result_name(task, head)
    cmd = [sys.executable, "-m", "benchmarks.debias", "--config", task, "--model", "frozen", "--head", head,
           "--rows", *rows, "--seeds", *map(str, seeds), CURVES[task].limit_option, str(limit), "--merge", "--results-dir",
           str(out)]
    subprocess.run(cmd, check=True, cwd=ROOT)
    return out / result_name(task, head)


def gain(rows: dict, row: str, test: str) -> dict[str, float]:
    a, b = rows[row]["accuracy"][test], rows["none"]["accuracy"][test]
    sd = (statistics.stdev(a) ** 2 + statistics.stdev(b) ** 2) ** 0.5 if len(a) > 1 else 0.0
    return {"gain": round(100 * (statistics.mean(a) - statistics.mean(b)), 2), "two_sd": round(200 * sd, 2)}


def summarize(task: str, shares: list[float], total: int, head: str) -> dict:
    curve, points = CURVES[task], []
    largest_result = json.loads((share_dir(task, max(shares)) / result_name(task, head)).read_text())
    largest = largest_result["rows"]
    for share in shares:
        result = json.loads((share_dir(task, share) / result_name(task, head)).read_text())
        rows = {**{r: largest[r] for r in curve.shared_rows if r in largest}, **result["rows"]}
        tests = list(rows["none"]["accuracy"])
        point = {"share": share, "rows_covered": round(total * share / 100), "seeds": len(result["seeds"]),
                 "train_rows": {row: rows[row]["train_rows"] for row in curve.rows if row in rows},
                 "augmentation": next((rows[r]["augmentation"] for r in curve.plotted[:1] if r in rows
                                       and "augmentation" in rows[r]), None), "gains": {}}
        for row in curve.rows[1:]:
            if row in rows:
                point["gains"][row] = {test: gain(rows, row, test) for test in tests}
        full = point["gains"].get(curve.reference, {}).get(curve.contrast, {}).get("gain")
        if full:
            point["recovered_of_full_human"] = {row: round(100 * g[curve.contrast]["gain"] / full, 1)
                                                for row, g in point["gains"].items() if row != curve.reference}
        points.append(point)
    return {"task": task, "covered_rows": total, "covers": curve.covers,
            "yardstick": f"frozen all-MiniLM-L6-v2, {head} head", "contrast_test": curve.contrast,
            "validity": largest_result.get("validity"), "points": points}


def markdown(summary: dict) -> str:
    task, test = summary["task"], summary["contrast_test"]
    lines = [f"# Gain against coverage: {task}", "",
             f"Counterfactuals over a growing share of the {summary['covered_rows']} {summary['covers']} "
             f"({summary['yardstick']}; gain over `none` in points on {test}, "
             "± 2 sd of the difference; **bold**: beyond 2 sd; the last column: share of the gain of every row's "
             "human counterfactuals, where there are any).", *validity_note(summary), "",
             harness.markdown_table(["share", "rows", "row", "gain", "2 sd", "of the full human gain"], [
                 [f"{p['share']:g}%", p["rows_covered"], row,
                  f"**{c['gain']:+.1f}**" if c["gain"] > c["two_sd"] > 0 else f"{c['gain']:+.1f}",
                  f"{c['two_sd']:.1f}", f"{rec}%" if (rec := p.get("recovered_of_full_human", {}).get(row, "")) != ""
                  else None]
                 for p in summary["points"] for row, c in ((row, g.get(test)) for row, g in p["gains"].items())
                 if c])]
    return "\n".join(lines) + "\n"


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    test, curve = summary["contrast_test"], CURVES[summary["task"]]
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    # Rows measured at the same share would hide each other's error bars: each row is nudged sideways a little.
    for i, row in enumerate(curve.plotted):
        dodge = 0.8 * (i - (len(curve.plotted) - 1) / 2)
        xs = [p["share"] + dodge for p in summary["points"] if row in p["gains"]]
        ys = [p["gains"][row][test]["gain"] for p in summary["points"] if row in p["gains"]]
        err = [p["gains"][row][test]["two_sd"] for p in summary["points"] if row in p["gains"]]
        if not xs:
            continue
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=row)
    for row, style, label in curve.levels:
        level = [p["gains"][row][test]["gain"] for p in summary["points"] if row in p["gains"]]
        if level:
            ax.axhline(statistics.mean(level), color="grey", linestyle=style, label=label)
    ax.set_xlabel(f"share of the {summary['covered_rows']} {summary['covers']} covered (%)")
    ax.set_ylabel("gain over none (points)")
    failed = summary.get("validity") and not summary["validity"]["passed"]
    ax.set_title(f"{summary['task']}: {test}, {summary['yardstick']}" + (" (fails validity)" if failed else ""),
                 fontsize=8)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))  # outside: inside, it hid points
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = harness.parser(__doc__, smoke={"summarize_only": True})
    ap.add_argument("--task", choices=sorted(CURVES), default="sentiment")
    ap.add_argument("--shares", type=float, nargs="+", default=None,
                    help="percentages of the rows covered (default: the shares run before for this task, or "
                         "25 50 100 on a first run)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--head", choices=("lr", "mlp", "top1"), default=None,
                    help="the frozen yardstick's head (default: the task's own, "
                         + ", ".join(f"{t}: {c.head}" for t, c in CURVES.items()) + ")")
    ap.add_argument("--rows", nargs="+", choices=sorted({r for c in CURVES.values() for r in c.rows}), default=None,
                    help="the training-set rows to run (default: the task's rows but " + ", ".join(full_only_rows())
                    + ", which run only at 100%%); a later run adds its rows to the shares' results")
    ap.add_argument("--summarize-only", action="store_true", help="only rebuild the summary from finished shares")
    ap.add_argument("--plot", action="store_true", help="also draw docs/img/coverage_<task>.png")
    args = ap.parse_args()
    curve = CURVES[args.task]
    head = args.head or curve.head
    full_only = full_only_rows()
    args.rows = args.rows or [r for r in curve.rows if r not in full_only]
    unknown = [r for r in args.rows if r not in curve.rows]
    if unknown:
        ap.error(f"--rows {' '.join(unknown)}: not a row of the {args.task} curve (its rows: {', '.join(curve.rows)})")
    args.shares = args.shares or shares_run(args.task, head) or [25, 50, 100]
    name = summary_name(args.task, head)
    total = covered_population(args.task)
    if not args.summarize_only:
        # Largest share first: it writes every counterfactual once; the smaller shares then reuse its parts.
        for share in sorted(args.shares, reverse=True):
            done_rows = share_dir(args.task, max(args.shares)) / result_name(args.task, head)
            rows = args.rows if share == max(args.shares) or not done_rows.is_file() else \
                [r for r in args.rows if r not in curve.shared_rows]
            if share != 100:
                rows = [r for r in rows if r not in full_only]
            run_share(args.task, share, total, args.seeds, head, rows)
            done = [s for s in args.shares if (share_dir(args.task, s) / result_name(args.task, head)).is_file()]
            (harness.results_dir() / f"{name}.json").write_text(json.dumps(summarize(args.task, done, total, head), indent=1) + "\n")
    summary = summarize(args.task, args.shares, total, head)
    (harness.results_dir() / f"{name}.json").write_text(json.dumps(summary, indent=1) + "\n")
    (harness.results_dir() / f"{name}.md").write_text(markdown(summary))
    print(markdown(summary))
    if args.plot:
        plot(summary, ROOT / "docs" / "img" / f"{name}.png")


if __name__ == "__main__":
    main()
