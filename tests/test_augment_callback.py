"""AugmentationCallback: any augmenter regenerating inside a plain Trainer, sampling and hard modes, resume."""

from __future__ import annotations

import pytest
from datasets import Dataset
from transformers import Trainer, TrainingArguments

from cfaug_hf import CrossAugAugmenter, RationaleSwapAugmenter, TaskSchema
from cfaug_hf.testing import NegateAugmenter, tiny_classifier
from trainer_callbacks import AugmentationCallback, AugmentedEpochDataset, SchemaCollator

FV = TaskSchema.fact_verification()


class Recorder:
    """A collator wrapper that remembers which counterfactual rows each epoch trained on."""

    def __init__(self, collator, trainer_state):
        self.collator, self.state, self.seen = collator, trainer_state, {}

    def __call__(self, items):
        epoch = int(self.state().epoch or 0)
        self.seen.setdefault(epoch, []).extend(it["claim"] if "claim" in it else it["text"]
                                               for it in items if it["is_counterfactual"])
        return self.collator(items)


def args(tmp_path, epochs=3, **kw):
    settings = dict(num_train_epochs=epochs, per_device_train_batch_size=4, remove_unused_columns=False, report_to=[],
                    save_strategy="no", disable_tqdm=True, use_cpu=True, logging_strategy="no")
    return TrainingArguments(str(tmp_path / "run"), **{**settings, **kw})


class SeededRewriter:
    """A text generator (the spine's protocol) that samples a replacement word from each row's seed."""

    WORDS = ["london", "rome", "berlin", "madrid", "oslo", "vienna"]

    def generate_with_info(self, texts, *, seeds=None, constraints=None):
        import random

        from cfaug_hf.generation import GenerationResult

        out = [[t.replace("the", random.Random(s).choice(self.WORDS), 1)] for t, s in zip(texts, seeds)]
        return GenerationResult(out, [False] * len(texts), [[False] for _ in texts])


class FirstSentence:
    """A rationale selector stand-in: sentence 0, always right and confident."""

    def select(self, documents, labels=None):
        from cfaug_hf.text.sentences import SelectionResult

        return SelectionResult([[0] for _ in documents], list(labels), [0.0] * len(documents))


def fever(n=8):
    words = ["the cat sat on the mat", "the dog ran in paris", "the film was good", "the king lived in london"]
    return Dataset.from_dict({"claim": [words[i % 4] for i in range(n)],
                              "evidence": [words[i % 4] + " ." for i in range(n)], "label": ["SUPPORTS"] * n})


def test_crossaug_sampling_mode_gives_fresh_counterfactuals_each_epoch(tmp_path):
    train = AugmentedEpochDataset(fever(), FV)
    callback = AugmentationCallback(CrossAugAugmenter(SeededRewriter(), FV), train)
    model, tok = tiny_classifier(("SUPPORTS", "REFUTES"))
    trainer = Trainer(model=model, args=args(tmp_path), train_dataset=train, callbacks=[callback],
                      data_collator=SchemaCollator(tok, FV))
    rec = Recorder(trainer.data_collator, lambda: trainer.state)
    trainer.data_collator = rec
    trainer.train()
    assert [h["epoch"] for h in callback.history] == [0, 1, 2]
    assert all(h["cfaug_counterfactuals"] > 0 for h in callback.history)
    assert len(set(map(tuple, (sorted(rec.seen[e]) for e in range(3))))) > 1  # not the same rows every epoch
    logged = [h for h in trainer.state.log_history if "cfaug_counterfactuals" in h]
    assert len(logged) == 3 and "cfaug_regeneration_share" in callback.history[0]


