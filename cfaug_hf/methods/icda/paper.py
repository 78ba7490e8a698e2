"""ICDA as published: Plyler and Chi, "Iterative Counterfactual Data Augmentation", AAAI 2025
(https://arxiv.org/abs/2502.18249). Section names are the paper's ("Implementation", appendix "Rationalization
Settings", "Algorithm 2").

Two parts: `PAPER`, the rationale-swap augmenter's settings (``RationaleSwapAugmenter.from_preset("paper")``),
and `PAPER_LOOP`, the iterated loop's (``run_icda(..., **paper_loop())``), which is the paper's method; the
``ICDACallback`` is an online variant of it (see docs/methods/icda.md, departures).
"""

from __future__ import annotations

from typing import Any

from ...registry.presets import Needed, PaperValue, Preset

_IMPL = "§Implementation"
_SETTINGS = "§'Rationalization Settings'"

PAPER = Preset(
    method="icda",
    paper="Plyler and Chi, AAAI 2025",
    config={
        "pool_quantile": PaperValue(0.1, _IMPL + ': "we take the 10% rationales, per class, where the model was most '
                                                 'confident in correct prediction"'),
        "size": PaperValue(None, _IMPL + ': "We limit our augmented dataset size to be of equal size to the '
                                         'original dataset"; with originals=\'lowest_error\' the counterfactuals '
                                         "are as many as the originals kept"),
        "originals": PaperValue("lowest_error", _IMPL + ': "We include original samples in the augmented dataset '
                                                        'where the classifier had the lowest prediction error"'),
        "keep_original": PaperValue(True, _IMPL + ': "We include original samples in the augmented dataset" (those '
                                                  "of lowest error: originals)"),
    },
    components={
        "selector": PaperValue(Needed("cfaug train selector DATA.jsonl --out runs/icda (the paper's loop; "
                                      "run_icda(..., **paper_loop()) in Python)"),
                               _IMPL + ': a rationale selector trained by the iterated loop ("train_selector is a '
                                       'key operation that produces a rationale selector"); the shipped occlusion '
                                       "selector is not the paper's"),
    },
    not_in_paper={
        "splitter": "how documents are split into sentences; the paper's datasets come split",
        "joiner": "how sentences are joined back into a string column",
        "seed": "the donor draw's seed; the paper draws at random",
    },
    not_reproduced=(
        "The selector: a six-layer BERT token encoder with four fresh sentence-level transformer layers "
        "(Rationalization Settings); the shipped selectors are MiniLM-based and smaller.",
    ),
)

#: ``run_icda`` keyword arguments of the paper's loop, each with its source.
PAPER_LOOP: dict[str, PaperValue] = {
    "seeds": PaperValue((0, 1, 2), _IMPL + ': "we train three rationale selectors by varying the random seed across '
                                           'the three runs"'),
    "learning_rate": PaperValue(1e-6, _SETTINGS + ': "a learning rate of 1e-6"'),
    "encoder_learning_rate": PaperValue(1e-6, _SETTINGS + ': one optimizer for the network, "a learning rate of '
                                                          '1e-6"'),
    "samples_per_step": PaperValue(64, _SETTINGS + ': "a batch size of 64"'),
    "training_set": PaperValue("reference", _IMPL + ': "We include original samples in the augmented dataset where '
                                                    'the classifier had the lowest prediction error", the set "of '
                                                    'equal size to the original dataset"'),
    "pool_quantile": PaperValue(0.1, _IMPL + ': "we take the 10% rationales, per class"'),
    "converge_after": PaperValue(1, _IMPL + ': convergence is "a selection of the rationale model initialized by '
                                            'the model from the previous iteration that is not improved"'),
    "degeneration_threshold": PaperValue(0.2, "§'Avoiding Rationale Degeneration': \"We do not take checkpoints "
                                              "where the class-wise rationales diverge on aggregate by more than "
                                              "20%\""),
    "chance_floor": PaperValue(None, "§'Avoiding Rationale Degeneration': the test as written (\"more than 20% in "
                                     "any rationale index bin\"), without the library's chance floor"),
    "max_iterations": PaperValue(10, "§'Impact, Limitations, and Conclusions': a cap the paper does not give; its "
                                     'runs stopped sooner ("ICDA converged in five or less iterations")'),
}

#: ``run_icda`` arguments the paper gives no value for, and why.
PAPER_LOOP_NOT_IN_PAPER: dict[str, str] = {
    "max_epochs": "the paper trains \"to convergence on each augmented dataset\"; a cap for the library",
    "patience": "epochs without a checkpoint before a run stops; the paper does not say",
    "batch_size": "examples per forward pass; samples_per_step (the paper's 64) is the batch the optimizer sees",
    "cap_factor": "how many originals the reference training set keeps per class (N / cap_factor): 4 keeps half "
                  "of a two-class set, which with one counterfactual each gives the paper's equal size",
    "output_dir": "where runs are written",
    "training_args": "extra transformers.TrainingArguments",
    "table": "a sentence cache shared between runs",
    "on_iteration": "a hook for metrics per iteration",
}


def paper_loop() -> dict[str, Any]:
    """The paper's ``run_icda`` settings as keyword arguments.

    Examples:
        >>> paper_loop()["learning_rate"], paper_loop()["converge_after"]
        (1e-06, 1)
    """
    return {name: v.value for name, v in PAPER_LOOP.items()}
