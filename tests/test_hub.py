"""Components, augmenters and augmented datasets through a loopback Hub with the real clients."""

import json
import re
import uuid
from pathlib import Path

import pytest
from datasets import Dataset, load_dataset
from huggingface_hub import DatasetCard, HfApi, ModelCard

import tests.hub_server as hub_server
from cfaug_hf import Augmenter, CrossAugAugmenter, Generator, LabelChecker, TaskSchema
from cfaug_hf.components import ComponentLoadError
from cfaug_hf.testing import tiny_classifier, tiny_seq2seq
from hub_cards import HubError, push_augmented, source_info

ALICE, BOB = "hf_alice_write", "hf_bob_write"
CLAIMS = ["the cat sat on the mat", "a dog ran in paris", "the film was good"]


@pytest.fixture
def hub():
    server = hub_server.ACTIVE
    server.clear_failures()
    yield server
    server.clear_failures()


def name(prefix):
    return f"alice/{prefix}-{uuid.uuid4().hex[:8]}"


def tiny_generator():
    return Generator(*tiny_seq2seq(), num_beams=2, max_new_tokens=4)


# ---------------------------------------------------------------------------------------------- components
def test_a_component_saved_locally_has_its_card_and_keeps_the_text_a_user_added(tmp_path):
    """Whole models got no card when saved to disk (only adapters did, and pushes); a re-save refreshes the generated
    part and keeps what the user wrote around it."""
    gen = tiny_generator()
    gen.training_info = {"train_rows": 12}
    folder = gen.save_pretrained(tmp_path / "my-gen")
    card = ModelCard((folder / "README.md").read_text())
    assert card.data.library_name == "cfaug-hf" and "# my-gen: a cfaug-hf generator" in card.text
    assert "| train_rows | 12 |" in card.text
    (folder / "README.md").write_text(str(card) + "\n## Our notes\n\nOur notes on this run.\n")
    gen.training_info = {"train_rows": 13}
    gen.save_pretrained(folder, overwrite=True)
    again = (folder / "README.md").read_text()
    assert "Our notes on this run." in again and "| train_rows | 13 |" in again and "| train_rows | 12 |" not in again
    assert Generator.from_pretrained(folder).generate(CLAIMS) == gen.generate(CLAIMS)


def test_generator_round_trip_with_card(hub):
    gen = tiny_generator()
    gen.training_info = {"train_rows": 12, "learning_rate": 1e-3, "eval_loss": 1.5,
                         "train_dataset": {"id": "alice/pairs", "num_rows": 12}}
    repo = name("gen")
    sha = gen.push_to_hub(repo, token=ALICE)
    assert gen.hub_origin == {"repo_id": repo, "revision": sha}
    files = hub.files(repo)
    assert {"model.safetensors", "cfaug_generator.json", "README.md", "tokenizer.json"} <= set(files)
    assert not any(f.endswith((".bin", ".pkl", ".pt")) for f in files)
    back = Generator.from_pretrained(repo)
    assert back.generate(CLAIMS) == gen.generate(CLAIMS)
    assert back.hub_origin == {"repo_id": repo, "revision": sha}
    card = ModelCard.load(repo)
    assert card.data.library_name == "cfaug-hf" and "generator" in card.data.tags
    assert card.data.datasets == ["alice/pairs"] and card.data.pipeline_tag == "text2text-generation"
    text = card.text
    for pattern in [r"# gen-\w+: a cfaug-hf generator", r"Generator\.from_pretrained\(\"alice/gen-\w+\"\)",
                    r"\| train_rows \| 12 \|", r"\| eval_loss \| 1\.5 \|", r"training data \| alice/pairs \(12 rows",
                    r"\"num_beams\": 2"]:
        assert re.search(pattern, text), pattern


def test_checker_round_trip_and_revision(hub):
    checker = LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES")))
    repo = name("checker")
    first = checker.push_to_hub(repo, token=ALICE)
    import torch
    with torch.no_grad():
        checker.model.classifier.bias[0] += 1.0  # one class only: a shift of all logits changes no probability
    second = checker.push_to_hub(repo, token=ALICE, commit_message="retrained")
    assert first != second and hub.commits(repo)[-1] == "retrained"
    old = LabelChecker.from_pretrained(repo, revision=first)
    new = LabelChecker.from_pretrained(repo)
    assert old.hub_origin["revision"] == first and new.hub_origin["revision"] == second
    assert (new.predict_proba(["a"], ["b"]) == checker.predict_proba(["a"], ["b"])).all()
    assert not (old.predict_proba(["a"], ["b"]) == checker.predict_proba(["a"], ["b"])).all()
    assert ModelCard.load(repo).data.pipeline_tag == "text-classification"


