"""ICDA: the counterfactual plan, the rationale-swap augmenter, the per-epoch callback and the iteration driver."""

import json
import random
from collections import Counter

import pytest
import torch
from datasets import Dataset
from transformers import Trainer, TrainingArguments

from cfaug_hf import RationaleSelector, RationaleSwapAugmenter, SchemaError, TaskSchema
from cfaug_hf.augmenter import AugmentationStats
from cfaug_hf.methods.icda import (CounterfactualEpochDataset, JoinedTextCollator, SelectionResult, is_degenerate,
                                   plan_counterfactuals, rationale_precision, rationale_set_change, run_icda)
from cfaug_hf.testing import tiny_classifier, tiny_encoder, tiny_word_encoder
from cfaug_hf.methods.icda.online import OnlineICDA
from trainer_callbacks import STATE_FILE, ICDACallback

FILLER = ["the room was clean .", "the staff was good .", "the hotel was in paris .", "the service was great .",
          "the room was dirty .", "the staff was terrible ."]


def reviews(n=24, seed=0, sentences=4):
    """Label 1 iff the food sentence says good; the food sentence sits at a random position among fillers."""
    rng = random.Random(seed)
    docs, labels, truth = [], [], []
    for i in range(n):
        label = i % 2
        food = "the food was good ." if label else "the food was bad ."
        doc = rng.sample(FILLER, sentences - 1)
        pos = rng.randrange(sentences)
        doc.insert(pos, food)
        docs.append(doc)
        labels.append(label)
        truth.append([j == pos for j in range(sentences)])
    return docs, labels, truth


class FixedSelector:
    """Selects the sentence containing 'food' (or sentence 0), predicts the true label with error by position."""

    def select(self, documents, labels=None):
        sel = [[next((i for i, s in enumerate(d) if "food" in s), 0)] for d in documents]
        return SelectionResult(sel, list(labels), [0.01 * (i % 10) for i in range(len(documents))])


def tiny_selector(seed=0, **kwargs):
    torch.manual_seed(seed)
    return RationaleSelector.from_encoder(tiny_encoder(seed), label_names=["negative", "positive"],
                                          sentence_layers=1, sentence_heads=2, max_sentence_tokens=12, **kwargs)


def args(tmp_path, **kw):
    base = dict(num_train_epochs=3, per_device_train_batch_size=8, learning_rate=1e-3, remove_unused_columns=False,
                report_to=[], save_strategy="no", disable_tqdm=True, use_cpu=True, logging_strategy="no")
    return TrainingArguments(str(tmp_path / "out"), **{**base, **kw})


# -------------------------------------------------------------------------------------------------- the plan
def test_plan_is_balanced_sized_like_the_data_and_uses_confident_pools():
    labels = [0] * 10 + [1] * 10
    sel = SelectionResult([[1]] * 20, labels[:], [i / 100 for i in range(10)] * 2)
    plan = plan_counterfactuals(sel, labels, [3] * 20, seed=1)
    assert len(plan.specs) == 20
    assert Counter(s.label for s in plan.specs) == {0: 10, 1: 10}
    assert all(labels[s.source] != s.label for s in plan.specs)
    # pools: the 10% most confident of each class (error at or below the 10th percentile) -> documents 0 and 10
    assert plan.pools == {0: [(0, 1)], 1: [(10, 1)]}
    assert all(s.swaps[0][1] in (0, 10) and s.swaps[0][0] == 1 for s in plan.specs)
    assert plan_counterfactuals(sel, labels, [3] * 20, seed=1).specs == plan.specs  # seeded


