"""CrossAug as published: Lee et al., "CrossAug: A Contrastive Data Augmentation Method for Debiasing Fact
Verification Models", CIKM 2021 (https://arxiv.org/abs/2109.15107). Sections are the paper's."""

from __future__ import annotations

from ...registry.presets import PaperValue, Preset

PAPER = Preset(
    method="crossaug",
    paper="Lee et al., CIKM 2021",
    config={
        "max_span_tokens": PaperValue(3, "§3.3: the maximum span size tau for evidence modification is 3"),
        "min_span_tokens": PaperValue(1, "§2.2 (2): the changed words are searched in the evidence and replaced; a "
                                         "span needs at least one word to be searched"),
        "kinds": PaperValue(("c'+e", "c+e'", "c'+e'"), "§2.2: three samples per SUP pair; Table 1 ablations use "
                                                       "(c'+e) and (c+e', c'+e')"),
        "supports_label": PaperValue("SUPPORTS", "§2.2: only SUP claims are augmented"),
        "refutes_label": PaperValue("REFUTES", "§2.2: (c', e, REF), (c, e', REF)"),
        "keep_nei": PaperValue(False, "§3.1: trained on FEVER SUPPORTS/REFUTES pairs"),
        "reject_deletions": PaperValue(False, "§2.2: no such filter; the only exceptions are c' = c and spans over "
                                              "tau"),
        "reject_same_meaning": PaperValue(False, "§2.2: no such filter"),
        "top_candidate_only": PaperValue(True, "reference implementation (the first of the returned beams is "
                                               "used)"),
        "checker_threshold": PaperValue(None, "§2.2: no checker"),
        "keep_original": PaperValue(True, "§3.1: the augmented set is the training set plus the new samples"),
    },
    components={
        "generator": PaperValue("default", "§2.2 (1): BART fine-tuned on WikiFactCheck-English both ways; ours is "
                                           "SmolLM2-135M + LoRA on VitaminC claim pairs (not reproduced)"),
        "checker": PaperValue(None, "§2.2: no checker"),
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
