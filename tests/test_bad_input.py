"""The bad-input catalogue: every case is a wrong or unusual input a user may give, with the error it must raise.

Each case asserts three things: the error class, that the message names what is wrong (the column and row, the
file, the option, the split) and that no partial output was written (the case's folder holds exactly the files it
held before). CLI cases also assert the one-line message on stderr, status 2 and no traceback.

A case is ``(id, setup, action, error, match)``: ``setup(tmp)`` builds what the case needs and returns a context
dict; ``action(ctx)`` performs the bad call.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from datasets import ClassLabel, Dataset, DatasetDict, Features, Value

import tests.hub_server as hub_server
from cfaug_hf import (AugmentationStats, Augmenter, COREAugmenter, CrossAugAugmenter, CrossAugConfig, Editor, Generator,
                      GeneratorConfig, LabelChecker, SchemaError, TaskSchema, cli)
from cfaug_hf.sharing.folders import ComponentLoadError, FolderNotEmptyError
from cfaug_hf.sharing.hub import HubError
from cfaug_hf.methods.icda.epoch import CounterfactualEpochDataset
from cfaug_hf.metrics import intrinsic
from cfaug_hf.report import augmentation_report
from cfaug_hf.testing import NegateAugmenter, tiny_causal_lm, tiny_classifier, tiny_seq2seq
from cfaug_hf.training import edit_pairs
from trainer_callbacks import ICDACallback

FV = TaskSchema.fact_verification()
SENT = TaskSchema.sentiment()


def fever(**over):
    data = {"claim": ["Paris is in France.", "Cats bark.", "The sun is hot."],
            "evidence": ["Paris is the capital of France.", "Cats meow.", "The sun is a hot star."],
            "label": ["SUPPORTS", "REFUTES", "SUPPORTS"]}
    data.update(over)
    return Dataset.from_dict(data)


def rewrite(claims):
    return [c.replace("France", "Spain").replace("hot", "cold") for c in claims]


def crossaug(**kw):
    return CrossAugAugmenter(rewrite, **kw)


def returns(value):
    return CrossAugAugmenter(lambda claims: value(claims))


def saved_generator(tmp):
    gen = Generator(*tiny_seq2seq(), num_beams=1, max_new_tokens=3)
    return gen.save_pretrained(tmp / "gen")


def saved_checker(tmp):
    return LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES"))).save_pretrained(tmp / "chk")


def user_folder(tmp):
    d = tmp / "mine"
    d.mkdir()
    (d / "notes.txt").write_text("my notes")
    return d


def jsonl(tmp, rows, name="data.jsonl"):
    path = tmp / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


GOOD_ROWS = [{"claim": "Paris is in France.", "evidence": "Paris is the capital of France.", "label": "SUPPORTS"}]


def augmented_on_disk(tmp):
    aug = NegateAugmenter(SENT)
    orig = Dataset.from_dict({"text": ["the film was good", "the film is bad", "a film"] * 2,
                              "label": ["positive", "negative", "positive"] * 2})
    out = orig.map(aug, batched=True)
    orig.save_to_disk(tmp / "orig")
    out.save_to_disk(tmp / "aug")
    return {"orig": tmp / "orig", "aug": tmp / "aug"}


def ner_on_disk(tmp):
    """A token-classification JSONL file and recipes, good and bad, for `cfaug augment`."""
    import json

    rows = [{"tokens": [name, "lives", "in", city], "ner_tags": ["B-PER", "O", "O", "B-LOC"]}
            for name, city in (("Ada", "Paris"), ("Bob", "Rome"))]
    (tmp / "ner.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    recipes = {"list": "- method: cfgen\n", "broken": "method: [cfgen\n",
               "field": "method: cfgen\nschema: {preset: ner}\nconfig: {per_inptu: 2}\n",
               "preset": "method: cfgen\nschema: {preset: tweets}\n",
               "component": "method: crossaug\ncomponents: {generator: {type: generator}}\n",
               "method": "method: magic\n",
               "nopreset": "method: cfgen\nschema: {preset: ner}\npreset: paper\n",
               "badpreset": "method: crossaug\npreset: [paper]\n"}
    for name, text in recipes.items():
        (tmp / f"{name}.yaml").write_text(text)
    return {"data": tmp / "ner.jsonl", "dir": tmp}


def claims_on_disk(tmp):
    """``ner_on_disk``'s recipes with a two-row fact-verification file as the data (for CrossAug cases, whose columns
    are checked before anything else)."""
    import json

    out = ner_on_disk(tmp)
    rows = [{"claim": "Paris is in France.", "evidence": "Paris is the capital of France.", "label": "SUPPORTS"},
            {"claim": "Rome is in Spain.", "evidence": "Rome is the capital of Italy.", "label": "REFUTES"}]
    (tmp / "claims.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    return {**out, "data": tmp / "claims.jsonl"}


def reviews_on_disk(tmp):
    """A two-row sentiment JSONL file for `cfaug augment`."""
    import json

    rows = [{"text": "A fine film.", "label": "positive"}, {"text": "A dull film.", "label": "negative"}]
    (tmp / "reviews.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    return {"data": tmp / "reviews.jsonl", "dir": tmp}


def corrupt(path, data=b"\xff" * 16):
    path.write_bytes(data)


def generator_with(tmp, damage):
    folder = saved_generator(tmp)
    damage(folder)
    return {"folder": folder}


def truncate_weights(folder):
    path = folder / "model.safetensors"
    path.write_bytes(path.read_bytes()[:200])


def rename_weights(folder):
    from safetensors.torch import load_file, save_file

    path = folder / "model.safetensors"
    save_file({"renamed." + k: v for k, v in load_file(path).items()}, path, metadata={"format": "pt"})


def pickle_only(folder):
    (folder / "model.safetensors").unlink()
    manifest = json.loads((folder / "cfaug_manifest.json").read_text())
    manifest["files"].remove("model.safetensors")
    (folder / "cfaug_manifest.json").write_text(json.dumps(manifest))
    (folder / "pytorch_model.bin").write_bytes(b"pickle")


def edit_config(name, **changes):
    def damage(folder):
        path = folder / name
        data = json.loads(path.read_text())
        data.update(changes)
        path.write_text(json.dumps(data))
    return damage


def _saved_negate(tmp, change, unsaveable=False):
    from cfaug_hf.filters import EntityFidelityFilter, LabelFlipFilter

    filters = ([EntityFidelityFilter(lambda texts: [[] for _ in texts])] if unsaveable
               else [LabelFlipFilter(LabelChecker(*tiny_classifier(("negative", "positive"))))])
    folder = NegateAugmenter(SENT, filters=filters).save_pretrained(tmp / "aug")
    if change is not None:
        path = folder / "cfaug_augmenter.json"
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))
    return {"folder": folder}


class _ShortFilter(__import__("cfaug_hf.filters").filters.Filter):
    """A filter that answers for the first counterfactual only: the rest must not pass unfiltered."""

    name = "short_answers"

    def scores(self, pairs):
        return [1.0]

    def keep(self, pairs):
        return [True], [1.0]


def run_cli(argv):
    return lambda ctx: cli.main([a.format(**{k: str(v) for k, v in ctx.items()}) for a in argv])


def augment_recipe(recipe):
    """`cfaug augment DATA --recipe RECIPE` with the output in the case's folder."""
    return run_cli(["augment", "{data}", "--out", "{dir}/out", "--recipe", recipe])


# --------------------------------------------------------------------------------------------------- the table
NO_SETUP = None
NER = TaskSchema.token_classification()


def _llm(schema, **kw):
    from cfaug_hf import LLMCounterfactualAugmenter

    return LLMCounterfactualAugmenter(lambda prompts: ["x" for _ in prompts], schema, **kw)


def _race(schema, checker=None):
    from cfaug_hf import RACEAugmenter
    from cfaug_hf.components.ner import LexiconNER

    return RACEAugmenter(lambda texts: texts, checker or LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES"))),
                         LexiconNER({"Paris": "GPE"}), schema, embedder="x")


def _spacy_ner():
    from cfaug_hf.components.ner import SpacyNER

    return SpacyNER("no_such_pipeline_xx")

# ------------------------------------------------------------------------------- round five (issue 80) set-ups
def _hostile_augmenter(tmp: Path, **llm: object) -> dict:
    """A saved LLM augmenter whose endpoint config a hostile author edited by hand (``llm`` fields replaced), the
    two rows it would send, and the address it names."""
    folder = _endpoint_augmenter(tmp)
    config = next(folder.rglob("cfaug_http_llm.json"))
    data = json.loads(config.read_text())
    data["llm"].update(llm)
    config.write_text(json.dumps(data))
    reviews_on_disk(tmp)
    return {"aug": folder, "data": tmp / "reviews.jsonl", "dir": tmp}