def test_plan_accounts_for_every_document():
    labels = [0, 0, 0, 1, 1, 1]
    sel = SelectionResult([[0], [0], [1], [0], [0], [0]], [0, 1, 0, 1, 1, 1], [0.1, 0.9, 0.2, 0.1, 0.2, 0.3])
    plan = plan_counterfactuals(sel, labels, [2, 2, 1, 2, 2, 2], size=4)
    assert plan.outcomes[1] == "skipped:misclassified"
    assert plan.outcomes[2] == "skipped:single_sentence"
    assert plan.outcomes[0] == "produced:rationale_swap"
    assert len(plan.specs) == 4 and {s.source for s in plan.specs if s.label == 1} == {0}
    # one class only: no pool to draw from, nothing produced, every document accounted
    one = plan_counterfactuals(SelectionResult([[0]] * 3, [0] * 3, [0.1] * 3), [0] * 3, [2] * 3)
    assert one.specs == [] and set(one.outcomes) == {"skipped:no_other_class_pool"}
    with pytest.raises(ValueError, match="needs prediction errors"):
        plan_counterfactuals(SelectionResult([[0]], [0]), [0], [2])


def test_rationale_set_change_degeneration_and_precision():
    a = SelectionResult([[0], [1], [2]], [0, 0, 1])
    b = SelectionResult([[0], [2], [2]], [0, 0, 1])
    assert rationale_set_change(a, None) is None
    assert rationale_set_change(b, a) == pytest.approx(1 / 3)
    same = SelectionResult([[0]] * 4, [0, 0, 1, 1], [0.1] * 4)
    assert is_degenerate(same, [0, 0, 1, 1], [5] * 4) == (False, 0.0)  # the same sentence for everything is fine
    labels = [0, 1] * 15
    split = SelectionResult([[y] for y in labels], labels, [0.1] * 30)  # bins 0 and 2 of 10: the first-two rule
    flag, gap = is_degenerate(split, labels, [5] * 30)
    assert flag and gap == 1.0
    # The same split on 2 documents a class is what shuffled labels give 1 time in 3: chance, not degeneration,
    # unless the noise floor is turned off (the paper's test as written).
    small = SelectionResult([[0], [1], [0], [1]], [0, 1, 0, 1], [0.1] * 4)
    assert is_degenerate(small, [0, 1, 0, 1], [5] * 4) == (False, 1.0)
    assert is_degenerate(small, [0, 1, 0, 1], [5] * 4, noise_quantile=None) == (True, 1.0)
    assert rationale_precision([[0], [1]], [[True, False], [True, False]]) == 0.5


# ------------------------------------------------------------------------------------------ the augmenter
def test_swap_augmenter_text_and_list_columns():
    docs, labels, _ = reviews(12)
    import dataclasses
    schema = dataclasses.replace(TaskSchema.sentiment(id_column="id"), list_columns=("text",))  # pre-split documents
    data = Dataset.from_dict({"id": [f"r{i}" for i in range(12)], "text": docs,
                              "label": [schema.label_names[y] for y in labels]})
    aug = RationaleSwapAugmenter(FixedSelector(), schema)
    out = aug.augment(data, batch_size=5)
    cfs = out.filter(lambda r: r["cf_is_counterfactual"])
    assert len(cfs) == 12 and Counter(cfs["label"]) == {"negative": 6, "positive": 6}
    for row in cfs:
        edit = json.loads(row["cf_edit"])["swaps"][0]
        assert "food" in edit["old"] and "food" in edit["new"] and edit["old"] != edit["new"]
        assert row["label"] != row["cf_original_label"]
        assert isinstance(row["text"], list) and edit["new"] in row["text"]
    again = RationaleSwapAugmenter(FixedSelector(), schema).augment(data, batch_size=3)
    assert list(again["text"]) == list(out["text"])  # same plan whatever the batch size
    assert AugmentationStats.from_dataset(out).produced["rationale_swap"] == 12
    joined = data.map(lambda r: {"text": " ".join(x.capitalize().replace(" .", ".") for x in r["text"])})
    text_out = RationaleSwapAugmenter(FixedSelector(), TaskSchema.sentiment(id_column="id")).augment(joined)
    assert isinstance(text_out[1]["text"], str) and text_out[1]["cf_kind"] == "rationale_swap"


