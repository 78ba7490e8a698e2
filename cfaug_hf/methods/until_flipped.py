"""Edit until the whole input flips: the loop every text-editing augmenter can switch on (``until_flipped=True``).

Editing a fixed number of sentences leaves reviews half flipped: the edited sentences say the new thing, the
untouched "Rating: 6/10" still says the old one. The loop (after MiCE, Ross et al. 2021, with our editors and
checkers) instead ranks the input's units by how much each carries the row's label, edits the strongest few, puts
the edits back, asks the checker about the *whole* edited input, and goes on with the next units until the checker
gives the target label with a margin over its accept threshold and no unit read alone still gives the old label (the
residual check), or the budget of edits is spent (then the row gets no counterfactual: ``skipped:not_flipped``, or
``skipped:residual`` with the units left named in the original's ``cf_edit``). Units that do not lean toward the
row's label are never edited; with ``retries``, a unit whose edit still reads as the old label is edited again.

The loop does not know how a unit is edited: each augmenter passes a ``propose`` function (its editor, its prompt,
its retrieval), so CORE, the LLM method and any editor share one loop.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..augmenter import FlipCheckedConfig

__all__ = ["WholeInputConfig", "UnitEdit", "FlipOutcome", "edit_until_flipped", "flip_decision", "input_units", "RANKINGS",
           "UNITS", "paper_loop_values"]

#: How units are ranked: ``checker``: the checker's probability of the row's label for each unit read alone;
#: ``occlusion``: how much that probability for the whole input drops when the unit is left out.
RANKINGS = ("checker", "occlusion")
#: What the loop edits and reads alone: sentences (a one-sentence input's clauses), or every sentence's clauses.
UNITS = ("sentences", "clauses")


@dataclass
class WholeInputConfig(FlipCheckedConfig):
    """The edit-until-flipped switch and its budget, shared by the augmenters that edit text with a generator."""

    until_flipped: bool = field(default=False, metadata={
        "help": "Edit the units (sentences; clauses of a one-sentence input) that carry the row's label, strongest "
                "first, re-checking the whole edited input after each round, until the checker gives the target "
                "label with flip_margin over its accept threshold and no unit read alone gives the old label at the "
                "residual; a row that does not get there within max_edits is skipped (skipped:not_flipped, or "
                "skipped:residual when only units left with the old verdict stand in the way). Needs a checker. "
                "Sentiment and text tasks."})
    max_edits: int = field(default=6, metadata={
        "help": "With until_flipped: the most unit edits per row and target before it is given up (a retry counts "
                "as an edit). 0: no cap, as many as the units need: every unit that carries the row's label, each "
                "with its retries."})
    edits_per_round: int = field(default=2, metadata={
        "help": "With until_flipped: units edited between two checks of the whole input."})
    flip_margin: float = field(default=0.1, metadata={
        "help": "With until_flipped: how far above the checker's accept threshold (0.5 without one) the whole "
                "input's probability of the target must be to stop editing."})
    residual: float = field(default=0.8, metadata={
        "help": "With until_flipped: editing also goes on while a unit read alone still gives the row's label at "
                "least this probability (an unedited unit, or an edit that did not flip it), so that no sentence "
                "keeps the old verdict; a row left with one when the budget is spent is skipped:residual, the "
                "units named in its cf_edit. 0.5: no unit may read as the row's label at all. 1.0: off."})
    retries: int = field(default=0, metadata={
        "help": "With until_flipped: how many more times a unit is edited when, read alone after its edit, it still "
                "gives the row's label at the residual or more (its new text is edited again, after the units not "
                "yet tried). 0: each unit once."})
    ratings: bool = field(default=False, metadata={
        "help": "With until_flipped on positive/negative labels: a unit holding a rating (3/10, 2 out of 5 "
                "stars) that leans to the row's label counts as carrying it (so it is edited, and is never left "
                "behind by the residual check), and a rating still leaning that way after the edit is turned to "
                "the other end of its scale (3/10 -> 8/10). The checker alone misses most ratings; on 50 CAD dev "
                "reviews it turned the ratings but gave no more clean flips (off by default)."})
    units: str = field(default="sentences", metadata={
        "help": "With until_flipped: what is edited and read alone. 'sentences' (a one-sentence input: its "
                "clauses); 'clauses': the clauses of every sentence (split before but/yet/although, after ; and :), "
                "so in a mixed sentence (\"Great to look at but purely awful\") only the clause that carries the "
                "label is rewritten and the rest of the sentence is copied as it stands."})
    rank_units: str = field(default="checker", metadata={
        "help": "With until_flipped: 'checker' ranks units by the checker's probability of the row's label for "
                "each unit alone; 'occlusion' by how much the whole input's probability drops without the unit."})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.edits_per_round < 1:
            raise ValueError(f"edits_per_round must be >= 1, got {self.edits_per_round}.")
        if self.max_edits < 0 or self.retries < 0:  # the types are checked with every typed config's fields
            raise ValueError(f"max_edits (0: no cap) and retries must be >= 0, got {self.max_edits} and "
                             f"{self.retries}.")
        if not 0.5 <= self.residual <= 1.0:
            raise ValueError(f"residual must be in [0.5, 1] (1.0: off), got {self.residual}.")
        if not 0.0 <= self.flip_margin < 1.0:
            raise ValueError(f"flip_margin must be in [0, 1), got {self.flip_margin}.")
        if self.units not in UNITS:
            raise ValueError(f"units must be one of {UNITS}, got {self.units!r}.")
        if self.rank_units not in RANKINGS:
            raise ValueError(f"rank_units must be one of {RANKINGS}, got {self.rank_units!r}.")


def paper_loop_values(how_the_paper_edits: str) -> tuple[dict[str, Any], dict[str, str]]:
    """A paper preset's entries for the loop's fields: ``until_flipped`` off, cited to how the paper edits, and
    the budget fields marked as the library's own (they only act with the loop on)."""
    from ..registry.presets import PaperValue

    own = "the library's edit-until-flipped loop (off in the paper preset); only acts with until_flipped=True"
    return ({"until_flipped": PaperValue(False, how_the_paper_edits)},
            {name: own for name in ("max_edits", "edits_per_round", "flip_margin", "rank_units", "residual",
                                    "retries", "ratings", "units")})


