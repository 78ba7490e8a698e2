from __future__ import annotations

from dataclasses import dataclass, field

from ...augmenter import FlipCheckedConfig
from ...registry.roles import Role

__all__ = ["ROLES", "CrossAugConfig", "CROSSAUG_KINDS"]

#: The three counterfactual kinds of CrossAug: negative claim with the original evidence (REFUTES), original claim
#: with the edited evidence (REFUTES), negative claim with the edited evidence (SUPPORTS).
CROSSAUG_KINDS = ("c'+e", "c+e'", "c'+e'")


@dataclass
class CrossAugConfig(FlipCheckedConfig):
    """CrossAug settings. ``CrossAugAugmenter.from_preset("paper")`` gives the paper's (Lee et al., 2021); the
    defaults add the deletion and same-meaning rejections and the first acceptable candidate (see the departures
    table in docs/methods/crossaug.md)."""

    max_span_tokens: int = field(default=3, metadata={
        "help": "tau: evidence is edited only when both changed claim spans have at most this many word tokens."})
    min_span_tokens: int = field(default=1, metadata={
        "help": "Both changed spans need at least this many tokens; 1 means pure insertions/deletions give no e'."})
    kinds: tuple[str, ...] = field(default=CROSSAUG_KINDS, metadata={
        "help": "Which counterfactuals to emit: any of \"c'+e\", \"c+e'\", \"c'+e'\". (\"c'+e\",) is the paper's "
                "negative-claim-only ablation, (\"c+e'\", \"c'+e'\") its negative-evidence-only one."})
    supports_label: str = field(default="SUPPORTS", metadata={
        "help": "Label name (any case) of supported claims; only these rows are augmented."})
    refutes_label: str = field(default="REFUTES", metadata={"help": "Label name (any case) of refuted claims."})
    nei_label: str = field(default="NOT ENOUGH INFO", metadata={
        "help": "Label name of not-enough-info rows, if the schema has one."})
    keep_nei: bool = field(default=False, metadata={
        "help": "Pass NOT ENOUGH INFO rows through. The paper trains on SUPPORTS/REFUTES pairs only, so by default "
                "they are left out of the output (counted as skipped:nei_dropped)."})
    reject_deletions: bool = field(default=True, metadata={
        "help": "Skip rewrites whose only changes are deleted words (anywhere, any number) other than a negation: "
                "a claim with a clause removed is usually still supported, so (c', e, REFUTES) would be mislabelled. "
                "With several candidates from the generator, the first acceptable one is used. On by default; False "
                "is the paper's behaviour."})
    reject_same_meaning: bool = field(default=True, metadata={
        "help": "Skip rewrites whose every change keeps the meaning (another form of the same word, a spelling "
                "variant or typo, an abbreviation, an article, the tense of a copula; see cfaug_hf.text."
                "same_meaning): they are not negations, so their REFUTES rows would be mislabelled. On by default; "
                "False is the paper's behaviour."})
    top_candidate_only: bool = field(default=False, metadata={
        "help": "Use the generator's top candidate only, and skip the row when it is unusable (the paper's "
                "behaviour: c' identical to c skips the row). False: the first acceptable candidate of those the "
                "generator returns."})

    def __post_init__(self) -> None:
        super().__post_init__()
        self.kinds = tuple(self.kinds)
        bad = [k for k in self.kinds if k not in CROSSAUG_KINDS]
        if bad or not self.kinds:
            raise ValueError(f"kinds must be a non-empty subset of {CROSSAUG_KINDS}, got {list(self.kinds)}.")
        if not 1 <= self.min_span_tokens <= self.max_span_tokens:
            raise ValueError(f"Need 1 <= min_span_tokens <= max_span_tokens, got {self.min_span_tokens} and "
                             f"{self.max_span_tokens}.")


#: The component roles of the augmenter (`cfaug_hf.registry.roles.Role`), by constructor keyword.
ROLES: dict[str, Role] = {
    "generator": Role(("generator",), help=(
        "the claim negator: a saved Generator folder or Hub id [default: the one shipped with the package]")),
    "checker": Role(("checker",), help=(
        "the label checker that keeps counterfactuals whose new label it predicts: a saved LabelChecker "
        "folder or Hub id [default: the checker shipped for the task]")),
}
