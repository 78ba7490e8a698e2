"""LLM-prompted counterfactuals as published: Li, Xu, Miao, Zhou, Qian, "Prompting Large Language Models for
Counterfactual Generation: An Empirical Study", LREC-COLING 2024 (https://arxiv.org/abs/2305.14791). Sections are
the paper's; "A.3" is its appendix on implementation details."""

from __future__ import annotations

from typing import Any

from ...registry.presets import PaperValue, Preset
from ..until_flipped import paper_loop_values

_LOOP, _LOOP_NOT_IN_PAPER = paper_loop_values(
    "the paper's prompt rewrites the whole input in one answer; nothing is re-checked or edited again")


def _prompted_llm() -> Any:
    # The paper prompts an LLM (gpt-3.5-turbo-0301) at temperature 0; the local instruction model stands in for it,
    # never the editor trained on human counterfactuals.
    from ...components.llm import local_llm

    return local_llm(temperature=0.0)


PAPER = Preset(
    method="llm",
    paper="Li et al., LREC-COLING 2024",
    config={
        "guidelines": PaperValue(True, "§3.1 Prompt Design: the triplet prompt [T, D, x] opens with the task "
                                       "guidelines"),
        "cot": PaperValue(False, "§3.1: the main comparison prompts without chain of thought (CoT is an analysis "
                                 "variant, §4.2)"),
        "demonstrations": PaperValue(None, "A.3: a manually written demonstration (the built-in ones, after Tables "
                                           "15-25)"),
        "builtin_demonstrations": PaperValue(1, "A.3: \"we provide a manually written demonstration\""),
        "demo_pool": PaperValue(None, "A.3: the demonstration is fixed, not retrieved"),
        "num_demonstrations": PaperValue(1, "A.3: one demonstration"),
        "targets": PaperValue("all", "Tables 15-16: the prompt asks for every other label (NLI: both other "
                                     "relations; sentiment: the other polarity)"),
        "exclude_targets": PaperValue((), "§3.1: no label is excluded"),
        "per_target": PaperValue(1, "Tables 15-16: one revision per target label"),
        "constraints": PaperValue(False, "§3.1: answers are used as parsed; no constraint filter"),
        **_LOOP,
        "keep_original": PaperValue(True, "§3.2: the SLM trains on the original samples plus the counterfactuals"),
    },
    components={
        "llm": PaperValue(_prompted_llm, "A.3: gpt-3.5-turbo-0301 at temperature 0 (here: the local "
                                         "SmolLM2-135M-Instruct at temperature 0, or pass llm= an endpoint)"),
        "checker": PaperValue(None, "§4.1 'Promising Ways': consistency filtering is proposed, not used in the "
                                    "experiments"),
    },
    not_in_paper={
        **_LOOP_NOT_IN_PAPER,
        "task": "the template follows the schema's task; the paper has one prompt per task",
        "label_counts": "only used by targets='balanced' (not the paper's)",
        "entity_type_names": "how NER prompts spell entity types; the built-in names read as the paper's prompts",
        "max_input_chars": "inputs longer than this are cut in the prompt (a small model's context); the paper "
                           "sends inputs whole",
        "seed": "temperature 0 decodes greedily; the seed only matters for sampling",
    },
    not_reproduced=(
        "The LLM: gpt-3.5-turbo-0301 (and Llama-2 in §5). The local stand-in is far smaller; point llm= at an "
        "endpoint (OpenAICompatibleLLM) for a comparable model.",
        "Relation extraction: in the paper the LLM picks the target relation (and shows a selection bias, §4.1); "
        "here the library picks the targets (targets='all', 'random' or 'balanced').",
    ),
)
