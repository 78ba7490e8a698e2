"""The ICDA iteration (Plyler and Chi, Algorithm 2): train selectors, make counterfactuals, retrain, until stable.

Iteration 0 trains rationale selectors on the original data (plain MMI rationalisation). Every later iteration
trains on the originals plus counterfactuals made with the previous iteration's selector (donors redrawn each
epoch), with several random seeds and one run warm-started from the previous best. The run kept is the one with the
lowest dev loss among those that are not degenerate and, from iteration 2 on, whose rationale-set change ΔA is
smaller than the previous iteration's. The loop stops when the warm-started run does not improve on its starting
dev loss, or after ``max_iterations``.
"""

from __future__ import annotations

import copy
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...sentences import SentenceTable
from .epoch import CounterfactualEpochDataset, redraw
from .selection import SelectionResult, is_degenerate, plan_counterfactuals, rationale_set_change

__all__ = ["run_icda", "ICDARun", "ICDAResult"]

logger = logging.getLogger(__name__)


@dataclass
class ICDARun:
    """One training run of one iteration."""

    iteration: int
    seed: int
    warm_start: bool
    dev_loss: float
    initial_dev_loss: float | None
    delta_A: float | None
    degenerate: bool
    position_gap: float
    seconds: float
    chosen: bool = False

    @property
    def improved(self) -> bool:
        """For a warm-started run: did training lower the dev loss it started from?"""
        return self.initial_dev_loss is None or self.dev_loss < self.initial_dev_loss - 1e-6


@dataclass
class ICDAResult:
    """Runs of every iteration, the kept selector of each, and why the loop stopped."""

    runs: list[ICDARun] = field(default_factory=list)
    selectors: list[Any] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = ""

    @property
    def final(self) -> Any:
        return self.selectors[-1]

    def chosen(self) -> list[ICDARun]:
        return [r for r in self.runs if r.chosen]


def _dataset(documents: Sequence[Sequence[str]], labels: Sequence[int], table: SentenceTable, size: int) -> Any:
    return CounterfactualEpochDataset([list(d) for d in documents], list(labels), table=table, size=size)


def _train_one(selector: Any, train: Any, dev: Any, *, redraw_from: SelectionResult | None, seed: int,
               epochs: float, output_dir: Path, training_args: dict[str, Any], evaluate_first: bool
               ) -> tuple[float, float | None]:
    """Trainer run keeping the weights of the epoch with the lowest dev loss; returns (best, initial) dev loss."""
    import torch
    from transformers import Trainer, TrainerCallback, TrainingArguments

    class Redraw(TrainerCallback):
        def on_epoch_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if redraw_from is not None:
                redraw(train, redraw_from, int(math.floor(state.epoch + 1e-9)), seed=seed)

    class KeepBest(TrainerCallback):
        best = math.inf
        state_dict: dict[str, Any] | None = None

        def on_evaluate(self, args: Any, state: Any, control: Any, metrics: dict | None = None, model: Any = None,
                        **kwargs: Any) -> None:
            loss = (metrics or {}).get("eval_loss", math.inf)
            if loss < self.best:
                self.best = loss
                self.state_dict = {k: v.detach().clone().cpu() for k, v in model.state_dict().items()}

    defaults = {"per_device_train_batch_size": 16, "per_device_eval_batch_size": 64, "learning_rate": 1e-4,
                "weight_decay": 0.01, "logging_strategy": "epoch", "report_to": [], "disable_tqdm": True,
                "dataloader_pin_memory": torch.cuda.is_available()}  # pinning without a GPU only warns
    args = TrainingArguments(output_dir=str(output_dir), num_train_epochs=epochs, seed=seed, eval_strategy="epoch",
                             save_strategy="no", remove_unused_columns=False,
                             **{**defaults, **training_args})
    keep = KeepBest()
    trainer = Trainer(model=selector.model, args=args, train_dataset=train, eval_dataset=dev,
                      data_collator=selector.collator(train.table), callbacks=[Redraw(), keep])
    initial = trainer.evaluate()["eval_loss"] if evaluate_first else None
    if initial is not None:
        keep.best = initial  # an epoch must beat the starting point to count as an improvement
        keep.state_dict = {k: v.detach().clone().cpu() for k, v in selector.model.state_dict().items()}
    trainer.train()
    if keep.state_dict is not None:
        selector.model.load_state_dict(keep.state_dict)
    return keep.best, initial


