"""ICDA as published: Plyler and Chi, "Iterative Counterfactual Data Augmentation", AAAI 2025
(https://arxiv.org/abs/2502.18249). Section names are the paper's ("Implementation", appendix "Rationalization
Settings", "Algorithm 2").

Two parts: `PAPER`, the rationale-swap augmenter's settings (``RationaleSwapAugmenter.from_preset("paper")``),
and `PAPER_LOOP`, the iterated loop's (``run_icda(..., **paper_loop())``), which is the paper's method; the
``ICDACallback`` is an online variant of it (see docs/methods/icda.md, departures).
"""

from __future__ import annotations

from typing import Any

from ...registry.presets import PaperValue, Preset

PAPER = Preset(
    method="icda",
    paper="Plyler and Chi, AAAI 2025",
    config={
        "pool_quantile": PaperValue(0.1, "Implementation: donor rationales are the 10% per class where the model "
                                         "was most confident in a correct prediction"),
        "size": PaperValue(None, "Implementation: the augmented dataset is limited to the size of the original"),
        "keep_original": PaperValue(True, "Algorithm 1: D^a is the concatenation of D and D^c (run_icda's "
                                          "training_set='reference' then keeps the lowest-error originals, "
                                          "Implementation)"),
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
    "seeds": PaperValue((0, 1, 2), "Implementation: three runs varying the random seed at every iteration"),
    "learning_rate": PaperValue(1e-6, "Rationalization Settings: AdamW with a learning rate of 1e-6"),
    "encoder_learning_rate": PaperValue(1e-6, "Rationalization Settings: one learning rate for the network"),
    "samples_per_step": PaperValue(64, "Rationalization Settings: a batch size of 64"),
    "training_set": PaperValue("reference", "Implementation: correctly classified, lowest-error originals, the "
                                            "augmented set the size of the original"),
    "pool_quantile": PaperValue(0.1, "Implementation: the 10% most confident donors per class"),
    "converge_after": PaperValue(1, "Implementation: stop at the first kept warm start that training did not "
                                    "improve"),
    "max_iterations": PaperValue(10, "reference implementation's cap (the paper's runs converged in five or "
                                     "fewer, Impact and Limitations)"),
}


def paper_loop() -> dict[str, Any]:
    """The paper's ``run_icda`` settings as keyword arguments.

    Examples:
        >>> paper_loop()["learning_rate"], paper_loop()["converge_after"]
        (1e-06, 1)
    """
    return {name: v.value for name, v in PAPER_LOOP.items()}