def test_swap_augmenter_bad_input_and_edge_cases():
    schema = TaskSchema.sentiment()
    aug = RationaleSwapAugmenter(FixedSelector(), schema)
    with pytest.raises(RuntimeError, match="needs fit"):
        Dataset.from_dict({"text": ["a. b."], "label": ["positive"]}).map(aug, batched=True)
    with pytest.raises(TypeError, match="select"):
        RationaleSwapAugmenter(object(), schema)
    data = Dataset.from_dict({"text": ["Only one sentence here.", "The food was good. Nice room.",
                                       "The food was bad. Nice room."], "label": ["positive", "positive", "negative"]})
    out = aug.augment(data)
    assert "skipped:single_sentence" in json.loads(json.dumps(list(out["cf_outcome"])))[0]
    assert aug.stats.events["produced:rationale_swap"] == 2
    with pytest.raises(SchemaError, match="Column 'text' at row 7"):
        aug.sentences(3, row=7)
    long = Dataset.from_dict({"text": ["One. Two. Three. Four.", "Uno. Dos. Tres."], "label": ["positive", "negative"]})
    short = RationaleSwapAugmenter(tiny_selector(max_sentences=2), schema)
    short.augment(long)
    assert short.stats.events["note:sentences_truncated"] == 2
    assert all(s < 2 for sel in short.selection.selected for s in sel)


# ---------------------------------------------------------------------------------------------- the callback
class ScriptedRound(OnlineICDA):
    def select(self, dataset, model, tokenizer):
        sel = super().select(dataset, model, tokenizer)
        return SelectionResult(sel.selected, list(dataset.labels), sel.error)


class Scripted(ICDACallback):
    """Runs the model's own selection (for its errors) but keeps every prediction right, so a tiny untrained model
    still yields counterfactuals; what is tested is that they reach the model."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.round = ScriptedRound(self.round.config, batch_size=self.round.batch_size,
                                   max_length=self.round.max_length)


class Recorder:
    """Wraps a collator; records which counterfactual documents each epoch's batches held."""

    def __init__(self, collate, dataset):
        self.collate, self.dataset, self.seen = collate, dataset, {}

    def __call__(self, items):
        epoch = self.dataset.plan_epoch
        for it in items:
            if it["is_counterfactual"]:
                self.seen.setdefault(epoch, []).append((tuple(it["sentence_ids"]), it["labels"]))
        return self.collate(items)


def test_callback_regenerates_and_the_model_sees_it(tmp_path):
    docs, labels, _ = reviews(24)
    selector = tiny_selector()
    train = CounterfactualEpochDataset(docs, labels)
    rec = Recorder(selector.collator(train.table), train)
    expected = {}

    class Snapshot(Scripted):
        def regenerate(self, epoch, model, tokenizer):
            logs = super().regenerate(epoch, model, tokenizer)
            expected[epoch] = sorted((tuple(train.sentences_of(s)), s.label) for s in train.specs)
            return logs

    # every correct document donates (pool_quantile=1): with 24 documents the default 10% pool can be a single
    # sentence, and two epochs could then draw the same plan by chance
    icda = Snapshot(train, tokenizer=selector.tokenizer, pool_quantile=1.0)
    trainer = Trainer(model=selector.model, args=args(tmp_path), train_dataset=train, data_collator=rec,
                      callbacks=[icda])
    trainer.train()
    assert len(train) == 48
    assert [h["epoch"] for h in icda.history] == [1, 2]
    assert icda.history[0]["icda_delta_A"] is None and icda.history[1]["icda_delta_A"] is not None
    assert 0 not in rec.seen  # the first epoch trains on originals only
    for epoch in (1, 2):
        assert expected[epoch], "no counterfactuals were made"
        assert sorted(rec.seen[epoch]) == expected[epoch]  # every regenerated row was trained on, nothing else
    assert expected[1] != expected[2]  # fresh draws each epoch
    logged = [h for h in trainer.state.log_history if "icda_counterfactuals" in h]  # through Trainer.log
    assert [h["epoch"] for h in logged] == [1.0, 2.0] and "icda_delta_A" in logged[1]