def test_rationale_selector_round_trip(hub):
    from cfaug_hf import RationaleSelector
    from cfaug_hf.testing import tiny_encoder

    selector = RationaleSelector.from_encoder(tiny_encoder(), label_names=["negative", "positive"],
                                              sentence_layers=1, sentence_heads=2)
    repo = name("rationale")
    sha = selector.push_to_hub(repo, token=ALICE)
    back = RationaleSelector.from_pretrained(repo)
    docs = [["the food was good .", "the room was clean ."], ["the staff was bad ."]]
    assert back.select(docs, [1, 0]).error == pytest.approx(selector.select(docs, [1, 0]).error)
    assert back.hub_origin == {"repo_id": repo, "revision": sha}
    card = ModelCard.load(repo)
    assert "rationale" in card.data.tags and "RationaleSwapAugmenter" in card.text


def test_cf_dpr_encoder_and_its_corpus_index_round_trip_with_cards(hub):
    from cfaug_hf import BiEncoder, CorpusIndex
    from cfaug_hf.testing import tiny_encoder

    encoder = BiEncoder(tiny_encoder(0)[0], tiny_encoder(1)[0], tiny_encoder()[1])
    encoder.training_info = {"for_method": "core", "train_rows": 8}
    index = CorpusIndex.build(encoder, CLAIMS)
    enc_repo, index_repo = name("cf-dpr"), name("corpus-index")
    encoder.push_to_hub(enc_repo, token=ALICE)
    index.push_to_hub(index_repo, token=ALICE)
    assert {"query_encoder/model.safetensors", "document_encoder/model.safetensors"} <= set(hub.files(enc_repo))
    assert {"index.faiss", "corpus.parquet", "cfaug_corpus_index.json"} <= set(hub.files(index_repo))
    enc_back, index_back = BiEncoder.from_pretrained(enc_repo), CorpusIndex.from_pretrained(index_repo)
    assert enc_back.fingerprint() == encoder.fingerprint()
    assert index_back.search(enc_back, ["a dog"], k=2) == index.search(encoder, ["a dog"], k=2)
    card = ModelCard.load(enc_repo)
    assert "CF-DPR" in card.text and "dixit2022core" in card.text  # the method's citation, from training_info
    assert "FAISS" in ModelCard.load(index_repo).text


def test_a_component_without_weights_or_training_pushes_with_a_card(hub):
    """An entity recogniser has no base model and no training record: its card says so, names the module to import
    it from, and carries a licence and language its class declares (one field of ComponentCardData each)."""
    from cfaug_hf.components.ner import LexiconNER

    class TaggedLexiconNER(LexiconNER):
        card_license, card_language = "apache-2.0", ["en"]

    ner = TaggedLexiconNER({"paris": "GPE"})
    assert ner.card_data().training == {} and ner.card_data().base_model is None
    repo = name("lexicon-ner")
    ner.push_to_hub(repo, token=ALICE)
    card = ModelCard.load(repo)
    assert card.data.license == "apache-2.0" and card.data.language == ["en"]
    assert f"from {__name__} import TaggedLexiconNER" in card.text or "import TaggedLexiconNER" in card.text
    assert "No training was recorded" in card.text and "Not recorded." in card.text
    plain = name("plain-ner")
    LexiconNER({"paris": "GPE"}).push_to_hub(plain, token=ALICE)
    assert "from cfaug_hf.components.ner import LexiconNER" in ModelCard.load(plain).text
    texts = ["we met in paris", "I saw Paris."]
    assert LexiconNER.from_pretrained(plain)(texts) == LexiconNER({"paris": "GPE"})(texts) != [[], []]


