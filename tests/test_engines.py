"""The engine table and the transformers engine's shared-prefix sampler.

* The sampler gives exactly the tokens of ``model.generate`` with the per-row Gumbel noise, for every setting that
  changes which tokens can be drawn (temperature, top-k, top-p, one or several candidates, stop strings, the end
  token, ``max_new_tokens`` reached);
* a row's candidates depend on its seed and prompt only: the same rows in other batch sizes and orders, and beside
  other neighbours, give the same candidates;
* ``auto`` picks, per call, an engine that reproduces the transformers outputs and supports the settings; the table
  names every engine; unknown names fail listing them.
"""

from __future__ import annotations

import pytest
import torch

from cfaug_hf import Generator
from cfaug_hf.generation.engines import AUTO, choose_engine, engine_names
from cfaug_hf.testing import tiny_causal_lm

PROMPTS = ["the cat sat on the mat", "a dog ran", "the film was good and the king was in paris", "paris",
           "the band played a song in london", "a river", "the team won", "the hotel room was clean"]


def sampler(shared: bool, **kw):
    settings = dict(num_beams=1, do_sample=True, num_return_sequences=4, max_new_tokens=8, temperature=1.3,
                    top_k=0, top_p=1.0, stop=())
    gen = Generator(*tiny_causal_lm(), **{**settings, **kw})
    gen.shared_prefix = shared
    return gen


@pytest.mark.parametrize("settings", [{}, {"temperature": 0.7, "top_k": 5}, {"top_p": 0.8},
                                      {"num_return_sequences": 1}, {"stop": ("the",)}, {"max_new_tokens": 3},
                                      {"top_k": 2, "temperature": 0.5, "num_return_sequences": 6}])
def test_shared_prefix_sampling_gives_the_tokens_of_generate(settings):
    seeds = list(range(100, 100 + len(PROMPTS)))
    reference = sampler(False, **settings).generate_with_info(PROMPTS, seeds=seeds)
    fast = sampler(True, **settings).generate_with_info(PROMPTS, seeds=seeds)
    assert fast.texts == reference.texts and fast.output_truncated == reference.output_truncated


def test_a_rows_candidates_do_not_depend_on_its_batch():
    seeds = [7, 8, 9, 10, 11, 12, 13, 14]
    whole = sampler(True, batch_size=8).generate(PROMPTS, seeds=seeds)
    for batch_size in (1, 3):
        assert sampler(True, batch_size=batch_size).generate(PROMPTS, seeds=seeds) == whole
    order = [5, 2, 7, 0, 3, 6, 1, 4]
    shuffled = sampler(True, batch_size=3).generate([PROMPTS[i] for i in order], seeds=[seeds[i] for i in order])
    assert [shuffled[order.index(i)] for i in range(len(PROMPTS))] == whole
    alone = sampler(True).generate([PROMPTS[2], "another neighbour entirely"], seeds=[seeds[2], 99])
    assert alone[0] == whole[2]


def test_candidates_that_agree_share_their_computation():
    """A peaked model samples the same tokens for most candidates: the batch holds far fewer sequences than
    candidates (counted through the model's forward calls)."""
    gen = sampler(True, temperature=0.3, num_return_sequences=4, max_new_tokens=6)
    with torch.no_grad():
        gen.model.lm_head.weight.mul_(40.0)
    sizes = []
    hook = gen.model.register_forward_pre_hook(lambda module, args, kwargs: sizes.append(
        kwargs["input_ids"].shape[0]), with_kwargs=True)
    try:
        gen.generate(PROMPTS[:4], seeds=[1, 2, 3, 4])
    finally:
        hook.remove()
    assert sizes[0] == 4 and max(sizes[1:]) < 16  # one prefill per prompt; decode steps below 4 x 4 candidates


def test_noise_drawn_only_up_to_the_last_kept_token_gives_the_same_tokens(monkeypatch):
    """With top-k, each candidate's noise stream is drawn only as far as the highest token kept: the same tokens as
    drawing the whole vocabulary (what the sampler does where torch's stream is not prefix-stable)."""
    from cfaug_hf.generation.engines import transformers as engine

    assert engine.prefix_stable()
    seeds, settings = list(range(200, 200 + len(PROMPTS))), {"top_k": 5, "temperature": 0.8}
    drawn, draw = [], engine.gumbel_noise_uniforms
    monkeypatch.setattr(engine, "gumbel_noise_uniforms", lambda seed, step, n, out=None: (
        drawn.append(n), draw(seed, step, n, out=out))[1])
    short = sampler(True, **settings).generate(PROMPTS, seeds=seeds)
    vocab = sampler(True).model.config.vocab_size
    assert drawn and max(drawn) <= vocab and sum(drawn) < 0.9 * vocab * len(drawn)
    monkeypatch.setattr(engine, "prefix_stable", lambda: False)
    drawn.clear()
    assert sampler(True, **settings).generate(PROMPTS, seeds=seeds) == short
    assert set(drawn) == {vocab}

def _ends_early(gen, bias: float = 4.0):
    """``gen`` with its end token's logit raised, so candidates end after different numbers of tokens."""
    eos = gen.tokenizer.eos_token_id

    def raise_eos(module, args, out):
        out = out.clone()
        out[..., eos] += bias
        return out

    gen.model.lm_head.register_forward_hook(raise_eos)
    return gen


