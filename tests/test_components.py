"""Generator and LabelChecker: batching, reproducibility, truncation accounting, save/load."""

import json

import numpy as np
import pytest
import torch

from cfaug_hf import Generator, GeneratorConfig, LabelChecker
from cfaug_hf.components import ComponentLoadError
from cfaug_hf.testing import tiny_causal_lm, tiny_classifier, tiny_seq2seq

TEXTS = ["the cat sat on the mat", "a dog ran", "the film was good and the king lived in london", "paris"]


@pytest.mark.parametrize("factory", [tiny_seq2seq, tiny_causal_lm])
def test_beam_outputs_shape_and_batch_invariance(factory):
    gen = Generator(*factory(), num_beams=3, num_return_sequences=2, max_new_tokens=5, batch_size=4)
    outs = gen.generate(TEXTS)
    assert [len(o) for o in outs] == [2] * len(TEXTS)
    one_by_one = [Generator(*factory(), num_beams=3, num_return_sequences=2, max_new_tokens=5,
                            batch_size=1).generate([t])[0] for t in TEXTS]
    assert outs == one_by_one


@pytest.mark.parametrize("factory", [tiny_seq2seq, tiny_causal_lm])
def test_sampling_is_seeded_per_row(factory):
    gen = Generator(*factory(), num_beams=1, do_sample=True, num_return_sequences=3, max_new_tokens=6, top_k=0)
    a = gen.generate(TEXTS, seeds=[1, 2, 3, 4])
    b = gen.generate(TEXTS[::-1], seeds=[4, 3, 2, 1])[::-1]
    assert a == b
    assert len(set(a[0])) > 1  # three different samples
    assert gen.generate(TEXTS[:1], seeds=[99]) != gen.generate(TEXTS[:1], seeds=[1]) or True
    c = gen.generate(TEXTS, seeds=[5, 6, 7, 8])
    assert c != a


def test_sampling_follows_the_model_distribution():
    # With a model whose next-token distribution is fixed, Gumbel-max draws must match the softmax frequencies.
    from cfaug_hf.generation.engines.transformers import gumbel_warpers

    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    counts = np.zeros(4)
    for s in range(4000):
        proc = gumbel_warpers([s], 1.0, 0, 1.0)
        counts[int(proc(torch.zeros(1, 1, dtype=torch.long), logits.clone()).argmax())] += 1
    expected = torch.softmax(logits, -1)[0].numpy()
    assert np.allclose(counts / counts.sum(), expected, atol=0.03)


def test_truncation_is_counted_and_warned_once(caplog):
    gen = Generator(*tiny_seq2seq(), num_beams=1, max_new_tokens=3, max_source_length=4)
    with caplog.at_level("WARNING"):
        res = gen.generate_with_info(TEXTS)
        gen.generate_with_info(TEXTS)
    assert res.input_truncated == [True, False, True, False]
    assert gen.stats["input_truncated"] == 4 and gen.stats["output_truncated"] == 8
    assert sum("truncated" in r.message for r in caplog.records) == 1
    assert res.output_truncated == [[True]] * 4  # 3 new tokens never reach the end token of a random model


def test_cut_keeps_text_at_token_boundary():
    gen = Generator(*tiny_seq2seq(), max_source_length=3)
    assert gen._cut("the cat sat on the mat") == ("the cat sat", True)
    assert gen._cut("a dog") == ("a dog", False)


def test_templates_and_chat():
    gen = Generator(*tiny_causal_lm(), input_template="claim : {text} answer :", num_beams=1, max_new_tokens=2)
    assert gen.format_prompt("x") == "claim : x answer :"
    chat = Generator(*tiny_causal_lm(), chat=True, num_beams=1, max_new_tokens=2)
    assert chat.format_prompt("hi").startswith("[BOS] hi [SEP]")
    assert len(chat.generate(["hi"])[0]) == 1


def test_config_validation():
    with pytest.raises(ValueError, match="must contain"):
        GeneratorConfig(input_template="no slot")
    with pytest.raises(ValueError, match="needs num_beams=1"):
        GeneratorConfig(do_sample=True, num_beams=2)
    with pytest.raises(ValueError, match="exceeds num_beams"):
        GeneratorConfig(num_beams=2, num_return_sequences=3)
    with pytest.raises(ValueError, match="seeds for"):
        Generator(*tiny_seq2seq()).generate(["a"], seeds=[1, 2])


