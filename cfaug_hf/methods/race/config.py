from __future__ import annotations

from dataclasses import dataclass, field

from ...augmenter import FlipCheckedConfig
from ...registry.roles import Role

__all__ = ["ROLES", "RACEConfig"]


@dataclass
class RACEConfig(FlipCheckedConfig):
    """RACE settings. ``RACEAugmenter.from_preset("paper")`` gives Zhu et al. (2023)'s; the defaults differ where they
    measured better (see docs/methods/race.md, departures)."""

    causal_entities: int = field(default=3, metadata={
        "help": "Causal entities kept per instance: the entity mentions of the evidence whose occlusion lowers the "
                "checker's probability of the gold label most (the token rationales, restricted to entities)."})
    min_drop: float = field(default=0.0, metadata={
        "help": "An entity is causal only if occluding it lowers that probability by more than this."})
    sentence_rationales: int = field(default=0, metadata={
        "help": "Evidence pieces fed to the claim generator: 0 = every piece holding a causal entity (and the most "
                "important piece by occlusion); N = the N pieces whose occlusion matters most."})
    token_rationale_column: str | None = field(default=None, metadata={
        "help": "Precomputed token rationales (a column holding, per row, the words or entity strings judged "
                "causal): entities overlapping them are the causal entities; no occlusion is run."})
    sentence_rationale_column: str | None = field(default=None, metadata={
        "help": "Precomputed sentence rationales (a column holding, per row, the indices of the evidence pieces)."})
    replace_types: list[str] = field(default_factory=lambda: ["GPE", "DATE", "NUM"], metadata={
        "help": "Entity types replaced by another entity of the same type seen in the dataset (in-dataset)."})
    swap_types: list[str] = field(default_factory=lambda: ["PERSON", "ORG"], metadata={
        "help": "Entity types swapped among the instance's own causal entities of the same type (in-instance), "
                "when it has two or more."})
    lexicon: dict[str, dict[str, int]] | None = field(default=None, metadata={
        "help": "The dataset's entities of replace_types with counts (fit() or augment() builds it)."})
    evidence_counterfactuals: bool = field(default=True, metadata={
        "help": "Emit (claim, edited evidence, REFUTES) for SUPPORTS instances that pass the ad-check."})
    claim_counterfactuals: bool = field(default=True, metadata={
        "help": "Emit (generated claim, evidence, flipped label) for SUPPORTS and REFUTES instances."})
    piece_separator: str = field(default="\n", metadata={
        "help": "How evidence given as one string is split into pieces (and joined back)."})
    generator_separator: str = field(default=" ", metadata={
        "help": "How the sentence rationales are joined into the claim generator's input."})
    edit: bool = field(default=True, metadata={
        "help": "Edit the evidence of SUPPORTS instances. False is the paper's -EDIT ablation: their claims are "
                "generated from the original evidence (and rarely flip, so the post-check drops most)."})
    constrained: bool = field(default=True, metadata={
        "help": "Decode claims under the entity constraint. False is the paper's -CONSTRAINT ablation (plain beam "
                "search)."})
    post_check: str = field(default="target", metadata={
        "help": "Which candidate claims pass the post-check (the checker over claim + original evidence): "
                "'target' (ours: the checker's label is the flipped label), 'not_original' (the paper, §3.3: any "
                "label other than the original y, NOT ENOUGH INFO included) or 'off' (every candidate: the paper's "
                "-FILTER setting of its intrinsic evaluation, §5.3)."})
    select: str = field(default="fidelity", metadata={
        "help": "'fidelity': keep the post-checked candidate with the best MoverScore + entity fidelity (the "
                "paper's filtering, §3.4); 'first': the first one (the generator's best beam), no fidelity "
                "filtering."})
    paper_decoding: bool = field(default=True, metadata={
        "help": "Decode claims with the paper's beam search (num_beams, num_candidates, max_new_tokens below) on a "
                "copy of a Generator that shares its weights; False keeps the generator's own settings. Callables "
                "and sampling generators are used as they are."})
    num_beams: int = field(default=30, metadata={"help": "Beam width of claim generation (the paper's 30)."})
    num_candidates: int = field(default=10, metadata={
        "help": "Candidate claims per instance that the post-check and the fidelity pick choose among (the "
                "paper's 10)."})
    max_new_tokens: int = field(default=96, metadata={"help": "Longest generated claim in tokens (the paper's 96)."})
    semantic_weight: float = field(default=1.0, metadata={"help": "Weight of MoverScore fidelity in the final pick."})
    entity_weight: float = field(default=1.0, metadata={"help": "Weight of entity fidelity in the final pick."})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.causal_entities < 1:
            raise ValueError(f"causal_entities must be >= 1, got {self.causal_entities}.")
        if self.sentence_rationales < 0:
            raise ValueError(f"sentence_rationales must be >= 0, got {self.sentence_rationales}.")
        if not (self.evidence_counterfactuals or self.claim_counterfactuals):
            raise ValueError("evidence_counterfactuals and claim_counterfactuals are both off: nothing to produce.")
        if self.post_check not in ("target", "not_original", "off"):
            raise ValueError(f"post_check must be 'target', 'not_original' or 'off', got {self.post_check!r}.")
        if self.select not in ("fidelity", "first"):
            raise ValueError(f"select must be 'fidelity' or 'first', got {self.select!r}.")
        for name in ("num_beams", "num_candidates", "max_new_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}.")
        if self.num_candidates > self.num_beams:
            raise ValueError(f"num_candidates={self.num_candidates} exceeds num_beams={self.num_beams}.")
        if not self.piece_separator:
            raise ValueError("piece_separator must not be empty.")
        self.replace_types, self.swap_types = list(self.replace_types), list(self.swap_types)


#: The component roles of the augmenter (`cfaug_hf.registry.roles.Role`), by constructor keyword.
ROLES: dict[str, Role] = {
    "generator": Role(("generator",), help=(
        "the evidence -> claim generator: 'default' (the one shipped: SmolLM2-135M + LoRA on FEVEROUS), a saved "
        "Generator folder or Hub id")),
    "checker": Role(("checker",), help=(
        "the three-way label checker of the ad-check and post-check: 'default' (the one shipped: MiniLM + LoRA "
        "on FEVEROUS with NOT ENOUGH INFO copies), a saved LabelChecker folder or Hub id")),
    "ner": Role(("ner",), help=(
        "entity recognizer: 'default' (spaCy's en_core_web_sm, the spacy extra), 'spacy', 'stanza', or a saved "
        "recognizer folder")),
    "embedder": Role(text=True, help="the MoverScore sentence encoder: a Hub id or folder"),
}