def test_callback_refuses_stale_data_setups(tmp_path):
    docs, labels, _ = reviews(8)
    selector = tiny_selector()
    train = CounterfactualEpochDataset(docs, labels)
    bad = args(tmp_path, dataloader_num_workers=1, dataloader_persistent_workers=True)
    trainer = Trainer(model=selector.model, args=bad, train_dataset=train,
                      data_collator=selector.collator(train.table), callbacks=[ICDACallback(train)])
    with pytest.raises(ValueError, match="persistent"):
        trainer.train()
    other = CounterfactualEpochDataset(docs, labels, table=train.table)
    trainer = Trainer(model=selector.model, args=args(tmp_path), train_dataset=other,
                      data_collator=selector.collator(train.table), callbacks=[ICDACallback(train)])
    with pytest.raises(ValueError, match="not the CounterfactualEpochDataset"):
        trainer.train()
    with pytest.raises(TypeError):
        ICDACallback(list(range(3)))
    with pytest.raises(ValueError, match="no non-empty sentence"):
        CounterfactualEpochDataset([["", " "]], [0])


def test_callback_resume_from_checkpoint_continues_with_the_same_counterfactuals(tmp_path):
    docs, labels, _ = reviews(24)
    steps_per_epoch = 48 // 8

    def run(resume=None, max_epochs=3):
        selector = tiny_selector()
        train = CounterfactualEpochDataset(docs, labels)
        icda = Scripted(train, tokenizer=selector.tokenizer)
        trainer = Trainer(model=selector.model, args=args(tmp_path, save_strategy="steps", save_steps=9,
                                                          num_train_epochs=max_epochs),
                          train_dataset=train, data_collator=selector.collator(train.table), callbacks=[icda])
        trainer.train(resume_from_checkpoint=resume)
        return train, icda

    full_train, full = run()
    ckpt = tmp_path / "out" / "checkpoint-9"  # mid-way through epoch 1 (steps 6..11)
    saved = json.loads((ckpt / "trainer_state.json").read_text())["stateful_callbacks"]["Scripted"]["cfaug"]
    assert saved["plan_epoch"] == 1 and 9 // steps_per_epoch == 1 and saved["specs"]
    resumed_train, resumed = run(resume=str(ckpt))
    # the resumed epoch was not redrawn: its plan came from the checkpoint
    assert [h["epoch"] for h in resumed.history] == [1, 2]
    assert resumed.history[0] == full.history[0]
    assert resumed.history[1]["icda_delta_A"] is not None
    (tmp_path / "elsewhere").mkdir()
    selector = tiny_selector()
    train = CounterfactualEpochDataset(docs, labels)
    trainer = Trainer(model=selector.model, args=args(tmp_path / "elsewhere", num_train_epochs=3),
                      train_dataset=train, data_collator=selector.collator(train.table),
                      callbacks=[ICDACallback(train)])
    import shutil
    shutil.copytree(ckpt, tmp_path / "elsewhere" / "ckpt")
    state_path = tmp_path / "elsewhere" / "ckpt" / "trainer_state.json"
    trainer_state = json.loads(state_path.read_text())
    trainer_state["stateful_callbacks"].pop("Scripted")  # a checkpoint written without the callback
    state_path.write_text(json.dumps(trainer_state))
    with pytest.raises(FileNotFoundError, match="has no ICDACallback state"):
        trainer.train(resume_from_checkpoint=str(tmp_path / "elsewhere" / "ckpt"))