def test_hard_mode_keeps_what_the_model_gets_wrong(tmp_path):
    import torch

    schema = TaskSchema.sentiment()
    data = Dataset.from_dict({"text": ["the film was good", "the film was bad", "a film"] * 4,
                              "label": ["positive", "negative", "positive"] * 4})
    train = AugmentedEpochDataset(data, schema)
    model, tok = tiny_classifier(("negative", "positive"))
    with torch.no_grad():  # a model that always says positive: only counterfactuals labelled negative are hard
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([-5.0, 5.0]))
    callback = AugmentationCallback(NegateAugmenter(schema), train, mode="hard", tokenizer=tok)
    callback.on_epoch_begin(args(tmp_path), type("S", (), {"epoch": 0.0, "global_step": 0, "log_history": []})(),
                            None, model=model)
    assert train.slots and all(r["label"] == "negative" for r in train.slots)
    assert callback.history[0]["cfaug_generated"] == 8 and callback.history[0]["cfaug_counterfactuals"] == 4


def test_icda_through_the_generic_callback(tmp_path):
    schema = TaskSchema.sentiment()
    good, bad = "The food was good.", "The food was bad."
    data = Dataset.from_dict({"text": [f"{good if i % 2 else bad} The room was clean." for i in range(8)],
                              "label": ["positive" if i % 2 else "negative" for i in range(8)]})
    train = AugmentedEpochDataset(data, schema)
    callback = AugmentationCallback(RationaleSwapAugmenter(FirstSentence(), schema), train)
    model, tok = tiny_classifier(("negative", "positive"))
    Trainer(model=model, args=args(tmp_path, epochs=2), train_dataset=train, callbacks=[callback],
            data_collator=SchemaCollator(tok, schema)).train()
    assert [h["epoch"] for h in callback.history] == [0, 1] and callback.history[0]["cfaug_counterfactuals"] > 0


def test_resume_restores_the_slots(tmp_path):
    schema = TaskSchema.sentiment()
    data = Dataset.from_dict({"text": ["the film was good", "the film was bad"] * 4,
                              "label": ["positive", "negative"] * 4})
    train = AugmentedEpochDataset(data, schema)
    callback = AugmentationCallback(NegateAugmenter(schema), train)
    model, tok = tiny_classifier(("negative", "positive"))
    run_args = args(tmp_path, epochs=2, save_strategy="epoch")
    Trainer(model=model, args=run_args, train_dataset=train, callbacks=[callback],
            data_collator=SchemaCollator(tok, schema)).train()
    slots = list(train.slots)
    fresh = AugmentedEpochDataset(data, schema)
    again = AugmentationCallback(NegateAugmenter(schema), fresh)
    checkpoint = sorted((tmp_path / "run").glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))[0]
    import json

    saved = json.loads((checkpoint / "trainer_state.json").read_text())["stateful_callbacks"]["AugmentationCallback"]
    again._apply(saved["cfaug"], "trainer_state.json")
    assert fresh.plan_epoch == 0 and len(fresh.slots) == len(slots)


def test_bad_setups():
    schema = TaskSchema.sentiment()
    data = Dataset.from_dict({"text": ["good"], "label": ["positive"]})
    with pytest.raises(TypeError, match="drives a cfaug_hf Augmenter"):
        AugmentationCallback(lambda b: b, AugmentedEpochDataset(data, schema))
    with pytest.raises(ValueError, match="mode must be 'sampling' or 'hard'"):
        AugmentationCallback(NegateAugmenter(schema), AugmentedEpochDataset(data, schema), mode="fast")
    with pytest.raises(ValueError, match="pass the original data"):
        AugmentedEpochDataset(data.map(NegateAugmenter(schema), batched=True), schema)
    with pytest.raises(ValueError, match="labels .* differ"):
        AugmentationCallback(NegateAugmenter(TaskSchema.sentiment(label_names=("neg", "pos"))),
                             AugmentedEpochDataset(data, schema))


