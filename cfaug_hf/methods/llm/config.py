from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...registry.roles import Role
from ..until_flipped import WholeInputConfig

__all__ = ["ROLES", "LLMConfig", "LLM_TASKS", "TARGET_CHOICES"]

LLM_TASKS = ("auto", "sentiment", "nli", "ner", "re")
TARGET_CHOICES = ("auto", "all", "random", "balanced", "choose")


@dataclass
class LLMConfig(WholeInputConfig):
    """Settings of LLM-prompted counterfactuals. ``LLMCounterfactualAugmenter.from_preset("paper")`` gives Li et
    al. (2024)'s; the defaults differ where they measured better (see docs/methods/llm.md, departures)."""

    task: str = field(default="auto", metadata={
        "help": "Template: 'sentiment', 'nli' (the hypothesis is revised), 'ner' (entities replaced by same-type "
                "words), 're' (relation extraction over <e1>/<e2> markup) or 'auto' (from the schema's task)."})
    guidelines: bool = field(default=True, metadata={
        "help": "Put the task guidelines (definition and step-by-step instructions) before the demonstrations. The "
                "paper found them helpful on three of four tasks."})
    cot: bool = field(default=False, metadata={
        "help": "Chain of thought: demonstrations name the causal words and their replacements before the "
                "revision (sentiment, NLI, RE). The paper found it does not reliably help; inconsistent revisions "
                "are counted as cot:inconsistent."})
    demonstrations: list[dict[str, Any]] | None = field(default=None, metadata={
        "help": "Fixed demonstrations replacing the built-in ones (keys per task: see "
                "cfaug_hf.methods.llm.prompts)."})
    demo_pool: list[dict[str, Any]] | None = field(default=None, metadata={
        "help": "A pool of demonstrations to choose from per input by embedding similarity (needs demo_encoder=); "
                "sentiment, NLI and RE use pool entries whose label is the input's label."})
    num_demonstrations: int = field(default=1, metadata={
        "help": "Demonstrations chosen from demo_pool per input (the paper used one)."})
    builtin_demonstrations: int | None = field(default=None, metadata={
        "help": "How many of the built-in demonstrations go into each prompt: None uses all of them (2 for "
                "sentiment and NLI); the paper gives one (Li et al. 2024, Appendix A.3)."})
    targets: str = field(default="auto", metadata={
        "help": "Target labels per input: 'all' other labels, one 'random' other label, or 'balanced' (one label "
                "drawn so that targets are uniform over the dataset, countering the LLM's and the data's skew; "
                "needs label_counts, which augment() fills in). 'auto' is 'all' up to three labels, else 'balanced'. "
                "'choose' (relation extraction): the LLM picks one relation from the candidates, or answers None "
                "(the paper's RE prompt). NER has no target label (entities keep their types)."})
    exclude_targets: list[str] = field(default_factory=list, metadata={
        "help": "Labels never used as targets (e.g. a relation data set's 'Other')."})
    label_counts: dict[str, int] | None = field(default=None, metadata={
        "help": "Rows per label of the data being augmented, for targets='balanced'."})
    per_target: int = field(default=1, metadata={
        "help": "Counterfactuals kept per target (NER: per input) from the LLM's candidates; ask the LLM for as "
                "many (num_return_sequences / n), or, for NER, the counterfactuals use the first, second, ... "
                "proposed replacement of each entity."})
    constraints: bool = field(default=True, metadata={
        "help": "Run the task's constraint filter first (NER: entity types and context; RE: markup, entities, "
                "order; NLI: premise unchanged)."})
    entity_type_names: dict[str, str] | None = field(default=None, metadata={
        "help": "How entity types are named in NER prompts (default: PER -> person, ORG -> organization, ...)."})
    prompt_template: str | None = field(default=None, metadata={
        "text_file": True,
        "help": "Your own prompt, used verbatim instead of the built-in guidelines and demonstrations (e.g. the "
                "paper's, printed in its Tables 15 and 18): the template's text with ${text}, ${label}, ${target} "
                "(sentiment) or ${premise}, ${hypothesis}, ${label}, ${targets} (NLI) where the row's values go. "
                "Sentiment and NLI prompts."})
    edit_side: str = field(default="hypothesis", metadata={
        "help": "NLI: the sentence rewritten, the other kept as the editor's context. 'hypothesis' (the paper's; "
                "every LLM) or 'premise' (needs an Editor trained on revised premises, task 'nli-premise': "
                "scripts/build_editors.py --task nli-premise)."})
    max_input_chars: int = field(default=1500, metadata={
        "help": "Longer texts are cut at a word boundary in the prompt (counted as truncated:llm_input); the cut "
                "part is kept as it was in the counterfactual."})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.task not in LLM_TASKS:
            raise ValueError(f"task must be one of {LLM_TASKS}, got {self.task!r}.")
        if self.targets not in TARGET_CHOICES:
            raise ValueError(f"targets must be one of {TARGET_CHOICES}, got {self.targets!r}.")
        if self.builtin_demonstrations is not None and self.builtin_demonstrations < 1:
            raise ValueError(f"builtin_demonstrations must be >= 1 or None, got {self.builtin_demonstrations}.")
        if self.per_target < 1 or self.num_demonstrations < 1:
            raise ValueError("per_target and num_demonstrations must be >= 1.")
        if self.edit_side not in ("hypothesis", "premise"):
            raise ValueError(f"edit_side must be 'hypothesis' or 'premise', got {self.edit_side!r}.")
        if self.max_input_chars < 20:
            raise ValueError(f"max_input_chars must be >= 20, got {self.max_input_chars}.")
        for name in ("demonstrations", "demo_pool"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, [dict(d) for d in value])
        self.exclude_targets = list(self.exclude_targets)


#: The component roles of the augmenter (`cfaug_hf.registry.roles.Role`), by constructor keyword.
ROLES: dict[str, Role] = {
    "llm": Role(("http_llm", "editor", "generator"), cli_default="default", help=(
        "the LLM: 'default' (the editor shipped for the task, sentiment or NLI; else 'local'), 'local' "
        "(SmolLM2-135M-Instruct, prompted), a saved Generator or Editor folder or Hub id, or an OpenAI-"
        "compatible endpoint URL ending in /v1 (its key is read from --llm-api-key-env)")),
    "checker": Role(("checker",), help=(
        "the label checker that keeps counterfactuals whose new label it predicts: a saved LabelChecker "
        "folder or Hub id [default: the checker shipped for the task]")),
    "tagger": Role(("ner",), help=(
        "entity recognizer for entity-preserving edits: 'spacy' (en_core_web_sm, the spacy extra), 'stanza', "
        "or a saved recognizer folder")),
    "demo_encoder": Role(text=True, help=(
        "a sentence encoder's Hub id or folder, picking the demonstrations nearest each row")),
}