def test_a_checkpoint_written_by_release_0_1_0_resumes_from_its_state_file(tmp_path):
    """0.1.0 kept the callback's state in icda_state.json beside the checkpoint, not in trainer_state.json."""
    import shutil

    docs, labels, _ = reviews(24)

    def trainer(train, icda, epochs):
        selector = tiny_selector()
        return Trainer(model=selector.model, args=args(tmp_path, save_strategy="steps", save_steps=9,
                                                       num_train_epochs=epochs),
                       train_dataset=train, data_collator=selector.collator(train.table), callbacks=[icda])

    train = CounterfactualEpochDataset(docs, labels)
    first = Scripted(train, tokenizer=tiny_selector().tokenizer)
    trainer(train, first, 2).train()
    ckpt = tmp_path / "out" / "checkpoint-9"
    state_path = ckpt / "trainer_state.json"
    trainer_state = json.loads(state_path.read_text())
    old = trainer_state["stateful_callbacks"].pop("Scripted")["cfaug"]
    state_path.write_text(json.dumps(trainer_state))
    (ckpt / STATE_FILE).write_text(json.dumps(old))
    for later in sorted((tmp_path / "out").glob("checkpoint-*")):
        if later != ckpt:
            shutil.rmtree(later)
    train = CounterfactualEpochDataset(docs, labels)
    resumed = Scripted(train, tokenizer=tiny_selector().tokenizer)
    trainer(train, resumed, 2).train(resume_from_checkpoint=True)
    assert resumed.history[0] == first.history[0] and [h["epoch"] for h in resumed.history] == [1]


def test_attach_logs_through_the_trainer_and_refuses_callback_rebuilding(tmp_path):
    docs, labels, _ = reviews(8)
    selector = tiny_selector()
    train = CounterfactualEpochDataset(docs, labels)
    icda = Scripted(train, tokenizer=selector.tokenizer)
    trainer = Trainer(model=selector.model, args=args(tmp_path, num_train_epochs=2), train_dataset=train,
                      data_collator=selector.collator(train.table))
    trainer.add_callback(icda.attach(trainer))
    logged = []
    original = trainer.log
    trainer.log = lambda logs, *a, **k: (logged.append(dict(logs)), original(logs, *a, **k))[1]
    trainer.train()
    assert any("icda_counterfactuals" in entry for entry in logged)
    with pytest.raises(ValueError, match="restore_callback_states_from_checkpoint"):
        Trainer(model=selector.model, args=args(tmp_path, restore_callback_states_from_checkpoint=True),
                train_dataset=train, data_collator=selector.collator(train.table),
                callbacks=[ICDACallback(train)])


def test_callback_with_any_sequence_classifier_uses_occlusion(tmp_path):
    docs, labels, _ = reviews(16)
    model, tok = tiny_classifier(("negative", "positive"))
    train = CounterfactualEpochDataset(docs, labels)
    icda = ICDACallback(train, tokenizer=tok)
    trainer = Trainer(model=model, args=args(tmp_path, num_train_epochs=2), train_dataset=train,
                      data_collator=JoinedTextCollator(tok, train.table), callbacks=[icda])
    trainer.train()
    assert icda.history[0]["epoch"] == 1 and icda.history[0]["icda_counterfactuals"] <= 16


def test_frozen_encoder_fast_path_matches_reencoding():
    docs, labels, _ = reviews(6)
    selector = tiny_selector(freeze_encoder=True)
    train = CounterfactualEpochDataset(docs, labels)
    slow = selector.select(train.docs, train.labels, table=train.table)
    selector.embed_table(train.table)
    fast = selector.select(train.docs, train.labels, table=train.table)
    assert fast.selected == slow.selected and fast.predicted == slow.predicted
    assert fast.error == pytest.approx(slow.error, abs=1e-5)
    with pytest.raises(ValueError, match="freeze_encoder=True"):
        tiny_selector().embed_table(train.table)


