"""A sequence classifier over one text or a text pair, used to check that a counterfactual's label really flipped."""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .protocols import LabelScoring
from .base import ComponentLoadError, PretrainedComponent, load_weights, new_head_load
from ..sharing.configs import TypedConfig
from ..verbosity import get_logger

__all__ = ["LabelChecker", "LabelCheckerConfig", "DEFAULT_CHECKER", "default_checker", "resolve_checker"]

#: The value of an augmenter's ``checker=`` that means "the checker shipped for the schema's task".
DEFAULT_CHECKER = "default"
#: The subfolder a checker's sentence checker is saved in.
_SENTENCES = "sentences"

logger = get_logger(__name__)


@dataclass
class LabelCheckerConfig(TypedConfig):
    """How a `LabelChecker` reads its inputs."""

    max_length: int = field(default=128, metadata={
        "help": "Tokens per (first, second) pair; longer pairs are cut (longest text first) and counted."})
    batch_size: int = field(default=32, metadata={"help": "Pairs per forward pass."})
    piece_separator: str = field(default=" ", metadata={
        "help": "How a list-valued text (several evidence pieces) is joined into one string."})
    accept_threshold: float | None = field(default=None, metadata={
        "help": "The label-flip filter accepts a counterfactual when the checker's probability of its label is at "
                "least this (calibrated on held-out human counterfactuals for the shipped checkers); None: when "
                "the label is the top prediction. A filter's own threshold takes precedence."})

    def __post_init__(self) -> None:
        from ..filters.flip_check import check_threshold

        check_threshold("accept_threshold", self.accept_threshold)