def run_icda(train_documents: Sequence[Sequence[str]], train_labels: Sequence[int],
             dev_documents: Sequence[Sequence[str]], dev_labels: Sequence[int],
             make_selector: Callable[[int], Any], *, seeds: Sequence[int] = (0, 1, 2), max_iterations: int = 10,
             epochs: float = 3, output_dir: str | Path = "runs/icda", training_args: dict[str, Any] | None = None,
             degeneration_threshold: float = 0.2, pool_quantile: float = 0.1,
             on_iteration: Callable[[int, Any], dict[str, Any]] | None = None) -> ICDAResult:
    """Run ICDA. ``make_selector(seed)`` returns a fresh :class:`~cfaug_hf.components.RationaleSelector` (new
    sentence layers seeded with ``seed``, pretrained token encoder). ``on_iteration(k, selector)`` may return
    metrics (e.g. rationale precision on a test set) recorded for each iteration's kept selector.

    Selectors built with ``freeze_encoder=True`` use the fast path: every sentence is embedded once and shared by
    all runs and iterations.
    """
    import torch

    training_args = dict(training_args or {})
    out = Path(output_dir)
    table = SentenceTable()
    n_train, n_dev = len(train_documents), len(dev_documents)
    train = _dataset(train_documents, train_labels, table, 0)
    dev = _dataset(dev_documents, dev_labels, table, 0)
    result = ICDAResult()
    best: Any = None
    best_train_sel: SelectionResult | None = None
    best_dev_sel: SelectionResult | None = None
    previous_delta: float | None = None
    for k in range(max_iterations):
        if k > 0:  # originals plus as many counterfactuals, made with the previous iteration's selector
            train = _dataset(train_documents, train_labels, table, n_train)
            dev = _dataset(dev_documents, dev_labels, table, n_dev)
            dev_plan = plan_counterfactuals(best_dev_sel, dev.labels, dev.num_sentences, size=n_dev,
                                            pool_quantile=pool_quantile, seed=k)
            dev.set_specs(dev_plan.specs, None)
        candidates = [(seed, False) for seed in seeds] + ([(seeds[0], True)] if k > 0 else [])
        runs: list[tuple[ICDARun, Any, SelectionResult, SelectionResult]] = []
        for seed, warm in candidates:
            torch.manual_seed(seed)
            selector = copy.deepcopy(best) if warm else make_selector(seed)
            if selector.model.config.freeze_encoder:  # embeds only sentences not embedded yet
                selector.embed_table(table)
            start = time.perf_counter()
            loss, initial = _train_one(selector, train, dev, redraw_from=best_train_sel if k > 0 else None,
                                       seed=seed, epochs=epochs, output_dir=out / f"iter{k}-seed{seed}-{int(warm)}",
                                       training_args=training_args, evaluate_first=warm)
            seconds = time.perf_counter() - start
            train_sel = selector.select(train.docs, train.labels, table=table)
            dev_sel = selector.select(dev.docs, dev.labels, table=table)
            degenerate, gap = is_degenerate(dev_sel, dev.labels, dev.num_sentences, threshold=degeneration_threshold)
            delta = rationale_set_change(train_sel, best_train_sel)
            run = ICDARun(k, seed, warm, loss, initial, delta, degenerate, gap, seconds)
            runs.append((run, selector, train_sel, dev_sel))
            logger.info("ICDA iteration %d seed %d%s: dev loss %.4f, delta A %s, degenerate %s", k, seed,
                        " (warm start)" if warm else "", loss, delta, degenerate)

        def eligible(r: ICDARun) -> bool:
            return not r.degenerate and (k < 2 or previous_delta is None or (r.delta_A or 0) < previous_delta)

        pool = [x for x in runs if eligible(x[0])] or [x for x in runs if not x[0].degenerate] or runs
        run, best, best_train_sel, best_dev_sel = min(pool, key=lambda x: x[0].dev_loss)
        run.chosen = True
        previous_delta = run.delta_A if run.delta_A is not None else previous_delta
        result.runs.extend(r for r, *_ in runs)
        result.selectors.append(best)
        result.metrics.append(on_iteration(k, best) if on_iteration else {})
        warm_runs = [r for r, *_ in runs if r.warm_start]
        if warm_runs and not warm_runs[0].improved:
            result.stopped = f"converged at iteration {k}: the warm-started run did not improve its dev loss"
            break
    else:
        result.stopped = f"reached max_iterations={max_iterations}"
    return result
