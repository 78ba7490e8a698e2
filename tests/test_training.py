import pytest
from datasets import Dataset

from cfaug_hf import Generator, LabelChecker, TaskSchema
from cfaug_hf.testing import tiny_causal_lm, tiny_classifier, tiny_seq2seq
from cfaug_hf.training import bidirectional_pairs, time_budget_callback, train_checker, train_generator

QUIET = {"disable_tqdm": True, "logging_strategy": "no"}


def pairs(n=16):
    return Dataset.from_dict({"source": ["the cat sat on the mat"] * n, "target": ["the dog ran"] * n})


def test_bidirectional_pairs():
    ds = bidirectional_pairs(Dataset.from_dict({"source": ["a"], "target": ["b"], "x": [1]}))
    assert list(ds["source"]) == ["a", "b"] and list(ds["target"]) == ["b", "a"] and list(ds["x"]) == [1, 1]


def test_seq2seq_generator_learns_the_mapping():
    gen = Generator(*tiny_seq2seq(), num_beams=1, max_new_tokens=6)
    gen = train_generator(gen, pairs(32), max_steps=60, batch_size=8, learning_rate=5e-3, training_args=QUIET)
    assert gen.generate(["the cat sat on the mat"]) == [["the dog ran"]]
    assert gen.training_info["train_loss"] < 3 and gen.training_info["global_step"] == 60


def test_causal_generator_with_lora_trains_adapter_only_and_round_trips(tmp_path):
    import torch

    model, tok = tiny_causal_lm()
    model.save_pretrained(tmp_path / "base")
    tok.save_pretrained(tmp_path / "base")
    gen = Generator.from_base(str(tmp_path / "base"), input_template="{text} :", num_beams=1, max_new_tokens=6)
    before = {k: v.clone() for k, v in gen.model.state_dict().items()}
    gen = train_generator(gen, pairs(32), lora=True, max_steps=30, batch_size=8, learning_rate=2e-2,
                          training_args=QUIET, eval_dataset=pairs(4))
    after = gen.model.state_dict()
    base_keys = [k for k in after if "lora_" not in k]
    assert all(torch.equal(after[k], before[k.replace("base_model.model.", "").replace(".base_layer", "")])
               for k in base_keys)
    assert any("lora_B" in k and after[k].abs().sum() > 0 for k in after)  # the adapter moved off zero
    assert gen.training_info["lora"]["r"] == 16 and "eval_loss" in gen.training_info
    back = Generator.from_pretrained(gen.save_pretrained(tmp_path / "gen"))
    assert back.base_model == str(tmp_path / "base")
    assert back.generate(["the cat sat on the mat"]) == gen.generate(["the cat sat on the mat"])


def test_train_generator_checks_columns():
    with pytest.raises(ValueError, match=r"column\(s\) \['target'\] are missing"):
        train_generator(Generator(*tiny_seq2seq()), Dataset.from_dict({"source": ["a"]}))


def test_time_budget_stops_training():
    gen = train_generator(Generator(*tiny_seq2seq()), pairs(64), max_steps=10_000, batch_size=2,
                          callbacks=[time_budget_callback(0.0)], training_args=QUIET)
    assert gen.training_info["global_step"] == 1


def test_train_checker_learns_pairs():
    rows = Dataset.from_dict({"claim": ["the cat sat", "the dog ran"] * 16,
                              "evidence": [["the cat sat on the mat"], ["the cat sat on the mat"]] * 16,
                              "label": [0, 1] * 16})
    checker = train_checker(LabelChecker(*tiny_classifier()), rows, TaskSchema.fact_verification(),
                            eval_dataset=rows.select(range(4)), max_steps=80, batch_size=8, learning_rate=5e-3,
                            training_args=QUIET)
    assert checker.predict(["the cat sat", "the dog ran"], ["the cat sat on the mat"] * 2) == ["SUPPORTS", "REFUTES"]
    assert checker.training_info["eval_accuracy"] == 1.0


def test_train_checker_rejects_bad_rows():
    rows = Dataset.from_dict({"claim": ["a", ""], "evidence": ["e", "e"], "label": ["SUPPORTS", "REFUTES"]})
    with pytest.raises(ValueError, match="Column 'claim' at row 1"):
        train_checker(LabelChecker(*tiny_classifier()), rows, TaskSchema.fact_verification(), max_steps=1)


def test_a_stopped_editor_run_resumed_from_its_checkpoint_ends_where_an_unbroken_run_does(tmp_path):
    """Hours of CPU training survive an interruption: the resumed run has the unbroken run's optimiser state, schedule
    and data order, so its weights are the same (LoRA, as the shipped editors are trained)."""
    import torch
    from transformers import TrainerCallback

    from cfaug_hf import Editor
    from cfaug_hf.training import train_editor

    class StopAt(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            control.should_training_stop = state.global_step >= 2

    pairs = Dataset.from_dict({"text": [f"It was dull {i}." for i in range(12)], "target": ["positive"] * 12,
                               "counterfactual": [f"It was gripping {i}." for i in range(12)]})
    args = {"disable_tqdm": True, "logging_strategy": "no", "save_steps": 2, "save_strategy": "steps"}

    def run(folder, **kwargs):
        editor = Editor(*tiny_causal_lm())
        return train_editor(editor, pairs, max_steps=4, batch_size=2, seed=3, lora=True, training_args=args,
                            output_dir=str(tmp_path / folder), **kwargs)

    unbroken = run("a")
    stopped = run("b", callbacks=[StopAt()]).model.state_dict()
    assert (tmp_path / "b" / "checkpoint-2").is_dir()
    resumed = run("b", resume_from_checkpoint=True)
    assert resumed.training_info["global_step"] == unbroken.training_info["global_step"] == 4
    a, b = unbroken.model.state_dict(), resumed.model.state_dict()
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    assert not all(torch.allclose(a[k], stopped[k], atol=1e-6) for k in a)  # steps 3-4 did move the weights
    with pytest.raises(ValueError, match="checkpoint"):
        run("empty", resume_from_checkpoint=True)