class LabelChecker(PretrainedComponent):
    """Wraps any ``AutoModelForSequenceClassification`` over single texts or (claim, evidence) / (premise,
    hypothesis) pairs, with label names taken from the model's ``id2label``.

    A checker may carry a ``sentence_checker``: a second `LabelChecker` trained on single sentences, which the
    edit-until-flipped loop asks about one sentence at a time (which sentences still carry the old label) while this
    one judges whole inputs. It is saved in the folder's ``sentences/`` subfolder and loaded with it.

    Examples:
        >>> from cfaug_hf.testing import tiny_classifier
        >>> checker = LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES")))
        >>> checker.predict(["the cat sat"], [["the cat sat on the mat", "it was good"]])[0] in checker.label_names
        True
        >>> checker.predict_proba(["a dog"], ["a cat"]).shape
        (1, 2)
    """

    config_name = "cfaug_checker.json"
    component_type = "checker"
    config_class = LabelCheckerConfig
    pipeline_tag = "text-classification"
    card_summary = ("A label checker: a sequence classifier over single texts or (claim, evidence) / (premise, "
                    "hypothesis) pairs that cfaug-hf augmenters use to keep only counterfactuals whose label really "
                    "flipped.")

    def card_usage(self) -> str:
        usage = (f"Labels: {', '.join(self.label_names)}. Use `checker.predict(claims, evidences)` or pass it to an "
                 f"augmenter as `checker=`.")
        if self._sentence_checker is not None:
            usage += (f" It carries a sentence checker (`{_SENTENCES}/`, `checker.sentence_checker`) that the "
                      f"edit-until-flipped loop asks about one sentence at a time.")
        return usage

    def __init__(self, model: Any, tokenizer: Any, config: LabelCheckerConfig | None = None, *,
                 device: str | None = None, base_model: str | None = None,
                 training_info: dict[str, Any] | None = None, **overrides: Any) -> None:
        self._setup(model, tokenizer, config=config, overrides=overrides, device=device, base_model=base_model,
                    training_info=training_info)
        id2label = model.config.id2label
        self.label_names: tuple[str, ...] = tuple(str(id2label[i]) for i in range(model.config.num_labels))
        self._label_index = {n.casefold(): i for i, n in enumerate(self.label_names)}
        if len(self._label_index) != len(self.label_names):  # read case-insensitively, so one would shadow another
            raise ValueError(f"The checker's labels {list(self.label_names)} differ only in case; give every label a "
                             f"distinct name (the model config's id2label).")
        self._sentence_checker: LabelChecker | None = None

    @property
    def accept_threshold(self) -> float | None:
        """The calibrated probability a counterfactual's label must reach (``config.accept_threshold``); what
        `cfaug_hf.filters.FlipCheck` falls back to when no threshold is given."""
        return self.config.accept_threshold

    @property
    def sentence_checker(self) -> LabelChecker | None:
        """The checker that reads single sentences for the edit-until-flipped loop (None: this one reads them)."""
        return self._sentence_checker

    @sentence_checker.setter
    def sentence_checker(self, value: LabelChecker | None) -> None:
        if value is not None:
            if not isinstance(value, LabelChecker):
                raise TypeError(f"sentence_checker must be a LabelChecker or None, got {type(value).__name__}.")
            if value is self or value.sentence_checker is not None:
                raise ValueError("sentence_checker must be another LabelChecker without a sentence_checker of its own.")
            missing = [n for n in self.label_names if n.casefold() not in value._label_index]
            if missing:
                raise ValueError(f"The sentence_checker knows the labels {list(value.label_names)}, not {missing} "
                                 f"(this checker's labels {list(self.label_names)}).")
        self._sentence_checker = value

    def fingerprint(self) -> str:
        own = super().fingerprint()
        if self._sentence_checker is None:
            return own
        from ..fingerprint import digest_json

        return digest_json({"checker": own, "sentences": self._sentence_checker.fingerprint()})

    @classmethod
    def from_base(cls, name_or_path: str | os.PathLike, label_names: Sequence[str], *, revision: str | None = None,
                  device: str | None = None, config: LabelCheckerConfig | None = None,
                  **overrides: Any) -> LabelChecker:
        """A checker with a fresh classification head on pretrained weights (Hub id, folder or embedded copy)."""
        from transformers import AutoModelForSequenceClassification

        from ..pretrained import load_model, load_tokenizer, resolve_model

        names = list(label_names)
        with new_head_load():
            model = load_model(AutoModelForSequenceClassification, name_or_path, revision=revision,
                               num_labels=len(names), id2label=dict(enumerate(names)),
                               label2id={n: i for i, n in enumerate(names)})
        tokenizer = load_tokenizer(name_or_path, revision=revision)
        return cls(model, tokenizer, config, device=device, base_model=resolve_model(name_or_path, revision).name,
                   **overrides)

    def label_id(self, name: str) -> int:
        try:
            return self._label_index[name.casefold()]
        except KeyError:
            raise ValueError(f"Label {name!r} is not one of the checker's labels {list(self.label_names)}.") from None

    def _encode(self, first: list[str], second: list[str] | None) -> list[dict[str, list[int]]]:
        from ..pretrained import token_head

        tok, limit = self.tokenizer, self.config.max_length
        args = (first,) if second is None else (first, second)
        full = tok(*args, truncation=False)
        rows = [{k: full[k][i] for k in full.keys()} for i in range(len(first))]
        long = [i for i, r in enumerate(rows) if len(r["input_ids"]) > limit]
        if long:
            # tokenizers' longest_first truncation of a pair takes time and memory quadratic in its length (one
            # 10k-word pair: over 20 GB), so each side is first cut to its first `limit` tokens, which gives the
            # same result: longest_first never keeps more than `limit` tokens of either side.
            cut_args = ([token_head(tok, first[i], limit) for i in long],) if second is None else (
                [token_head(tok, first[i], limit) for i in long], [token_head(tok, second[i], limit) for i in long])
            cut = tok(*cut_args, truncation="longest_first", max_length=limit)
            for j, i in enumerate(long):
                rows[i] = {k: cut[k][j] for k in cut.keys()}
            self._count_truncated(len(long), "max_length", limit)
        cut_rows = set(long)
        self.last_truncated = [i in cut_rows for i in range(len(rows))]  # for the flip filter's row outcomes
        return rows

    def predict_proba(self, first: Sequence[str], second: Sequence[str | Sequence[str]] | None = None) -> Any:
        """Class probabilities, shape ``(n, num_labels)``, in the order of `label_names`."""
        import numpy as np
        import torch

        first = list(first)
        sep = self.config.piece_separator
        pairs = None if second is None else [s if isinstance(s, str) else sep.join(s) for s in second]
        if pairs is not None and len(pairs) != len(first):
            raise ValueError(f"Got {len(first)} first texts but {len(pairs)} second texts.")
        if not first:
            return np.zeros((0, len(self.label_names)), dtype=np.float32)
        rows = self._encode(first, pairs)
        order = sorted(range(len(rows)), key=lambda i: -len(rows[i]["input_ids"]))
        probs = np.zeros((len(rows), len(self.label_names)), dtype=np.float32)
        self.model.eval()
        for start in range(0, len(order), self.config.batch_size):
            idx = order[start:start + self.config.batch_size]
            batch = self.tokenizer.pad([rows[i] for i in idx], return_tensors="pt").to(self.device)
            with torch.inference_mode():
                logits = self.model(**batch).logits
            probs[idx] = logits.float().softmax(-1).cpu().numpy()
        self.stats["inputs"] += len(rows)
        return probs

    def predict(self, first: Sequence[str], second: Sequence[str | Sequence[str]] | None = None) -> list[str]:
        """The most likely label name for each input."""
        return [self.label_names[i] for i in self.predict_proba(first, second).argmax(-1)]

    # --------------------------------------------------------------------------------------------- save and load
    def get_config_dict(self) -> dict[str, Any]:
        out = {"checker": dataclasses.asdict(self.config), "label_names": list(self.label_names),
               "base_model": self.base_model, "adapter": self._saves_adapter(), "training": self.training_info}
        if self._sentence_checker is not None:
            out["sentence_checker"] = _SENTENCES
        return out

    def _save(self, folder: Path) -> None:
        super()._save(folder)
        if self._sentence_checker is not None:
            self._sentence_checker.save_pretrained(folder / _SENTENCES)

    @classmethod
    def _load(cls, folder: Path, config: dict[str, Any], *, device: str | None = None,
              **overrides: Any) -> LabelChecker:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        if config.get("adapter"):
            names = config.get("label_names")
            if not isinstance(names, list) or not names:
                raise ComponentLoadError(f"{folder / cls.config_name} holds an adapter but no label_names list.")
            # The adapter holds the classification head (peft's modules_to_save); the base gets a blank one first.
            model = cls._load_adapter(AutoModelForSequenceClassification, folder, config, num_labels=len(names),
                                      id2label=dict(enumerate(names)), label2id={n: i for i, n in enumerate(names)})
        else:
            model = load_weights(AutoModelForSequenceClassification, folder, "LabelChecker")
        tokenizer = AutoTokenizer.from_pretrained(folder)
        checker = cls(model, tokenizer, cls._config_section(folder, config, "checker", LabelCheckerConfig),
                      device=device,
                      training_info=config.get("training"), **overrides)
        checker.base_model = config.get("base_model")  # the original base, not the folder it was loaded from
        sentences = config.get("sentence_checker")
        if sentences is not None:
            # always the fixed subfolder: a saved config never names another path to read
            if sentences != _SENTENCES or not (folder / _SENTENCES / cls.config_name).is_file():
                raise ComponentLoadError(f"{folder / cls.config_name} names a sentence checker ({sentences!r}) but "
                                         f"{folder / _SENTENCES} holds no saved LabelChecker.")
            checker.sentence_checker = cls.from_pretrained(folder / _SENTENCES, device=device)
        return checker

    def __repr__(self) -> str:
        extra = ", sentence_checker=..." if self._sentence_checker is not None else ""
        return f"LabelChecker(labels={list(self.label_names)}, base_model={self.base_model!r}{extra})"


