"""``cfaug train generator|checker|editor|retriever|selector``: the library's training functions from the command line.

Each reads a local dataset (a saved folder or a JSON/JSONL/CSV/Parquet file), trains with ``transformers.Trainer``
through the matching function (`train_generator`, `train_checker`,
`train_editor`, `train_cf_dpr`, `run_icda`) and
saves the component with ``save_pretrained`` into ``--out``, ready for ``cfaug augment --generator OUT`` (or
``--checker``, ``--editor``, ``--retriever``/``--index``, ``--selector``) and ``cfaug push OUT REPO_ID``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .base import (Command, UsageError, add_out_options, add_schema_options, check_out, fraction, positive_float,
                   positive_int, schema_options, writing_out)
from .data import DATA_FILES, load_local

__all__ = ["TrainCommand"]

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


def _common(p: argparse.ArgumentParser, base: str, epochs: float, lora: bool) -> None:
    p.add_argument("data", help=f"training data: a saved dataset folder, {DATA_FILES} or a Hub dataset id")
    p.add_argument("--split", default=None,
                   help="the split to read from a saved DatasetDict folder or a Hub dataset (default train)")
    add_out_options(p, "the trained component")
    p.add_argument("--base", type=model_reference, default=base, help=f"model id or folder to start from [{base}]")
    p.add_argument("--epochs", type=positive_float, default=epochs, help=f"training epochs [{epochs:g}]")
    p.add_argument("--max-steps", type=int, default=-1, help="stop after this many steps (overrides --epochs)")
    p.add_argument("--learning-rate", type=positive_float, default=None, help="learning rate [the function's default]")
    p.add_argument("--batch-size", type=positive_int, default=16, help="training batch size [16]")
    p.add_argument("--seed", type=int, default=42, help="training seed [42]")
    p.add_argument("--lora", action=argparse.BooleanOptionalAction, default=lora,
                   help=f"train a LoRA adapter instead of every weight [{lora}]")
    p.add_argument("--limit", type=positive_int, default=None, help="train on a seeded sample of this many rows")
    p.add_argument("--dataset-id", default=None, help="Hub id of the training data, recorded on the model card")


class TrainCommand(Command):
    name = "train"
    summary = "Train a generator, checker, editor, CF-DPR retriever or ICDA rationale selector."
    description = ("Train a component with transformers.Trainer and save it with save_pretrained into --out (then "
                   "`cfaug augment ... --ROLE OUT`, or `cfaug push OUT REPO_ID`). `cfaug train KIND --help` lists "
                   "each kind's options.")

    def add_arguments(self, parser: argparse.ArgumentParser, argv: list[str]) -> None:
        kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND", help="what to train")
        for kind in KINDS.values():
            kind(kinds)

    def run(self, args: argparse.Namespace) -> None:
        args.train(args)


def _generator_options(kinds: Any) -> None:

    g = kinds.add_parser("generator", help="text -> text (e.g. CrossAug's negative-claim generator)",
                         description="Fine-tune a Generator on (source, target) text pairs; --bidirectional also "
                                     "trains target -> source (CrossAug's recipe).")
    _common(g, SMOLLM, 1.0, True)
    g.add_argument("--source-column", default="source", help="input text column [source]")
    g.add_argument("--target-column", default="target", help="output text column [target]")
    g.add_argument("--bidirectional", action="store_true", help="also learn target -> source")
    g.set_defaults(train=_train_generator)


def _checker_options(kinds: Any) -> None:
    c = kinds.add_parser("checker", help="a label classifier (flip checker, RACE's 3-way ad-check)",
                         description="Fine-tune a LabelChecker to predict the label from the task's text columns.")
    _common(c, MINILM, 3.0, True)
    add_schema_options(c, task="fact-verification", id_help=argparse.SUPPRESS)
    c.set_defaults(train=_train_checker)


def _editor_options(kinds: Any) -> None:
    e = kinds.add_parser("editor", help="a counterfactual editor learned from human counterfactuals",
                         description="Fine-tune an Editor on rows holding a text, its human counterfactual and the "
                                     "counterfactual's label (edit_pairs).")
    _common(e, SMOLLM, 1.0, True)
    e.add_argument("--text-column", default="text", help="the original text [text]")
    e.add_argument("--counterfactual-column", default="counterfactual", help="its human counterfactual "
                                                                             "[counterfactual]")
    e.add_argument("--target-column", default="target", help="the counterfactual's label [target]")
    e.add_argument("--context-column", default=None, help="context shown to the editor (e.g. the premise)")
    e.add_argument("--level", choices=("text", "sentence"), default="text",
                   help="one pair per row, or one per changed sentence (long reviews) [text]")
    e.add_argument("--edit-task", default=None, help="what the editor edits (sentiment, nli, claims, text), for "
                                                     "its card")
    e.set_defaults(train=_train_editor)


def _retriever_options(kinds: Any) -> None:
    r = kinds.add_parser("retriever", help="a CF-DPR bi-encoder (CORE), and optionally its index",
                         description="Train a CF-DPR bi-encoder on (query, positive counterfactual, hard negatives) "
                                     "rows; with --corpus also encode a corpus into a faiss index in OUT/index.")
    _common(r, MINILM, 3.0, False)
    r.add_argument("--query-column", default="query", help="[query]")
    r.add_argument("--positive-column", default="positive", help="[positive]")
    r.add_argument("--negatives-column", default="hard_negatives", help="a list of texts per row, or 'none' "
                                                                        "[hard_negatives]")
    r.add_argument("--corpus", default=None, help="texts to retrieve from (file or folder); the index is saved in "
                                                  "OUT/index and the encoder in OUT/encoder")
    r.add_argument("--text-column", default="text", help="the corpus's text column [text]")
    r.set_defaults(train=_train_retriever)


def _selector_options(kinds: Any) -> None:
    s = kinds.add_parser("selector", help="an ICDA rationale selector (iterations of counterfactual training)",
                         description="Run ICDA on multi-sentence documents: train a rationale selector, swap "
                                     "rationales into counterfactuals, retrain; the final selector is saved.")
    _common(s, MINILM, 20.0, False)  # --learning-rate defaults to 1e-3 here (frozen encoder, new layers only)
    s.add_argument("--text-column", default="text", help="document column: a string or a list of sentences [text]")
    s.add_argument("--label-column", default="label", help="[label]")
    s.add_argument("--dev-fraction", type=fraction, default=0.15, help="held-out share for early stopping [0.15]")
    s.add_argument("--iterations", type=positive_int, default=3, help="ICDA iterations at most [3; the paper's 10]")
    s.add_argument("--runs", type=positive_int, default=1, help="fresh runs per iteration [1; the paper's 3]")
    s.add_argument("--patience", type=positive_int, default=5, help="epochs without a checkpoint before stopping [5]")
    s.add_argument("--gate", choices=("softmax", "two_way"), default="softmax",
                   help="selector gate: softmax across sentences (finds rationales on the frozen path here) or the "
                        "reference's two-way gate [softmax]")
    s.add_argument("--selection-noise", type=float, default=1.0,
                   help="Gumbel noise on the selector's scores while training, so it tries sentences other than "
                        "its favourite [1.0]")
    s.add_argument("--fine-tune-encoder", action="store_true", help="train the token encoder too (slow on CPU)")
    s.set_defaults(train=_train_selector)


#: Each kind of ``cfaug train`` and the function adding its options.
KINDS = {"generator": _generator_options, "checker": _checker_options, "editor": _editor_options,
         "retriever": _retriever_options, "selector": _selector_options}


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


def _train_generator(args: argparse.Namespace) -> None:
    from ..training.generator import train_generator

    _out(args, "generator")
    gen = train_generator(args.base, _data(args), source_column=args.source_column, target_column=args.target_column,
                          bidirectional=args.bidirectional, lora=args.lora or None, **_common_kwargs(args))
    _save(gen, args, "generator", "generator")


def _train_checker(args: argparse.Namespace) -> None:
    from ..schema import TaskSchema
    from ..training.checker import train_checker

    _out(args, "checker")
    schema = TaskSchema.from_dict(schema_options(args))
    checker = train_checker(args.base, _data(args), schema, lora=args.lora or None, **_common_kwargs(args))
    _save(checker, args, "checker", "checker")


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