@dataclass
class UnitEdit:
    """One unit to edit, as handed to ``propose``: the row (its index in the loop's inputs), the unit's
    ``position`` among the row's ``units`` (as they read now, earlier edits made), its ``text`` and the
    ``target`` label."""

    row: int
    position: int
    text: str
    units: list[str]
    target: str

    def context(self, neighbours: int = 1) -> str | None:
        """The neighbouring units with ``[edit]`` where this one stands (the editors' context format)."""
        before = self.units[max(0, self.position - neighbours):self.position]
        after = self.units[self.position + 1:self.position + 1 + neighbours]
        return " ".join([*before, "[edit]", *after]) if before or after else None


@dataclass
class FlipOutcome:
    """What the loop made of one row: ``text`` (None when it did not flip), the ``edits`` made (position, old,
    new and the proposer's info), the whole input's probability of the target after the last round, the
    ``rounds`` run and, when there is no text, the ``reason`` (``not_flipped``; ``residual``: the whole input reads
    as the target but ``residual`` units, read alone, still give the old label; ``no_units`` or the proposer's)."""

    text: str | None
    edits: list[dict[str, Any]]
    probability: float | None
    rounds: int
    reason: str | None = None
    residual: list[dict[str, Any]] = field(default_factory=list)

    def edit(self, target: str) -> dict[str, Any]:
        """The ``cf_edit`` of the counterfactual (the loop's rounds and probability, the units edited)."""
        return {"target": target, "until_flipped": {"rounds": self.rounds, "probability": self.probability},
                "sentences": self.edits}

    def note(self, target: str) -> dict[str, Any]:
        """What a skipped row keeps in its original's ``cf_edit``: the target, the reason and, for ``residual``, the
        units that still carry the old label (position, text, probability)."""
        return {"target": target, "reason": self.reason, "probability": self.probability,
                **({"residual": self.residual} if self.residual else {})}