def test_rationale_selector_save_load(tmp_path):
    selector = tiny_selector()
    selector.training_info = {"iterations": 2}
    selector.save_pretrained(tmp_path / "sel")
    back = RationaleSelector.from_pretrained(tmp_path / "sel")
    docs, labels, _ = reviews(4)
    assert back.select(docs, labels).selected == selector.select(docs, labels).selected
    assert back.training_info == {"iterations": 2} and back.label_names == ["negative", "positive"]
    assert not list((tmp_path / "sel").glob("*.bin"))
    # the training record under the key every component uses; a folder saved with the old key still loads
    config_file = tmp_path / "sel" / "cfaug_rationale.json"
    config = json.loads(config_file.read_text())
    assert config["training"] == {"iterations": 2} and "training_info" not in config
    config["training_info"] = config.pop("training")
    config_file.write_text(json.dumps(config))
    assert RationaleSelector.from_pretrained(tmp_path / "sel").training_info == {"iterations": 2}


# ------------------------------------------------------------------------------------------------ the driver
def test_run_icda_iterates_picks_and_stops(tmp_path):
    docs, labels, truth = reviews(24)
    dev_docs, dev_labels, _ = reviews(12, seed=1)
    calls = []

    def on_iteration(k, selector):
        calls.append(k)
        return {"precision": rationale_precision(selector.select(docs, labels).selected, truth)}

    result = run_icda(docs, labels, dev_docs, dev_labels, lambda seed: tiny_selector(seed, freeze_encoder=True),
                      seeds=(0, 1), max_iterations=3, max_epochs=2, patience=1, output_dir=tmp_path,
                      batch_size=8, samples_per_step=8, learning_rate=1e-3, training_args={"use_cpu": True},
                      on_iteration=on_iteration)
    iterations = sorted({r.iteration for r in result.runs})
    assert calls == iterations and len(result.selectors) == len(iterations)
    assert [len([r for r in result.runs if r.iteration == k]) for k in iterations] == [2] + [3] * (len(iterations) - 1)
    assert [sum(r.chosen for r in result.runs if r.iteration == k) for k in iterations] == [1] * len(iterations)
    assert all(r.warm_start == (r.initial_dev_loss is not None) for r in result.runs)
    assert all(r.epochs_run <= 2 for r in result.runs)
    assert result.stopped
    assert all(0 <= m["precision"] <= 1 for m in result.metrics)


def _quick_learner(seed):
    """A selector that learns the test reviews in a few epochs, so iteration 1 has counterfactuals."""
    torch.manual_seed(seed)
    return RationaleSelector.from_encoder(tiny_word_encoder(), label_names=["negative", "positive"],
                                          sentence_layers=1, sentence_heads=2, max_sentence_tokens=12,
                                          freeze_encoder=True, gate="softmax")


def test_run_icda_never_iterates_on_a_degenerate_selector(tmp_path, monkeypatch):
    import cfaug_hf.methods.icda.driver as driver

    real = driver.train_selector

    def degenerate_after_iteration_0(selector, train, dev, **kw):
        fit = real(selector, train, dev, **kw)
        if "iter0" not in str(kw["output_dir"]):
            fit.degenerate = True
        return fit

    monkeypatch.setattr(driver, "train_selector", degenerate_after_iteration_0)
    docs, labels, _ = reviews(24)
    dev_docs, dev_labels, _ = reviews(12, seed=1)
    result = run_icda(docs, labels, dev_docs, dev_labels, _quick_learner, seeds=(0,), max_iterations=3, max_epochs=10,
                      patience=10, output_dir=tmp_path, batch_size=8, samples_per_step=8, learning_rate=1e-2,
                      training_args={"use_cpu": True})
    assert "every run was degenerate" in result.stopped, result.stopped
    assert len(result.selectors) == 1 and [r.iteration for r in result.runs] == [0, 1, 1]
    assert not any(r.chosen for r in result.runs if r.iteration == 1)


