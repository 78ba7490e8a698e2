"""CORE as published: Dixit, Paranjape, Hajishirzi, Zettlemoyer, "CORE: A Retrieve-then-Edit Framework for
Counterfactual Data Generation", Findings of EMNLP 2022 (https://arxiv.org/abs/2210.04873). Sections are the
paper's; "Appendix A" is its implementation details."""

from __future__ import annotations

from typing import Any

from ...registry.presets import PaperValue, Preset
from ..until_flipped import paper_loop_values

_LOOP, _LOOP_NOT_IN_PAPER = paper_loop_values(
    "§3.2: the editor rewrites the input once from one prompt; its output is not re-checked or edited again")


def _few_shot_editor() -> Any:
    # The paper's editor is GPT-3 prompted few-shot (no editing supervision); the local instruction model stands in,
    # with the paper's decoding, never the editor trained on human counterfactuals.
    from ...components.llm import local_llm

    return local_llm(temperature=0.7, top_p=1.0, max_new_tokens=256)


PAPER = Preset(
    method="core",
    paper="Dixit et al., Findings of EMNLP 2022",
    config={
        "mode": PaperValue("core", "§3: retrieve (CF-DPR), then edit (GPT-3) with the retrieved words"),
        "top_k": PaperValue(20, "§3.1: top k retrieved per input; the reference implementation retrieves 20"),
        "keyword_excerpts": PaperValue(20, "§3.2: keywords come from the retrieved samples (the reference "
                                           "implementation: all 20)"),
        "max_keywords": PaperValue(0, "§3.2: determiners, conjunctions and punctuation are removed and the rest is "
                                      "the keyword list (no cap)"),
        "targets": PaperValue("all", "§4: IMDb reviews flip polarity; MNLI entailment <-> contradiction"),
        "demonstrations": PaperValue(None, "§3.2 and Tables 10-11: human-authored demonstrations in the prompt "
                                           "(the built-in ones, in that format)"),
        "instructions": PaperValue(None, "§3.2: the crowd instructions of Kaushik et al. (2020) (built in)"),
        "edit_sentences": PaperValue(0, "§4 (IMDb): polarity sentences are the retrieval queries, and \"we do not "
                                        "impose any restrictions on the editor\": the whole review is edited"),
        **_LOOP,
        "keep_original": PaperValue(True, "§5: the classifier trains on the original data plus the counterfactuals"),
    },
    components={
        "editor": PaperValue(_few_shot_editor, "Appendix A: text-davinci-002, temperature 0.7, top-p 1 (here: the "
                                               "local SmolLM2-135M-Instruct with those settings, or pass editor= an "
                                               "endpoint)"),
        "checker": PaperValue(None, "§3: no label-flip filter"),
        "reranker": PaperValue(None, "§3.1: the cross-encoder re-ranker is used for MNLI only; pass reranker= "
                                     "there"),
    },
    not_in_paper={
        **_LOOP_NOT_IN_PAPER,
        "task": "the template follows the schema's task",
        "neutral_label": "names the schema's neutral label, which is passed through (MNLI is edited between "
                         "entailment and contradiction)",
        "max_input_chars": "texts longer than this are cut in the prompt (a small model's context); the paper "
                           "sends reviews whole",
        "seed": "the per-row sampling seed; the paper samples without one",
    },
    not_reproduced=(
        "The editor: GPT-3 (text-davinci-002). The local stand-in is far smaller; pass editor= an "
        "OpenAICompatibleLLM for a comparable model.",
        "The retriever and its corpus: CF-DPR (two BERT encoders) over 1.6M Amazon + Yelp reviews (IMDb) or other "
        "NLI data (MNLI), IVFFlat with 300 centroids. Train yours with train_cf_dpr(..., query_as_negative=True) "
        "and index your own corpus; the preset needs retriever= and index=.",
        "The sentiment retrieval queries: the paper queries CF-DPR with the review's polarity sentences; the "
        "library queries with the text (or with each edited sentence when edit_sentences > 0).",
    ),
)