@pytest.mark.parametrize("settings", [{}, {"top_k": 20, "temperature": 0.8}, {"top_p": 0.8}, {"num_return_sequences": 1}])
def test_rows_that_join_a_running_batch_get_the_tokens_of_generate(settings, monkeypatch):
    """With two rows a batch, the next rows' prompts join as soon as one row has finished, while the other's
    candidates are still running (their caches padded to a common length): the tokens are generate's."""
    from cfaug_hf.generation.engines import transformers as engine

    seeds, settings = list(range(40, 40 + len(PROMPTS))), {"max_new_tokens": 12, **settings}
    reference = _ends_early(sampler(False, **settings)).generate_with_info(PROMPTS, seeds=seeds)
    merges, merge = [], engine._merged_caches
    monkeypatch.setattr(engine, "_merged_caches", lambda *a, check_only=False: (
        merges.append(not check_only), merge(*a, check_only=check_only))[1])
    joined = _ends_early(sampler(True, batch_size=2, **settings)).generate_with_info(PROMPTS, seeds=seeds)
    assert joined.texts == reference.texts and joined.output_truncated == reference.output_truncated
    assert any(merges)  # rows did join a running batch
    assert len({len(t) for row in joined.texts for t in row}) > 3  # the candidates ended at different lengths


def test_without_mergeable_caches_the_sampler_goes_batch_by_batch(monkeypatch):
    from cfaug_hf.generation.engines import transformers as engine

    seeds = list(range(60, 60 + len(PROMPTS)))
    reference = sampler(True, batch_size=3).generate(PROMPTS, seeds=seeds)
    monkeypatch.setattr(engine, "_merged_caches", lambda *args, **kwargs: None)
    assert sampler(True, batch_size=3).generate(PROMPTS, seeds=seeds) == reference


def test_the_table_and_auto():
    assert engine_names()[-1] == "transformers" and "ctranslate2" in engine_names()
    beams = Generator(*tiny_causal_lm(), num_beams=2, max_new_tokens=3)
    sampled = Generator(*tiny_causal_lm(), num_beams=1, do_sample=True, max_new_tokens=3)
    def chosen(gen, options):
        return choose_engine(gen._decode_source(), gen._decode_settings(), AUTO, options).name

    assert chosen(sampled, {"compute_type": "float32"}) == "transformers"
    pytest.importorskip("ctranslate2")
    assert chosen(beams, {"compute_type": "float32"}) == "ctranslate2"
    assert chosen(beams, {"compute_type": "int8"}) == "transformers"  # not the same outputs
    with pytest.raises(ValueError, match="backend must be 'auto' or one of .*'transformers'"):
        beams.use_backend("fastest")


def test_a_new_generator_decodes_on_the_command_lines_engine():
    """The Python API's default is the CLI's: a generator never given use_backend() takes the same engine as
    use_backend("auto") (CTranslate2 in float32 for beam search when installed), with the same fingerprint."""
    from cfaug_hf.deps import is_available

    fresh = Generator(*tiny_causal_lm(), num_beams=2, max_new_tokens=4)
    chosen = choose_engine(fresh._decode_source(), fresh._decode_settings(), *fresh._backend)
    assert chosen.name == ("ctranslate2" if is_available("ctranslate2") else "transformers")
    assert chosen.exact(fresh._backend[1])  # float32: the transformers outputs
    twin = Generator(*tiny_causal_lm(), num_beams=2, max_new_tokens=4).use_backend(AUTO)
    assert twin._backend == fresh._backend and twin.fingerprint() == fresh.fingerprint()


def test_an_engine_defined_in_one_file_decodes_through_backend(tmp_path, monkeypatch, capsys):
    """The contract is the whole of it: an engine that reads only its `DecodeSource` and `DecodeRequest`, registered
    from a test file, is chosen by ``use_backend`` and by the command line's ``--backend`` with no other edit, and
    its outputs reach the augmented rows."""
    import json

    from cfaug_hf.generation import engines
    from cfaug_hf.cli import main
    from cfaug_hf.generation.engines import DecodeResult, Engine

    requests = []

    class Shouting(Engine):
        name = "shouting"

        @classmethod
        def load(cls, source, options, settings):
            engine = cls()
            engine.tokenizer = source.tokenizer  # what it may read: the source, never the generator
            return engine

        def decode(self, request):
            requests.append(request)
            result = DecodeResult.empty(len(request.prompts))
            for i, prompt in enumerate(request.prompts):
                for _ in range(request.settings.num_return_sequences):
                    result.add(i, "NOT " + prompt.split("Claim:")[-1].strip(), cut=False, tokens=1)
            return result

    monkeypatch.setitem(engines._ENGINES, "shouting", Shouting)
    gen = Generator(*tiny_causal_lm(), num_beams=2, max_new_tokens=3).use_backend("shouting")
    assert gen.generate(["Paris is big."]) == [["NOT Paris is big."]] and gen.backend.name == "shouting"
    assert gen.fingerprint() != Generator(*tiny_causal_lm(), num_beams=2, max_new_tokens=3).fingerprint()
    data = tmp_path / "claims.jsonl"
    data.write_text(json.dumps({"id": "a", "claim": "Paris is big.", "evidence": ["Paris is big."],
                                "label": "SUPPORTS"}) + "\n")
    folder = tmp_path / "gen"
    Generator(*tiny_causal_lm(), num_beams=2, max_new_tokens=3,
              input_template="Claim: {text}").save_pretrained(folder)
    assert main(["augment", str(data), "--method", "crossaug", "--generator", str(folder), "--checker", "none",
                 "--backend", "shouting", "--out", str(tmp_path / "out")]) == 0
    assert requests[-1].prompts and all(p.startswith("Claim:") for p in requests[-1].prompts)
    from datasets import load_from_disk

    rows = load_from_disk(str(tmp_path / "out" / "data")).to_list()
    assert any(r["claim"] == "NOT Paris is big." for r in rows)