def test_run_icda_never_keeps_a_fresh_run_that_learned_nothing(tmp_path, monkeypatch):
    # Seen on connect: at iteration 1 the warm start was degenerate and the fresh run earned no checkpoint, so the
    # kept "selector" was a random initialisation (precision 2.8%, accuracy 51%) and the next iteration built on it.
    import cfaug_hf.methods.icda.driver as driver

    real = driver.train_selector

    def later_runs_fail(selector, train, dev, **kw):
        fit = real(selector, train, dev, **kw)
        if "iter0" not in str(kw["output_dir"]):
            if str(kw["output_dir"]).endswith("-1"):  # the warm start's folder
                fit.degenerate = True
            else:
                fit.best_epoch = -1  # as if no epoch beat the start
        return fit

    monkeypatch.setattr(driver, "train_selector", later_runs_fail)
    docs, labels, _ = reviews(24)
    dev_docs, dev_labels, _ = reviews(12, seed=1)

    result = run_icda(docs, labels, dev_docs, dev_labels, _quick_learner, seeds=(0,), max_iterations=3, max_epochs=10,
                      patience=10, output_dir=tmp_path, batch_size=8, samples_per_step=8, learning_rate=1e-2,
                      training_args={"use_cpu": True})
    assert "learned nothing" in result.stopped, result.stopped
    assert len(result.selectors) == 1 and not any(r.chosen for r in result.runs if r.iteration == 1)


def test_epoch_dataset_from_a_dataset_and_schema_names_bad_cells():
    from cfaug_hf import SchemaError

    schema = TaskSchema.sentiment()
    good = Dataset.from_dict({"text": ["Good food. Nice room.", "Bad food. Nice room."],
                              "label": ["positive", "negative"]})
    ds = CounterfactualEpochDataset.from_dataset(good, schema)
    assert ds.labels == [1, 0] and len(ds) == 4
    bad = Dataset.from_dict({"text": ["Good food.", ""], "label": ["positive", "negative"]})
    with pytest.raises(SchemaError, match="Column 'text' at row 1"):
        CounterfactualEpochDataset.from_dataset(bad, schema)
    with pytest.raises(SchemaError, match="Column 'label' at row 1: unknown label 'meh'"):
        CounterfactualEpochDataset.from_dataset(good.map(lambda y, i: {"label": "meh" if i else y},
                                                         input_columns="label", with_indices=True), schema)


def test_callback_takes_the_augmenters_config():
    from cfaug_hf import ICDAConfig
    from trainer_callbacks import ICDACallback

    docs, labels, _ = reviews(8)
    train = CounterfactualEpochDataset(docs, labels)
    cb = ICDACallback(train, config=ICDAConfig(seed=7, pool_quantile=0.5))
    assert (cb.config.seed, cb.config.pool_quantile) == (7, 0.5)
    assert ICDACallback(train, seed=3).config.seed == 3  # keywords still work, as overrides