def test_resume_reads_the_checkpoint_the_trainer_resumes_from_and_notices_changed_data(tmp_path, caplog):
    """Reported: the callback restored its state from ``output_dir/checkpoint-N``, not from the checkpoint passed to
    ``resume_from_checkpoint``, and did not notice that the training data changed since. Two runs with different
    seeds write checkpoints of the same step numbers; resuming run B's Trainer from run A's checkpoint must restore
    A's counterfactuals; the same resume with other data is refused, or regenerated when asked."""
    import json

    from cfaug_hf import CrossAugAugmenter

    def trainer(out, data, seed, **cb):
        train = AugmentedEpochDataset(data, FV)
        callback = AugmentationCallback(CrossAugAugmenter(SeededRewriter(), FV, seed=seed, checker=None), train, **cb)
        model, tok = tiny_classifier(("SUPPORTS", "REFUTES"))
        run = Trainer(model=model, args=args(out, epochs=2, save_strategy="epoch"), train_dataset=train,
                      callbacks=[callback], data_collator=SchemaCollator(tok, FV))
        return run, train, callback

    data = fever(8)
    run_a, train_a, _ = trainer(tmp_path / "a", data, seed=1)
    run_a.train()
    run_b, _, _ = trainer(tmp_path / "b", data, seed=2)
    run_b.train()
    first = sorted((tmp_path / "a" / "run").glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))[0]
    def saved(folder):  # the callback's state, kept by the Trainer in the checkpoint's trainer_state.json
        return json.loads((folder / "trainer_state.json").read_text())["stateful_callbacks"]["AugmentationCallback"][
            "cfaug"]

    saved_a = saved(first)
    other = tmp_path / "b" / "run" / first.name
    assert saved(other)["slots"] != saved_a["slots"]
    resumed, train, callback = trainer(tmp_path / "b", data, seed=2)
    restored = []
    original = AugmentedEpochDataset.set_counterfactuals

    def spy(self, rows, epoch):
        restored.append((epoch, list(rows)))
        return original(self, rows, epoch)

    AugmentedEpochDataset.set_counterfactuals = spy
    try:
        resumed.train(resume_from_checkpoint=str(first))
    finally:
        AugmentedEpochDataset.set_counterfactuals = original
    assert restored[0] == (saved_a["plan_epoch"], saved_a["slots"])  # run A's, not run B's checkpoint of that step
    changed = fever(8).map(lambda r: {"claim": r["claim"] + " today"})
    refused, _, _ = trainer(tmp_path / "c", changed, seed=1)
    with pytest.raises(ValueError, match="was written for other training data"):
        refused.train(resume_from_checkpoint=str(first))
    regenerated, train_c, callback_c = trainer(tmp_path / "d", changed, seed=1, on_data_change="regenerate")
    regenerated.train(resume_from_checkpoint=str(first))
    assert "the training data changed since" in caplog.text
    assert all("today" in row["claim"] for row in train_c.slots if row)


def test_a_damaged_state_file_names_itself(tmp_path):
    data = fever(8)
    train = AugmentedEpochDataset(data, FV)
    callback = AugmentationCallback(CrossAugAugmenter(SeededRewriter(), FV, checker=None), train)
    for text, match in (("{not json", "is not valid JSON"), ("[1, 2]", "is not a AugmentationCallback state"),
                        ('{"history": [], "slots": 3}', "is incomplete or damaged")):
        (tmp_path / AugmentationCallback.state_file).write_text(text)
        with pytest.raises(ValueError, match=f"{AugmentationCallback.state_file}.*{match}|{match}"):
            callback._restore(tmp_path)


def test_a_regenerating_callback_must_say_how_it_regenerates():
    """RegenerationCallback is abstract: a subclass without regenerate() is refused when built, not at epoch 1."""
    from trainer_callbacks import RegenerationCallback

    class Forgetful(RegenerationCallback):
        pass

    with pytest.raises(TypeError, match="regenerate"):
        Forgetful(AugmentedEpochDataset(Dataset.from_dict({"text": ["good"], "label": ["positive"]}),
                                        TaskSchema.sentiment()))
