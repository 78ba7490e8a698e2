"""RACE as published: Zhu, Si, Zhao, Zhu, Liu, Shi, Wu, "Explain, Edit, Generate: Rationale-Sensitive
Counterfactual Data Augmentation for Multi-hop Fact Verification", EMNLP 2023 (https://arxiv.org/abs/2310.14508).
Sections and tables are the paper's."""

from __future__ import annotations

from ...registry.presets import PaperValue, Preset

PAPER = Preset(
    method="race",
    paper="Zhu et al., EMNLP 2023",
    config={
        "replace_types": PaperValue(("GPE", "DATE", "NUM"), "§3.2 in-Dataset: GPE, DATE and NUM entities are "
                                                            "replaced by others of the same type"),
        "swap_types": PaperValue(("PERSON", "ORG"), "§3.2 in-Instance: PERSON and ORG rationale entities swap "
                                                   "positions"),
        "lexicon": PaperValue(None, "§3.2 in-Dataset: the replacements come from the dataset (built by "
                                    "fit()/augment())"),
        "evidence_counterfactuals": PaperValue(True, "§3.4: RACE produces (c, E', y') for edited SUP instances"),
        "claim_counterfactuals": PaperValue(True, "§3.4: and (c', E, y')"),
        "edit": PaperValue(True, "§3.2: the evidence of SUP instances is edited (False: -EDIT, Table 2)"),
        "constrained": PaperValue(True, "§3.3: constrained beam search on the causal entities (False: -CONS, "
                                        "Table 2)"),
        "post_check": PaperValue("not_original", "§3.3 Post-Checking: candidates whose predicted label y' != y "
                                                 "are retained"),
        "select": PaperValue("fidelity", "§3.4: the candidate with the highest semantic + entity fidelity is "
                                         "retained"),
        "paper_decoding": PaperValue(True, "§4 Implementation Details: beam search settings below"),
        "num_beams": PaperValue(30, "§4: the beam size is 30"),
        "max_new_tokens": PaperValue(96, "§4: the max length of generated text is 96"),
        "semantic_weight": PaperValue(1.0, "§3.4: the sum of the semantic and entity fidelity scores"),
        "entity_weight": PaperValue(1.0, "§3.4: the sum of the two scores"),
        "keep_original": PaperValue(True, "Table 2: |Dtrain| includes the 18,171 original HoVer instances"),
    },
    components={},
    not_in_paper={
        "causal_entities": "the library's explainer (checker occlusion) keeps this many entities; the paper's "
                           "explainer is CURE (§3.1), which has no such cap (not reproduced)",
        "min_drop": "an occlusion threshold of the library's explainer (the paper uses CURE)",
        "sentence_rationales": "how many evidence pieces the library's explainer passes on; CURE extracts sentence "
                               "rationales itself (§3.1)",
        "token_rationale_column": "precomputed token rationales (e.g. CURE's), when you have them",
        "sentence_rationale_column": "precomputed sentence rationales (e.g. CURE's), when you have them",
        "piece_separator": "how evidence given as one string is split into pieces",
        "generator_separator": "how the rationale pieces are joined into the generator's input",
        "num_candidates": "candidate claims kept from the 30 beams for the post-check; the paper does not say how "
                          "many (the reference implementation keeps 10)",
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