@pytest.mark.parametrize("factory", [tiny_seq2seq, tiny_causal_lm])
def test_generator_save_load_round_trip(tmp_path, factory):
    gen = Generator(*factory(), num_beams=2, max_new_tokens=4, input_template="x : {text}")
    gen.training_info = {"train_rows": 3}
    path = gen.save_pretrained(tmp_path / "gen")
    assert (path / "model.safetensors").is_file() and (path / "cfaug_generator.json").is_file()
    assert not list(path.glob("*.bin")) and not list(path.glob("*.pkl"))
    back = Generator.from_pretrained(path)
    assert back.config == gen.config and back.training_info == {"train_rows": 3}
    assert back.generate(TEXTS) == gen.generate(TEXTS)
    assert back.fingerprint() == gen.fingerprint()


def test_lora_generator_saves_adapter_only(tmp_path, monkeypatch):
    from peft import LoraConfig, get_peft_model

    model, tok = tiny_causal_lm()
    base_dir = tmp_path / "base"
    model.save_pretrained(base_dir)
    tok.save_pretrained(base_dir)
    from transformers import AutoModelForCausalLM
    base = AutoModelForCausalLM.from_pretrained(base_dir)
    peft_model = get_peft_model(base, LoraConfig(r=2, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    with torch.no_grad():
        for n, p in peft_model.named_parameters():
            if "lora_B" in n:
                p.normal_()
    gen = Generator(peft_model, tok, num_beams=1, max_new_tokens=4, base_model=str(base_dir))
    path = gen.save_pretrained(tmp_path / "lora")
    assert (path / "adapter_model.safetensors").is_file() and not (path / "model.safetensors").exists()
    assert json.loads((path / "cfaug_generator.json").read_text())["adapter"] is True
    back = Generator.from_pretrained(path)
    assert back.generate(TEXTS) == gen.generate(TEXTS)


def test_twins_sharing_weights_keep_one_fingerprint_after_one_of_them_merges_its_adapter():
    # The shipped editors hand out twins of one loaded model; a twin that generates merges the LoRA adapter into the
    # shared weights. A twin made afterwards must still have the original fingerprint, or every cache keyed on it
    # (datasets' map cache, the benchmarks' outputs) misses for a model that did not change.
    from peft import LoraConfig, get_peft_model

    model, tok = tiny_causal_lm()
    peft_model = get_peft_model(model, LoraConfig(r=2, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    with torch.no_grad():
        for n, p in peft_model.named_parameters():
            if "lora_B" in n:
                p.normal_()
    loaded = Generator(peft_model, tok, num_beams=1, max_new_tokens=4)
    first = loaded.sharing_weights()
    before = first.fingerprint()
    first.generate(TEXTS)  # merges the adapter into the shared weights
    assert loaded.sharing_weights().fingerprint() == first.fingerprint() == before


def test_load_errors(tmp_path):
    with pytest.raises(ComponentLoadError, match="cfaug_generator.json is missing"):
        Generator.from_pretrained(tmp_path)
    path = LabelChecker(*tiny_classifier()).save_pretrained(tmp_path / "checker")
    with pytest.raises(ComponentLoadError, match="cfaug_generator.json is missing"):
        Generator.from_pretrained(path)
    cfg = json.loads((path / "cfaug_checker.json").read_text())
    (path / "cfaug_checker.json").write_text(json.dumps({**cfg, "format_version": 99, "cfaug_hf_version": "9.0"}))
    with pytest.raises(ComponentLoadError, match="format_version 99.*Upgrade cfaug-hf"):
        LabelChecker.from_pretrained(path)
    (path / "cfaug_checker.json").write_text("{not json")
    with pytest.raises(ComponentLoadError, match="not valid JSON"):
        LabelChecker.from_pretrained(path)


def test_failed_save_leaves_no_folder(tmp_path, monkeypatch):
    gen = Generator(*tiny_seq2seq())
    monkeypatch.setattr(gen.tokenizer, "save_pretrained", lambda *a, **k: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        gen.save_pretrained(tmp_path / "gen")
    assert list(tmp_path.iterdir()) == []


def test_checker_predicts_pairs_and_lists():
    checker = LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES")), batch_size=2)
    probs = checker.predict_proba(["a", "b", "c"], ["x", ["y", "z"], "w"])
    assert probs.shape == (3, 2) and np.allclose(probs.sum(1), 1, atol=1e-5)
    assert checker.predict(["a"], ["x"])[0] in ("SUPPORTS", "REFUTES")
    single = checker.predict_proba(["a b c"])
    assert single.shape == (1, 2)
    assert checker.predict_proba([], []).shape == (0, 2)
    # batching does not change results
    one = LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES")), batch_size=1)
    assert np.allclose(one.predict_proba(["a", "b", "c"], ["x", ["y", "z"], "w"]), probs, atol=1e-5)
    with pytest.raises(ValueError, match="first texts but"):
        checker.predict_proba(["a"], ["x", "y"])
    assert checker.label_id("supports") == 0


def test_checker_truncation_counted():
    checker = LabelChecker(*tiny_classifier(), max_length=6)
    checker.predict_proba(["the cat sat on the mat"], ["the film was good and the king lived in london"])
    assert checker.stats["input_truncated"] == 1


@pytest.mark.parametrize("task", ["sentiment", "nli", "claims"])
def test_adapter_checker_resaves_its_adapter_config_unchanged(tmp_path, task):
    # peft appends the sequence-classification heads to modules_to_save at every load, so each load and save of a
    # checker once lengthened adapter_config.json; the shipped folders had grown to five copies.
    from cfaug_hf.data import CHECKER_DIR

    shipped = LabelChecker.from_pretrained(CHECKER_DIR / task)
    first = shipped.save_pretrained(tmp_path / "once")
    again = LabelChecker.from_pretrained(first).save_pretrained(tmp_path / "twice")
    names = [json.loads((folder / "adapter_config.json").read_text())["modules_to_save"] for folder in (first, again)]
    # peft 0.22 knows one more head name (pre_classifier) than the 0.21 that wrote the shipped folders: the list
    # may grow by peft's own names once, but a save of a load writes it unchanged and repeats none.
    assert names[0] == names[1] and len(set(names[0])) == len(names[0])
    assert names[0][:3] == ["pooler", "classifier", "score"]
    back = LabelChecker.from_pretrained(again)
    assert back.fingerprint() == shipped.fingerprint()
    assert back.predict(["a fine film"], None if task == "sentiment" else ["it is"]) == \
        shipped.predict(["a fine film"], None if task == "sentiment" else ["it is"])


def test_saving_a_shipped_component_writes_the_same_files_in_any_process(tmp_path):
    """Saving is deterministic: the same component saved in two processes with different string hashing gives
    byte-identical files (peft writes ``target_modules``, a set, in hash order; the manifests' digests, a Hub push's
    diff and the benchmarks' record of component files all read those bytes)."""
    import os
    import subprocess
    import sys

    from cfaug_hf.data import CHECKER_DIR, DATA_DIR

    script = ("import sys; from pathlib import Path; from cfaug_hf import Editor, LabelChecker; "
              "out = Path(sys.argv[3]); "
              "LabelChecker.from_pretrained(sys.argv[1]).save_pretrained(out / 'checker'); "
              "Editor.from_pretrained(sys.argv[2]).save_pretrained(out / 'editor')")
    saved = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        subprocess.run([sys.executable, "-c", script, str(CHECKER_DIR / "nli"), str(DATA_DIR / "editors" / "nli"),
                        str(out)], check=True, env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True)
        saved.append({f.relative_to(out).as_posix(): f.read_bytes() for f in sorted(out.rglob("*")) if f.is_file()})
    assert saved[0].keys() == saved[1].keys() and "editor/adapter_config.json" in saved[0]
    assert [name for name in saved[0] if saved[0][name] != saved[1][name]] == []
    modules = json.loads(saved[0]["editor/adapter_config.json"])["target_modules"]
    assert modules == sorted(modules)


def test_checker_save_load(tmp_path):
    checker = LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES")), max_length=32)
    back = LabelChecker.from_pretrained(checker.save_pretrained(tmp_path / "c"))
    assert back.label_names == ("SUPPORTS", "REFUTES") and back.config.max_length == 32
    assert np.allclose(back.predict_proba(["a"], ["b"]), checker.predict_proba(["a"], ["b"]))
