"""A secret is never written, whatever its shape: property tests over key values and URL shapes.

The family tried (issue 39, item 2), each for random keys of every common shape (OpenAI/HF-style prefixes, Azure's
32 hex characters, AWS access key ids, JWTs, long base64 and plain alphanumeric runs):

* the key given where its variable's *name* belongs (``api_key_env=KEY``): refused, the message holds no piece of it;
* the key in the base URL: as ``user:password``, a query parameter (secret-named or not), a path parameter
  (``;api_key=``) and a fragment (``#token=``): none of it is kept, saved, shown or logged;
* the key echoed back by a server: in an error page after ``Bearer``, bare in an error body cut at 300 bytes (the
  first 10 characters of the key), bare inside a generated answer: none of it reaches an error, a log line, a repr, a
  saved config, a card, the response cache or the data.

"No piece" means no run of :data:`cfaug_hf.sharing.credentials.WINDOW` (6) characters of the key.
"""

from __future__ import annotations

import json
import logging
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cfaug_hf.components.llm import OpenAICompatibleLLM
from cfaug_hf.sharing.credentials import WINDOW, check_env_name
from tests.fault_server import FaultServer

ALNUM = string.ascii_letters + string.digits

def _key(shape: str, seed: int) -> str:
    """A key of ``shape`` with random characters, as real keys have (hypothesis's own text shrinks towards words
    and repeated characters, whose pieces any message may hold)."""
    import random

    rng = random.Random(seed)

    def run(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    return {"openai": lambda: "sk-" + run(ALNUM, rng.randint(20, 48)),
            "openai-project": lambda: "sk-proj-" + run(ALNUM + "-_", 40),
            "huggingface": lambda: "hf_" + run(ALNUM, 34),
            "github": lambda: "ghp_" + run(ALNUM, 36),
            "slack": lambda: "xoxb-" + run(string.digits, 12) + "-" + run(ALNUM, 24),
            "azure": lambda: run("0123456789abcdef", 32),
            "aws": lambda: "AKIA" + run(string.ascii_uppercase + string.digits, 16),
            "jwt": lambda: "eyJ" + run(ALNUM + "-_", 20) + "." + run(ALNUM + "-_", 30),
            "base64": lambda: run(ALNUM + "+/", rng.randint(32, 64)) + "==",
            "alnum": lambda: run(ALNUM, rng.randint(20, 40))}[shape]()


SHAPES = ["openai", "openai-project", "huggingface", "github", "slack", "azure", "aws", "jwt", "base64", "alnum"]
KEYS = st.builds(_key, st.sampled_from(SHAPES), st.integers(0, 2 ** 32))


def pieces(key: str) -> set[str]:
    return {key[i:i + WINDOW] for i in range(len(key) - WINDOW + 1)}


def leaked(key: str, text: str) -> list[str]:
    return sorted(p for p in pieces(key) if p in text)


@pytest.fixture(scope="module")
def server():
    s = FaultServer(drip_s=0.1)
    yield s
    s.close()


@settings(max_examples=80, deadline=None)
@given(key=KEYS)
def test_a_key_given_as_the_variable_name_is_refused_without_a_piece_of_it(key):
    with pytest.raises(ValueError) as info:
        OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", model="m", api_key_env=key)
    assert not leaked(key, str(info.value)), str(info.value)


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "HF_TOKEN", "MY_KEY_2", "api_key"])
def test_ordinary_variable_names_are_accepted(name):
    check_env_name(name)


def test_a_name_holding_another_variables_value_is_refused(monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_KEY", "plainwordsecret")
    with pytest.raises(ValueError, match="is the value of an environment variable"):
        check_env_name("plainwordsecret")


URL_SHAPES = ["http://user:{k}@{host}/v1", "http://{host}/v1?api-key={k}", "http://{host}/v1?code={k}",
              "http://{host}/v1?x={k}", "http://{host}/v1;api_key={k}", "http://{host}/v1;{k}",
              "http://{host}/v1#token={k}", "http://{host}/v1#{k}"]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(key=KEYS, shape=st.sampled_from(URL_SHAPES))
def test_no_piece_of_a_key_survives_anywhere(server, key, shape, tmp_path_factory):
    import os

    tmp = tmp_path_factory.mktemp("secret")
    host = server.url.split("//")[1].split("/")[0]
    os.environ["CFAUG_PROPERTY_KEY"] = key
    logger = logging.getLogger()  # the root: the SDK's and its HTTP library's debug logs too
    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    logger.addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        from urllib.parse import quote

        client = OpenAICompatibleLLM(base_url=shape.format(k=quote(key, safe=""), host=host), model="m",
                                     api_key_env="CFAUG_PROPERTY_KEY", cache_dir=str(tmp / "cache"),
                                     max_retries=1, backoff_s=0.0, timeout_s=2.0)
        prompts = ["fault=echo_headers\nx", "fault=echo_key_cut\nx", "fault=echo_key_answer\nx",
                   "fault=status_500\nx", "fine\nrewrite this"]
        result = client.generate_with_info(prompts, seeds=[0, 1, 2, 3, 4])
        assert result.texts[-1] == ["REWRITE THIS"]  # the request still reached the endpoint
        assert result.texts[2] and result.errors[1] and result.errors[0]
        again = client.generate_with_info(prompts[2:3], seeds=[2])  # from the cache
        client.save_pretrained(tmp / "saved")
        files = "".join(p.read_text(errors="replace") for p in tmp.rglob("*") if p.is_file())
        everything = "\n".join([*(e or "" for e in result.errors), *(t for ts in result.texts for t in ts),
                                *again.texts[0], *records, repr(client), json.dumps(client.get_config_dict()),
                                files, *(line for line, _ in server.seen)])
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        del os.environ["CFAUG_PROPERTY_KEY"]
    assert not leaked(key, everything), leaked(key, everything)


def test_the_cut_error_body_of_the_report_loses_its_key_prefix(server, monkeypatch):
    """The reported form: an HTTP error body cut at 300 bytes left the first 10 characters of the key."""
    key = "sk-live-0123456789abcdefABCDEF"
    monkeypatch.setenv("CFAUG_PROPERTY_KEY", key)
    client = OpenAICompatibleLLM(base_url=server.url, model="m", api_key_env="CFAUG_PROPERTY_KEY", max_retries=0)
    error = client.generate_with_info(["fault=echo_key_cut\nx"]).errors[0]
    assert error.startswith("HTTP 403") and key[:10] not in error and "***" in error


def test_saved_config_of_an_edited_client_has_no_credentials(monkeypatch, tmp_path):
    monkeypatch.setenv("CFAUG_PROPERTY_KEY", "0f3a9c2e7d1b4a5f8e6c0b9a2d4f6e8a")
    client = OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", model="m", api_key_env="CFAUG_PROPERTY_KEY")
    client.config.base_url = "http://u:pw@127.0.0.1:9/v1;api_key=0f3a9c2e7d1b4a5f8e6c0b9a2d4f6e8a#frag"
    saved = Path(client.save_pretrained(tmp_path / "llm"))
    text = "".join(p.read_text() for p in saved.iterdir())
    assert "0f3a9c" not in text and "pw@" not in text and "frag" not in text
