"""The OpenAI-compatible HTTP backend against a loopback server that can fail on purpose."""

from __future__ import annotations

import json
import logging
import pickle

import pytest
from datasets import Dataset

from cfaug_hf import COREAugmenter, OpenAICompatibleLLM, TaskSchema
from cfaug_hf.components.llm import HTTPLLMConfig

from llm_server import LLMServer


@pytest.fixture()
def server():
    srv = LLMServer()
    yield srv
    srv.close()


def llm(server, tmp_path=None, **kw):
    kw.setdefault("backoff_s", 0.0)
    return OpenAICompatibleLLM(base_url=server.url, model="test-model", api_key_env="CFAUG_TEST_KEY",
                               cache_dir=str(tmp_path / "cache") if tmp_path else None, **kw)


def test_answers_come_back_in_input_order_with_seeds_and_the_key(server, monkeypatch):
    monkeypatch.setenv("CFAUG_TEST_KEY", "sk-secret-123")
    client = llm(server, max_concurrency=4)
    prompts = [f"line one\nanswer {i}" for i in range(10)]
    result = client.generate_with_info(prompts, seeds=list(range(10)))
    assert result.texts == [[f"ANSWER {i}"] for i in range(10)]
    assert result.errors == [None] * 10
    assert {r["authorization"] for r in server.requests} == {"Bearer sk-secret-123"}
    bodies = sorted(server.requests, key=lambda r: r["body"]["seed"])
    assert [b["body"]["seed"] for b in bodies] == list(range(10))
    assert bodies[0]["body"]["temperature"] == 0.7 and bodies[0]["body"]["model"] == "test-model"


def test_the_key_is_never_saved_logged_or_shown(server, monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("CFAUG_TEST_KEY", "sk-secret-123")
    server.faults["bad"] = ["400"]
    client = llm(server)
    with caplog.at_level(logging.DEBUG):
        client.generate_with_info(["bad request"])
    client.save_pretrained(tmp_path / "llm")
    saved = "".join(p.read_text() for p in (tmp_path / "llm").rglob("*") if p.is_file())
    assert "sk-secret" not in saved + caplog.text + repr(client) + json.dumps(client.get_config_dict())
    loaded = OpenAICompatibleLLM.from_pretrained(tmp_path / "llm")
    assert loaded.config == client.config and loaded.fingerprint() == client.fingerprint()


@pytest.mark.parametrize("faults", [["429"], ["500", "503"], ["timeout"]])
def test_transient_failures_are_retried(server, faults):
    server.faults["flaky"] = list(faults)
    server.slow_s = 1.5
    client = llm(server, timeout_s=0.5, max_retries=3)
    result = client.generate_with_info(["ok\nfirst", "flaky\nsecond"])
    assert result.texts == [["FIRST"], ["SECOND"]] and result.errors == [None, None]
    assert client.stats["retries"] == len(faults)


def test_failures_for_part_of_a_batch_are_errors_not_exceptions(server):
    server.faults["broken"] = ["500"] * 10
    server.faults["garbled"] = ["malformed"]
    server.faults["nothing"] = ["empty"]
    server.faults["refused"] = ["400"]
    client = llm(server, max_retries=2)
    result = client.generate_with_info(["fine\nyes", "broken\nx", "garbled\nx", "nothing\nx", "refused\nx"])
    assert result.texts[0] == ["YES"] and result.texts[1:] == [[], [], [], []]
    assert result.errors[0] is None
    assert "HTTP 500 (gave up after 3 attempts)" in result.errors[1]
    assert "not JSON" in result.errors[2] and "no 'choices'" in result.errors[3]
    assert result.errors[4].startswith("HTTP 400")
    assert client.stats["errors"] == 4
    assert sum("refused" in r["body"]["messages"][0]["content"] for r in server.requests) == 1  # 400: no retry


def test_the_request_budget_caps_requests(server):
    client = llm(server, request_budget=2, max_concurrency=1)
    result = client.generate_with_info(["a\n1", "b\n2", "c\n3"])
    assert [e for e in result.errors if e] == ["request budget exhausted"]
    assert len(server.requests) == 2


def test_the_response_cache_makes_reruns_free(server, tmp_path):
    client = llm(server, tmp_path)
    first = client.generate_with_info(["p\none", "p\ntwo"], seeds=[1, 2])
    assert len(server.requests) == 2
    again = llm(server, tmp_path).generate_with_info(["p\none", "p\ntwo"], seeds=[1, 2])
    assert again.texts == first.texts and len(server.requests) == 2
    llm(server, tmp_path).generate_with_info(["p\none"], seeds=[3])  # another seed is another request
    llm(server, tmp_path, temperature=0.2).generate_with_info(["p\none"], seeds=[1])  # other params too
    assert len(server.requests) == 4


def test_completions_endpoint_and_bad_config(server):
    client = llm(server, chat=False)
    assert client.generate(["x\nhello"]) == [["HELLO"]]
    assert server.requests[-1]["path"].endswith("/v1/completions")
    with pytest.raises(ValueError, match="model="):
        OpenAICompatibleLLM(base_url=server.url)
    with pytest.raises(ValueError, match="http"):
        HTTPLLMConfig(base_url="localhost:8000", model="m")


def test_the_client_pickles_for_map_workers(server):
    client = pickle.loads(pickle.dumps(llm(server)))
    assert client.generate(["a\nb"]) == [["B"]]


def test_core_over_http_counts_errors_and_resumes_from_the_cache(server, tmp_path):
    server.responder = lambda prompt, body: "Rewritten review: " + prompt.splitlines()[-4].split(": ", 1)[1].replace(
        "dull", "gripping")
    server.faults["slow plot"] = ["500"] * 2
    data = Dataset.from_dict({"text": ["A dull film.", "A dull cast.", "A dull and slow plot."],
                              "label": ["negative"] * 3})
    aug = COREAugmenter(llm(server, tmp_path, max_retries=1), mode="editor_only")
    out = aug.augment(data)
    assert aug.stats.skipped == {"llm_error": 1} and aug.stats.produced == {"llm-edit": 2}
    assert [t for t, cf in zip(out["text"], out["cf_is_counterfactual"]) if cf] == ["A gripping film.",
                                                                                    "A gripping cast."]
    sent = len(server.requests)
    aug = COREAugmenter(llm(server, tmp_path, max_retries=1), mode="editor_only")
    out = aug.augment(data, load_from_cache_file=False)
    assert aug.stats.produced == {"llm-edit": 3}
    assert len(server.requests) == sent + 1  # only the prompt that failed is sent again


def test_core_nli_prompts_over_http(server):
    server.responder = lambda prompt, body: "Rewritten sentence 2: Nobody is outside."
    schema = TaskSchema.nli()
    data = Dataset.from_dict({"premise": ["A man walks outside."] * 3, "hypothesis": ["Someone is outside."] * 3,
                              "label": ["entailment", "neutral", "contradiction"]})
    out = COREAugmenter(llm(server), schema, mode="editor_only", keep_original=False).augment(data)
    assert list(out["label"]) == ["contradiction", "entailment"]
    assert set(out["premise"]) == {"A man walks outside."} and set(out["hypothesis"]) == {"Nobody is outside."}
    assert "definitely false" in server.requests[0]["body"]["messages"][0]["content"]