@functools.lru_cache(maxsize=None)
def _shipped_checker(folder: str) -> LabelChecker:
    return LabelChecker.from_pretrained(folder)


def default_checker(task: str) -> LabelChecker | None:
    """The flip checker shipped for ``task`` (a `LabelChecker`), or None when no checker ships for it.
    Loaded once per process (about a second from the installed MiniLM) and shared.

    Shipped: ``fact-verification`` (SUPPORTS / REFUTES; VitaminC and FEVER claims), ``natural-language-inference``
    (CAD-SNLI) and ``sentiment-analysis`` (CAD IMDb); each is all-MiniLM-L6-v2 with a 1.6 MB LoRA adapter, built by
    ``scripts/build_checkers.py`` and measured by ``benchmarks/flip_checker.py`` (see each folder's README.md).

    Examples:
        >>> default_checker("token-classification") is None
        True
    """
    from ..data import CHECKER_DIR, CHECKER_TASKS

    name = CHECKER_TASKS.get(task)
    if name is None:
        return None
    folder = CHECKER_DIR / name
    if not folder.is_dir():
        raise FileNotFoundError(f"The flip checker for {task!r} is missing from the installed package ({folder}); "
                                f"reinstall cfaug-hf, or pass checker=None to run without one.")
    return _shipped_checker(str(folder))


def resolve_checker(checker: Any, schema: Any, labels: Sequence[str], what: str) -> LabelChecker | None:
    """What an augmenter's ``checker=`` argument means: None (no check), ``"default"`` (the checker shipped for the
    schema's task, or None where none ships), a folder or Hub id (loaded), or a checker object. The checker must
    know every name in ``labels`` (the labels the augmenter writes).

    Examples:
        >>> from cfaug_hf import TaskSchema
        >>> resolve_checker(None, TaskSchema.sentiment(), ["positive"], "CORE") is None
        True
    """
    if checker is None:
        return None
    shipped = isinstance(checker, str) and checker == DEFAULT_CHECKER
    if shipped:
        checker = default_checker(schema.task)
        if checker is None:
            return None
    elif isinstance(checker, (str, os.PathLike)):
        checker = LabelChecker.from_pretrained(checker)
    if not isinstance(checker, LabelScoring):
        raise TypeError(f"{what}: checker must be a LabelChecker, a folder or Hub id of one, 'default' or None; got "
                        f"{type(checker).__name__}.")
    missing = [name for name in labels if name.casefold() not in {n.casefold() for n in checker.label_names}]
    if missing:
        source = f"The checker shipped for {schema.task!r}" if shipped else "The checker"
        raise ValueError(f"{what}: {source} knows the labels {list(checker.label_names)}, not {missing} (the labels "
                         f"this augmenter writes, from the schema's label column {schema.label_column!r}). Rename "
                         f"your labels, pass a checker trained on them (train_checker), or checker=None to run "
                         f"without the label-flip check.")
    return checker

