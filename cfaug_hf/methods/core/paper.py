"""CORE as published: Dixit, Paranjape, Hajishirzi, Zettlemoyer, "CORE: A Retrieve-then-Edit Framework for
Counterfactual Data Generation", Findings of EMNLP 2022 (https://arxiv.org/abs/2210.04873). Sections are the
paper's; "Appendix A" is its implementation details."""

from __future__ import annotations

from typing import Any

from ...registry.presets import PaperValue, Preset
from ..until_flipped import paper_loop_values

_LOOP, _LOOP_NOT_IN_PAPER = paper_loop_values(
    '§3.2: the editor "generates a minimally edited counterfactual" from one prompt; its output is not re-checked '
    'or edited again')

NLI = "natural-language-inference"
#: the authors' released code, which the paper does not print: where a value comes from it, it is named
REFERENCE = "reference implementation (tanay2001/CORE, core/main.py and core/utils.py)"


def _few_shot_editor() -> Any:
    # The paper's editor is GPT-3 prompted few-shot (no editing supervision); the local instruction model stands in,
    # with the paper's decoding, never the editor trained on human counterfactuals.
    from ...components.llm import local_llm

    return local_llm(temperature=0.7, top_p=1.0, max_new_tokens=256)


PAPER = Preset(
    method="core",
    paper="Dixit et al., Findings of EMNLP 2022",
    config={
        "mode": PaperValue("core", '§3.2: retrieve with CF-DPR, then "The Editor takes the training sample and '
                                   'retrieved counterfactuals as input"'),
        "top_k": PaperValue(20, '§3.1: "we retrieve top k relevant counterfactuals"; the paper gives no k, the '
                                + REFERENCE + " retrieves k=20"),
        "keyword_excerpts": PaperValue(20, '§3.2: keywords are extracted "from the retrieved samples"; the '
                                           + REFERENCE + " uses all 20 for IMDb and the 2 re-ranked ones for MNLI",
                                       per_task={NLI: 2}),
        "max_keywords": PaperValue(0, '§3.2: "we remove determiners, conjunctions, and punctuation from the '
                                      'retrieved samples" and keep the rest; the ' + REFERENCE + " caps the list "
                                      "at 5 words for MNLI (nouns, verbs, adjectives, adverbs, prepositions) and "
                                      "not for IMDb", per_task={NLI: 5}),
        "targets": PaperValue("all", '§4.2: "we limit counterfactual perturbations to entailment(E)→contradiction(C) '
                                     'and vice-versa"; IMDb reviews flip polarity (§4.1)'),
        "demonstrations": PaperValue(None, '§3.2: "We also append four human authored demonstrations" (printed in '
                                           "Tables 10-11; the built-in ones are the library's own wording, two per "
                                           "task, in that format)"),
        "instructions": PaperValue(None, '§3.2: "we make use of the set of instructions that were provided in '
                                         'Kaushik et al" (the built-in instructions are the library\'s own wording)'),
        "edit_sentences": PaperValue(0, '§4.1: polarity sentences are the retrieval queries, and "we do not impose '
                                        'any restrictions on the editor" about which sentences to edit: the whole '
                                        "review is edited"),
        **_LOOP,
        "keep_original": PaperValue(True, '§5.1: "We fine-tune DeBERTa base model (He et al., 2021) on the combined '
                                          'dataset"'),
    },
    components={
        "editor": PaperValue(_few_shot_editor, 'Appendix A: "We use the text-davinci-002 model as the Editor" with '
                                               '"the temperature parameter to 0.7 and Top p parameter to 1" (here: '
                                               "the local SmolLM2-135M-Instruct with those settings, or pass editor= "
                                               "an endpoint)"),
        "retriever": PaperValue("default", '§3.1: "CF-DPR retrieves similar instances from a large unlabeled corpus '
                                           'that have different labels" (two BERT-base encoders); here the shipped CF-DPR: '
                                           "MiniLM with a LoRA adapter per encoder, trained on CAD's training pairs "
                                           "(scripts/build_core.py), a substitution"),
        "index": PaperValue("default", '§3.1: "we use a large (1.6 million) corpus of movie reviews from Amazon" '
                                       'and Yelp for IMDb; here CAD\'s '
                                       "original training texts (IMDb review sentences; SNLI premises and hypotheses), "
                                       "indexed on first use, a substitution: no such corpus ships offline"),
        "checker": PaperValue(None, '§3.2: the editor "generates a minimally edited counterfactual", which is kept '
                                    "as it is: no label-flip filter"),
        "reranker": PaperValue(None, '§4.2: "We incorporate a re-ranker module to boost retrieval results for '
                                     'MNLI" only; the preset cannot build one, pass reranker= for NLI'),
    },
    not_in_paper={
        **_LOOP_NOT_IN_PAPER,
        "task": "the template follows the schema's task",
        "checker_threshold": "only used with a checker; the paper keeps the editor's output without one (§3.2)",
        "prompt_template": "the paper prints its prompts in Tables 10-11; they are not shipped (the built-in prompt "
                           "is the library's wording): copy the paper's into a file and pass it here, used verbatim",
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
        "NLI data (MNLI), IVFFlat with 300 centroids. The shipped stand-ins are MiniLM + LoRA and CAD's own "
        "training texts (about 15k IMDb sentences; 3.3k SNLI sentences), searched exactly; train yours with "
        "train_cf_dpr(..., query_as_negative=True) and index your own corpus for the paper's scale.",
        "The MNLI re-ranker: a cross-encoder (bert-base) trained on the CF-DPR seed data (§4.2, Appendix A); "
        "train one and pass reranker=, else NLI runs without it.",
        "The sentiment retrieval queries: the paper queries CF-DPR with the review's polarity sentences; the "
        "library queries with the text (or with each edited sentence when edit_sentences > 0).",
    ),
)