def test_a_components_licence_and_languages_are_its_own_and_saved_with_it(hub, tmp_path):
    from cfaug_hf.components.ner import LexiconNER

    ner = LexiconNER({"paris": "GPE"})
    ner.card_license, ner.card_language = "cc-by-4.0", ["fr"]
    assert LexiconNER.card_license is None and LexiconNER({"x": "GPE"}).card_language is None  # not the class's
    ner.save_pretrained(tmp_path / "ner")
    back = LexiconNER.from_pretrained(tmp_path / "ner")
    assert (back.card_license, back.card_language) == ("cc-by-4.0", ["fr"])
    repo = name("licensed-ner")
    back.push_to_hub(repo, token=ALICE)
    card = ModelCard.load(repo)
    assert card.data.license == "cc-by-4.0" and card.data.language == ["fr"]
    config_file = next(p for p in (tmp_path / "ner").glob("cfaug_*.json") if p.name != "cfaug_manifest.json")
    config = json.loads(config_file.read_text())
    for bad in ({"license": 3}, {"language": "fr"}, ["mit"]):
        config["card"] = bad
        config_file.write_text(json.dumps(config))
        with pytest.raises(ComponentLoadError, match="'card' must be"):
            LexiconNER.from_pretrained(tmp_path / "ner")


def test_private_repo_needs_the_owner_token(hub):
    repo = name("private-gen")
    tiny_generator().push_to_hub(repo, private=True, token=ALICE)
    # (before any authorised download: huggingface_hub falls back to files already in the local cache)
    for token in (None, BOB):
        with pytest.raises(HubError, match=r"was not found .* private"):
            Generator.from_pretrained(repo, token=token)
    assert Generator.from_pretrained(repo, token=ALICE).hub_origin["repo_id"] == repo


def test_bad_token_push_fails_clearly_without_leaking_it(hub, caplog):
    secret = "hf_not_a_real_token_123"
    with caplog.at_level("DEBUG"):
        with pytest.raises(HubError, match="token is missing or invalid") as err:
            tiny_generator().push_to_hub(name("gen"), token=secret)
    assert secret not in str(err.value) and secret not in caplog.text
    with pytest.raises(HubError, match="no write access|missing or invalid|not found"):
        tiny_generator().push_to_hub("alice/someone-elses", token=BOB)


def test_missing_repo_and_missing_revision(hub):
    with pytest.raises(HubError, match="'alice/does-not-exist' was not found"):
        Generator.from_pretrained("alice/does-not-exist", token=ALICE)
    repo = name("gen")
    tiny_generator().push_to_hub(repo, token=ALICE)
    with pytest.raises(HubError, match="revision asked for does not exist"):
        Generator.from_pretrained(repo, revision="v9")


def test_not_a_component_and_newer_version_on_the_hub(hub):
    api = HfApi(token=ALICE)
    repo = name("plain")
    api.create_repo(repo)
    api.upload_file(path_or_fileobj=b"{}", path_in_repo="config.json", repo_id=repo)
    with pytest.raises(ComponentLoadError, match="not a saved Generator: cfaug_generator.json is missing"):
        Generator.from_pretrained(repo)
    future = name("future")
    tiny_generator().push_to_hub(future, token=ALICE)
    cfg = json.loads(hub.files(future)["cfaug_generator.json"])
    api.upload_file(path_or_fileobj=json.dumps({**cfg, "format_version": 7}).encode(),
                    path_in_repo="cfaug_generator.json", repo_id=future)
    with pytest.raises(ComponentLoadError, match="format_version 7.*Upgrade cfaug-hf"):
        Generator.from_pretrained(future)


@pytest.mark.parametrize("status", [500, None])
def test_server_error_or_dropped_connection_leaves_repo_unchanged(hub, status):
    repo = name("gen")
    gen = tiny_generator()
    gen.push_to_hub(repo, token=ALICE)
    before = hub.files(repo)
    gen.training_info = {"note": "second version"}
    hub.fail_next(r"/commit/", status=status, times=20)
    expected = "answered 500; nothing was committed" if status else "connection .* failed"
    with pytest.raises(HubError, match=expected):
        gen.push_to_hub(repo, token=ALICE)
    assert hub.files(repo) == before  # no partial card, no partial weights
    hub.clear_failures()
    gen.push_to_hub(repo, token=ALICE)
    assert "second version" in hub.files(repo)["README.md"].decode()


def test_card_update_keeps_user_text_and_metadata(hub):
    repo = name("gen")
    gen = tiny_generator()
    gen.push_to_hub(repo, token=ALICE)
    card = ModelCard.load(repo)
    card.data.license = "apache-2.0"
    card.data.tags = card.data.tags + ["my-tag"]
    card.text = "# My notes\n\nThis generator is great on sports claims.\n" + card.text + "\nFooter by me.\n"
    card.push_to_hub(repo, token=ALICE)
    gen.training_info = {"train_rows": 99}
    gen.push_to_hub(repo, token=ALICE)
    updated = ModelCard.load(repo)
    assert updated.data.license == "apache-2.0" and "my-tag" in updated.data.tags
    assert "cfaug-hf" in updated.data.tags
    assert "This generator is great on sports claims." in updated.text and "Footer by me." in updated.text
    assert "| train_rows | 99 |" in updated.text
    assert updated.text.count("<!-- cfaug:begin") == 1