_CLAUSE = re.compile(r"(?<=[;:])\s+|(?<=,)\s+(?=(?:but|yet|although|though|while|whereas|however|so)\b)"
                     r"|\s+(?=(?:but|yet|although|whereas)\b)", re.IGNORECASE)


def input_units(text: str, clauses: bool = False) -> list[str]:
    """The units an input is edited in: its sentences; a one-sentence input, its clauses (split before ``but``,
    ``although`` and the like, and after ``;``); with ``clauses``, the clauses of every sentence. Joined by single
    spaces they give the text back (up to spacing).

    Examples:
        >>> input_units("Great cast. Dull plot.")
        ['Great cast.', 'Dull plot.']
        >>> input_units("The cast is great, but the plot drags.")
        ['The cast is great,', 'but the plot drags.']
        >>> input_units("Great to look at but awful. I left.", clauses=True)
        ['Great to look at', 'but awful.', 'I left.']
    """
    from ..text.sentences import split_sentences

    sentences = split_sentences(text)
    if len(sentences) != 1 and not clauses:
        return sentences
    return [c for s in sentences for c in _clauses(s)]


def _clauses(sentence: str) -> list[str]:
    return [c.strip() for c in _CLAUSE.split(sentence) if c and c.strip()] or [sentence]


def flip_decision(checker: Any, config: WholeInputConfig) -> Any:
    """The loop's `cfaug_hf.filters.FlipCheck`: the method's ``checker_threshold`` (else the checker's calibrated
    one, else its top prediction) plus ``flip_margin``, and ``residual`` for units read alone."""
    from ..filters.flip_check import FlipCheck

    return FlipCheck(checker, config.checker_threshold, margin=config.flip_margin, residual=config.residual)


_POLES = {"negative": False, "positive": True}


def _leans(unit: str, label: str) -> bool:
    """Whether ``unit`` holds a rating on ``label``'s side of its scale (sentiment labels only)."""
    from ..text.ratings import rating_lean

    side = _POLES.get(label.casefold())
    lean = rating_lean(unit) if side is not None else None
    return lean is not None and (lean > 0.6 if side else lean < 0.4)


def _read(p: float, unit: str, label: str, ratings: bool) -> float:
    # a rating on the label's side carries it, whatever the checker read in the sentence around it
    return max(p, 0.95) if ratings and _leans(unit, label) else p


def _alone(units: list[list[str]], labels: Sequence[str], checker: Any, ratings: bool = False) -> list[list[float]]:
    """Each unit's probability of its row's label, read alone (one checker call for all rows)."""
    flat = [u for row in units for u in row]
    probs = checker.predict_proba(flat) if flat else []
    out, k = [], 0
    for row, label in zip(units, labels):
        col = checker.label_id(label)
        out.append([_read(float(p[col]), u, label, ratings) for p, u in zip(probs[k:k + len(row)], row)])
        k += len(row)
    return out


def _ranked(units: list[str], label: str, checker: Any, how: str, scorer: Any, alone: list[float]) -> list[int]:
    """Positions of the units that carry ``label``, strongest first."""
    if scorer is not None:
        scores = [float(s) for s in scorer(units, label)]
        floor = 0.5 if all(0.0 <= s <= 1.0 for s in scores) else float("-inf")
    elif how == "occlusion" and len(units) > 1:
        whole = " ".join(units)
        left_out = [" ".join(units[:i] + units[i + 1:]) for i in range(len(units))]
        probs = checker.predict_proba([whole, *left_out])[:, checker.label_id(label)]
        scores, floor = [float(probs[0] - p) for p in probs[1:]], 0.0
    else:
        scores, floor = alone, 0.5
    keep = [i for i, s in enumerate(scores) if s > floor]  # even odds or less: the unit does not carry the label
    return sorted(keep, key=lambda i: (-scores[i], i))


