"""Load-time and per-call shortcuts give the same results as the slow path: the GGUF conversion cache, LoRA merging
for generation, and remembered fingerprints."""

from __future__ import annotations

import logging

import pytest
import torch

from cfaug_hf import Generator
from cfaug_hf import pretrained
from cfaug_hf.fingerprint import digest_module
from cfaug_hf.testing import tiny_causal_lm

TEXTS = ["the cat sat on the mat", "a dog barked at night", "rain"]


@pytest.fixture
def fake_gguf(tmp_path, monkeypatch):
    """An embedded-style reference to a GGUF file whose 'conversion' saves a tiny causal LM (counted)."""
    source = tmp_path / "pkg"
    source.mkdir()
    (source / "m.gguf").write_bytes(b"GGUF not really")
    ref = pretrained.ResolvedModel("org/tiny", str(source), {"gguf_file": "m.gguf"}, embedded=True)
    calls = []

    def convert(ref, src, target):
        calls.append(target)
        tmp = target.parent / (target.name + ".tmp")
        target.parent.mkdir(parents=True, exist_ok=True)
        model, tok = tiny_causal_lm()
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / pretrained._CONVERTED_MARKER).write_text("{}")
        tmp.rename(target)

    monkeypatch.setattr(pretrained, "_convert_gguf", convert)
    monkeypatch.setattr(pretrained, "resolve_model", lambda name, revision=None: ref)
    monkeypatch.setenv("CFAUG_HF_CACHE", str(tmp_path / "cache"))
    return ref, calls


def test_gguf_is_converted_once_and_reused(fake_gguf, tmp_path):
    from transformers import AutoModelForCausalLM

    ref, calls = fake_gguf
    first = pretrained.load_model(AutoModelForCausalLM, "org/tiny")
    second = pretrained.load_model(AutoModelForCausalLM, "org/tiny")
    tok = pretrained.load_tokenizer("org/tiny")
    assert len(calls) == 1 and calls[0].parent == tmp_path / "cache" / "converted"
    assert digest_module(first) == digest_module(second)
    assert first.config._name_or_path == "org/tiny" and tok.name_or_path == "org/tiny"
    # The key holds the library version and the file digest: a changed file is converted again.
    (tmp_path / "pkg" / "m.gguf").write_bytes(b"GGUF changed")
    assert pretrained.local_copy(ref).path != str(calls[0])
    assert len(calls) == 2


def test_unwritable_cache_falls_back_to_the_gguf_file(fake_gguf, tmp_path, monkeypatch, caplog):
    ref, _ = fake_gguf

    def fail(*args):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(pretrained, "_convert_gguf", fail)
    with caplog.at_level(logging.WARNING, logger="cfaug_hf.pretrained"):
        assert pretrained.local_copy(ref) is ref
    assert "loading the GGUF file each time" in caplog.text


