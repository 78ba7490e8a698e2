"""CrossAug as published: Lee et al., "CrossAug: A Contrastive Data Augmentation Method for Debiasing Fact
Verification Models", CIKM 2021 (https://arxiv.org/abs/2109.15107). Sections are the paper's."""

from __future__ import annotations

from ...registry.presets import PaperValue, Preset

#: the authors' released code, for what the paper does not print
REFERENCE = "reference implementation (minwhoo/CrossAug, run_crossaug.py)"

PAPER = Preset(
    method="crossaug",
    paper="Lee et al., CIKM 2021",
    config={
        "max_span_tokens": PaperValue(3, '§3.3: "we set the maximum span size for evidence modification τ to 3"'),
        "min_span_tokens": PaperValue(1, '§2.2 (2): "we search for the same words in the evidence"; a span of one '
                                         "word or more (the " + REFERENCE + " takes spans of 1 to 3 words)"),
        "kinds": PaperValue(("c'+e", "c+e'", "c'+e'"), '§2.2: "we generate three additional synthetic samples for '
                                                       'each original claim-evidence pair"; Table 1\'s ablations use '
                                                       "(c'+e) and (c+e', c'+e')"),
        "supports_label": PaperValue("SUPPORTS", '§2.2: "CrossAug utilizes only positive claims (SUP claims)"'),
        "refutes_label": PaperValue("REFUTES", "§2.2: (c', e, REF) from the first stage and \"we form two "
                                               "additional contrastive samples\" (c, e', REF) and (c', e', SUP)"),
        "keep_nei": PaperValue(False, '§2.2: "CrossAug utilizes only positive claims (SUP claims)"; §3.3 trains on '
                                      "the FEVER train set"),
        "reject_deletions": PaperValue(False, '§2.2 Exceptional Cases: the only skips are c\' = c ("we skip '
                                              'performing augmentation") and replaced parts longer than τ'),
        "reject_same_meaning": PaperValue(False, '§2.2 Exceptional Cases: "we skip performing augmentation" only '
                                                 "when c' = c; no meaning filter"),
        "top_candidate_only": PaperValue(True, REFERENCE + ": the first of 5 beams is used"),
        "checker_threshold": PaperValue(None, '§2.2: the generated samples are kept as formed ("we form two '
                                              'additional contrastive samples"); no checker'),
        "keep_original": PaperValue(True, '§2.2: "we generate three additional synthetic samples for each '
                                          'original claim-evidence pair"; the originals stay'),
    },
    components={
        "generator": PaperValue("default", '§2.2 (1): "we fine-tune BART [9] on WikiFactCheck-English dataset", '
                                           "both directions; ours is SmolLM2-135M + LoRA on VitaminC claim pairs "
                                           "(not reproduced)"),
        "checker": PaperValue(None, '§2.2: the generated samples are kept as formed ("we form two additional '
                                    'contrastive samples"); no checker'),
    },
    not_in_paper={
        "nei_label": "names the NOT ENOUGH INFO label of the schema; the paper drops NEI rows (keep_nei)",
        "seed": "beam search is deterministic; the seed only matters for sampling generators",
    },
    not_reproduced=(
        "The negative-claim generator: the paper fine-tunes BART on WikiFactCheck-English (both directions); the "
        "shipped one is SmolLM2-135M-Instruct + LoRA learned from VitaminC claim pairs.",
    ),
)