def _apply(requests: list[UnitEdit], answers: list[tuple[str | None, dict[str, Any], str | None]],
           units: list[list[str]], edits: list[list[dict[str, Any]]],
           reasons: list[str | None], labels: Sequence[str] = (), ratings: bool = False) -> list[tuple[int, int]]:
    """Put the round's edits in place (a unit the proposer could not edit keeps its reason; with ``ratings``, a
    rating still on the old label's side is turned; a new unit that stutters where the old one did not, "the
    downbeat downbeat downbeat upbeat", is not put in, whoever proposed it: ``llm_repetition``); the (row,
    position) of each edit made."""
    from ..generation import stutters_more
    from ..text.ratings import flip_ratings

    made = []
    for req, (new, info, why) in zip(requests, answers):
        if ratings and _leans(new if new and new.strip() else req.text, labels[req.row]):
            new, info, why = flip_ratings(new if new and new.strip() else req.text), {**(info or {}),
                                                                                      "rating_turned": True}, None
        if new is None or not new.strip():
            reasons[req.row] = why or "llm_unchanged"
            continue
        if stutters_more(new, req.text):
            reasons[req.row] = "llm_repetition"
            continue
        edits[req.row].append({"position": req.position, "old": req.text, "new": new.strip(),
                               **{k: v for k, v in (info or {}).items() if v is not None}})
        units[req.row] = units[req.row][:req.position] + [new.strip()] + units[req.row][req.position + 1:]
        made.append((req.row, req.position))
    return made


def _rescore(made: list[tuple[int, int]], units: list[list[str]], labels: Sequence[str], targets: Sequence[str],
             checker: Any, prob: list[float | None], alone: list[list[float]], ratings: bool = False,
             reader: Any = None) -> None:
    """The whole inputs of the rows edited this round (``checker``), then each new unit alone (does it still say
    the old label? ``reader``, the checker itself when None)."""
    rows = sorted({i for i, _ in made})
    if not rows:
        return
    reader = reader or checker
    wholes = [" ".join(units[i]) for i in rows]
    news = [units[i][p] for i, p in made]
    if reader is checker:  # one call for both
        probs = checker.predict_proba(wholes + news)
        whole_p, unit_p = probs[:len(rows)], probs[len(rows):]
    else:
        whole_p, unit_p = checker.predict_proba(wholes), reader.predict_proba(news)
    for i, p in zip(rows, whole_p):
        prob[i] = float(p[checker.label_id(targets[i])])
    for (i, pos), p in zip(made, unit_p):
        alone[i][pos] = _read(float(p[reader.label_id(labels[i])]), units[i][pos], labels[i], ratings)


