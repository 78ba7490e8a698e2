"""LLM-prompted counterfactuals as published: Li, Xu, Miao, Zhou, Qian, "Prompting Large Language Models for
Counterfactual Generation: An Empirical Study", LREC-COLING 2024 (https://arxiv.org/abs/2305.14791). Sections are
the paper's; "A.3" is its appendix on implementation details."""

from __future__ import annotations

from typing import Any

from ...registry.presets import PaperValue, Preset
from ..until_flipped import paper_loop_values

_LOOP, _LOOP_NOT_IN_PAPER = paper_loop_values(
    '§3.2: one prompt per sample ("we construct a triplet prompt"), answered once; nothing is re-checked or '
    'edited again')


def _prompted_llm() -> Any:
    # The paper prompts an LLM (gpt-3.5-turbo-0301) at temperature 0; the local instruction model stands in for it,
    # never the editor trained on human counterfactuals.
    from ...components.llm import local_llm

    return local_llm(temperature=0.0)


_DEMO = 'A.3: "we provide a manually written demonstration"'

PAPER = Preset(
    method="llm",
    paper="Li et al., LREC-COLING 2024",
    config={
        "guidelines": PaperValue(True, '§3.2 Prompt Design: the triplet prompt opens with "T^p denotes task '
                                       'guidelines" (the built-in guidelines are the library\'s own wording; the '
                                       'paper prints its own in Tables 15, 18, 21 and 23)'),
        "cot": PaperValue(False, '§5.2: CoT is an analysis variant ("Chain-of-thought does not Always Help"); the '
                                 'main comparison prompts without it'),
        "demonstrations": PaperValue(None, _DEMO + " (the built-in one is the library's own, in the format of "
                                                   "Tables 15 and 18)"),
        "builtin_demonstrations": PaperValue(1, _DEMO),
        "demo_pool": PaperValue(None, _DEMO + ": fixed, not retrieved"),
        "num_demonstrations": PaperValue(1, _DEMO),
        "targets": PaperValue("all", 'Tables 15 and 18: the prompt names the other polarity ("Target Sentiment '
                                     'Polarity") or both other relations ("Target Relationships"); Table 23: for RE '
                                     'the LLM chooses among the candidate relations ("If there are no potential '
                                     'target relation that conforms the commonsense, just output None")',
                              per_task={"relation-extraction": "choose"}),
        "exclude_targets": PaperValue((), 'Table 18: "Target Relationships" lists every other relation'),
        "per_target": PaperValue(1, 'Table 18: one "revised sentence" per target relationship'),
        "edit_side": PaperValue("hypothesis", 'Table 18: "Revise the hypothesis sentence, using minimal changes, to '
                                              'alter the relationship between it and the premise sentence"'),
        "constraints": PaperValue(False, '§3.2: the answers are used as generated ("Combining the original and '
                                         'counterfactual samples as training samples")'),
        **_LOOP,
        "keep_original": PaperValue(True, '§3.2: "Combining the original and counterfactual samples as training '
                                          'samples"'),
    },
    components={
        "llm": PaperValue(_prompted_llm, 'A.3: "We adopt the gpt-3.5-turbo-0301 API from OpenAI" and "the '
                                         'parameter temperature of LLMs is set to 0" (here: the local '
                                         'SmolLM2-135M-Instruct at temperature 0, or pass llm= an endpoint)'),
        "checker": PaperValue(None, '§4.3: consistency filtering is one of the "Promising Ways for Improving the '
                                    'Quality of Counterfactuals", not used in the experiments'),
    },
    not_in_paper={
        **_LOOP_NOT_IN_PAPER,
        "task": "the template follows the schema's task; the paper has one prompt per task",
        "prompt_template": "the paper prints its prompts in Tables 15-25; they are not shipped (the built-in prompt "
                           "is the library's wording): copy the paper's into a file and pass it here, used verbatim",
        "label_counts": "only used by targets='balanced' (not the paper's)",
        "entity_type_names": "how NER prompts spell entity types; the built-in names read as the paper's prompts",
        "checker_threshold": "only used with a checker; the paper filters nothing (§4.3)",
        "max_input_chars": "inputs longer than this are cut in the prompt (a small model's context); the paper "
                           "sends inputs whole",
        "seed": "temperature 0 decodes greedily; the seed only matters for sampling",
    },
    not_reproduced=(
        "The LLM: gpt-3.5-turbo-0301 (and Llama-2 in §5). The local stand-in is far smaller; point llm= at an "
        "endpoint (OpenAICompatibleLLM) for a comparable model.",
        "Relation extraction: the paper's prompt (Table 23) lists the 18 SemEval relations as candidates; the "
        "library lists the schema's other labels (exclude_targets removes some, e.g. 'Other').",
    ),
)