# ----------------------------------------------------------------------------------------------- augmenters
def fever_ds(n=6):
    return Dataset.from_dict({"id": [f"r{i}" for i in range(n)], "claim": [CLAIMS[i % 3] for i in range(n)],
                              "evidence": [[CLAIMS[i % 3] + " today"] for i in range(n)],
                              "label": ["SUPPORTS", "REFUTES"] * (n // 2)})


def test_augmenter_save_load_local_copies_components(tmp_path):
    aug = CrossAugAugmenter(tiny_generator(), TaskSchema.fact_verification(id_column="id"),
                            checker=LabelChecker(*tiny_classifier()), max_span_tokens=2)
    path = aug.save_pretrained(tmp_path / "aug")
    saved = json.loads((path / "cfaug_augmenter.json").read_text())
    assert saved["components"]["generator"] == {"type": "generator", "path": "generator"}
    assert saved["method"] == "crossaug" and saved["config"]["max_span_tokens"] == 2
    back = Augmenter.from_pretrained(path)
    assert isinstance(back, CrossAugAugmenter) and back.config == aug.config and back.schema == aug.schema
    ds = fever_ds()
    assert list(ds.map(back, batched=True)) == list(ds.map(aug, batched=True))
    assert back.fingerprint() == aug.fingerprint()


def test_augmenter_refuses_unsaveable_parts(tmp_path):
    aug = CrossAugAugmenter(lambda cs: cs)
    with pytest.raises(TypeError, match="not a cfaug component"):
        aug.save_pretrained(tmp_path / "aug")
    assert not (tmp_path / "aug").exists()
    path = aug.save_pretrained(tmp_path / "refs", references_only=True)
    with pytest.raises(ComponentLoadError, match="pass generator="):
        CrossAugAugmenter.from_pretrained(path)
    assert isinstance(CrossAugAugmenter.from_pretrained(path, generator=lambda cs: cs), CrossAugAugmenter)


def test_augmenter_push_pull_references_components(hub):
    gen = tiny_generator()
    gen_repo = name("gen")
    gen.push_to_hub(gen_repo, token=ALICE)
    aug = CrossAugAugmenter(gen, seed=3)
    aug_repo = name("aug")
    aug.push_to_hub(aug_repo, token=ALICE)
    files = hub.files(aug_repo)
    assert "generator/model.safetensors" not in files  # referenced, not copied
    ref = json.loads(files["cfaug_augmenter.json"])["components"]["generator"]
    assert ref == {"type": "generator", **gen.hub_origin}
    back = Augmenter.from_pretrained(aug_repo)
    assert back.config.seed == 3 and back.generator.hub_origin == gen.hub_origin
    assert re.search(r"\[alice/gen-\w+\]\(https://huggingface.co/alice/gen-\w+\) at revision `[0-9a-f]{40}`",
                     files["README.md"].decode())
    with pytest.raises(ComponentLoadError, match="holds a 'crossaug' augmenter"):
        class Other(CrossAugAugmenter):
            method = "other"
        Other.from_pretrained(aug_repo)


# ----------------------------------------------------------------------------------------------- datasets
def test_push_augmented_dataset_round_trip_with_provenance_card(hub):
    api = HfApi(token=ALICE)
    src_repo = name("fever-src")
    fever_ds(8).push_to_hub(src_repo, token=ALICE)
    source = load_dataset(src_repo, split="train")
    info = source_info(source)
    assert info["id"] == src_repo and re.fullmatch(r"[0-9a-f]{40}", info["revision"])
    assert info["revision"] == api.repo_info(src_repo, repo_type="dataset").sha

    gen = tiny_generator()
    gen.push_to_hub(name("gen"), token=ALICE)
    aug = CrossAugAugmenter(gen, TaskSchema.fact_verification(id_column="id"))
    augmented = aug.augment(source)
    repo = name("fever-crossaug")
    import logging

    seen = []
    listener = logging.Handler()
    listener.emit = lambda record: seen.append(record.getMessage())
    logging.getLogger("datasets.arrow_dataset").addHandler(listener)
    try:
        push_augmented(augmented, repo, augmenter=aug, source=source, token=ALICE, license="cc-by-sa-3.0")
    finally:
        logging.getLogger("datasets.arrow_dataset").removeHandler(listener)
    assert not [m for m in seen if "num_proc" in m]  # datasets' one-shard notice is not shown

    back = load_dataset(repo, split="train")
    assert back.column_names == augmented.column_names and back.num_rows == augmented.num_rows
    assert list(back["cf_outcome"]) == list(augmented["cf_outcome"])
    assert list(back["cf_is_counterfactual"]) == list(augmented["cf_is_counterfactual"])

    card = DatasetCard.load(repo, repo_type="dataset")
    d = card.data
    assert d.source_datasets == [src_repo] and "machine-generated" in d.language_creators
    assert d.task_categories == ["text-classification"] and "crossaug" in d.tags and d.license == "cc-by-sa-3.0"
    assert d.to_dict().get("dataset_info") and d.to_dict().get("configs")  # what datasets wrote is kept
    text = card.text
    for pattern in [rf"\[{src_repo}\]\(https://huggingface.co/datasets/{src_repo}\) at revision `[0-9a-f]{{40}}`",
                    r"Method: `CrossAugAugmenter` \(`crossaug`\)", r"\| input rows \| 8 \|",
                    r"\| SUPPORTS \| 4 \| \d+ \|", r"\| original \| 8 \|", r"skipped:label_not_augmented \| 4 \|",
                    r"generator: \[alice/gen-\w+\]", r"@inproceedings\{lee2021crossaug", r"\"max_span_tokens\": 3"]:
        assert re.search(pattern, text), pattern
    saved = json.loads(hub.files(repo, "dataset")["augmenter/cfaug_augmenter.json"])
    assert saved["components"]["generator"]["repo_id"] == gen.hub_origin["repo_id"]
    rebuilt = Augmenter.from_pretrained(repo, repo_type="dataset", subfolder="augmenter")
    assert list(source.map(rebuilt, batched=True)["claim"]) == list(augmented["claim"])


def test_a_pulled_dataset_cards_recipe_reproduces_the_dataset_from_the_command_line(hub, tmp_path, capsys):
    from datasets import load_from_disk

    from cfaug_hf import cli

    gen = tiny_generator()
    gen.push_to_hub(name("gen"), token=ALICE)
    source = fever_ds(6)
    aug = CrossAugAugmenter(gen, TaskSchema.fact_verification(id_column="id"), max_span_tokens=2)
    augmented = aug.augment(source)
    repo = name("fever-recipe")
    push_augmented(augmented, repo, augmenter=aug, source=source, token=ALICE)
    assert "--recipe card/augmenter/cfaug_augmenter.json" in DatasetCard.load(repo, repo_type="dataset").text
    source.to_json(str(tmp_path / "source.jsonl"))
    assert cli.main(["pull", repo, str(tmp_path / "card"), "--repo-type", "dataset", "--token", ALICE]) == 0
    assert cli.main(["augment", str(tmp_path / "source.jsonl"), "--recipe",
                     str(tmp_path / "card" / "augmenter" / "cfaug_augmenter.json"),
                     "--out", str(tmp_path / "again")]) == 0, capsys.readouterr().err
    again = load_from_disk(str(tmp_path / "again" / "data"))
    assert again.to_list() == augmented.to_list()


def test_dataset_card_update_keeps_user_text(hub):
    aug = CrossAugAugmenter(tiny_generator())
    augmented = fever_ds(4).map(aug, batched=True)
    repo = name("ds")
    push_augmented(augmented, repo, augmenter=aug, token=ALICE)
    card = DatasetCard.load(repo, repo_type="dataset")
    card.text = "Curated by Alice for the sports benchmark.\n" + card.text
    card.push_to_hub(repo, repo_type="dataset", token=ALICE)
    push_augmented(augmented, repo, augmenter=aug, token=ALICE, pretty_name="Sports CF")
    again = DatasetCard.load(repo, repo_type="dataset")
    assert "Curated by Alice" in again.text and again.data.pretty_name == "Sports CF"
    assert again.text.count("<!-- cfaug:begin") == 1


def test_dataset_card_carries_the_report_and_shortcut_balance_drops(hub):
    from cfaug_hf.filters import ShortcutBalanceFilter
    from cfaug_hf.report import augmentation_report
    from cfaug_hf.testing import NegateAugmenter

    texts = [f"review {i} says the film was good" for i in range(40)] + \
        [f"review {i} says the film seems bad" for i in range(40)]
    data = Dataset.from_dict({"text": texts, "label": ["positive"] * 40 + ["negative"] * 40})
    schema = TaskSchema.sentiment()
    aug = NegateAugmenter(schema, filters=[ShortcutBalanceFilter(data, schema)])
    out = aug.augment(data)
    report = augmentation_report(data, out, schema, fluency_model=None, embedder=None, probe=False)
    repo = name("balanced")
    push_augmented(out, repo, augmenter=aug, source=data, token=ALICE, report=report)
    text = DatasetCard.load(repo, repo_type="dataset").text
    dropped = aug.stats.by_prefix("shortcut_balance")["not"]
    assert f"| shortcut_balance:not | {dropped} |" in text  # counts table and report both list the word
    assert "## Augmentation report (train split)" in text and "### Shortcut tokens (competency test" in text
    assert text.index("Augmentation report") < text.index("## Columns added by cfaug-hf")


def test_push_augmented_rejects_plain_data():
    with pytest.raises(ValueError, match="lacks the provenance columns"):
        push_augmented(fever_ds(2), "alice/x", token=ALICE)


# ------------------------------------------------------------------------------------------------------ CLI
def test_cli_push_and_pull(hub, tmp_path, capsys):
    from cfaug_hf import cli

    gen_dir = tiny_generator().save_pretrained(tmp_path / "gen")
    repo = name("cli-gen")
    cli.main(["push", str(gen_dir), repo, "--token", ALICE, "--private"])
    assert "Pushed Generator" in capsys.readouterr().out
    cli.main(["pull", repo, str(tmp_path / "pulled"), "--token", ALICE])
    assert (tmp_path / "pulled" / "cfaug_generator.json").is_file()
    assert Generator.from_pretrained(tmp_path / "pulled").generate(CLAIMS) == Generator.from_pretrained(
        gen_dir).generate(CLAIMS)

    aug = CrossAugAugmenter(Generator.from_pretrained(gen_dir))
    aug.save_pretrained(tmp_path / "aug")
    data_dir = tmp_path / "augmented"
    fever_ds(4).map(aug, batched=True).save_to_disk(str(data_dir))
    ds_repo = name("cli-ds")
    cli.main(["push", str(data_dir), ds_repo, "--token", ALICE, "--augmenter", str(tmp_path / "aug"),
              "--source", "alice/somewhere@abc123", "--license", "mit"])
    card = DatasetCard.load(ds_repo, repo_type="dataset").text
    assert "alice/somewhere" in card and "revision `abc123`" in card and "CrossAugAugmenter" in card
    assert "Augmentation report" not in card
    fever_ds(4).save_to_disk(str(tmp_path / "original"))
    cli.main(["report", str(tmp_path / "original"), str(data_dir), "--out", str(tmp_path / "report"), "--no-models"])
    cli.main(["push", str(data_dir), ds_repo, "--token", ALICE, "--augmenter", str(tmp_path / "aug"),
              "--report", str(tmp_path / "report")])
    assert "## Augmentation report (train split)" in DatasetCard.load(ds_repo, repo_type="dataset").text
    capsys.readouterr()
    assert cli.main(["push", str(data_dir), ds_repo, "--token", ALICE, "--report", str(tmp_path)]) == 2
    assert "--report" in capsys.readouterr().err
    assert cli.main(["push", str(tmp_path), "alice/x", "--token", ALICE]) == 2
    assert "is not a saved cfaug component" in capsys.readouterr().err
    assert cli.main(["pull", "alice/nothing-here", str(tmp_path / "none")]) == 2
    assert "was not found" in capsys.readouterr().err
    with pytest.raises(HubError, match="was not found"):  # --debug re-raises the error itself
        cli.main(["--debug", "pull", "alice/nothing-here", str(tmp_path / "none")])
    assert not (tmp_path / "none").exists()


def test_share_on_hub_example_runs_the_three_steps(hub, tmp_path, monkeypatch):
    import importlib

    example = importlib.import_module("examples.share_on_hub")
    tiny_generator().save_pretrained(tmp_path / "gen")
    monkeypatch.setenv("HF_TOKEN", ALICE)
    repos = example.main(["--generator", str(tmp_path / "gen"), "--user", "alice", "--rows", "6"])
    data = load_dataset(repos["dataset"], split="train")
    assert data.num_rows >= 6 and "cf_outcome" in data.column_names
    card = DatasetCard.load(repos["dataset"], repo_type="dataset").text
    assert repos["generator"] in card and re.search(r"revision `?[0-9a-f]{7,40}", card)


def test_the_command_line_reads_a_hub_dataset_id_with_split_and_limit(hub, tmp_path, capsys):
    from cfaug_hf.cli import main

    repo = name("ner-src")
    rows = Dataset.from_dict({"tokens": [["Ada", "lives", "in", "Paris"], ["Bob", "met", "Eve", "in", "Rome"]] * 3,
                              "ner_tags": [["B-PER", "O", "O", "B-LOC"], ["B-PER", "O", "B-PER", "O", "B-LOC"]] * 3})
    rows.push_to_hub(repo, token=ALICE)
    out = tmp_path / "out"
    assert main(["augment", repo, "--method", "cfgen", "--task", "token-classification", "--limit", "4",
                 "--out", str(out)]) == 0
    stats = json.loads((out / "stats.json").read_text())
    assert stats["rows_in"] == 4
    assert main(["augment", repo, "--method", "cfgen", "--split", "test", "--out", str(tmp_path / "x")]) == 2
    assert "--split test" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_hub_input_options_subset_revision_and_a_streamed_limit(hub, tmp_path, capsys):
    from huggingface_hub import HfApi

    from cfaug_hf.cli import main

    repo = name("claims-src")
    fever_ds(2).push_to_hub(repo, token=ALICE)
    old = HfApi().list_repo_commits(repo, repo_type="dataset", token=ALICE)[0].commit_id
    fever_ds(6).push_to_hub(repo, token=ALICE)
    fever_ds(2).select([0]).push_to_hub(repo, "other", token=ALICE)
    gen = tiny_generator().save_pretrained(tmp_path / "gen")
    base = ["augment", repo, "--method", "crossaug", "--generator", str(gen), "--checker", "none"]
    assert main([*base, "--revision", old, "--out", str(tmp_path / "old")]) == 0
    assert json.loads((tmp_path / "old" / "stats.json").read_text())["rows_in"] == 2
    assert main([*base, "--subset", "other", "--out", str(tmp_path / "other")]) == 0
    assert json.loads((tmp_path / "other" / "stats.json").read_text())["rows_in"] == 1
    assert main([*base, "--limit", "3", "--out", str(tmp_path / "limited")]) == 0
    assert json.loads((tmp_path / "limited" / "stats.json").read_text())["rows_in"] == 3
    capsys.readouterr()
    fever_ds(2).to_json(str(tmp_path / "local.jsonl"))
    assert main(["augment", str(tmp_path / "local.jsonl"), "--method", "crossaug", "--revision", "main", "--out",
                 str(tmp_path / "x")]) == 2
    assert "--revision applies to a Hub dataset id" in capsys.readouterr().err


def test_a_pulled_component_does_not_warn_that_its_card_changed(hub, caplog):
    """The push merges the card with the Hub's after the manifest's digests were taken; the manifest pushed
    describes the card pushed, so loading it back gives no false "was changed since it was saved" warning."""
    import logging

    from cfaug_hf.testing import tiny_encoder

    from cfaug_hf import BiEncoder, RationaleSelector

    components = {"generator": (tiny_generator(), Generator),
                  "checker": (LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES"))), LabelChecker),
                  "selector": (RationaleSelector.from_encoder(tiny_encoder(), sentence_layers=1, sentence_heads=2),
                               RationaleSelector),
                  "encoder": (BiEncoder(tiny_encoder()[0], tiny_encoder()[0], tiny_encoder()[1]), BiEncoder)}
    for kind, (component, cls) in components.items():
        repo = name(f"nowarn-{kind}")
        component.push_to_hub(repo, token=ALICE)
        component.push_to_hub(repo, token=ALICE, commit_message="again: the card is merged with the Hub's")
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            cls.from_pretrained(repo)
        assert "was changed since it was saved" not in caplog.text, kind


def test_a_report_of_other_data_is_refused_and_a_matching_one_brings_its_plots(hub, tmp_path):
    from cfaug_hf.report import augmentation_report
    from cfaug_hf.testing import NegateAugmenter

    schema = TaskSchema.sentiment()
    data = Dataset.from_dict({"text": [f"review {i} was good" for i in range(6)], "label": ["positive"] * 6})
    aug = NegateAugmenter(schema)
    out = aug.augment(data)
    report = augmentation_report(data, out, schema, fluency_model=None, embedder=None, probe=False,
                                 out_dir=tmp_path / "report")
    plots = [p for p in report.files.values() if str(p).endswith(".png")]
    repo = name("reported")
    with pytest.raises(ValueError, match=r"The report describes other data: 6 rows in, 12 out .* has 9 rows"):
        push_augmented(out.select(range(9)), repo, augmenter=aug, source=data, token=ALICE, report=report)
    data.info.license = "cc-by-4.0"
    push_augmented(out, repo, augmenter=aug, source=data, token=ALICE, report=report)
    card = DatasetCard.load(repo, repo_type="dataset")
    assert card.data.license == "cc-by-4.0"  # from the source, as no license= was given
    files = set(hub.files(repo, repo_type="dataset"))
    for plot in plots:
        assert f"report/{Path(plot).name}" in files and f"(report/{Path(plot).name})" in card.text


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_cli_augment_writes_the_format_asked_and_push_takes_the_file(hub, tmp_path, capsys, fmt):
    """--format writes OUT/data.FMT (list cells survive: as lists in JSON lines and Parquet, as JSON text in CSV,
    read back as lists by push), and `cfaug push OUT/data.FMT` pushes it with its provenance card."""
    import json

    from datasets import load_dataset

    from cfaug_hf import cli

    gen_dir = tiny_generator().save_pretrained(tmp_path / "gen")
    fever_ds(4).to_json(str(tmp_path / "claims.jsonl"))
    assert cli.main(["augment", str(tmp_path / "claims.jsonl"), "--method", "crossaug", "--generator", str(gen_dir),
                     "--checker", "none", "--format", fmt, "--out", str(tmp_path / "out")]) == 0
    written = tmp_path / "out" / f"data.{fmt}"
    assert f"in {written} ({fmt})" in capsys.readouterr().out and not (tmp_path / "out" / "data").exists()
    rows = load_dataset(fmt if fmt != "jsonl" else "json", data_files=str(written), split="train")
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert len(rows) == stats["rows_out"] and "cf_kind" in rows.column_names
    evidence = rows[0]["evidence"]
    assert isinstance(json.loads(evidence) if fmt == "csv" else evidence, list)
    repo = name(f"cli-{fmt}")
    assert cli.main(["push", str(written), repo, "--token", ALICE, "--augmenter", str(tmp_path / "out" / "augmenter"),
                     "--license", "mit"]) == 0
    card = DatasetCard.load(repo, repo_type="dataset").text
    assert "CrossAugAugmenter" in card


def test_cli_augment_format_jsonl_with_ray_is_refused_before_anything_runs(tmp_path, capsys):
    from cfaug_hf import cli

    (tmp_path / "claims.jsonl").write_text('{"claim": "a", "evidence": ["b"], "label": "SUPPORTS"}\n')
    assert cli.main(["augment", str(tmp_path / "claims.jsonl"), "--method", "crossaug", "--engine", "ray",
                     "--format", "jsonl", "--out", str(tmp_path / "out")]) == 2
    assert "--format jsonl needs --runner local" in capsys.readouterr().err


def test_cli_augment_pushes_to_the_hub_with_the_card_cfaug_push_writes(hub, tmp_path, capsys):
    """--push-to-hub REPO: the output is written to --out as always, then pushed with a card naming the Hub input
    (id and revision) and the augmenter; one line says where and how many rows."""
    from datasets import load_dataset, load_from_disk

    from cfaug_hf import cli

    gen_dir = tiny_generator().save_pretrained(tmp_path / "gen")
    src = name("claims-src")
    fever_ds(6).push_to_hub(src, token=ALICE)
    repo = name("claims-aug")
    assert cli.main(["augment", src, "--method", "crossaug", "--generator", str(gen_dir), "--checker", "none",
                     "--out", str(tmp_path / "out"), "--push-to-hub", repo, "--token", ALICE,
                     "--license", "cc-by-sa-3.0"]) == 0
    out = capsys.readouterr().out
    back = load_dataset(repo, split="train")
    local = load_from_disk(str(tmp_path / "out" / "data"))
    assert back.to_list() == local.to_list()
    made = sum(local["cf_is_counterfactual"])
    assert f"Pushed the augmented dataset ({len(local)} rows, {made} counterfactual) to " in out
    card = DatasetCard.load(repo, repo_type="dataset")
    assert card.data.source_datasets == [src] and card.data.license == "cc-by-sa-3.0"
    assert "CrossAugAugmenter" in card.text and "| input rows | 6 |" in card.text