def edit_until_flipped(texts: Sequence[str], labels: Sequence[str], targets: Sequence[str], *,
                       propose: Callable[[list[UnitEdit]], list[tuple[str | None, dict[str, Any], str | None]]],
                       checker: Any, config: WholeInputConfig, scorer: Any = None,
                       decision: Any = None) -> list[FlipOutcome]:
    """Run the loop for each (text, label, target), all rows' units of a round in one ``propose`` call.

    ``propose(requests)`` returns, per `UnitEdit`, ``(new unit text or None, info for provenance, reason it
    failed or None)``; a unit it cannot edit is passed over (counted against the budget). ``checker`` scores whole
    inputs; units read alone (``rank_units='checker'`` and the residual check) are scored by its
    ``sentence_checker`` when it has one (a checker trained on single sentences), else by the checker itself.
    ``scorer``, when given, ranks units instead: ``(units, label) -> scores``, higher carries the label more.
    ``decision`` (a `cfaug_hf.filters.FlipCheck`) says when a row is flipped; by default `flip_decision` of the
    checker and config.

    Examples:
        >>> from cfaug_hf.testing import keyword_checker
        >>> checker = keyword_checker({"positive": ["good", "great"], "negative": ["bad", "dull"]})
        >>> swap = {"Dull plot.": "Gripping plot.", "Bad ending.": "Great ending."}
        >>> propose = lambda reqs: [(swap.get(r.text), {}, None if r.text in swap else "llm_unchanged") for r in reqs]
        >>> out = edit_until_flipped(["Dull plot. Nice hat. Bad ending."], ["negative"], ["positive"],
        ...                          propose=propose, checker=checker, config=WholeInputConfig(edits_per_round=1))
        >>> out[0].text, [e["position"] for e in out[0].edits], out[0].rounds
        ('Gripping plot. Nice hat. Great ending.', [0, 2], 2)
    """
    if checker is None:
        raise ValueError("until_flipped needs a checker: it decides when the whole input reads as the target.")
    if not len(texts) == len(labels) == len(targets):
        raise ValueError(f"edit_until_flipped got {len(texts)} texts, {len(labels)} labels and {len(targets)} "
                         f"targets.")
    decision = decision or flip_decision(checker, config)
    reader = decision.reader
    units = [input_units(t, clauses=config.units == "clauses") for t in texts]
    alone = _alone(units, labels, reader, config.ratings)
    queue = [_ranked(u, label, checker, config.rank_units, scorer, a) if u else []
             for u, label, a in zip(units, labels, alone)]
    # 0: no cap; every unit in the queue, each with its retries
    budget = [config.max_edits or len(q) * (1 + config.retries) for q in queue]
    retried: list[dict[int, int]] = [{} for _ in texts]
    edits: list[list[dict[str, Any]]] = [[] for _ in texts]
    tried = [0] * len(texts)
    reasons: list[str | None] = [None] * len(texts)
    prob: list[float | None] = [None] * len(texts)
    rounds = [0] * len(texts)
    active = [i for i in range(len(texts)) if queue[i]]
    for i in range(len(texts)):
        if not queue[i]:
            reasons[i] = "no_units"
    while active:
        requests: list[UnitEdit] = []
        for i in active:
            room = min(config.edits_per_round, budget[i] - tried[i])
            take, queue[i] = queue[i][:room], queue[i][room:]
            tried[i] += len(take)
            rounds[i] += 1
            requests += [UnitEdit(i, pos, units[i][pos], units[i], targets[i]) for pos in take]
        answers = propose(requests) if requests else []
        if len(answers) != len(requests):
            raise RuntimeError(f"propose returned {len(answers)} answers for {len(requests)} units.")
        made = _apply(requests, answers, units, edits, reasons, labels, config.ratings)
        _rescore(made, units, labels, targets, checker, prob, alone, config.ratings, reader)
        _requeue(made, alone, queue, retried, decision.residual, config.retries)
        still = []
        for i in active:
            if decision.flipped(prob[i], alone[i]):
                continue  # flipped
            if queue[i] and tried[i] < budget[i]:
                still.append(i)
            elif edits[i]:
                reasons[i] = "not_flipped"
        active = still
    return [_outcome(units[i], edits[i], prob[i], alone[i], rounds[i], reasons[i], decision) for i in range(len(texts))]


def _requeue(made: list[tuple[int, int]], alone: list[list[float]], queue: list[list[int]],
             retried: list[dict[int, int]], residual: float, retries: int) -> None:
    """An edit that did not turn its unit (read alone, still the old label at ``residual``): its new text goes back
    in the queue, after the units not yet tried, at most ``retries`` times."""
    for i, pos in made:
        if alone[i][pos] >= residual and retried[i].get(pos, 0) < retries:
            retried[i][pos] = retried[i].get(pos, 0) + 1
            queue[i].append(pos)


def _outcome(units: list[str], edits: list[dict[str, Any]], prob: float | None, alone: list[float], rounds: int,
             reason: str | None, decision: Any) -> FlipOutcome:
    """One row's `FlipOutcome`: its text where it flipped; else its reason, ``residual`` (with the units) where the
    whole input passes and only units that still read as the old label stand in the way."""
    flipped = bool(edits) and decision.flipped(prob, alone)
    reason, left = None if flipped else reason or "not_flipped", []
    if reason == "not_flipped" and prob is not None and decision.flipped(prob, []):
        reason = "residual"
        left = [{"position": k, "text": units[k], "probability": round(alone[k], 4)} for k in decision.carrying(alone)]
    return FlipOutcome(" ".join(units) if flipped else None, sorted(edits, key=lambda e: e["position"]),
                       None if prob is None else round(prob, 4), rounds, reason, left)