def _planted_lock(tmp: Path, kind: str) -> dict:
    import os

    (tmp / "run").mkdir(mode=0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(tmp / "run")  # the case's environment is restored after it
    out = claims_on_disk(tmp)
    if kind == "symlink":
        from cfaug_hf.sharing.folders import lock_path

        (tmp / "victim.txt").write_text("mine")
        lock_path(tmp / "out").symlink_to(tmp / "victim.txt")
    else:
        (tmp / "run" / "cfaug_hf-locks").write_text("not a folder")
    return out


def _claims_with(tmp: Path, rows: list[dict], name: str = "rows.jsonl") -> dict:
    jsonl(tmp, rows, name)
    return {"data": tmp / name, "dir": tmp}


def _raw_file(tmp: Path, name: str, data: bytes) -> dict:
    (tmp / name).write_bytes(data)
    return {"data": tmp / name, "dir": tmp}


def _csv_with_broken_features(tmp: Path) -> dict:
    from cfaug_hf.sharing.row_files import features_path, write_rows

    paths = augmented_on_disk(tmp)
    (tmp / "csv").mkdir()
    from datasets import load_from_disk

    path = write_rows(load_from_disk(str(paths["aug"])), tmp / "csv", "csv")
    features_path(path).write_text("{broken")
    Dataset.from_dict({"text": ["the film was good"], "label": ["positive"]}).to_json(tmp / "orig.jsonl")
    return {"orig": tmp / "orig.jsonl", "csv": path, "dir": tmp}


def _planted_embedder_recipe(tmp: Path) -> dict:
    LabelChecker(*tiny_classifier(("negative", "positive"))).save_pretrained(tmp / "private_emb")
    (tmp / "shared").mkdir()
    (tmp / "shared" / "r.yaml").write_text(json.dumps({
        "method": "core", "schema": {"preset": "sentiment"}, "config": {"mode": "editor_only"},
        "components": {"checker": None},
        "filters": [{"filter": "semantic_fidelity", "args": {"embedder": "private_emb"}}]}))
    return {**reviews_on_disk(tmp), "recipe": tmp / "shared" / "r.yaml"}


CASES = [
    # --- token classification, relation extraction, LLM counterfactuals, CFGen, RACE
    ("ner-tags-count", NO_SETUP, lambda c: _llm(NER).augment(Dataset.from_dict(
        {"tokens": [["Ada", "ran"], ["Bob", "sat", "down"]], "ner_tags": [["B-PER", "O"], ["B-PER", "O"]]})),
     SchemaError, r"'ner_tags' at row 1: got 2 tags for 3 tokens"),
    ("ner-not-iob2", NO_SETUP, lambda c: _llm(NER).augment(Dataset.from_dict(
        {"tokens": [["New", "York"]], "ner_tags": [["O", "I-LOC"]]})),
     SchemaError, r"'ner_tags' at row 0: not valid IOB2: tag 1 is 'I-LOC' after 'O'"),
    ("ner-unknown-tag", NO_SETUP, lambda c: _llm(NER).augment(Dataset.from_dict(
        {"tokens": [["Ada"]], "ner_tags": [["B-HUMAN"]]})), SchemaError, r"'ner_tags' at row 0: unknown label 'B-HUMAN'"),
    ("ner-tags-one-string", NO_SETUP, lambda c: _llm(NER).augment(Dataset.from_dict(
        {"tokens": [["Ada"]], "ner_tags": ["B-PER"]})), SchemaError, "list of tags per row"),
    ("ner-map-unbatched", NO_SETUP, lambda c: Dataset.from_dict(
        {"tokens": [["Ada"]], "ner_tags": [["B-PER"]]}).map(_llm(NER)), TypeError, "batched=True"),
    ("re-markup-missing", NO_SETUP, lambda c: _llm(TaskSchema.relation_extraction(), targets="random").augment(
        Dataset.from_dict({"text": ["<e1>a</e1> and <e2>b</e2>", "no entities here"], "label": ["Other"] * 2})),
     SchemaError, r"'text' at row 1: expected exactly one <e1>"),
    ("re-markup-empty-entity", NO_SETUP, lambda c: _llm(TaskSchema.relation_extraction(), targets="random").augment(
        Dataset.from_dict({"text": ["<e1> </e1> and <e2>b</e2>"], "label": ["Other"]})),
     SchemaError, r"'text' at row 0: the entity inside <e1>...</e1> is empty"),
    ("llm-unknown-task", NO_SETUP, lambda c: _llm(TaskSchema(("t",), ("t",), "label", ("a", "b"))), ValueError,
     "Unknown task 'text-classification' for LLM counterfactuals"),
    ("llm-label-outside-schema", NO_SETUP, lambda c: _llm(SENT).augment(Dataset.from_dict(
        {"text": ["good", "fine"], "label": ["positive", "mixed"]})), SchemaError,
     r"'label' at row 1: unknown label 'mixed'"),
    ("llm-exclude-unknown-label", NO_SETUP, lambda c: _llm(SENT, exclude_targets=["neutral"]), SchemaError,
     r"'neutral'.*not in the schema's labels"),
    ("llm-balanced-without-counts", NO_SETUP, lambda c: Dataset.from_dict(
        {"text": ["a", "b"], "label": ["a", "c"]}).map(_llm(TaskSchema(("text",), ("text",), "label", tuple("abcd")),
                                                           task="sentiment", targets="balanced"), batched=True),
     ValueError, "needs the data's label counts"),
    ("llm-cot-for-ner", NO_SETUP, lambda c: _llm(NER, cot=True), ValueError, "no chain-of-thought variant"),
    # --- prompt templates, LLM-chosen relations, the ICDA paper preset (the papers as printed)
    ("llm-template-unknown-placeholder", NO_SETUP, lambda c: _llm(SENT, prompt_template="Review: ${review}"),
     ValueError, r"\$\{review\}, which this task does not fill; its placeholders are \$\{text\}"),
    ("llm-template-stray-dollar", NO_SETUP, lambda c: _llm(SENT, prompt_template="Costs $5: ${text}"), ValueError,
     r"'\$' that starts no placeholder"),
    ("llm-template-empty", NO_SETUP, lambda c: _llm(SENT, prompt_template="  \n"), ValueError, "non-empty"),
    ("llm-template-for-ner", NO_SETUP, lambda c: _llm(NER, prompt_template="${text}"), ValueError,
     "prompt_template is for the sentiment and NLI prompts"),
    ("llm-choose-not-re", NO_SETUP, lambda c: _llm(SENT, targets="choose"), ValueError,
     "targets='choose' lets the LLM choose a relation"),
    ("icda-paper-without-selector", NO_SETUP,
     lambda c: __import__("cfaug_hf").RationaleSwapAugmenter.from_preset("paper"), ComponentLoadError,
     r"needs a selector .*Train one with: cfaug train selector"),
    ("llm-demo-pool-no-encoder", NO_SETUP, lambda c: _llm(SENT, demo_pool=[{"text": "x", "label": "positive"}]),
     TypeError, "demo_pool needs demo_encoder="),
    ("cfgen-no-lexicon", NO_SETUP, lambda c: __import__("cfaug_hf").CFGenAugmenter(NER), ValueError,
     "needs the dataset's entities"),
    ("race-not-fact-verification", NO_SETUP, lambda c: _race(SENT), SchemaError, "fact-verification"),
    ("race-checker-labels", NO_SETUP, lambda c: _race(FV, checker=LabelChecker(*tiny_classifier(("yes", "no")))),
     SchemaError, "checker's labels do not match the schema"),
    ("race-map-before-fit", NO_SETUP, lambda c: fever().map(_race(FV), batched=True), ValueError,
     r"call augmenter.augment\(dataset\)"),
    ("ner-spacy-not-installed", NO_SETUP, lambda c: _spacy_ner()(["Paris"]), (ImportError, OSError),
     r"cfaug-hf\[spacy\]|not installed"),
    # --- TaskSchema construction
    ("schema-no-text-columns", NO_SETUP, lambda c: TaskSchema((), (), "label", ("a", "b")), SchemaError,
     "at least one text column"),
    ("schema-one-label", NO_SETUP, lambda c: TaskSchema(("t",), ("t",), "label", ("a",)), SchemaError,
     r"two or more distinct names, got \['a'\]"),
    ("schema-duplicate-labels", NO_SETUP, lambda c: TaskSchema(("t",), ("t",), "label", ("a", "a")), SchemaError,
     r"distinct names, got \['a', 'a'\]"),
    ("schema-edit-not-text", NO_SETUP, lambda c: TaskSchema(("t",), ("u",), "label", ("a", "b")), SchemaError,
     "Column 'u' is edited or list-valued but is not one of text_columns"),
    ("schema-list-not-text", NO_SETUP, lambda c: TaskSchema(("t",), ("t",), "label", ("a", "b"), list_columns=("e",)),
     SchemaError, "Column 'e' is edited or list-valued"),
    ("schema-label-is-text", NO_SETUP, lambda c: TaskSchema(("t", "label"), ("t",), "label", ("a", "b")), SchemaError,
     "label_column 'label' is also a text column"),
    ("schema-from-dict-unknown", NO_SETUP, lambda c: TaskSchema.from_dict({**FV.to_dict(), "colour": 1}), SchemaError,
     r"Unknown TaskSchema fields \['colour'\]"),
    ("schema-label-unknown", NO_SETUP, lambda c: FV.label_id("MAYBE"), SchemaError, "unknown label 'MAYBE'"),
    ("schema-label-id-range", NO_SETUP, lambda c: FV.label_id(5), SchemaError, r"id in 0\.\.1"),
    ("schema-label-none", NO_SETUP, lambda c: FV.label_id(None), SchemaError, "unknown label None"),
    # --- dataset features, checked before any row is read
    ("features-missing-column", NO_SETUP, lambda c: crossaug().augment(fever().rename_column("claim", "claims")),
     SchemaError, "Column 'claim' is missing.*Did you mean 'claims'"),
    ("features-missing-label", NO_SETUP, lambda c: crossaug().augment(fever().rename_column("label", "y")),
     SchemaError, "Column 'label' is missing"),
    ("features-int-text", NO_SETUP, lambda c: NegateAugmenter(SENT).augment(
        Dataset.from_dict({"text": [1, 2], "label": ["positive", "negative"]})), SchemaError,
     "Column 'text' has type .*int64.*expected string"),
    ("features-list-not-allowed", NO_SETUP, lambda c: NegateAugmenter(SENT).augment(
        Dataset.from_dict({"text": [["a"], ["b"]], "label": ["positive", "negative"]})), SchemaError,
     "Column 'text' holds lists of strings.*list_columns"),
    ("features-float-label", NO_SETUP, lambda c: NegateAugmenter(SENT).augment(
        Dataset.from_dict({"text": ["a", "b"], "label": [0.5, 1.5]})), SchemaError,
     "Column 'label' has type .*float.*expected label names"),
    ("features-classlabel-names", NO_SETUP, lambda c: NegateAugmenter(SENT).augment(Dataset.from_dict(
        {"text": ["a", "b"], "label": [0, 1]},
        features=Features({"text": Value("string"), "label": ClassLabel(names=["bad", "good"])}))), SchemaError,
     r"Column 'label' is a ClassLabel with names \['bad', 'good'\]"),
    ("features-already-augmented", NO_SETUP, lambda c: NegateAugmenter(SENT).augment(
        Dataset.from_dict({"text": ["a", "b"], "label": ["positive", "negative"]}).map(
            NegateAugmenter(SENT), batched=True)), SchemaError,
     "Column 'cf_is_counterfactual' is present: this dataset is already the output of an augmenter"),
    ("map-already-augmented", NO_SETUP, lambda c: Dataset.from_dict(
        {"text": ["a"], "label": ["positive"]}).map(NegateAugmenter(SENT), batched=True).map(
        NegateAugmenter(SENT), batched=True), SchemaError, "already the output of an augmenter"),
    ("datasetdict-bad-split", NO_SETUP, lambda c: crossaug().augment(DatasetDict(
        {"train": fever(), "test": fever().rename_column("evidence", "evidences")})), SchemaError,
     "Split 'test': Column 'evidence' is missing"),
    ("augment-list-of-dicts", NO_SETUP, lambda c: crossaug().augment(GOOD_ROWS), TypeError,
     "augment.. takes a datasets.Dataset.*got list.*Dataset.from_list"),
    ("augment-iterable-num-proc", NO_SETUP, lambda c: crossaug().augment(fever().to_iterable_dataset(), num_proc=2),
     ValueError, "IterableDataset.*num_proc is not supported"),
    ("augment-dataframe-bad-column", NO_SETUP, lambda c: crossaug().augment(pd.DataFrame(
        {"claim": ["a"], "evidnce": ["b"], "label": ["SUPPORTS"]})), SchemaError,
     "Column 'evidence' is missing.*Did you mean 'evidnce'"),
    # --- rows, named by their index in the dataset
    ("row-empty-claim", NO_SETUP, lambda c: crossaug().augment(fever(claim=["a", "", "c"])), SchemaError,
     "Column 'claim' at row 1: got ''"),
    ("row-space-claim", NO_SETUP, lambda c: crossaug().augment(fever(claim=["a", "b", "   "])), SchemaError,
     "Column 'claim' at row 2: got '   '"),
    ("row-none-claim", NO_SETUP, lambda c: crossaug().augment(fever(claim=["a", None, "c"])), SchemaError,
     "Column 'claim' at row 1: got None"),
    ("row-empty-evidence-list", NO_SETUP, lambda c: crossaug().augment(fever(evidence=[["x"], [], ["y"]])),
     SchemaError, r"Column 'evidence' at row 1: got \[\].*non-empty list of non-empty strings"),
    ("row-empty-evidence-piece", NO_SETUP, lambda c: crossaug().augment(fever(evidence=[["x"], ["y"], ["z", ""]])),
     SchemaError, "Column 'evidence' at row 2"),
    ("row-unknown-label", NO_SETUP, lambda c: crossaug().augment(fever(label=["SUPPORTS", "MAYBE", "REFUTES"])),
     SchemaError, "Column 'label' at row 1: unknown label 'MAYBE'"),
    ("row-label-id-range", NO_SETUP, lambda c: crossaug().augment(fever(label=[0, 1, 7])), SchemaError,
     "Column 'label' at row 2: unknown label 7"),
    ("row-none-label", NO_SETUP, lambda c: crossaug().augment(fever(label=["SUPPORTS", None, "REFUTES"])),
     SchemaError, "Column 'label' at row 1: unknown label None"),
    ("row-in-plain-map-batch", NO_SETUP, lambda c: fever(claim=["a", "b", ""]).map(crossaug(), batched=True),
     SchemaError, "Column 'claim' at row 2 of the batch"),
    ("map-unbatched", NO_SETUP, lambda c: fever().map(crossaug()), TypeError,
     r"got one row \(label='SUPPORTS'\).*batched=True"),
    ("row-sentiment-empty", NO_SETUP, lambda c: NegateAugmenter(SENT).augment(
        Dataset.from_dict({"text": ["good", "", "bad"], "label": ["positive"] * 3})), SchemaError,
     "Column 'text' at row 1"),
    # --- generator callables that break the contract
    ("generator-returns-none", NO_SETUP, lambda c: returns(lambda cs: None).augment(fever()), TypeError,
     "The generator returned NoneType for 2 claims; a generator callable takes a list of claims"),
    ("generator-returns-int", NO_SETUP, lambda c: returns(lambda cs: 3).augment(fever()), TypeError,
     "The generator returned int"),
    ("generator-returns-str", NO_SETUP, lambda c: returns(lambda cs: "Paris").augment(fever()), TypeError,
     "The generator returned str for 2 claims"),
    ("generator-wrong-length", NO_SETUP, lambda c: returns(lambda cs: ["x"]).augment(fever()), TypeError,
     "returned 1 outputs for 2 claims"),
    ("generator-item-int", NO_SETUP, lambda c: returns(lambda cs: [1 for _ in cs]).augment(fever()), TypeError,
     r"The generator's output 0 \(for claim 'Paris is in France.'\) is 1"),
    ("generator-item-none", NO_SETUP, lambda c: returns(lambda cs: [None for _ in cs]).augment(fever()), TypeError,
     "output 0 .* is None"),
    ("generator-not-callable", NO_SETUP, lambda c: CrossAugAugmenter(42), TypeError,
     "generator must be a Generator or a callable, got int"),
    # --- configs
    ("crossaug-nli-schema", NO_SETUP, lambda c: CrossAugAugmenter(rewrite, TaskSchema.nli()), SchemaError,
     "CrossAugConfig.supports_label='SUPPORTS' is not one of the schema's labels"),
    ("crossaug-sentiment-schema", NO_SETUP, lambda c: CrossAugAugmenter(rewrite, SENT), SchemaError,
     r"needs a \(claim, evidence\) schema"),
    ("crossaug-bad-kind", NO_SETUP, lambda c: crossaug(kinds=("c'+e", "e'")), ValueError,
     r"kinds must be a non-empty subset.*got .*\"e'\""),
    ("crossaug-empty-kinds", NO_SETUP, lambda c: crossaug(kinds=()), ValueError, "kinds must be a non-empty subset"),
    ("crossaug-span-order", NO_SETUP, lambda c: crossaug(min_span_tokens=4), ValueError,
     "min_span_tokens <= max_span_tokens, got 4 and 3"),
    ("crossaug-threshold", NO_SETUP, lambda c: crossaug(checker_threshold=1.5), ValueError,
     r"checker_threshold must be a probability in \[0, 1\] or None, got 1.5"),
    ("crossaug-unknown-option", NO_SETUP, lambda c: crossaug(beams=5), TypeError, "beams"),
    ("config-from-dict-unknown", NO_SETUP, lambda c: CrossAugConfig.from_dict({"tau": 3}), TypeError,
     r"CrossAugConfig has no field\(s\) \['tau'\]"),
    ("augmenter-schema-type", NO_SETUP, lambda c: CrossAugAugmenter(rewrite, {"claim": "claim"}), TypeError,
     "schema must be a TaskSchema, got dict"),
    ("augmenter-config-type", NO_SETUP, lambda c: CrossAugAugmenter(rewrite, config=GeneratorConfig()), TypeError,
     "CrossAugAugmenter takes a CrossAugConfig, got GeneratorConfig"),
    ("generator-template", NO_SETUP, lambda c: GeneratorConfig(input_template="Claim:"), ValueError,
     r"input_template must contain '\{text\}'"),
    ("generator-sample-beams", NO_SETUP, lambda c: GeneratorConfig(do_sample=True, num_beams=4), ValueError,
     "do_sample=True needs num_beams=1"),
    ("generator-return-gt-beams", NO_SETUP, lambda c: GeneratorConfig(num_beams=2, num_return_sequences=3),
     ValueError, "num_return_sequences=3 exceeds num_beams=2"),
    ("generator-batch-zero", NO_SETUP, lambda c: GeneratorConfig(batch_size=0), ValueError,
     "batch_size must be >= 1, got 0"),
    ("generator-seeds-length", NO_SETUP, lambda c: Generator(*tiny_seq2seq(), num_beams=1).generate(["a"], seeds=[]),
     ValueError, "Got 0 seeds for 1 texts"),
    ("checker-pairs-length", NO_SETUP, lambda c: LabelChecker(*tiny_classifier(("a", "b"))).predict(["x"], ["y", "z"]),
     ValueError, "Got 1 first texts but 2 second texts"),
    ("checker-unknown-label", NO_SETUP, lambda c: LabelChecker(*tiny_classifier(("a", "b"))).label_id("c"),
     ValueError, r"Label 'c' is not one of the checker's labels \['a', 'b'\]"),
    ("crossaug-checker-labels", NO_SETUP, lambda c: crossaug(checker=LabelChecker(*tiny_classifier(("pos", "neg")))),
     ValueError, r"CrossAug: The checker knows the labels \['pos', 'neg'\], not \['SUPPORTS', 'REFUTES'\]"),
    ("checker-accept-threshold-range", NO_SETUP, lambda c: LabelChecker(*tiny_classifier(), accept_threshold=1.5),
     ValueError, r"accept_threshold must be a probability in \[0, 1\] or None, got 1.5"),
    ("crossaug-checker-not-a-checker", NO_SETUP, lambda c: crossaug(checker=3), TypeError,
     "CrossAug: checker must be a LabelChecker, a folder or Hub id of one, 'default' or None; got int"),
    ("crossaug-checker-missing-folder", NO_SETUP, lambda c: crossaug(checker="runs/not-there/checker"),
     ComponentLoadError, "no local folder 'runs/not-there/checker'"),
    # --- editors and the shipped defaults
    ("editor-from-generator-folder", lambda t: {"p": saved_generator(t)}, lambda c: Editor.from_pretrained(c["p"]),
     ComponentLoadError, "not a saved Editor.*It holds a saved generator"),
    ("editor-default-unknown-task", NO_SETUP, lambda c: Editor.default("ner"), ValueError,
     r"No editor ships for task 'ner'; shipped: \['sentiment', 'nli'\]"),
    ("crossaug-generator-missing-folder", NO_SETUP, lambda c: CrossAugAugmenter("runs/not-there/gen"),
     ComponentLoadError, "no local folder 'runs/not-there/gen'"),
    ("core-editor-missing-folder", NO_SETUP, lambda c: COREAugmenter("runs/not-there/editor", mode="editor_only"),
     ComponentLoadError, "no local folder 'runs/not-there/editor'"),
    ("edit-pairs-empty-target", NO_SETUP, lambda c: edit_pairs(Dataset.from_dict(
        {"text": ["a b c"], "counterfactual": ["a b d"], "target": [" "]})), ValueError,
     "edit_pairs: row 0, column 'target': expected a non-empty string"),
    ("amplify-one-fold", NO_SETUP, lambda c: __import__("cfaug_hf.amplify").amplify.amplify(Dataset.from_dict(
        {"text": ["a b c"], "label": ["negative"], "counterfactual": ["a b d"]}), checker=None, folds=1),
     ValueError, "amplify: folds must be an integer of at least 2 \\(cross-fitting\\) or None, got 1"),
    # --- generation backends and scale-out
    ("backend-unknown", NO_SETUP, lambda c: Generator(*tiny_seq2seq()).use_backend("vllm-on-cpu"), ValueError,
     "backend must be 'auto' or one of \\[.*'transformers'.*\\], got 'vllm-on-cpu'"),
    ("backend-ct2-seq2seq", NO_SETUP, lambda c: Generator(*tiny_seq2seq()).use_backend("ctranslate2"), ValueError,
     "backend='ctranslate2' cannot decode this generator: it runs causal LMs .* this generator is encoder-decoder"),
    ("backend-vllm-not-installed", NO_SETUP, lambda c: Generator(*tiny_causal_lm()).use_backend("vllm"), ImportError,
     "backend=.vllm. needs vllm, which is not installed"),
    ("ray-concurrency-zero", NO_SETUP, lambda c: __import__("cfaug_hf.distributed").distributed.augment_ray(
        Dataset.from_dict({"text": ["a"], "label": ["negative"]}), "runs/x", concurrency=0), ValueError,
     "concurrency must be a positive integer, got 0"),
    ("ray-data-list", NO_SETUP, lambda c: __import__("cfaug_hf.distributed").distributed.augment_ray(
        [{"text": "a"}], "runs/x"), TypeError, "augment_ray takes a ray.data.Dataset, a datasets.Dataset or a "
     "Parquet path, got list"),
    # --- loading components
    ("load-missing-relative", NO_SETUP, lambda c: Generator.from_pretrained("runs/not-there/generator"),
     ComponentLoadError, "no local folder 'runs/not-there/generator'.*not a Hub repository id"),
    ("load-missing-absolute", lambda t: {"p": t / "nothing"}, lambda c: Generator.from_pretrained(c["p"]),
     ComponentLoadError, "no local folder .*nothing"),
    ("load-missing-dot", NO_SETUP, lambda c: LabelChecker.from_pretrained("./checker"), ComponentLoadError,
     r"no local folder '\./checker'"),
    ("load-file", lambda t: {"p": jsonl(t, GOOD_ROWS)}, lambda c: Generator.from_pretrained(c["p"]),
     ComponentLoadError, "data.jsonl is a file; expected a folder"),
    ("load-empty-folder", lambda t: {"p": user_folder(t)}, lambda c: Generator.from_pretrained(c["p"]),
     ComponentLoadError, "not a saved Generator: cfaug_generator.json is missing"),
    ("load-wrong-kind", lambda t: {"p": saved_checker(t)}, lambda c: Generator.from_pretrained(c["p"]),
     ComponentLoadError, "not a saved Generator.*It holds a saved checker"),
    ("load-config-not-json", lambda t: generator_with(t, lambda f: corrupt(f / "cfaug_generator.json", b"{oops")),
     lambda c: Generator.from_pretrained(c["folder"]), ComponentLoadError, "cfaug_generator.json is not valid JSON"),
    ("load-newer-format", lambda t: generator_with(t, edit_config("cfaug_generator.json", format_version=9)),
     lambda c: Generator.from_pretrained(c["folder"]), ComponentLoadError, "format_version 9.*Upgrade cfaug-hf"),
    ("load-other-type", lambda t: generator_with(t, edit_config("cfaug_generator.json", component_type="checker")),
     lambda c: Generator.from_pretrained(c["folder"]), ComponentLoadError, "holds a 'checker', not a 'generator'"),
    ("load-tokenizer-deleted", lambda t: generator_with(t, lambda f: (f / "tokenizer.json").unlink()),
     lambda c: Generator.from_pretrained(c["folder"]), ComponentLoadError,
     "incomplete saved Generator: 'tokenizer.json' is missing"),
    ("load-tokenizer-config-deleted", lambda t: generator_with(t, lambda f: (f / "tokenizer_config.json").unlink()),
     lambda c: Generator.from_pretrained(c["folder"]), ComponentLoadError, "'tokenizer_config.json' is missing"),
    ("load-legacy-no-tokenizer", lambda t: generator_with(t, lambda f: [(f / "cfaug_manifest.json").unlink(),
                                                                       (f / "tokenizer_config.json").unlink()]),
     lambda c: Generator.from_pretrained(c["folder"]), ComponentLoadError, "'tokenizer_config.json' is missing"),
    ("load-weights-deleted", lambda t: generator_with(t, lambda f: (f / "model.safetensors").unlink()),
     lambda c: Generator.from_pretrained(c["folder"]), ComponentLoadError, "'model.safetensors' is missing"),
    ("load-config-json-deleted", lambda t: generator_with(t, lambda f: (f / "config.json").unlink()),
     lambda c: Generator.from_pretrained(c["folder"]), ComponentLoadError, "'config.json' is missing"),
    ("load-pickle-only", lambda t: generator_with(t, pickle_only), lambda c: Generator.from_pretrained(c["folder"]),
     ComponentLoadError, "holds pickled weights \\(pytorch_model.bin\\); cfaug_hf loads safetensors only"),
    ("load-corrupt-safetensors", lambda t: generator_with(t, lambda f: corrupt(f / "model.safetensors")),
     lambda c: Generator.from_pretrained(c["folder"]), ComponentLoadError,
     "model.safetensors is not a readable safetensors file"),
    ("load-truncated-safetensors", lambda t: generator_with(t, truncate_weights),
     lambda c: Generator.from_pretrained(c["folder"]), ComponentLoadError,
     "model.safetensors is not a readable safetensors file"),
    ("load-wrong-keys", lambda t: generator_with(t, rename_weights), lambda c: Generator.from_pretrained(c["folder"]),
     ComponentLoadError, r"weights in .*model.safetensors do not fit the Generator's model: \d+ missing keys"),
    ("load-checker-wrong-keys", lambda t: {"f": saved_checker(t), "_": rename_weights(t / "chk")},
     lambda c: LabelChecker.from_pretrained(c["f"]), ComponentLoadError, "do not fit the LabelChecker's model"),
    ("load-checker-tokenizer-deleted", lambda t: {"f": saved_checker(t), "_": (t / "chk" / "tokenizer.json").unlink()},
     lambda c: LabelChecker.from_pretrained(c["f"]), ComponentLoadError, "'tokenizer.json' is missing"),
    ("load-manifest-damaged", lambda t: generator_with(t, lambda f: corrupt(f / "cfaug_manifest.json", b"[1")),
     lambda c: Generator.from_pretrained(c["folder"]), ComponentLoadError, "cfaug_manifest.json is not valid JSON"),
    # --- saving into folders
    ("save-generator-foreign-folder", lambda t: {"d": user_folder(t)},
     lambda c: Generator(*tiny_seq2seq()).save_pretrained(c["d"]), FolderNotEmptyError,
     "mine is not empty: it holds files the library did not write \\(notes.txt\\)"),
    ("save-checker-foreign-folder", lambda t: {"d": user_folder(t)},
     lambda c: LabelChecker(*tiny_classifier(("a", "b"))).save_pretrained(c["d"]), FolderNotEmptyError,
     "notes.txt.*overwrite=True"),
    ("save-generator-over-checker", lambda t: {"d": saved_checker(t)},
     lambda c: Generator(*tiny_seq2seq()).save_pretrained(c["d"]), FolderNotEmptyError,
     "it holds a saved checker. Refusing to write a generator"),
    ("save-into-file", lambda t: {"p": jsonl(t, GOOD_ROWS)},
     lambda c: Generator(*tiny_seq2seq()).save_pretrained(c["p"]), FolderNotEmptyError,
     "data.jsonl is a file; expected a folder"),
    ("save-augmenter-foreign-folder", lambda t: {"d": user_folder(t)},
     lambda c: NegateAugmenter(SENT).save_pretrained(c["d"]), FolderNotEmptyError, "notes.txt"),
    ("save-augmenter-callable", lambda t: {"d": t / "aug"}, lambda c: crossaug().save_pretrained(c["d"]), TypeError,
     "its generator is a function, not a cfaug component"),
    # --- loading augmenters
    ("augmenter-load-generator-folder", lambda t: {"f": saved_generator(t)},
     lambda c: Augmenter.from_pretrained(c["f"]), ComponentLoadError,
     "not a saved augmenter: cfaug_augmenter.json is missing. It holds a saved generator"),
    ("augmenter-load-missing", NO_SETUP, lambda c: Augmenter.from_pretrained("/no/such/augmenter"),
     ComponentLoadError, "no local folder '/no/such/augmenter'"),
    ("augmenter-load-callable", lambda t: {"f": crossaug().save_pretrained(t / "a", references_only=True)},
     lambda c: Augmenter.from_pretrained(c["f"]), ComponentLoadError, "pass generator=... to from_pretrained"),
    ("augmenter-load-wrong-method", lambda t: {"f": crossaug().save_pretrained(t / "a", references_only=True)},
     lambda c: NegateAugmenter.from_pretrained(c["f"], generator=rewrite), ComponentLoadError,
     "holds a 'crossaug' augmenter, not 'negate'"),
    # --- statistics and reports
    ("stats-not-augmented", NO_SETUP, lambda c: AugmentationStats.from_dataset(fever()), SchemaError,
     "Columns .*cf_is_counterfactual.* are missing: this is not the output of a cfaug_hf augmenter"),
    ("report-original-is-augmented", augmented_on_disk, lambda c: augmentation_report(
        Dataset.load_from_disk(c["aug"]), Dataset.load_from_disk(c["aug"]), SENT, fluency_model=None, embedder=None),
     SchemaError, "The original dataset has the provenance column 'cf_is_counterfactual'"),
    ("report-wrong-original", augmented_on_disk, lambda c: augmentation_report(
        Dataset.from_dict({"text": ["other", "rows"], "label": ["positive", "negative"]}),
        Dataset.load_from_disk(c["aug"]), SENT, fluency_model=None, embedder=None), SchemaError,
     "None of the 10 rows of the augmented dataset comes from a row of the original dataset"),
    ("report-wrong-schema", augmented_on_disk, lambda c: augmentation_report(
        Dataset.load_from_disk(c["orig"]), Dataset.load_from_disk(c["aug"]), TaskSchema.nli(), fluency_model=None,
        embedder=None), SchemaError, "The original dataset does not match the schema.*Column 'premise' is missing"),
    ("report-not-augmented", augmented_on_disk, lambda c: augmentation_report(
        Dataset.load_from_disk(c["orig"]), Dataset.load_from_disk(c["orig"]), SENT, fluency_model=None,
        embedder=None), SchemaError, "lacks the provenance columns"),
    # --- metrics
    ("bleu-length-mismatch", NO_SETUP, lambda c: intrinsic.bleu_diversity(["a"], ["a", "b"]), ValueError,
     "candidates.*references"),
    ("flip-rate-mismatch", NO_SETUP, lambda c: intrinsic.flip_rate(["a"], ["a", "b"]), ValueError, "predictions"),
    ("edit-distance-level", NO_SETUP, lambda c: intrinsic.edit_distance(["a"], ["b"], level="byte"), ValueError,
     "level"),
    ("edit-distance-mismatch", NO_SETUP, lambda c: intrinsic.edit_distance(["a", "b"], ["b"]), ValueError,
     "candidates"),
    # --- ICDA's epoch dataset and callback
    ("icda-label-id-gap", NO_SETUP, lambda c: CounterfactualEpochDataset([["a."], ["b."]] * 4, [1, 7] * 4),
     SchemaError, r"Column 'label' at row 1: class id 7; the 2 classes present are \[1, 7\]"),
    ("icda-label-out-of-range", NO_SETUP, lambda c: CounterfactualEpochDataset([["a."], ["b."]], [0, 2],
                                                                                num_labels=2), SchemaError,
     r"Column 'label' at row 1: class id 2 is outside 0\.\.1"),
    ("icda-string-labels", NO_SETUP, lambda c: CounterfactualEpochDataset([["a."], ["b."]], ["pos", "neg"]),
     SchemaError, "Column 'label' at row 0: got the label name 'pos'; string labels need label_names"),
    ("icda-unknown-name", NO_SETUP, lambda c: CounterfactualEpochDataset([["a."], ["b."]], ["pos", "meh"],
                                                                         label_names=["neg", "pos"]), SchemaError,
     r"Column 'label' at row 1: unknown label 'meh'; expected one of \['neg', 'pos'\]"),
    ("icda-length-mismatch", NO_SETUP, lambda c: CounterfactualEpochDataset([["a."], ["b."]], [0]), ValueError,
     "Got 2 documents but 1 labels"),
    ("icda-empty-document", NO_SETUP, lambda c: CounterfactualEpochDataset([["a."], ["  "]], [0, 1]), ValueError,
     "Document 1 has no non-empty sentence"),
    ("icda-document-type", NO_SETUP, lambda c: CounterfactualEpochDataset([["a."], 5], [0, 1]), ValueError,
     "Document 1: got int; expected a string or a list of strings"),
    ("icda-dataset-column", NO_SETUP, lambda c: CounterfactualEpochDataset(
        Dataset.from_dict({"review": ["a."], "label": [0]})), ValueError, "Column 'text' is not in the dataset"),
    ("icda-callback-dataset-type", NO_SETUP, lambda c: ICDACallback(fever()), TypeError,
     "ICDACallback drives a CounterfactualEpochDataset, got Dataset"),
    # --- filters, generators, the generic callback (the spine)
    ("filter-not-a-filter", NO_SETUP, lambda c: NegateAugmenter(SENT, filters=["minimality"]), TypeError,
     "filters must be cfaug_hf.filters.Filter objects, got str"),
    ("filter-minimality-bounds", NO_SETUP, lambda c: __import__("cfaug_hf.filters").filters.MinimalityFilter(
        min_distance=0.6, max_distance=0.2), ValueError, "Need 0 <= min_distance <= max_distance <= 1, got 0.6"),
    ("filter-topk-empty", NO_SETUP, lambda c: __import__("cfaug_hf.filters").filters.TopK([]), ValueError,
     "TopK needs at least one filter"),
    ("generator-constraints-length", NO_SETUP, lambda c: __import__("cfaug_hf.generation").generation
     .as_text_generator(lambda t: t).generate_with_info(["a", "b"], constraints=[None]), ValueError,
     "Got 1 constraints for 2 texts"),
    ("callback-mode", NO_SETUP, lambda c: __import__("trainer_callbacks").AugmentationCallback(
        NegateAugmenter(SENT), __import__("trainer_callbacks").AugmentedEpochDataset(
            Dataset.from_dict({"text": ["good"], "label": ["positive"]}), SENT), mode="fast"), ValueError,
     "mode must be 'sampling' or 'hard', got 'fast'"),
    ("callback-augmented-data", NO_SETUP, lambda c: __import__("trainer_callbacks").AugmentedEpochDataset(
        Dataset.from_dict({"text": ["the film was good"], "label": ["positive"]}).map(NegateAugmenter(SENT),
                                                                                     batched=True), SENT),
     ValueError, "Column 'cf_is_counterfactual' is present"),
    ("icda-from-dataset-bad-cell", NO_SETUP, lambda c: CounterfactualEpochDataset.from_dataset(
        Dataset.from_dict({"text": ["Good food.", " "], "label": ["positive", "negative"]}), SENT), SchemaError,
     "Column 'text' at row 1"),
    ("deps-missing-extra", NO_SETUP, lambda c: __import__("cfaug_hf.deps").deps.require("faiss_not_here", "Indexing"),
     ImportError, "Indexing needs faiss_not_here, which is not installed"),
    # --- diagnostics
    ("competency-alpha", NO_SETUP, lambda c: __import__("cfaug_hf.diagnostics").diagnostics.competency_test(
        fever(), FV, alpha=2.0), ValueError, "alpha must be in \\(0, 1\\), got 2.0"),
    ("probe-one-label", NO_SETUP, lambda c: __import__("cfaug_hf.diagnostics").diagnostics.claim_only_probe(
        fever(label=["SUPPORTS"] * 3), FV), ValueError, "needs at least two labels"),
    # --- the command line: one line on stderr, status 2, no traceback
    ("cli-missing-data", lambda t: {"out": t / "out"},
     run_cli(["augment", "missing.jsonl", "--method", "crossaug", "--generator", "g", "--out", "{out}"]), 2, "missing.jsonl: no such file"),
    ("cli-unknown-suffix", lambda t: {"d": jsonl(t, GOOD_ROWS, "data.xml"), "out": t / "out"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--out", "{out}"]), 2, "expected a saved dataset folder"),
    ("cli-malformed-jsonl", lambda t: {"d": (t / "bad.jsonl", (t / "bad.jsonl").write_text("{oops\n"))[0],
                                      "out": t / "out"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--out", "{out}"]), 2, "error"),
    ("cli-generator-missing", lambda t: {"d": jsonl(t, GOOD_ROWS), "out": t / "out"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "runs/x/generator", "--out", "{out}"]), 2,
     "no local folder 'runs/x/generator'"),
    ("cli-bad-label", lambda t: {"d": jsonl(t, [{**GOOD_ROWS[0], "label": "MAYBE"}]), "g": saved_generator(t),
                                 "out": t / "out"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "{g}", "--out", "{out}"]), 2, "Column 'label' at row 0"),
    ("cli-review-file-columns", lambda t: {"d": jsonl(t, [{"review": "a good film", "sentiment": "positive"}]),
                                           "out": t / "out"},
     run_cli(["augment", "{d}", "--method", "core", "--mode", "editor_only", "--out", "{out}"]), 2,
     r"Columns \['text', 'label'\] are missing; .*try --columns review --label-column sentiment"),
    ("cli-bad-labels-before-models", lambda t: {"d": jsonl(t, [{"text": "a good film", "label": "postive"},
                                                               {"text": "a bad film", "label": "bad"}]),
                                                "out": t / "out"},
     run_cli(["augment", "{d}", "--method", "core", "--mode", "editor_only", "--out", "{out}"]), 2,
     r"Column 'label' at row 0: unknown label 'postive' \(and 1 other unknown value"),
    ("cli-bad-column", lambda t: {"d": jsonl(t, GOOD_ROWS), "g": saved_generator(t), "out": t / "out"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "{g}", "--columns", "claims,evidence", "--out", "{out}"]), 2,
     "Column 'claims' is missing"),
    ("cli-out-is-input", lambda t: {"d": (Dataset.from_list(GOOD_ROWS).save_to_disk(t / "ds"), t / "ds")[1]},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--out", "{d}"]), 2, "would overwrite the input"),
    ("cli-out-foreign-folder", lambda t: {"d": jsonl(t, GOOD_ROWS), "o": user_folder(t)},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--out", "{o}"]), 2, "mine is not empty: it holds files the library did not write"),
    ("cli-batch-size-zero", lambda t: {"d": jsonl(t, GOOD_ROWS), "out": t / "out"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--batch-size", "0", "--out", "{out}"]), SystemExit,
     "--batch-size"),
    ("cli-missing-out-option", lambda t: {"d": jsonl(t, GOOD_ROWS)},
     run_cli(["augment", "{d}", "--method", "crossaug"]), SystemExit, "--out"),
    ("cli-push-no-folder", NO_SETUP, run_cli(["push", "no-such-folder", "alice/x"]), 2,
     "no-such-folder: no such folder"),
    ("cli-push-foreign-folder", lambda t: {"d": user_folder(t)}, run_cli(["push", "{d}", "alice/x"]), 2,
     "is not a saved cfaug component"),
    ("cli-pull-invalid-id", lambda t: {"d": t / "p"}, run_cli(["pull", "not a repo//id", "{d}"]), 2,
     "is not a valid Hub repository id"),
    ("cli-pull-foreign-folder", lambda t: {"repo": _pushed_generator(), "d": user_folder(t)},
     run_cli(["pull", "{repo}", "{d}"]), 2, "mine is not empty.*notes.txt"),
    ("cli-report-wrong-task", augmented_on_disk,
     run_cli(["report", "{orig}", "{aug}", "--task", "nli", "--no-models", "--out", "{orig}-report"]), 2,
     "Column 'premise' is missing"),
    ("cli-report-swapped", augmented_on_disk,
     run_cli(["report", "{aug}", "{aug}", "--task", "sentiment", "--no-models", "--out", "{orig}-report"]), 2,
     "The original dataset has the provenance column"),
    ("cli-report-missing", lambda t: {"out": t / "r"},
     run_cli(["report", "nope", "nope2", "--no-models", "--out", "{out}"]), 2, "nope: no such file"),
    ("cli-report-columns-count", augmented_on_disk,
     run_cli(["report", "{orig}", "{aug}", "--task", "sentiment", "--columns", "a,b", "--out", "{orig}-r"]), 2,
     "--columns for sentiment names 1 column"),
    ("cli-report-out-is-input", augmented_on_disk,
     run_cli(["report", "{orig}", "{aug}", "--task", "sentiment", "--no-models", "--out", "{aug}"]), 2,
     "would overwrite the input"),
    # --- cfaug augment --method/--recipe and cfaug train (options generated from configs, recipes)
    ("cli-augment-option-type", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "cfgen", "--per-input", "zero"]), SystemExit,
     "invalid"),
    ("cli-augment-option-range", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "cfgen", "--per-input", "0"]), 2,
     "--per-input must be >= 1"),
    ("cli-augment-edit-side-unknown", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "llm", "--task", "token-classification",
              "--edit-side", "both"]), 2,
     "--edit-side must be 'hypothesis' or 'premise', got 'both'"),
    ("cli-augment-edit-side-premise-without-premise-editor", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "llm", "--task", "token-classification",
              "--edit-side", "premise"]), 2,
     "--edit-side premise needs the NLI task"),
    ("cli-augment-checker-threshold-range", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "llm", "--task", "token-classification",
              "--checker-threshold", "1.5"]), 2,
     r"--checker-threshold must be a probability in \[0, 1\] or None, got 1.5"),
    ("cli-augment-template-file-missing", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "llm", "--prompt-template", "@nope.txt"]),
     SystemExit, "--prompt-template: cannot read 'nope.txt'"),
    ("cli-augment-unknown-method", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "nope"]), SystemExit,
     "invalid choice"),
    ("cli-augment-two-sources", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "cfgen", "--recipe", "r.yaml"]), SystemExit,
     "not allowed with argument"),
    ("cli-augment-no-source", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out"]), 2,
     "give exactly one of --method"),
    ("cli-augment-columns-count", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "cfgen", "--task", "token-classification", "--columns", "a,b"]), 2,
     "names 1 column"),
    ("cli-augment-columns-without-task", ner_on_disk,  # they modify the method's own task: a missing column
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "cfgen", "--label-column", "x"]), 2,
     "Column 'x' is missing"),
    ("cli-augment-schema-with-saved", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--augmenter", "x", "--task", "sentiment"]), 2,
     "keeps the schema it was saved with"),
    ("cli-augment-missing-component", claims_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "crossaug", "--generator", "no/such/folder/here"]), 2,
     "no local folder"),
    ("cli-augment-push-to-hub-bad-repo-id", claims_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "crossaug", "--generator", "no/such/folder/here",
              "--push-to-hub", "not a repo id"]), 2, "--push-to-hub 'not a repo id': not a Hub repository id"),
    ("cli-augment-private-without-push", claims_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "crossaug", "--private"]), 2,
     "--private applies with --push-to-hub REPO"),
    ("cli-augment-license-without-push", claims_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "crossaug", "--license", "mit"]), 2,
     "--license applies with --push-to-hub REPO"),
    ("cli-augment-missing-column-in-flag-terms", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "crossaug", "--checker", "none"]), 2,
     "[Nn]ame the columns with --task and --columns"),
    ("cli-augment-missing-component-in-flag-terms", reviews_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "core", "--editor", "local", "--retriever",
              "none"]), 2,
     "needs --retriever .* and --index .*--mode editor_only runs without them"),
    ("cli-augment-split-on-a-file", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "cfgen", "--split", "validation"]), 2,
     "--split validation: .* is a single file"),
    ("cli-augment-limit-zero", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "cfgen", "--limit", "0"]), SystemExit,
     "--limit: expected a whole number >= 1, got 0"),
    ("cli-augment-missing-input-file", ner_on_disk,
     run_cli(["augment", "{dir}/nope.jsonl", "--out", "{dir}/out", "--method", "cfgen"]), 2,
     "nope.jsonl: no such file or folder"),
    ("cli-augment-unknown-hub-dataset", ner_on_disk,
     run_cli(["augment", "nobody/no-such-dataset", "--out", "{dir}/out", "--method", "cfgen"]), 2,
     "nobody/no-such-dataset: no such file or folder, and no Hub dataset of that name can be loaded"),
    ("cli-augment-preset-unknown", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "cfgen", "--preset", "fast"]), SystemExit,
     "invalid choice"),
    ("cli-augment-preset-method-has-none", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "cfgen", "--preset", "paper"]), 2,
     "CFGenAugmenter has no preset 'paper'"),
    ("cli-augment-preset-with-saved", ner_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--augmenter", "x", "--preset", "paper"]), 2,
     "--preset applies to --method and --recipe"),
    ("cli-augment-recipe-preset-method-has-none", ner_on_disk,
     augment_recipe("{dir}/nopreset.yaml"), 2,
     "has no preset 'paper'"),
    ("cli-augment-recipe-preset-not-a-name", claims_on_disk,
     augment_recipe("{dir}/badpreset.yaml"), 2,
     "preset must be a preset name such as 'paper'"),
    ("cli-augment-recipe-missing", ner_on_disk,
     augment_recipe("missing.yaml"), 2,
     "no such recipe file"),
    ("cli-augment-recipe-not-object", ner_on_disk,
     augment_recipe("{dir}/list.yaml"), 2,
     "a recipe is an object"),
    ("cli-augment-recipe-not-yaml", ner_on_disk,
     augment_recipe("{dir}/broken.yaml"), 2,
     "not a YAML or JSON recipe"),
    ("cli-augment-recipe-unknown-field", ner_on_disk,
     augment_recipe("{dir}/field.yaml"), 2,
     "per_inptu"),
    ("cli-augment-recipe-unknown-preset", ner_on_disk,
     augment_recipe("{dir}/preset.yaml"), 2,
     "Unknown task preset .tweets."),
    ("cli-augment-recipe-bad-reference", claims_on_disk,
     augment_recipe("{dir}/component.yaml"), 2,
     "expected a .path., .shipped. or .repo_id."),
    ("cli-augment-recipe-unknown-method", ner_on_disk,
     augment_recipe("{dir}/method.yaml"), 2,
     "No augmenter method named .magic."),
    ("cli-train-selector-no-column", ner_on_disk,
     run_cli(["train", "selector", "{data}", "--out", "{dir}/out"]), 2,
     "no column .text."),
    # --- options added for speed and for ICDA as the reference trains it
    ("augment-batch-size-zero", NO_SETUP, lambda c: NegateAugmenter(SENT).augment(
        Dataset.from_dict({"text": ["the film was good"], "label": ["positive"]}), batch_size=0), ValueError,
     "batch_size must be a positive integer or None"),
    # --- resumable runs
    ("augment-checkpoint-rows-zero", NO_SETUP, lambda c: NegateAugmenter(SENT).augment(
        Dataset.from_dict({"text": ["the film was good"], "label": ["positive"]}), checkpoint_dir="parts",
        checkpoint_rows=0), ValueError, "checkpoint_rows must be a positive integer, got 0"),
    ("augment-checkpoint-iterable", NO_SETUP, lambda c: NegateAugmenter(SENT).augment(
        Dataset.from_dict({"text": ["the film was good"], "label": ["positive"]}).to_iterable_dataset(),
        checkpoint_dir="parts"), ValueError, "checkpoint_dir needs a Dataset"),
    ("cli-format-unknown", lambda t: {"d": jsonl(t, GOOD_ROWS), "out": t / "out"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--format", "xlsx", "--out", "{out}"]),
     SystemExit, "--format"),
    ("cli-subset-on-a-local-file", lambda t: {"d": jsonl(t, GOOD_ROWS), "out": t / "out"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--subset", "en", "--out", "{out}"]), 2,
     "--subset: .* is a local file or folder; --subset applies to a Hub dataset id"),
    ("cli-checkpoint-rows-zero", lambda t: {"d": jsonl(t, GOOD_ROWS), "out": t / "out"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--checkpoint-rows", "0", "--out",
              "{out}"]), SystemExit, "--checkpoint-rows"),
    ("rationale-unknown-gate", NO_SETUP,
     lambda c: __import__("cfaug_hf.components.rationale", fromlist=["x"]).SentenceRationaleConfig(gate="sigmoid"),
     ValueError, r"gate must be one of \['two_way', 'softmax'\], got 'sigmoid'"),
    ("rationale-unknown-pooling", NO_SETUP,
     lambda c: __import__("cfaug_hf.components.rationale", fromlist=["x"]).SentenceRationaleConfig(pooling="max"),
     ValueError, "pooling must be one of"),
    ("icda-checkpoint-patience-zero", NO_SETUP, lambda c: __import__(
        "cfaug_hf.methods.icda.training", fromlist=["x"]).SelectorCheckpointCallback(
        None, CounterfactualEpochDataset([["a.", "b."]], [0], size=0), patience=0), ValueError,
     "patience must be >= 1, got 0"),
    ("icda-unknown-training-set", NO_SETUP, lambda c: __import__("cfaug_hf.methods.icda", fromlist=["x"]).run_icda(
        [["a.", "b."]], [0], [["a.", "b."]], [0], None, training_set="some"), ValueError,
     "training_set must be 'reference' or 'all', got 'some'"),
    ("shortcut-balance-missing-column", NO_SETUP, lambda c: __import__("cfaug_hf.filters", fromlist=["x"])
     .ShortcutBalanceFilter(Dataset.from_dict({"txt": ["a"], "label": ["positive"]}), SENT), ValueError,
     "Column 'text' is not in the dataset; it has \\['txt', 'label'\\]"),
    # --- second hardening round: data loss, secrets, counts, traversal, damaged files, callbacks
    ("save-dataset-over-foreign-dataset", lambda t: {"d": (Dataset.from_dict({"x": [1]}).save_to_disk(t / "ds"),
                                                           t / "ds")[1]},
     lambda c: __import__("cfaug_hf.sharing.folders", fromlist=["x"]).save_dataset(Dataset.from_dict({"x": [2]}), c["d"]),
     FolderNotEmptyError, "files the library did not write"),
    ("cli-out-foreign-dataset", lambda t: {"d": jsonl(t, GOOD_ROWS),
                                           "o": (Dataset.from_dict({"x": [1]}).save_to_disk(t / "theirs"),
                                                 t / "theirs")[1]},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--out", "{o}"]), 2, "theirs is not empty"),
    ("augmenter-component-path-traversal", lambda t: _saved_negate(t, lambda d: d["filters"][0]["args"].__setitem__(
        "checker", {"$component": {"type": "checker", "path": "../outside"}})),
     lambda c: Augmenter.from_pretrained(c["folder"]), ComponentLoadError, "points outside the folder"),
    ("augmenter-config-field-type", lambda t: _saved_negate(t, lambda d: d["config"].__setitem__("seed", "1")),
     lambda c: Augmenter.from_pretrained(c["folder"]), ComponentLoadError,
     r"cfaug_augmenter.json \(config\): field 'seed' is '1' \(str\); expected int"),
    ("augmenter-filter-callable-not-saved", lambda t: _saved_negate(t, None, unsaveable=True),
     lambda c: Augmenter.from_pretrained(c["folder"]), ComponentLoadError, "pass filters="),
    ("generator-config-json-invalid", lambda t: generator_with(t, lambda f: (f / "config.json").write_text("{,")),
     lambda c: Generator.from_pretrained(c["folder"]), ComponentLoadError, r"config.json is not valid JSON \(line 1"),
    ("generator-field-wrong-type", lambda t: generator_with(t, edit_config("cfaug_generator.json",
                                                                           generator={"num_beams": "4"})),
     lambda c: Generator.from_pretrained(c["folder"]), ComponentLoadError, "field 'num_beams' is '4'"),
    ("id-column-missing", NO_SETUP, lambda c: NegateAugmenter(TaskSchema.sentiment(id_column="uid")).augment(
        Dataset.from_dict({"text": ["it was good"], "label": ["positive"]})), SchemaError,
     r"Column 'uid' \(id_column\) is missing"),
    ("llm-key-in-api-key-env", NO_SETUP, lambda c: __import__("cfaug_hf").OpenAICompatibleLLM(
        base_url="http://127.0.0.1:9/v1", model="m", api_key_env="sk-proj-abcdefghijklmnop1234"), ValueError,
     "is not a name"),
    ("llm-timeout-nan", NO_SETUP, lambda c: __import__("cfaug_hf").OpenAICompatibleLLM(
        base_url="http://127.0.0.1:9/v1", model="m", timeout_s=float("nan")), ValueError,
     "timeout_s must be a finite number"),
    ("llm-cache-dir-is-a-file", lambda t: {"f": (t / "f").write_text("x") and t / "f"},
     lambda c: __import__("cfaug_hf").OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", model="m",
                                                         cache_dir=str(c["f"])), ValueError, "is a file"),
    ("callback-negative-budget", NO_SETUP, lambda c: __import__("trainer_callbacks").AugmentationCallback(
        NegateAugmenter(SENT), __import__("trainer_callbacks").AugmentedEpochDataset(
            Dataset.from_dict({"text": ["it was good"], "label": ["positive"]}), SENT), budget=-1), ValueError,
     "budget must be a whole number >= 0"),
    ("epoch-dataset-negative-size", NO_SETUP, lambda c: __import__("trainer_callbacks").AugmentedEpochDataset(
        Dataset.from_dict({"text": ["it was good"], "label": ["positive"]}), SENT, size=-2), ValueError,
     "size must be a whole number >= 0, got -2"),
    ("component-raises-for-a-batch", NO_SETUP, lambda c: CrossAugAugmenter(
        lambda claims: (_ for _ in ()).throw(ConnectionError("down"))).augment(fever(), load_from_cache_file=False),
     __import__("cfaug_hf.augmenter", fromlist=["x"]).AugmentationError, r"batch of 3 row\(s\) \(row 0, row 1, row 2\)"),
    # --- the Hub
    ("hub-invalid-repo-id", NO_SETUP, lambda c: __import__("hub_cards").pull("bad id!", "x"), HubError,
     "'bad id!' is not a valid Hub repository id"),
    ("hub-repo-not-found", NO_SETUP, lambda c: Generator.from_pretrained("alice/never-pushed"), HubError,
     "no local folder 'alice/never-pushed'.*repository 'alice/never-pushed' was not found"),
    ("hub-revision-not-found", lambda t: {"repo": _pushed_generator()},
     lambda c: Generator.from_pretrained(c["repo"], revision="v9"), HubError, "revision asked for does not exist"),
    ("hub-repeated-5xx", lambda t: {"repo": _pushed_generator(fail_after=True)},
     lambda c: Generator.from_pretrained(c["repo"]), HubError, "could not be reached or kept answering with errors"),
    ("hub-pull-foreign-folder", lambda t: {"repo": _pushed_generator(), "d": user_folder(t)},
     lambda c: __import__("hub_cards").pull(c["repo"], c["d"]), FolderNotEmptyError, "notes.txt"),
    ("hub-push-augmented-plain", NO_SETUP, lambda c: __import__("hub_cards").push_augmented(fever(), "alice/x"),
     ValueError, "Split 'train' lacks the provenance columns"),
    # --- round three (issue 39): output folders, every command through the same door
    ("cli-augment-fails-late-writes-nothing", lambda t: {"d": jsonl(t, [
        {"tokens": ["Ada", "ran"], "ner_tags": ["B-PER", "O"]}, {"tokens": ["New", "York"], "ner_tags": ["O", "I-LOC"]}]),
        "dir": t},
     run_cli(["augment", "{d}", "--method", "cfgen", "--task", "token-classification", "--out", "{dir}/out"]), 2,
     "not valid IOB2"),
    ("cli-demo-foreign-folder", lambda t: {"o": user_folder(t)}, run_cli(["demo", "--out", "{o}", "--rows", "2"]), 2,
     "mine is not empty: it holds files the library did not write"),
    ("cli-amplify-foreign-folder", lambda t: {"d": jsonl(t, [{"text": "good", "label": "positive"}]),
                                              "o": user_folder(t)},
     run_cli(["amplify", "{d}", "--out", "{o}"]), 2, "mine is not empty"),
    ("cli-train-foreign-folder", lambda t: {"d": jsonl(t, [{"source": "a", "target": "b"}]), "o": user_folder(t)},
     run_cli(["train", "generator", "{d}", "--out", "{o}"]), 2, "mine is not empty"),
    ("cli-train-retriever-empty-corpus", lambda t: {"d": jsonl(t, [{"query": "a", "positive": "b"}]),
                                                    "c": jsonl(t, [], "corpus.jsonl"), "dir": t},
     run_cli(["train", "retriever", "{d}", "--corpus", "{c}", "--negatives-column", "none", "--out", "{dir}/r"]), 2,
     "corpus.jsonl: no rows"),
    ("report-foreign-folder", lambda t: {**augmented_on_disk(t), "o": user_folder(t)},
     lambda c: augmentation_report(__import__("datasets").load_from_disk(str(c["orig"])),
                                   __import__("datasets").load_from_disk(str(c["aug"])), SENT, fluency_model=None,
                                   embedder=None, probe=False, out_dir=c["o"]), FolderNotEmptyError, "notes.txt"),
    # --- empty and damaged data files, every format the commands read
    ("cli-empty-jsonl", lambda t: {"d": jsonl(t, []), "out": t / "out"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--out", "{out}"]), 2, "data.jsonl: no rows"),
    ("cli-whitespace-jsonl", lambda t: {"d": (t / "w.jsonl", (t / "w.jsonl").write_text("\n \n"))[0], "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "cfgen", "--out", "{out}"]), 2, "w.jsonl: no rows"),
    ("cli-header-only-csv", lambda t: {"d": (t / "h.csv", (t / "h.csv").write_text("claim,evidence,label\n"))[0],
                                       "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--out", "{out}"]), 2, "h.csv: no rows"),
    ("cli-empty-parquet", lambda t: {"d": (t / "e.parquet", fever().select([]).to_parquet(t / "e.parquet"))[0],
                                     "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "cfgen", "--out", "{out}"]), 2, "e.parquet: no rows"),
    ("cli-empty-parquet-ray", lambda t: {"d": (t / "e.parquet", fever().select([]).to_parquet(t / "e.parquet"))[0],
                                         "a": NegateAugmenter(SENT).save_pretrained(t / "aug"), "out": t / "o"},
     run_cli(["augment", "{d}", "--augmenter", "{a}", "--runner", "ray", "--out", "{out}"]), 2,
     "e.parquet: no rows"),
    ("cli-damaged-parquet", lambda t: {"d": (t / "x.parquet", (t / "x.parquet").write_bytes(b"PAR1garbage"))[0],
                                       "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "cfgen", "--out", "{out}"]), 2, "x.parquet: not a readable Parquet"),
    ("cli-empty-gzipped-jsonl", lambda t: {"d": (t / "e.jsonl.gz", __import__("gzip").open(t / "e.jsonl.gz", "wb").close())[0],
                                          "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "cfgen", "--out", "{out}"]), 2, r"e.jsonl.gz: no rows \(the file is empty\)"),
    ("cli-header-only-bz2-csv", lambda t: {"d": (t / "h.csv.bz2", (t / "h.csv.bz2").write_bytes(
        __import__("bz2").compress(b"claim,evidence,label\n")))[0], "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--out", "{out}"]), 2,
     r"h.csv.bz2: no rows \(only a header line\)"),
    ("cli-damaged-gzip", lambda t: {"d": (t / "x.jsonl.gz", (t / "x.jsonl.gz").write_bytes(b"not gzip"))[0],
                                    "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "cfgen", "--out", "{out}"]), 2, "x.jsonl.gz: not a readable .gz file"),
    ("cli-missing-compressed-file", lambda t: {"d": t / "nothere.jsonl.xz", "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "cfgen", "--out", "{out}"]), 2, "nothere.jsonl.xz: no such file or folder"),
    ("cli-unknown-compressed-format", lambda t: {"d": (t / "x.txt.gz", (t / "x.txt.gz").write_bytes(b"x"))[0],
                                                 "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "cfgen", "--out", "{out}"]), 2,
     "x.txt.gz: expected a saved dataset folder or a .json/.jsonl/.csv/.tsv/.parquet file"),
    ("cli-json-rows-mix-forms-bad-cell", lambda t: {"d": jsonl(t, [
        {"tokens": ["Ada", "ran"], "ner_tags": ["B-PER", "O"]}, {"tokens": "Bo ran", "ner_tags": ["B-PER", "O"]}]),
        "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "cfgen", "--task", "token-classification", "--out", "{out}"]), 2,
     "Column 'tokens' at row 1: got a string; token classification expects a list of tokens"),
    ("cli-json-tags-mix-names-and-bad-ids", lambda t: {"d": jsonl(t, [
        {"tokens": ["Ada", "ran"], "ner_tags": ["B-PER", "O"]}, {"tokens": ["Bo", "ran"], "ner_tags": [99, 0]}]),
        "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "cfgen", "--task", "token-classification", "--out", "{out}"]), 2,
     "Column 'ner_tags' at row 1: .*99"),
    ("cli-empty-saved-dataset", lambda t: {"d": (fever().select([]).save_to_disk(t / "ds"), t / "ds")[1],
                                           "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--out", "{out}"]), 2, "ds: no rows"),
    ("cli-folder-not-a-dataset", lambda t: {"d": user_folder(t), "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--out", "{out}"]), 2, "mine: not a dataset saved"),
    ("cli-damaged-saved-dataset", lambda t: {"d": (fever().save_to_disk(t / "ds"), t / "ds",
                                                    [corrupt(f) for f in (t / "ds").glob("*.arrow")])[1],
                                              "out": t / "o"},
     run_cli(["augment", "{d}", "--method", "crossaug", "--generator", "g", "--out", "{out}"]), 2, "ds: the saved dataset cannot be read"),
    # --- silent wrong results: each is refused, with the reason
    ("schema-labels-differ-in-case", NO_SETUP, lambda c: TaskSchema.sentiment(label_names=("pos", "POS")),
     SchemaError, "'pos' and 'POS' differ only in case"),
    ("schema-labels-differ-in-spaces", NO_SETUP, lambda c: TaskSchema.sentiment(label_names=("pos", "pos ")),
     SchemaError, "differ only in case or spaces"),
    ("schema-label-not-a-string", NO_SETUP, lambda c: TaskSchema.sentiment(label_names=("pos", 3)),
     SchemaError, "non-empty strings; got 3"),
    ("generator-returns-dict", NO_SETUP, lambda c: returns(lambda cl: {x: x for x in cl}).augment(fever()),
     TypeError, "The generator returned dict for 2 claims"),
    ("generator-returns-set", NO_SETUP, lambda c: returns(lambda cl: set(cl)).augment(fever()),
     TypeError, "The generator returned set for 2 claims"),
    ("generator-output-dict", NO_SETUP, lambda c: returns(lambda cl: [{"text": x} for x in cl]).augment(fever()),
     TypeError, "output 0 .* is"),
    ("entity-extractor-returns-dict", NO_SETUP, lambda c: crossaug(filters=[
        __import__("cfaug_hf.filters").filters.EntityFidelityFilter(lambda ts: {t: [] for t in ts})]).augment(fever()),
     TypeError, "The entity extractor returned dict"),
    ("entity-extractor-returns-strings", NO_SETUP, lambda c: crossaug(filters=[
        __import__("cfaug_hf.filters").filters.EntityFidelityFilter(lambda ts: ["Paris" for _ in ts])]).augment(
        fever()), TypeError, "The entity extractor's output 0 is str"),
    ("filter-too-few-decisions", NO_SETUP, lambda c: crossaug(filters=[_ShortFilter()]).augment(fever()),
     TypeError, "returned 1 decisions and 1 scores for"),
    ("component-revision-on-local-folder", lambda t: {"chk": saved_checker(t)},
     lambda c: LabelChecker.from_pretrained(c["chk"], revision="v2"), ComponentLoadError,
     "revision='v2' was given, but .* is a local folder"),
    ("augmenter-revision-on-local-folder", lambda t: {"a": NegateAugmenter(SENT).save_pretrained(t / "aug")},
     lambda c: Augmenter.from_pretrained(c["a"], revision="main"), ComponentLoadError, "has no revisions|no revisions"),
    ("base-model-revision-on-local-folder", lambda t: {"chk": saved_checker(t)},
     lambda c: __import__("cfaug_hf.pretrained").pretrained.resolve_model(c["chk"], revision="v2"), ValueError,
     "is a local folder, which has no revisions"),
    ("train-retriever-negatives-string", NO_SETUP, lambda c: __import__("cfaug_hf.training").training.train_cf_dpr(
        __import__("cfaug_hf.components.retriever").components.retriever.BiEncoder(
            *__import__("cfaug_hf.testing").testing.tiny_encoder()[:1] * 2,
            __import__("cfaug_hf.testing").testing.tiny_encoder()[1]),
        Dataset.from_dict({"query": ["a"], "positive": ["b"], "hard_negatives": ["c d"]}), max_steps=1),
     ValueError, "column 'hard_negatives' at row 0 is str 'c d'; expected a list of strings"),
    ("cli-train-retriever-negatives-string", lambda t: {"d": jsonl(t, [
        {"query": "a good film", "positive": "a bad film", "hard_negatives": "a fine film"}]), "dir": t},
     run_cli(["train", "retriever", "{d}", "--max-steps", "1", "--out", "{dir}/r"]), 2,
     "'hard_negatives' at row 0 is str"),
    ("cli-train-generator-null-target", lambda t: {"d": jsonl(t, [{"source": "a", "target": "b"},
                                                                    {"source": "c", "target": None}]), "dir": t},
     run_cli(["train", "generator", "{d}", "--max-steps", "1", "--out", "{dir}/g"]), 2,
     "column 'target' at row 1 is NoneType None; expected a non-empty string"),
    ("cli-crossaug-removed-reject-deletions", lambda t: {"d": jsonl(t, GOOD_ROWS), "out": t / "out"},
     run_cli(["crossaug", "{d}", "--reject-deletions", "--allow-same-meaning", "--out", "{out}"]), 2,
     "--method crossaug --out .*/out --no-reject-same-meaning \\(--reject-deletions is the default\\)"),
    ("cli-crossaug-removed-prints-the-augment-line", lambda t: {"d": jsonl(t, GOOD_ROWS), "out": t / "out"},
     run_cli(["crossaug", "{d}", "--generator", "g", "--candidates", "3", "--no-checker", "--claim-column", "c",
              "--out", "{out}"]), 2,
     "run instead: cfaug augment .*data.jsonl --method crossaug --out .* --generator g --checker none --task "
     "fact-verification --columns c,evidence .*--candidates: set num_return_sequences"),
    ("generator-configure-contradiction", NO_SETUP,
     lambda c: Generator(*tiny_seq2seq(), do_sample=True, num_beams=1).configure(num_beams=4), ValueError,
     "do_sample=True needs num_beams=1"),
    # --- damaged files the library reads back, each named in the error
    ("cli-push-report-not-json", lambda t: {**augmented_on_disk(t), "r": (t / "rep", (t / "rep").mkdir(),
                                                                          (t / "rep" / "report.json").write_text("{oops"))[0]},
     run_cli(["push", "{aug}", "alice/x", "--report", "{r}"]), 2, "rep/report.json is not valid JSON"),
    ("cli-push-report-wrong-shape", lambda t: {**augmented_on_disk(t), "r": (t / "rep", (t / "rep").mkdir(),
                                                                             (t / "rep" / "report.json").write_text("[1]"))[0]},
     run_cli(["push", "{aug}", "alice/x", "--report", "{r}"]), 2, "report.json holds a JSON list"),
    ("cli-push-report-bad-counts", lambda t: {**augmented_on_disk(t), "r": (t / "rep", (t / "rep").mkdir(), (
        t / "rep" / "report.json").write_text(json.dumps({"counts": {"rows_in": "many"}, "metrics": {}, "diagnostics": {},
                                                          "examples": []})))[0]},
     run_cli(["push", "{aug}", "alice/x", "--report", "{r}"]), 2, "counts.rows_in is 'many'; expected a whole number"),
    ("recipe-unknown-filter-names-the-recipe", lambda t: {**ner_on_disk(t), "r": (t / "wf.yaml", (t / "wf.yaml").write_text(
        "method: cfgen\nschema: {preset: ner}\nfilters: [{filter: lable_flip, args: {}}]\n"))[0]},
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--recipe", "{r}"]), 2,
     "wf.yaml: filters\\[0\\]: No filter named 'lable_flip'"),
    ("recipe-alias-bomb", lambda t: {**ner_on_disk(t), "r": (t / "bomb.yaml", (t / "bomb.yaml").write_text(
        "method: cfgen\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
        "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nconfig: [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"))[0]},
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--recipe", "{r}"]), 2,
     "bomb.yaml: the recipe expands to more than 20000 values"),
    ("recipe-recursive-alias", lambda t: {**ner_on_disk(t), "r": (t / "loop.yaml", (t / "loop.yaml").write_text(
        "method: cfgen\nconfig: &c {inner: *c}\n"))[0]},
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--recipe", "{r}"]), 2, "loop.yaml"),
    ("recipe-too-large", lambda t: {**ner_on_disk(t), "r": (t / "big.yaml", (t / "big.yaml").write_text(
        "method: cfgen\n#" + "x" * (1 << 20) + "\n"))[0]},
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--recipe", "{r}"]), 2, "a recipe is at most"),
    # --- every command and train kind has its own rows (see test_every_command_has_rows)
    ("cli-demo-rows-zero", lambda t: {"o": t / "demo"}, run_cli(["demo", "--out", "{o}", "--rows", "0"]), SystemExit,
     "--rows"),
    ("cli-amplify-empty-data", lambda t: {"d": jsonl(t, []), "o": t / "amp"}, run_cli(["amplify", "{d}", "--out", "{o}"]),
     2, "data.jsonl: no rows"),
    ("cli-amplify-fact-verification", lambda t: {"d": jsonl(t, GOOD_ROWS), "o": t / "amp"},
     run_cli(["amplify", "{d}", "--task", "fact-verification", "--out", "{o}"]), SystemExit, "--task"),
    ("cli-train-checker-empty-data", lambda t: {"d": jsonl(t, []), "dir": t},
     run_cli(["train", "checker", "{d}", "--out", "{dir}/c"]), 2, "data.jsonl: no rows"),
    ("cli-train-checker-foreign-folder", lambda t: {"d": jsonl(t, GOOD_ROWS), "o": user_folder(t)},
     run_cli(["train", "checker", "{d}", "--out", "{o}"]), 2, "mine is not empty"),
    ("cli-train-editor-no-pairs", lambda t: {"d": jsonl(t, [{"text": "a good film", "label": "positive"}]),
                                             "dir": t},
     run_cli(["train", "editor", "{d}", "--out", "{dir}/e"]), 2, "counterfactual"),
    ("cli-train-editor-foreign-folder", lambda t: {"d": jsonl(t, GOOD_ROWS), "o": user_folder(t)},
     run_cli(["train", "editor", "{d}", "--out", "{o}"]), 2, "mine is not empty"),
    ("cli-train-selector-empty-data", lambda t: {"d": jsonl(t, []), "dir": t},
     run_cli(["train", "selector", "{d}", "--out", "{dir}/s"]), 2, "data.jsonl: no rows"),
    ("cli-pull-into-a-file", lambda t: {"repo": _pushed_generator(), "f": (t / "f.txt", (t / "f.txt").write_text("x"))[0]},
     run_cli(["pull", "{repo}", "{f}"]), 2, "f.txt"),
    # --- issue 57: endpoints, engines, presets, compressed inputs, options, data types
    ("recipe-endpoint-not-allowed", lambda t: {**reviews_on_disk(t), "r": _endpoint_recipe(t)},
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--recipe", "{r}"]), 2, r"--allow-endpoint http://127\.0\.0\.1:9/v1"),
    ("saved-endpoint-not-allowed", lambda t: {"aug": _endpoint_augmenter(t)},
     lambda c: Augmenter.from_pretrained(c["aug"]).augment(Dataset.from_dict({"text": ["A fine film."],
                                                                              "label": ["positive"]})),
     PermissionError, "nothing was sent"),
    ("allow-endpoint-not-an-address", reviews_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "llm", "--allow-endpoint", "collector"]), 2,
     "--allow-endpoint 'collector'"),
    ("recipe-hub-id-shaped-local-folder", lambda t: {**reviews_on_disk(t), "r": _recipe_naming(t, "models/private")},
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--recipe", "{r}"]), 2, "models/private"),
    ("recipe-repo-id-leaves-folder", lambda t: {**reviews_on_disk(t), "r": _recipe_naming(
        t, {"type": "checker", "repo_id": "../proj/models/private"})},
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--recipe", "{r}"]), 2, "neither a folder inside"),
    ("key-as-model-name", NO_SETUP, lambda c: __import__("cfaug_hf").OpenAICompatibleLLM(
        base_url="http://127.0.0.1:9/v1", model="sk-proj-0123456789abcdefABCDEF"), ValueError, "looks like an API key"),
    ("base-url-bad-ipv6", NO_SETUP, lambda c: __import__("cfaug_hf").OpenAICompatibleLLM(
        base_url="http://[::1/v1", model="m"), ValueError, "base_url is not a valid address"),
    ("backend-not-installed", reviews_on_disk,
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--method", "core", "--backend", "vllm"]), SystemExit,
     "vllm is not installed here"),
    ("demo-backend-not-installed", lambda t: {"o": t / "demo"}, run_cli(["demo", "--out", "{o}", "--backend", "vllm"]),
     SystemExit, "vllm is not installed here"),
    ("use-backend-negative-threads", NO_SETUP,
     lambda c: Generator(*tiny_causal_lm(), max_new_tokens=2).use_backend("transformers", threads=-3), ValueError,
     "threads must be a whole number"),
    ("recipe-config-a-list-with-preset", lambda t: {**claims_on_disk(t), "r": (t / "p.yaml", (t / "p.yaml").write_text(
        "method: crossaug\npreset: paper\nconfig: [1, 2]\n"))[0]},
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--recipe", "{r}"]), 2, r"p\.yaml: 'config' is list"),
    ("recipe-filters-an-object", lambda t: {**claims_on_disk(t), "r": (t / "f.yaml", (t / "f.yaml").write_text(
        "method: crossaug\nfilters: {a: 1}\n"))[0]},
     run_cli(["augment", "{data}", "--out", "{dir}/out", "--recipe", "{r}"]), 2, "'filters' is dict"),
    ("gz-input-with-a-huge-line", lambda t: {"d": _gz_line(t), "dir": t},
     run_cli(["augment", "{d}", "--out", "{dir}/out", "--method", "crossaug"]), 2, "longer than 1 MB"),
    ("amplify-folds-beyond-annotations", lambda t: {"d": jsonl(t, [
        {"text": "A fine film.", "label": "positive", "counterfactual": "A dull film."},
        {"text": "A dull film.", "label": "negative", "counterfactual": None},
        {"text": "A good film.", "label": "positive", "counterfactual": "A bad film."}]), "o": t / "amp"},
     run_cli(["amplify", "{d}", "--out", "{o}", "--folds", "10000000", "--max-steps", "0"]), 2,
     "more than the 2 annotated rows"),
    ("amplify-epochs-nan", lambda t: {"d": jsonl(t, GOOD_ROWS), "o": t / "amp"},
     run_cli(["amplify", "{d}", "--out", "{o}", "--epochs", "nan"]), SystemExit, "--epochs"),
    ("cli-train-selector-zero-iterations", lambda t: {"d": jsonl(t, GOOD_ROWS), "dir": t},
     run_cli(["train", "selector", "{d}", "--out", "{dir}/s", "--iterations", "0"]), SystemExit, "--iterations"),
    ("cli-train-selector-zero-runs", lambda t: {"d": jsonl(t, GOOD_ROWS), "dir": t},
     run_cli(["train", "selector", "{d}", "--out", "{dir}/s", "--runs", "0"]), SystemExit, "--runs"),
    ("cli-train-checker-missing-base", lambda t: {"d": jsonl(t, GOOD_ROWS), "dir": t},
     run_cli(["train", "checker", "{d}", "--out", "{dir}/c", "--base", "./models/nope"]), SystemExit, "--base"),
    ("cache-env-is-a-file", lambda t: {"f": (t / "f.txt", (t / "f.txt").write_text("x"))[0]},
     lambda c: (__import__("os").environ.__setitem__("CFAUG_HF_CACHE", str(c["f"])),
                __import__("cfaug_hf.pretrained").pretrained.cache_dir()), ValueError, "CFAUG_HF_CACHE"),
    ("icda-swaps-on-a-stream", NO_SETUP, lambda c: __import__("cfaug_hf").RationaleSwapAugmenter(
        _AnySelector(), SENT).fit(Dataset.from_dict({"text": ["A. B."], "label": [1]}).to_iterable_dataset()),
     TypeError, "not a stream"),
    ("epoch-dataset-of-splits", NO_SETUP, lambda c: __import__("trainer_callbacks").AugmentedEpochDataset(
        DatasetDict(train=Dataset.from_dict({"text": ["A."], "label": [1]})), SENT), TypeError, "pass one split"),
    ("pandas-label-mixing-types", NO_SETUP, lambda c: NegateAugmenter(SENT).augment(
        pd.DataFrame({"text": ["A fine film.", "A dull film."], "label": ["positive", 0]})), TypeError,
     "Column 'label' of the DataFrame mixes value types"),
    ("selector-index-out-of-range", NO_SETUP, lambda c: __import__(
        "cfaug_hf.methods.icda.selection", fromlist=["x"]).plan_counterfactuals(
        __import__("cfaug_hf.methods.icda.selection", fromlist=["x"]).SelectionResult([[5], [0]], [0, 1], [0.1, 0.1]),
        [0, 1], [2, 2]), ValueError, "chose sentence 5 of document 0"),
    # --- round five (issue 80): addresses, secrets, names in loaded files, bytes, locks, preflight, typos
    ("allow-escaped-by-dot-segments", lambda t: _hostile_augmenter(t, base_url="http://127.0.0.1:9/v1/../../x"),
     run_cli(["augment", "{data}", "--augmenter", "{aug}", "--out", "{dir}/out", "--allow-endpoint",
              "http://127.0.0.1:9/v1"]), 2, r"names the LLM endpoint http://127\.0\.0\.1:9/x, which you did not give"),
    ("allow-entry-with-credentials", reviews_on_disk,
     run_cli(["augment", "{data}", "--method", "llm", "--out", "{dir}/out", "--allow-endpoint",
              "http://user:pw@127.0.0.1:9/v1"]), 2, r"user name or password"),
    ("loaded-key-variable", lambda t: _hostile_augmenter(t, api_key_env="GH_TOKEN"),
     run_cli(["augment", "{data}", "--augmenter", "{aug}", "--out", "{dir}/out", "--allow-endpoint",
              "http://127.0.0.1:9/v1"]), 2, r"names the environment variable GH_TOKEN as the key .* --endpoint-key-env GH_TOKEN"),
    ("loaded-key-shaped-model", lambda t: _hostile_augmenter(t, model="0f3a9c2e7d1b4a5f8e6c0b9a2d4f6e8a"),
     run_cli(["augment", "{data}", "--augmenter", "{aug}", "--out", "{dir}/out", "--allow-endpoint",
              "http://127.0.0.1:9/v1"]), 2, r"the saved model holds what looks like an API key"),
    ("endpoint-key-env-is-a-key", reviews_on_disk,
     run_cli(["augment", "{data}", "--method", "llm", "--out", "{dir}/out", "--allow-endpoint",
              "http://127.0.0.1:9/v1", "--endpoint-key-env", "sk-proj-0123456789abcdefXYZ"]), 2,
     r"--endpoint-key-env must be the NAME of an environment variable"),
    ("filter-name-is-not-a-working-folder", _planted_embedder_recipe,
     lambda c: Augmenter.from_recipe(c["recipe"], editor=lambda prompts: prompts).filters[0].keep([
         __import__("cfaug_hf.filters", fromlist=["Pair"]).Pair({"text": "good"}, {"text": "bad"}, "negative",
                                                              "positive", ("text",), ("text",), 0)]),
     ComponentLoadError, r"filters\[0\]\.args\.embedder in .*r\.yaml is 'private_emb': a loaded file names models by "
                         r"Hub id"),
    ("one-string-lone-surrogate", NO_SETUP,
     lambda c: NegateAugmenter(SENT).counterfactuals("the film was \ud800 good", "positive"), SchemaError,
     r"Column 'text' at row 0: holds a lone surrogate \('\\ud800' at character 13\)"),
    ("python-config-string-for-a-number", NO_SETUP,
     lambda c: COREAugmenter(mode="editor_only", until_flipped=True, max_edits="6", checker=None), TypeError,
     r"COREConfig: field 'max_edits' is '6' \(str\); expected int"),
    ("from-preset-schema-string", NO_SETUP,
     lambda c: CrossAugAugmenter.from_preset("paper", schema="fact-verification", generator=rewrite), TypeError,
     r"schema must be a TaskSchema or a dict such as"),
    ("jsonl-invalid-utf8", lambda t: _raw_file(t, "rows.jsonl", json.dumps(GOOD_ROWS[0]).encode() + b"\n"
                                              + b'{"claim": "Rome \xff", "evidence": "e", "label": "SUPPORTS"}\n'),
     run_cli(["augment", "{data}", "--method", "crossaug", "--out", "{dir}/out"]), 2,
     r"rows.jsonl: line 2 is not valid UTF-8 \(byte 0xff"),
    ("csv-invalid-utf8", lambda t: _raw_file(t, "rows.csv", b"claim,evidence,label\nParis \xe9,e,SUPPORTS\n"),
     run_cli(["augment", "{data}", "--method", "crossaug", "--out", "{dir}/out"]), 2,
     r"rows.csv: line 2 is not valid UTF-8"),
    ("jsonl-mixed-label-types", lambda t: _claims_with(t, [{**GOOD_ROWS[0], "label": 0},
                                                            {**GOOD_ROWS[0], "label": "SUPPORTS"},
                                                            {**GOOD_ROWS[0], "label": 7}]),
     run_cli(["augment", "{data}", "--method", "crossaug", "--out", "{dir}/out"]), 2,
     r"Column 'label' at row 2: unknown label 7"),
    ("lock-planted-as-symlink", lambda t: _planted_lock(t, "symlink"),
     run_cli(["augment", "{data}", "--method", "crossaug", "--out", "{dir}/out"]), 2,
     r"the lock file is a symlink, not what cfaug made"),
    ("lock-folder-is-a-file", lambda t: _planted_lock(t, "file"),
     run_cli(["augment", "{data}", "--method", "crossaug", "--out", "{dir}/out"]), 2,
     r"the folder of cfaug's locks is a file"),
    ("claim-column-under-another-name", lambda t: _claims_with(t, [{"id": 1, "statement": "Paris is in France.",
                                                                     "evidence": "Paris is French.",
                                                                     "label": "SUPPORTS"}]),
     run_cli(["augment", "{data}", "--method", "crossaug", "--out", "{dir}/out"]), 2,
     r"try --columns statement,evidence\."),
    ("reviews-given-to-crossaug", lambda t: _raw_file(t, "reviews.csv", b"review_id,review,label\n1,Fine.,positive\n"),
     run_cli(["augment", "{data}", "--method", "crossaug", "--out", "{dir}/out"]), 2,
     r"crossaug needs claims with their evidence, and the data has 1 text column\(s\) \('review'\); for data like "
     r"this try --method core"),
    ("empty-cell-found-at-preflight", lambda t: _claims_with(t, [GOOD_ROWS[0], {**GOOD_ROWS[0], "claim": " "}]),
     run_cli(["augment", "{data}", "--method", "crossaug", "--out", "{dir}/out"]), 2,
     r"Column 'claim' at row 1: got ' '; expected a non-empty string"),
    ("label-names-one-name", reviews_on_disk,
     run_cli(["augment", "{data}", "--method", "icda", "--label-names", "good", "--out", "{dir}/out"]), 2,
     r"--label-names 'good': expected two or more different names"),
    ("label-names-for-fact-verification", claims_on_disk,
     run_cli(["augment", "{data}", "--method", "crossaug", "--label-names", "true,false", "--out", "{dir}/out"]), 2,
     r"fact verification's labels are SUPPORTS and REFUTES"),
    ("method-typo", claims_on_disk, run_cli(["augment", "{data}", "--method", "crosaug", "--out", "{dir}/out"]),
     SystemExit, "did you mean 'crossaug'?"),
    ("option-typo", claims_on_disk, run_cli(["augment", "{data}", "--method", "crossaug", "--ouut", "{dir}/out"]),
     SystemExit, "did you mean '--out' for '--ouut'?"),
    ("report-features-file-damaged", _csv_with_broken_features,
     run_cli(["report", "{orig}", "{csv}", "--task", "sentiment", "--no-models", "--out", "{dir}/r"]), 2,
     r"data.features.json does not hold the features of data.csv"),
    ("ray-parquet-foreign-folder", lambda t: {"o": user_folder(t)},
     lambda c: __import__("cfaug_hf.distributed").distributed.augment_to_parquet(
         fever(), NegateAugmenter(SENT), c["o"]), FolderNotEmptyError, "notes.txt"),
]


class _AnySelector:
    """A selector the stream cases never reach (the input is refused first)."""

    def select(self, documents, labels, **kwargs):
        raise AssertionError("not reached")


def _endpoint_llm_folder(tmp: Path) -> Path:
    from cfaug_hf import OpenAICompatibleLLM

    return OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", model="m").save_pretrained(tmp / "llm")


def _endpoint_recipe(tmp: Path) -> Path:
    _endpoint_llm_folder(tmp)
    (tmp / "r.yaml").write_text(json.dumps({"method": "llm", "schema": {"preset": "sentiment"},
                                            "components": {"llm": {"type": "http_llm", "path": "llm"},
                                                           "checker": None}}))
    return tmp / "r.yaml"


def _endpoint_augmenter(tmp: Path) -> Path:
    from cfaug_hf import LLMCounterfactualAugmenter, OpenAICompatibleLLM

    llm = OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", model="m")
    return LLMCounterfactualAugmenter(llm, checker=None).save_pretrained(tmp / "aug")


def _recipe_naming(tmp: Path, checker) -> Path:
    """A recipe in its own folder naming ``checker``, while the working folder holds models/private."""
    LabelChecker(*tiny_classifier(("positive", "negative"))).save_pretrained(tmp / "models" / "private")
    (tmp / "shared").mkdir()
    (tmp / "shared" / "r.yaml").write_text(json.dumps({"method": "core", "schema": {"preset": "sentiment"},
                                                       "config": {"mode": "editor_only"},
                                                       "components": {"checker": checker}}))
    return tmp / "shared" / "r.yaml"


def _gz_line(tmp: Path) -> Path:
    import gzip

    path = tmp / "big.jsonl.gz"
    with gzip.open(path, "wb") as f:
        f.write(b'{"claim": "' + b"a" * (3 << 20) + b'", "evidence": "e", "label": "SUPPORTS"}\n')
    return path


def _pushed_generator(fail_after: bool = False) -> str:
    import uuid

    repo = f"alice/gen-{uuid.uuid4().hex[:8]}"
    Generator(*tiny_seq2seq(), num_beams=1, max_new_tokens=3).push_to_hub(repo, token="hf_alice_write")
    if fail_after:
        hub_server.ACTIVE.fail_next(repo, status=503, times=1000)
    return repo


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case_id,setup,action,error,match", CASES, ids=[c[0] for c in CASES])
def test_bad_input(case_id, setup, action, error, match, tmp_path, capsys, monkeypatch):
    import os

    monkeypatch.chdir(tmp_path)  # relative paths in the cases resolve inside the case's folder
    monkeypatch.setenv("CFAUG_MAX_LINE_MB", "1")  # a "huge" line of a compressed input without writing one
    hub_server.ACTIVE.clear_failures()
    environ = dict(os.environ)  # a case may set a variable (CFAUG_HF_CACHE) to test it
    try:
        ctx = setup(tmp_path) if setup else {}
        before = _snapshot(tmp_path)
        capsys.readouterr()
        if isinstance(error, int):  # a CLI case: status, one clear line, no traceback
            status = action(ctx)
            err = capsys.readouterr().err
            assert status == error, err
            ours = [line for line in err.splitlines() if line.startswith("cfaug")]  # progress bars aside
            assert "Traceback" not in err and len(ours) == 1, err
            assert __import__("re").search(match, err), err
        elif error is SystemExit:  # argparse's own usage errors
            with pytest.raises(SystemExit) as info:
                action(ctx)
            assert info.value.code == 2
            assert match in capsys.readouterr().err
        else:
            with pytest.raises(error, match=match):
                action(ctx)
        after = _snapshot(tmp_path)
        assert after == before, f"files written or changed: {sorted(set(after) ^ set(before))}"
    finally:
        hub_server.ACTIVE.clear_failures()
        os.environ.clear()
        os.environ.update(environ)


def test_catalogue_is_large_and_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids)) and len(ids) >= 100


def test_the_docs_count_the_catalogue_as_it_is():
    import re

    root = Path(__file__).resolve().parents[1]
    for doc in ("README.md", "docs/usage.md"):
        said = re.findall(r"(\d+) (?:cases|wrong or unusual inputs)", (root / doc).read_text())
        assert said and {int(n) for n in said} == {len(CASES)}, f"{doc} says {said}; the table has {len(CASES)}"


def test_every_command_has_rows():
    """The table covers every `cfaug` command and every `cfaug train` kind (at least two rows each), so a command
    added later cannot ship without its bad-input rows."""
    import argparse
    import inspect

    parser = cli.build_parser([])
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    kinds = next(a for a in commands["train"]._actions if isinstance(a, argparse._SubParsersAction)).choices
    source = inspect.getsource(__import__(__name__))
    for name in commands:
        if name == "train":
            continue
        assert source.count(f'run_cli(["{name}"') >= 2, f"cfaug {name} has fewer than two bad-input rows"
    for kind in kinds:
        assert source.count(f'run_cli(["train", "{kind}"') >= 2, f"cfaug train {kind} has fewer than two rows"