def test_the_callbacks_counterfactuals_follow_the_selectors_weights():
    """Between epochs only the selector changes (same epoch, same seed, so the donor draw is fixed): the rationale
    positions it selects change, and every counterfactual swaps exactly the positions the new selection names, so
    the epoch-to-epoch change comes from the weights, not from reseeding the donors alone."""
    import torch

    from cfaug_hf import RationaleSelector
    from cfaug_hf.methods.icda import CounterfactualEpochDataset
    from cfaug_hf.testing import tiny_encoder
    from trainer_callbacks import ICDACallback

    import math
    import random
    import statistics

    from cfaug_hf.testing import TINY_VOCAB

    torch.manual_seed(0)
    selector = RationaleSelector.from_encoder(tiny_encoder(), sentence_layers=1, sentence_heads=2)
    model = selector.model.eval()
    rng = random.Random(0)
    vocab = [w for w in TINY_VOCAB[7:] if w.isalpha()]
    docs = [[" ".join(rng.choice(vocab) for _ in range(6)) + " ." for _ in range(3)] for _ in range(16)]
    # An untrained classifier calls every document one class; centre its bias so that it splits them, and take
    # its predictions as the labels, so that both classes have correctly classified documents (donor pools).
    probe = ICDACallback(CounterfactualEpochDataset(docs, [0] * 16), tokenizer=selector.tokenizer)
    odds = [math.log(max(1 - e, 1e-6) / max(e, 1e-6)) for e in probe.round.select(probe.dataset, model, selector.tokenizer).error]
    with torch.no_grad():
        model.classifier.bias[0] -= statistics.median(odds)
    labels = probe.round.select(probe.dataset, model, selector.tokenizer).predicted
    assert 0 < sum(labels) < 16
    ds = CounterfactualEpochDataset(docs, labels)
    icda = ICDACallback(ds, tokenizer=selector.tokenizer, pool_quantile=1.0)

    def plan():
        made, _ = icda.round.run(icda.dataset, model, selector.tokenizer, epoch=1)
        return icda.round.previous.selected, made.specs

    before, specs_before = plan()
    again, specs_again = plan()
    assert (again, specs_again) == (before, specs_before)  # nothing else moves the plan
    with torch.no_grad():
        torch.manual_seed(1)
        model.selector.weight.copy_(torch.randn_like(model.selector.weight) * 5)
    after, specs_after = plan()
    assert after != before, "the new weights select the same sentences everywhere"
    assert specs_after, "no counterfactual was planned"
    for spec in specs_after:
        assert {pos for pos, _, _ in spec.swaps} == set(after[spec.source])
    assert specs_after != specs_before


def test_a_swap_that_changes_nothing_writes_no_counterfactual():
    """A donor sentence equal to the one it replaces would give the original text with the other label."""
    from cfaug_hf.methods.icda.selection import SelectionResult

    class Second:
        def select(self, documents, labels=None):
            return SelectionResult([[1] for _ in documents], list(labels), [0.0] * len(documents))

    data = Dataset.from_dict({"text": ["Great food. Nice room.", "Awful food. Nice room."],
                              "label": ["positive", "negative"]})
    aug = RationaleSwapAugmenter(Second())
    out = aug.augment(data)
    assert len(out) == 2 and not any(out["cf_is_counterfactual"])
    assert aug.stats.events["skipped:swap_unchanged"] == 2 and "produced:rationale_swap" not in aug.stats.events


def test_no_planned_swap_gives_back_the_original_sentence_on_any_path():
    """The class of the bug above: the augmenter, the iteration driver's training sets and the per-epoch redraw
    all plan through plan_counterfactuals, which now redraws a donor equal to the sentence it replaces."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from cfaug_hf.methods.icda.selection import plan_counterfactuals

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.lists(st.sampled_from("abcd"), min_size=2, max_size=4), min_size=4, max_size=12),
           st.integers(0, 1000))
    def prop(docs, seed):
        labels = [i % 2 for i in range(len(docs))]
        result = SelectionResult([[i % len(d)] for i, d in enumerate(docs)], labels, [0.01 * i for i in
                                                                                      range(len(docs))])
        plan = plan_counterfactuals(result, labels, [len(d) for d in docs], pool_quantile=1.0, seed=seed,
                                    sentences=docs)
        for spec in plan.specs:
            new = list(docs[spec.source])
            for pos, donor, donor_pos in spec.swaps:
                new[pos] = docs[donor][donor_pos]
            assert new != docs[spec.source]
        unchanged = [d for d, o in enumerate(plan.outcomes) if o == "skipped:swap_unchanged"]
        for d in unchanged:  # only when every donor of the other class is the document's own sentence
            other = {docs[e][result.selected[e][0]] for e in range(len(docs)) if labels[e] != labels[d]}
            assert other == {docs[d][result.selected[d][0]]}

    prop()