def _lora_generator():
    from peft import LoraConfig, get_peft_model

    model, tok = tiny_causal_lm()
    peft_model = get_peft_model(model, LoraConfig(r=2, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    with torch.no_grad():
        for n, p in peft_model.named_parameters():
            if "lora_B" in n:
                p.normal_(std=0.5)
    return Generator(peft_model, tok, num_beams=2, max_new_tokens=5)


def test_lora_merge_keeps_outputs_fingerprint_and_adapter_save(tmp_path):
    # The adapter is merged into the torch weights when transformers decodes (another engine keeps its own copy).
    gen = _lora_generator().use_backend("transformers")
    fp, weights = gen.fingerprint(), gen.weights_fingerprint()
    with torch.inference_mode():  # the unmerged forward, for reference
        enc = gen.tokenizer(TEXTS, return_tensors="pt", padding=True)
        unmerged_logits = gen.model(**enc).logits
    outs = gen.generate(TEXTS)
    assert all(m.merged for m in gen._lora_layers())
    with torch.inference_mode():
        torch.testing.assert_close(gen.model(**enc).logits, unmerged_logits, atol=1e-5, rtol=1e-5)
    # a figure measured after generating names the weights as loaded, not their merged form
    assert gen.fingerprint() == fp and gen.weights_fingerprint() == weights
    path = gen.save_pretrained(tmp_path / "lora")
    # The in-memory base has no name to be reloaded from, so the adapter is saved merged into it, whole.
    assert (path / "model.safetensors").is_file() and not (path / "adapter_model.safetensors").exists()
    assert Generator.from_pretrained(path).generate(TEXTS) == outs
    gen.base_model = str(tmp_path / "base")  # a named base: only the adapter is saved
    fp = gen.fingerprint()  # the config names the base, so the fingerprint changes with it
    gen.model.get_base_model().save_pretrained(tmp_path / "base")
    gen.tokenizer.save_pretrained(tmp_path / "base")
    path = gen.save_pretrained(tmp_path / "lora-adapter")
    assert (path / "adapter_model.safetensors").is_file() and not (path / "model.safetensors").exists()
    gen.unmerge_adapter()
    assert not any(m.merged for m in gen._lora_layers()) and gen.fingerprint() == fp
    assert gen.weights_fingerprint() == weights
    assert gen.generate(TEXTS) == outs


def test_training_after_generation_trains_the_adapter():
    from datasets import Dataset

    from cfaug_hf.training import train_generator

    gen = _lora_generator()
    loaded = gen.weights_fingerprint()
    gen.generate(TEXTS)
    before = {n: p.detach().clone() for n, p in gen.model.named_parameters() if "lora_A" in n}
    pairs = Dataset.from_dict({"source": TEXTS * 4, "target": ["no " + t for t in TEXTS] * 4})
    train_generator(gen, pairs, max_steps=2, learning_rate=1e-2, batch_size=4,
                    training_args={"disable_tqdm": True, "logging_strategy": "no", "report_to": []})
    assert not any(m.merged for m in gen._lora_layers())
    after = dict(gen.model.named_parameters())
    assert any(not torch.equal(before[n], after[n]) for n in before)
    assert gen.weights_fingerprint() != loaded  # trained weights are read again, not the digest kept at the merge


def test_fingerprint_is_remembered_until_a_weight_changes(monkeypatch):
    from cfaug_hf import fingerprint as fpmod
    from cfaug_hf.components import base

    model, tok = tiny_causal_lm()
    gen = Generator(model, tok)
    calls = []
    real = fpmod.digest_module
    monkeypatch.setattr(base, "digest_module", lambda m: calls.append(m) or real(m))
    fp = gen.fingerprint()
    assert gen.fingerprint() == fp and len(calls) == 1
    with torch.no_grad():
        next(gen.model.parameters()).add_(1.0)
    assert gen.fingerprint() != fp and len(calls) == 2
    before = gen.fingerprint()
    gen.config.num_beams = 2
    # A change of settings changes the fingerprint without hashing the weights again.
    assert gen.fingerprint() != before and len(calls) == 2


def test_tied_weights_are_hashed_once(monkeypatch):
    import types

    import xxhash

    import cfaug_hf.fingerprint as fpmod

    model, _ = tiny_causal_lm()
    emb = model.get_input_embeddings().weight
    model.get_output_embeddings().weight = emb  # tie
    hashed = []
    real = xxhash.xxh64

    class Spy:
        def __init__(self):
            self.h = real()

        def update(self, data):
            hashed.append(0 if isinstance(data, bytes) else memoryview(data).nbytes)
            self.h.update(data)

        def hexdigest(self):
            return self.h.hexdigest()

    monkeypatch.setattr(fpmod, "xxhash", types.SimpleNamespace(xxh64=Spy))
    digest_module(model)
    total = sum(p.numel() * p.element_size() for p in model.state_dict().values())
    assert sum(hashed) == total - emb.numel() * emb.element_size()


def test_an_embedded_model_not_installed_loads_offline_from_the_hugging_face_cache(tmp_path, monkeypatch):
    """HF_HUB_OFFLINE=1 refused the model before transformers could read it from the cache (the GPU machine has
    MiniLM in its cache, not as a package): the cache counts as local; without either, the refusal names both."""
    from transformers import AutoModel

    from cfaug_hf.testing import tiny_classifier

    name = "sentence-transformers/all-MiniLM-L6-v2"
    monkeypatch.setattr(pretrained, "_package_dir", lambda package: None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from huggingface_hub import constants

    # huggingface_hub reads its environment once, at import
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(OSError, match="nor in the Hugging Face cache"):
        pretrained.resolve_model(name)
    model, tok = tiny_classifier(("a", "b"))
    snapshot = tmp_path / "hub" / "models--sentence-transformers--all-MiniLM-L6-v2" / "snapshots" / ("0" * 40)
    model.save_pretrained(snapshot)
    tok.save_pretrained(snapshot)
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("0" * 40)
    ref = pretrained.resolve_model(name)
    assert ref.path == name and not ref.embedded
    assert AutoModel.from_pretrained(ref.path).config.hidden_size == model.config.hidden_size
