from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...registry.roles import Role
from ..until_flipped import WholeInputConfig

__all__ = ["ROLES", "COREConfig", "CORE_MODES", "CORE_TASKS"]

#: "core" retrieves then edits; "retrieval_only" uses the best retrieved excerpt itself as the counterfactual (the
#: paper's CF-DPR ablation); "editor_only" prompts the editor without retrieved words (its GPT-3 ablation).
CORE_MODES = ("core", "retrieval_only", "editor_only")
CORE_TASKS = ("auto", "sentiment", "nli", "text")


@dataclass
class COREConfig(WholeInputConfig):
    """CORE settings. ``COREAugmenter.from_preset("paper")`` gives Dixit et al. (2022)'s; the defaults differ where
    they measured better (see docs/methods/core.md, departures)."""

    mode: str = field(default="core", metadata={
        "help": "'core' (retrieve, then edit with the retrieved words), 'retrieval_only' (the best retrieved excerpt "
                "is the counterfactual: the CF-DPR ablation) or 'editor_only' (no retrieval: the editor ablation)."})
    task: str = field(default="auto", metadata={
        "help": "Prompt template: 'sentiment', 'nli' (the hypothesis is edited), 'text' (any classification) or "
                "'auto' (from the schema's task)."})
    top_k: int = field(default=20, metadata={"help": "Excerpts retrieved per input (de-duplicated)."})
    keyword_excerpts: int = field(default=2, metadata={
        "help": "Excerpts the keywords come from: the best ones after re-ranking (CORE's cross-encoder keeps 2), "
                "or the first retrieved without a re-ranker."})
    max_keywords: int | None = field(default=None, metadata={
        "help": "Keywords per prompt; None is the task's default (NLI: the first 5; sentiment and text: 8); 0 keeps "
                "every one (the paper: all content words of the retrieved excerpts)."})
    targets: str = field(default="all", metadata={
        "help": "Which labels to write counterfactuals for: 'all' other labels, or 'one' drawn per row (seeded). "
                "NLI uses entailment <-> contradiction only; neutral rows are passed through (as in the paper)."})
    neutral_label: str = field(default="neutral", metadata={
        "help": "NLI label left out of editing (any case); ignored when the schema has none."})
    demonstrations: list[dict[str, Any]] | None = field(default=None, metadata={
        "help": "Few-shot demonstrations replacing the built-in ones (see cfaug_hf.methods.core.prompts for the keys "
                "per task). The paper used 2 for sentiment and 4 for NLI."})
    instructions: str | None = field(default=None, metadata={
        "help": "Task instructions replacing the built-in ones (after the crowd instructions of Kaushik et al.)."})
    edit_sentences: int = field(default=0, metadata={
        "help": "0 edits the whole text. N > 0 edits only the N sentences that carry the label most (scored by "
                "sentence_scorer=, or the checker's probability of the row's label), each with its own retrieval "
                "and prompt, and puts the edits back in place: CORE's way with long reviews, where most sentences "
                "are plot or cast and do not carry sentiment. Sentiment and text tasks only."})
    prompt_template: str | None = field(default=None, metadata={
        "text_file": True,
        "help": "Your own prompt, used verbatim instead of the built-in instructions and demonstrations (e.g. the "
                "paper's, printed in its Tables 10-11): the template's text with ${text} (NLI: ${premise}, "
                "${hypothesis}), ${label}, ${target} and ${keywords} (the keyword list, written as the reference "
                "code writes it: ['w1', 'w2']) where the row's values go."})
    max_input_chars: int = field(default=2000, metadata={
        "help": "Texts longer than this are cut (at a word boundary) inside the prompt, and counted."})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in CORE_MODES:
            raise ValueError(f"mode must be one of {CORE_MODES}, got {self.mode!r}.")
        if self.task not in CORE_TASKS:
            raise ValueError(f"task must be one of {CORE_TASKS}, got {self.task!r}.")
        if self.targets not in ("all", "one"):
            raise ValueError(f"targets must be 'all' or 'one', got {self.targets!r}.")
        if self.top_k < 1 or self.keyword_excerpts < 1:
            raise ValueError("top_k and keyword_excerpts must be >= 1.")
        if self.max_keywords is not None and self.max_keywords < 0:
            raise ValueError(f"max_keywords must be >= 0 (0: all) or None, got {self.max_keywords}.")
        if self.edit_sentences < 0:
            raise ValueError(f"edit_sentences must be >= 0, got {self.edit_sentences}.")
        if self.until_flipped and self.edit_sentences:
            raise ValueError(f"until_flipped and edit_sentences={self.edit_sentences} are two ways of choosing what "
                             f"to edit; set one (until_flipped edits the sentences that carry the label until the "
                             f"whole text flips, edit_sentences a fixed number of them).")
        if self.until_flipped and self.mode == "retrieval_only":
            raise ValueError("until_flipped edits with the editor; mode='retrieval_only' has none (use 'core' or "
                             "'editor_only').")
        if self.demonstrations is not None:
            self.demonstrations = [dict(d) for d in self.demonstrations]


#: The component roles of the augmenter (`cfaug_hf.registry.roles.Role`), by constructor keyword.
ROLES: dict[str, Role] = {
    "editor": Role(("http_llm", "editor", "generator"), help=(
        "the editor: a saved Editor folder or Hub id, 'local' (SmolLM2-135M-Instruct, prompted few-shot) or "
        "an OpenAI-compatible endpoint URL ending in /v1 [default: the editor shipped for the task]")),
    "retriever": Role(("bi_encoder",), help=(
        "the CF-DPR retrieval encoder: a saved BiEncoder folder or Hub id [default: the one shipped for sentiment "
        "and NLI]")),
    "index": Role(("corpus_index",), help=(
        "the corpus index the retriever built: a saved CorpusIndex folder or Hub id [default: the shipped "
        "retriever's index of its corpus, built on first use]")),
    "reranker": Role(("checker",), help="a LabelChecker that reranks retrieved sentences by the target label"),
    "checker": Role(("checker",), help=(
        "the label checker that keeps counterfactuals whose new label it predicts: a saved LabelChecker "
        "folder or Hub id [default: the checker shipped for the task]")),
    "sentence_scorer": Role(help="(sentences, label) -> scores, picking the sentences to edit (Python only)"),
}
