"""The CTranslate2 generation backend: same outputs as transformers in float32, per-row seeded sampling, LoRA merged
on a copy, one cached conversion, clear errors."""

import pytest
import torch

pytest.importorskip("ctranslate2")

from cfaug_hf import Generator  # noqa: E402
from cfaug_hf.generation.engines import ctranslate2 as ct2  # noqa: E402
from cfaug_hf.testing import tiny_causal_lm, tiny_seq2seq  # noqa: E402

TEXTS = ["the cat sat on the mat", "a dog", "paris is the capital of france", "cats are mammals"]


def peaked_lm(seed=0):
    """The tiny Llama with its output layer scaled up, so the best tokens win by clear margins: float32 engines that
    sum in a different order then agree on every choice instead of flipping near-ties."""
    model, tok = tiny_causal_lm(seed)
    with torch.no_grad():
        model.lm_head.weight.mul_(40.0)
    return model, tok


@pytest.mark.parametrize("beams", [1, 3])
def test_float32_keeps_the_transformers_outputs(beams):
    gen = Generator(*peaked_lm(), num_beams=beams, num_return_sequences=beams, max_new_tokens=6, stop=())
    expected = gen.use_backend("transformers").generate(TEXTS)
    fast = Generator(*peaked_lm(), num_beams=beams, num_return_sequences=beams, max_new_tokens=6, stop=())
    fast.use_backend("ctranslate2", compute_type="float32")
    assert fast.generate(TEXTS) == expected


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_workers_side_by_side_keep_the_transformers_outputs(threads, monkeypatch):
    """Each worker decodes its own batch on one thread; how rows are split among workers must not change any row's
    outputs (one worker on all threads is the set-up before 2026-12-02)."""
    texts = TEXTS * 3
    gen = Generator(*peaked_lm(), num_beams=2, num_return_sequences=2, max_new_tokens=6, stop=(), batch_size=4)
    expected = gen.use_backend("transformers").generate(texts)
    for one_batch in (False, True):
        monkeypatch.setattr(ct2, "ONE_THREAD_WORKERS", not one_batch)
        gen.use_backend("ctranslate2", compute_type="float32", threads=threads)
        engine = gen.backend
        assert engine.workers == (1 if one_batch else threads) and engine.describe()["workers"] == engine.workers
        assert gen.generate(texts) == expected
        assert [gen.generate([t])[0] for t in texts[:3]] == expected[:3]


@pytest.mark.parametrize("rows,workers,beams,expected", [(40, 2, 5, 4), (40, 1, 5, 8), (100, 2, 1, 20), (8, 2, 5, 4),
                                                         (1, 2, 5, 1), (3, 2, 5, 2), (100, 1, 1, 32), (7, 4, 2, 2),
                                                         (0, 2, 5, 1)])
def test_rows_are_split_so_every_worker_gets_a_batch(rows, workers, beams, expected):
    """At most 40 sequences (rows x beams) at once across the workers, the generator's batch_size at most, and no
    worker idle while another has two batches' worth of rows."""
    from types import SimpleNamespace

    engine = object.__new__(ct2.CTranslate2Engine)
    engine.workers = workers
    assert engine.rows_per_batch(rows, SimpleNamespace(batch_size=32, num_beams=beams)) == expected


def test_sampled_rows_stay_on_transformers_so_their_seeds_still_decide():
    # CTranslate2's sampler cannot be reseeded per call (OpenNMT/CTranslate2#1757), so sampling is not moved there.
    kw = dict(num_beams=1, do_sample=True, num_return_sequences=2, max_new_tokens=6, temperature=1.5)
    expected = Generator(*tiny_causal_lm(), **kw).generate(TEXTS, seeds=[1, 2, 3, 4])
    gen = Generator(*tiny_causal_lm(), **kw).use_backend("ctranslate2", compute_type="int8")
    assert gen.generate(TEXTS, seeds=[1, 2, 3, 4]) == expected
    assert [gen.generate([t], seeds=[s])[0] for t, s in zip(TEXTS, [1, 2, 3, 4])] == expected


def test_greedy_rows_end_at_the_stop_string():
    model, tok = peaked_lm()
    gen = Generator(model, tok, num_beams=1, max_new_tokens=12, stop=("e",)).use_backend("ctranslate2",
                                                                                         compute_type="float32")
    result = gen.generate_with_info(TEXTS)
    for outs in result.texts:
        assert all("e" not in o for o in outs)


