"""RACE as published: Zhu, Si, Zhao, Zhu, Liu, Shi, Wu, "Explain, Edit, Generate: Rationale-Sensitive
Counterfactual Data Augmentation for Multi-hop Fact Verification", EMNLP 2023 (https://arxiv.org/abs/2310.14508).
Sections and tables are the paper's."""

from __future__ import annotations

import logging
from typing import Any

from ...registry.presets import PaperValue, Preset

logger = logging.getLogger(__name__)

_EDIT = "§3.2"


def _paper_ner() -> Any:
    # The paper's NER is Stanza; its English models are not on PyPI, so where they are not installed spaCy's
    # en_core_web_sm stands in, and the user is told (docs/methods/race.md lists the substitution).
    from ...components.ner import SpacyNER, StanzaNER

    if StanzaNER.models_installed("en"):
        return StanzaNER("en")
    logger.warning("RACE paper preset: Stanza's English NER models are not installed, so spaCy's en_core_web_sm "
                   "stands in for the paper's Stanza (run stanza.download('en') once to use Stanza).")
    return SpacyNER()


PAPER = Preset(
    method="race",
    paper="Zhu et al., EMNLP 2023",
    config={
        "replace_types": PaperValue(("GPE", "DATE", "NUM"), _EDIT + ' in-Dataset: "Randomly replace entities of type '
                                                            'GPE, DATE and NUM with other entities of the same '
                                                            'type"'),
        "swap_types": PaperValue(("PERSON", "ORG"), _EDIT + ' in-Instance: "two or more PERSON/ORG entities, their '
                                                   'positions are randomly swapped"'),
        "lexicon": PaperValue(None, _EDIT + ' in-Dataset: replacements "present in the entire dataset" (built by '
                                            "fit()/augment())"),
        "evidence_counterfactuals": PaperValue(False, 'Table 2: the main rows train on (c\', E, y\') only; "w (c, '
                                                      'E′, REF ) denotes the incorporation of counterfactual '
                                                      'instances" as a separate block (True gives that block)'),
        "claim_counterfactuals": PaperValue(True, '§3.4: "our RACE produces the counterfactual data for each '
                                                  'instance"'),
        "edit": PaperValue(True, _EDIT + ': "we focus on editing the evidence E for instances (c, E, SUP )" (False: '
                                         "-EDIT, Table 2)"),
        "constrained": PaperValue(True, '§3.3: "we apply constrained beam search decoding" on the causal entities '
                                        "(False: -CONS, Table 2)"),
        "post_check": PaperValue("not_original", '§3.3 Post-Checking: "We retain those candidate claims in C ′ that '
                                                 'yield a predicted label"'),
        "select": PaperValue("fidelity", '§3.4: "One generated claim c′ ∈ C ′ with the highest sum score over '
                                         'semantic fidelity score and entity fidelity score is retained"'),
        "paper_decoding": PaperValue(True, '§4 Implementation Details: "The beam size is 30 and the max length of '
                                           'generated text is 96"'),
        "num_beams": PaperValue(30, '§4: "The beam size is 30"'),
        "num_candidates": PaperValue(10, '§3.3: "we generate k (k = 10 in our experiments) candidate '
                                         'counterfactual claims"'),
        "max_new_tokens": PaperValue(96, '§4: "the max length of generated text is 96"'),
        "semantic_weight": PaperValue(1.0, '§3.4: "the highest sum score over semantic fidelity score and entity '
                                           'fidelity score"'),
        "entity_weight": PaperValue(1.0, '§3.4: "the highest sum score over semantic fidelity score and entity '
                                         'fidelity score"'),
        "keep_original": PaperValue(True, 'Table 2: "|Dtrain| shows the total number of training instances, '
                                          'including 18,171 original HOVER training instances"'),
    },
    components={
        "generator": PaperValue("default", '§3.3: "a pre-trained generation model (e.g. T5 (Raffel et al., 2020)) '
                                           'fine-tuned on the SUP instances in FEVEROUS dataset"; here SmolLM2-135M '
                                           "+ LoRA trained so (scripts/build_race.py), a substitution: no T5 "
                                           "offline"),
        "checker": PaperValue("default", '§3.2 Ad-Checking: "We adopt the RoBERTa (Liu et al., 2019) model" with '
                                         "SUP, REF and NEI; here MiniLM + LoRA on FEVEROUS with NOT ENOUGH INFO "
                                         "copies (scripts/build_race.py), a substitution"),
        "ner": PaperValue(_paper_ner, '§3.2: "we first utilize an off-the-shelf NER tool, Stanza" (here: Stanza where '
                                      "its English models are installed, else spaCy's en_core_web_sm, a "
                                      "substitution)"),
        "embedder": PaperValue("sentence-transformers/all-MiniLM-L6-v2",
                               '§3.4: semantic fidelity is "The MoverScore (Zhao et al., 2019)"; here the cosine '
                               "of MiniLM sentence embeddings stands in (a substitution)"),
    },
    not_in_paper={
        "checker_threshold": "the library's flip decision; the paper's post-check takes the classifier's prediction "
                             "(its top label), which None gives when the checker has no calibrated threshold",
        "causal_entities": "the library's explainer (checker occlusion) keeps this many entities; the paper's "
                           "explainer is CURE (§3.1), which has no such cap (not reproduced)",
        "min_drop": "an occlusion threshold of the library's explainer (the paper uses CURE)",
        "sentence_rationales": "how many evidence pieces the library's explainer passes on; CURE extracts sentence "
                               "rationales itself (§3.1)",
        "token_rationale_column": "precomputed token rationales (e.g. CURE's), when you have them",
        "sentence_rationale_column": "precomputed sentence rationales (e.g. CURE's), when you have them",
        "piece_separator": "how evidence given as one string is split into pieces",
        "generator_separator": "how the rationale pieces are joined into the generator's input",
        "seed": "in-Dataset replacements are drawn with it; the paper draws at random",
    },
    not_reproduced=(
        "The explainer: CURE (Si et al., 2023a) extracts token and sentence rationales; the library occludes "
        "entities with the checker (causal_entities per instance), or reads precomputed rationales from "
        "token_rationale_column / sentence_rationale_column.",
        "The claim generator: T5-base (or BART-base, T5-large, GPT-2) fine-tuned on FEVEROUS SUPPORTS instances "
        "(evidence -> claim); pass yours as generator= (the library's is SmolLM2-135M + LoRA).",
        "The -EDIT ablation uses a T5-base generator fine-tuned on FEVEROUS with a SUPPORTS/REFUTES prefix (§5.2); "
        "the library's edit=False reuses the SUPPORTS-only generator.",
        "The checker: the paper's three-way RoBERTa fact verifier; pass a checker trained with NOT ENOUGH INFO.",
    ),
)