def test_lora_is_merged_on_a_copy_and_the_conversion_is_cached(monkeypatch):
    from peft import LoraConfig, get_peft_model

    model, tok = peaked_lm()
    peft_model = get_peft_model(model, LoraConfig(r=2, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    with torch.no_grad():
        for name, p in peft_model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    gen = Generator(peft_model, tok, num_beams=2, num_return_sequences=2, max_new_tokens=5, stop=())
    before = gen.fingerprint()
    expected = gen.use_backend("transformers").generate(TEXTS)
    gen.use_backend("ctranslate2", compute_type="float32")
    assert gen._is_peft() and any("lora_" in n for n, _ in gen.model.named_parameters())
    assert gen.generate(TEXTS) == expected
    assert gen.fingerprint() == before  # float32 gives the transformers outputs: the same cache entries serve it
    assert gen.use_backend("ctranslate2", compute_type="int8").fingerprint() != before  # int8 may not
    assert gen.use_backend("transformers").fingerprint() == before  # ... and the adapter is as it was

    calls = []
    monkeypatch.setattr(ct2, "_convert", lambda *a: calls.append(a))
    gen.use_backend("ctranslate2", compute_type="int8_float32")  # the cached copy serves another compute type
    assert calls == []


def test_fingerprints_name_the_compute_type():
    gen = Generator(*tiny_causal_lm(), max_new_tokens=3)
    f32 = gen.use_backend("ctranslate2", compute_type="float32").fingerprint()
    int8 = gen.use_backend("ctranslate2", compute_type="int8").fingerprint()
    assert f32 != int8


def test_bad_backend_settings_fail_clearly():
    gen = Generator(*tiny_causal_lm(), max_new_tokens=3)
    with pytest.raises(ValueError, match="backend must be"):
        gen.use_backend("vllm-on-cpu")
    with pytest.raises(ValueError, match="compute_type must be one of"):
        gen.use_backend("ctranslate2", compute_type="int3")
    with pytest.raises(ValueError, match="encoder-decoder"):
        Generator(*tiny_seq2seq(), max_new_tokens=3).use_backend("ctranslate2")


def test_auto_picks_ctranslate2_for_causal_lms_and_transformers_for_seq2seq():
    assert Generator(*tiny_causal_lm(), max_new_tokens=3).use_backend("auto").backend is not None
    assert Generator(*tiny_seq2seq(), max_new_tokens=3).use_backend("auto").backend is None


@pytest.mark.parametrize("damage", ["cut-model", "stray-folder", "stray-file", "bad-marker", "missing-vocab"])
def test_a_damaged_conversion_cache_is_converted_again_naming_the_folder(damage, caplog):
    """Reported: a cut model.bin or a stray folder at the CTranslate2 cache key gave a raw RuntimeError/OSError on
    every later run. The family: a file cut short, a folder or file left at the key without the marker, a damaged
    marker, a file gone. Each is converted again once, with a warning that names the folder."""
    import shutil

    gen = Generator(*peaked_lm(), num_beams=2, max_new_tokens=5, stop=())
    expected = gen.use_backend("transformers").generate(TEXTS)
    path = ct2.converted_path(gen._decode_source())
    gen.use_backend("ctranslate2", compute_type="float32")
    gen.use_backend("transformers")
    if damage == "cut-model":
        model = path / "model.bin"
        model.write_bytes(model.read_bytes()[: model.stat().st_size // 3])
    elif damage == "stray-folder":
        shutil.rmtree(path)
        (path / "half").mkdir(parents=True)
    elif damage == "stray-file":
        shutil.rmtree(path)
        path.write_text("not a folder")
    elif damage == "bad-marker":
        (path / "cfaug_ct2.json").write_text("{oops")
    else:
        next(p for p in path.iterdir() if "vocab" in p.name).unlink()
    caplog.set_level("WARNING")
    gen.use_backend("ctranslate2", compute_type="float32")
    assert gen.generate(TEXTS) == expected
    assert str(path) in caplog.text and "converting it again" in caplog.text and "CTranslate2 copy" in caplog.text


@pytest.mark.parametrize("value,expected", [("1", 1), ("3", 3), ("", None), ("0", None), ("two", None)])
def test_the_decoder_takes_the_threads_its_process_is_given(value, expected, monkeypatch):
    """A Ray actor gets OMP_NUM_THREADS set to its CPU share: CTranslate2 must not start a thread per core in each."""
    import os

    from cfaug_hf.generation.engines.ctranslate2 import thread_budget

    monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert thread_budget() == (expected or min(4, os.cpu_count() or 1))


def test_an_engine_with_a_converted_copy_follows_the_generators_weights():
    """The engine was cached by name and options only: weights changed after the first call (training in place)
    kept decoding the converted copy of the old ones."""
    import torch

    gen = Generator(*peaked_lm(), num_beams=2, max_new_tokens=5, stop=()).use_backend("ctranslate2",
                                                                                      compute_type="float32")
    before = gen.generate(TEXTS)
    with torch.no_grad():
        gen.model.lm_head.weight.copy_(torch.roll(gen.model.lm_head.weight, 3, dims=0))
    after = gen.generate(TEXTS)
    assert after == gen.use_backend("transformers").generate(TEXTS) and after != before
