"""What a user loads is data: an endpoint it names is not contacted, and no key is sent, until the user allows it.

The family (issue 57, item 1): every way loaded data can name an endpoint (a saved augmenter holding an endpoint
component, a recipe naming it as a URL or as a component folder, an endpoint component's own saved config, CORE's
editor role), every way of loading and running it (``from_pretrained``/``from_recipe`` with ``augment()`` or a
plain ``map``, and the command line), every allow-list entry that must *not* unlock it (another port, scheme, host
or path), with the user's key in the environment. A loopback "collector" must receive nothing until the user allows
the exact address, and then the request arrives as usual.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from datasets import Dataset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cfaug_hf import Augmenter, LLMCounterfactualAugmenter, OpenAICompatibleLLM
from cfaug_hf.sharing.consent import ENV, EndpointNotAllowedError, HubId, allowed, allowing
from cfaug_hf.sharing.folders import ComponentLoadError

KEY = "sk-user-0123456789abcdefABCDEF"
SOURCES = ["saved augmenter", "recipe url", "recipe folder", "component config", "core editor folder"]
#: A recipe's plain URL names no model, so it never builds without the user's --llm-model: refused either way.
BUILDS = [s for s in SOURCES if s != "recipe url"]
RUNS = ["augment", "map", "cli"]


@pytest.fixture(scope="module")
def collector():
    from llm_server import LLMServer

    server = LLMServer()
    server.responder = lambda prompt, body: '"The room was clean."'
    yield server
    server.close()


def _author_files(source: str, url: str, box: Path) -> Path:
    """What a hostile author shares: a saved augmenter, recipe or component folder naming ``url``; returns what
    the user loads."""
    box.mkdir(parents=True, exist_ok=True)
    llm = OpenAICompatibleLLM(base_url=url, model="m", max_retries=0, cache_dir=str(box / "author-cache"))
    sentiment = {"preset": "sentiment"}
    if source == "saved augmenter":
        LLMCounterfactualAugmenter(llm, checker=None).save_pretrained(box / "aug", overwrite=True)
        return box / "aug"
    if source == "component config":
        llm.save_pretrained(box / "llm", overwrite=True)
        return box / "llm"
    folder = {"type": "http_llm", "path": "llm"}
    llm.save_pretrained(box / "llm", overwrite=True)
    if source == "recipe folder":
        recipe = {"method": "llm", "schema": sentiment, "components": {"llm": folder, "checker": None}}
    elif source == "recipe url":
        recipe = {"method": "llm", "schema": sentiment, "components": {"llm": url, "checker": None}}
    else:
        recipe = {"method": "core", "schema": sentiment, "config": {"mode": "editor_only"},
                  "components": {"editor": folder, "checker": None}}
    (box / "recipe.yaml").write_text(json.dumps(recipe))
    return box / "recipe.yaml"


def _load(source: str, path: Path):
    if source == "component config":  # the user builds the augmenter around a loaded endpoint config
        return LLMCounterfactualAugmenter(OpenAICompatibleLLM.from_pretrained(path), checker=None)
    if path.suffix == ".yaml":
        return Augmenter.from_recipe(path)
    return Augmenter.from_pretrained(path)


def _rows() -> Dataset:
    return Dataset.from_dict({"text": ["The room was dirty.", "The food was great."],
                              "label": ["negative", "positive"]})


def _run(source: str, path: Path, run: str, tmp: Path, allow: list[str], key_env: str | None = None) -> int:
    """Load and run as a user would; returns the CLI's exit status (0 for Python runs that finished)."""
    if run == "cli":
        if source == "component config":
            return 2  # the command line has no way to load a bare component config as an augmenter
        from cfaug_hf.cli import main

        _rows().to_json(tmp / "rows.jsonl")
        flag = ["--recipe", str(path)] if path.suffix == ".yaml" else ["--augmenter", str(path)]
        extra = ["--llm-model", "m"] if source == "recipe url" else []
        allows = [a for url in allow for a in ("--allow-endpoint", url)]
        allows += ["--endpoint-key-env", key_env] if key_env is not None else []
        return main(["augment", str(tmp / "rows.jsonl"), *flag, "--out", str(tmp / "out"), "--overwrite", *extra,
                     *allows])
    with allowing(allow, key_env=key_env):
        augmenter = _load(source, path)
        if run == "augment":
            augmenter.augment(_rows())
        else:
            _rows().map(augmenter, batched=True, load_from_cache_file=False)
    return 0


def _others(url: str) -> list[str]:
    """Allow-list entries close to ``url`` that must not unlock it."""
    host, port = url.split("//")[1].split("/")[0].split(":")
    return [f"http://{host}:{int(port) + 1}/v1", f"https://{host}:{port}/v1", f"http://{host}:{port}/v2",
            f"http://{host}:{port}/v10", f"http://localhost.{host}:{port}/v1", f"http://{host}:{port}/v1x"]


@settings(max_examples=int(__import__("os").environ.get("CFAUG_CONSENT_EXAMPLES", "200")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(source=st.sampled_from(SOURCES), run=st.sampled_from(RUNS), near=st.integers(0, 6))
def test_the_collector_receives_nothing_from_any_loading_path(collector, source, run, near, tmp_path_factory,
                                                              capsys):
    tmp = tmp_path_factory.mktemp("consent")
    path = _author_files(source, collector.url, tmp / "author")
    allow = [] if near == 6 else [_others(collector.url)[near]]
    before = len(collector.requests)
    import os

    os.environ["OPENAI_API_KEY"] = KEY
    try:
        if run == "cli":
            assert _run(source, path, run, tmp, allow) == 2
            err = capsys.readouterr().err
            if source not in ("component config", "recipe url"):
                assert collector.url in err and "--allow-endpoint" in err, err
        elif source == "recipe url":
            with pytest.raises((EndpointNotAllowedError, ComponentLoadError)):
                _run(source, path, run, tmp, allow)
        else:
            with pytest.raises(EndpointNotAllowedError, match="--allow-endpoint"):
                _run(source, path, run, tmp, allow)
    finally:
        del os.environ["OPENAI_API_KEY"]
    assert collector.requests[before:] == []


@pytest.mark.parametrize("source", BUILDS)
@pytest.mark.parametrize("run", RUNS)
def test_allowing_the_address_lets_the_requests_through(collector, source, run, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    path = _author_files(source, collector.url, tmp_path / "author")
    before = len(collector.requests)
    if run == "cli" and source == "component config":
        pytest.skip("the command line loads augmenters and recipes, not bare component configs")
    assert _run(source, path, run, tmp_path, [collector.url.removesuffix("/v1")], key_env="OPENAI_API_KEY") == 0
    sent = collector.requests[before:]
    assert sent and all(r["authorization"] == f"Bearer {KEY}" for r in sent)


def test_an_endpoint_the_user_gives_needs_no_consent(collector):
    before = len(collector.requests)
    augmenter = LLMCounterfactualAugmenter(OpenAICompatibleLLM(base_url=collector.url, model="m", max_retries=0),
                                           checker=None)
    augmenter.augment(_rows())
    assert len(collector.requests) > before


def test_a_users_own_address_replaces_the_saved_one(collector, tmp_path):
    OpenAICompatibleLLM(base_url="http://collector.example/v1", model="m").save_pretrained(tmp_path / "llm")
    before = len(collector.requests)
    with pytest.raises(EndpointNotAllowedError, match="Pass api_key_env='OPENAI_API_KEY' with the address"):
        OpenAICompatibleLLM.from_pretrained(tmp_path / "llm", base_url=collector.url).generate(["hello"], seeds=[0])
    llm = OpenAICompatibleLLM.from_pretrained(tmp_path / "llm", base_url=collector.url, api_key_env=None)
    assert llm.generate(["hello"], seeds=[0]) and len(collector.requests) == before + 1


def test_the_cli_endpoint_option_is_the_users(collector, tmp_path, monkeypatch):
    """--llm URL on the command line is given by the user, also when Ray or a saved copy reloads it."""
    from cfaug_hf.cli import main

    monkeypatch.delenv(ENV, raising=False)
    _rows().to_json(tmp_path / "rows.jsonl")
    before = len(collector.requests)
    assert main(["augment", str(tmp_path / "rows.jsonl"), "--method", "llm", "--llm", collector.url,
                 "--llm-model", "m", "--checker", "none", "--out", str(tmp_path / "out")]) == 0
    assert len(collector.requests) > before
    # The saved augmenter is data from here on: rerunning it needs consent like anyone else's.
    with pytest.raises(EndpointNotAllowedError):
        Augmenter.from_pretrained(tmp_path / "out" / "augmenter").augment(_rows())


def test_a_saved_cache_folder_is_not_used(tmp_path, collector):
    OpenAICompatibleLLM(base_url=collector.url, model="m", cache_dir=str(tmp_path / "elsewhere")).save_pretrained(
        tmp_path / "llm")
    llm = OpenAICompatibleLLM.from_pretrained(tmp_path / "llm")
    assert llm.config.cache_dir is None
    assert OpenAICompatibleLLM.from_pretrained(tmp_path / "llm", cache_dir=str(tmp_path / "c")).config.cache_dir


@pytest.mark.parametrize("bad", ["collector.example", "ftp://x/v1", "http://", "", "http://[::1/v1"])
def test_allow_list_entries_are_addresses(bad):
    from cfaug_hf import allow_endpoints

    with pytest.raises(ValueError, match="http:// or https://"):
        allow_endpoints([bad])


def test_the_environment_variable_allows(monkeypatch):
    monkeypatch.setenv(ENV, "http://a.example/v1, https://b.example")
    assert allowed("http://a.example/v1/") and allowed("https://b.example/v1") and not allowed("http://b.example/v1")


# ----------------------------------------------------------------------------------------- names read as Hub ids
@pytest.mark.parametrize("form", ["string", "repo_id", "filter"])
@pytest.mark.parametrize("where", ["saved", "yaml"])
def test_a_hub_id_shaped_name_never_loads_a_folder_of_the_working_directory(form, where, tmp_path, monkeypatch):
    """A recipe naming ``generator: models/private_gen`` loaded the user's own folder of that name (relative to the
    working directory) and copied it into OUT/augmenter, which ``cfaug push`` publishes."""
    from cfaug_hf import LabelChecker
    from cfaug_hf.sharing.hub import HubError
    from cfaug_hf.testing import tiny_classifier

    LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES"))).save_pretrained(tmp_path / "work" / "models" / "private")
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    box = tmp_path / "box"
    box.mkdir()
    ref = {"string": "models/private", "repo_id": {"type": "checker", "repo_id": "models/private"}}.get(form)
    recipe = {"method": "crossaug", "schema": {"preset": "fact-verification"},
              "components": {"generator": "default", "checker": ref if ref else None}}
    if form == "filter":
        recipe["filters"] = [{"filter": "label_flip", "args": {"checker": {"$component": {
            "type": "checker", "repo_id": "models/private"}}}}]
    with pytest.raises((HubError, ComponentLoadError, OSError)) as caught:
        if where == "saved":
            (box / "cfaug_augmenter.json").write_text(json.dumps({"component_type": "augmenter",
                                                                   "format_version": 1, "config": {}, **recipe}))
            Augmenter.from_pretrained(box)
        else:
            (box / "r.yaml").write_text(json.dumps(recipe))
            Augmenter.from_recipe(box / "r.yaml")
    assert "models/private" in str(caught.value)


def test_hub_ids_keep_the_embedded_offline_copies():
    from cfaug_hf.pretrained import MINILM, resolve_model

    assert resolve_model(HubId(MINILM)).embedded


# ------------------------------------------------------------------------------ addresses compared as addresses
#: Pieces of a path a hostile author may use to leave the allowed /v1 (or to pass for it).
_PIECES = ["v1", "..", ".", "%2e%2e", "%2E%2e", "%2e", "x", "", "v1x", "V1", "%76%31", "%2F", "%5C", "%00", "v1;a",
           "..;", "%252e%252e", "~", "%7e", "\\", "..\\", "chat"]
_HOSTS = ["127.0.0.1", "127.1", "2130706433", "0x7f.0.0.1", "LOCALHOST", "127.0.0.1.", "[::ffff:127.0.0.1]",
          "user@127.0.0.1", "127.0.0.1@127.0.0.1", "127.0.0.1\\@127.0.0.1"]


def _forms():
    return st.builds(lambda scheme, host, port, pieces, tail: f"{scheme}://{host}{port}/{'/'.join(pieces)}{tail}",
                     st.sampled_from(["http", "HTTP", "hTTp"]), st.sampled_from(_HOSTS),
                     st.sampled_from([":{port}", ":0{port}", ""]), st.lists(st.sampled_from(_PIECES), max_size=6),
                     st.sampled_from(["", "/", "?q=1", "#f", "/.", "/.."]))


@settings(max_examples=int(__import__("os").environ.get("CFAUG_CONSENT_EXAMPLES", "200")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(form=_forms())
def test_no_escape_form_of_an_address_leaves_the_allowed_path(collector, form, tmp_path_factory):
    """Issue 80, item 1: a saved endpoint at ``http://HOST:PORT/v1/../../x`` passed an allow entry for
    ``http://HOST:PORT/v1`` (strings were compared) and the key and a row went to ``/x/chat/completions``. Whatever
    the form, every request the collector receives lies under the allowed path, and the key goes only there."""
    import os
    import warnings

    port = collector.url.split(":")[2].split("/")[0]
    url = form.replace("{port}", port)
    tmp = tmp_path_factory.mktemp("escape")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            llm = OpenAICompatibleLLM(base_url=url, model="m", max_retries=0, timeout_s=5, api_key_env=None)
    except ValueError:
        return  # refused where it is made: nothing can be sent
    llm.save_pretrained(tmp / "llm", overwrite=True)
    before = len(collector.requests)
    os.environ["OPENAI_API_KEY"] = KEY
    try:
        with allowing([collector.url], key_env="OPENAI_API_KEY"):
            loaded = OpenAICompatibleLLM.from_pretrained(tmp / "llm")
            try:
                loaded.generate(["The room was dirty."], seeds=[0])
            except EndpointNotAllowedError:
                pass
    finally:
        del os.environ["OPENAI_API_KEY"]
    for request in collector.requests[before:]:
        assert request["path"].startswith("/v1/"), (url, request["path"])


@settings(max_examples=300, deadline=None)
@given(form=_forms(), port=st.integers(1, 65535))
def test_the_normal_form_is_what_the_client_contacts(form, port):
    """What the allow-list compares is what httpx sends: the normal form parses, in httpx, to the same host, port and
    path, and normalising it again changes nothing."""
    import httpx2

    from cfaug_hf.sharing.consent import AddressError, normal_url, parse_address

    try:
        normal = normal_url(form.replace("{port}", str(port)))
    except AddressError:
        return
    ours = parse_address(normal)
    theirs = httpx2.URL(normal)
    assert (theirs.scheme, theirs.host, theirs.port or {"http": 80, "https": 443}[theirs.scheme]) == ours[:3]
    assert theirs.raw_path.decode().split("?")[0].rstrip("/") == ours.path
    assert normal_url(normal) == normal


@pytest.mark.parametrize("entry,url,expected", [
    ("http://h:8000/v1", "http://h:8000/v1/../../x", False),
    ("http://h:8000/v1", "http://h:8000/v1/%2e%2e/x", False),
    ("http://h:8000/v1", "http://H:8000/v1/./chat", True),
    ("http://h/v1", "http://h:80/v1", True),
    ("https://h/v1", "https://h:443/v1/", True),
    ("http://[::1]:8000/v1", "http://[0:0::1]:8000/v1", True),
    ("http://127.0.0.1:8000", "http://127.1:8000/v1", True),
    ("http://h:8000/v1", "http://h:8000/v10", False),
    ("http://h:8000/v1", "http://h:8000/v1%2F..%2Fx", False),
    ("http://h:8000/~u", "http://h:8000/%7Eu/v1", True),
    ("http://h:8000/v1", "http://u@h:8000/v1", False),
    ("http://h:8000/v1", "http://h:8000\\@evil:8000/v1", False),
])
def test_allow_entries_match_normal_forms(entry, url, expected):
    with allowing([entry]):
        assert allowed(url) is expected


@pytest.mark.parametrize("bad,why", [("http://u:p@h/v1", "user name or password"), ("http://h/v1%2Fx", "%2F"),
                                     ("http://h\\x/v1", "backslash"), ("http://h:0/v1", "port 0")])
def test_entries_without_a_safe_normal_form_are_refused_with_the_reason(bad, why):
    from cfaug_hf import allow_endpoints

    with pytest.raises(ValueError, match=why):
        allow_endpoints([bad])


def test_a_redirect_to_another_address_is_never_followed(tmp_path):
    """An allowed endpoint that answers 307 to an address the list does not allow: the second server receives
    nothing (no row, no key)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from llm_server import LLMServer

    target = LLMServer()

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):  # noqa: N802
            self.send_response(307)
            self.send_header("Location", target.url + "/chat/completions")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        OpenAICompatibleLLM(base_url=url, model="m", api_key_env=None, max_retries=0).save_pretrained(tmp_path / "l")
        with allowing([url]):
            result = OpenAICompatibleLLM.from_pretrained(tmp_path / "l").generate_with_info(["hi"], seeds=[0])
        assert result.texts == [[]] and "redirect" in result.errors[0]
        assert target.requests == []
    finally:
        server.shutdown()
        target.close()


# --------------------------------------------------------------------------------- loaded data names no secret
def _saved_llm(tmp: Path, url: str, key_env: str | None) -> Path:
    return OpenAICompatibleLLM(base_url=url, model="m", api_key_env=key_env, max_retries=0).save_pretrained(
        tmp / "llm")


def test_a_key_variable_named_by_loaded_data_is_refused_with_its_whole_name(collector, tmp_path, monkeypatch):
    """Issue 80, item 2: a saved config could choose any variable (a GitHub token) as the Bearer key of an allowed
    address, and the refusal masked part of its name. Now the user names the variable; until then nothing is sent
    and the variable is named in full."""
    monkeypatch.setenv("GH_TOKEN", "ghp_" + "a1" * 18)
    folder = _saved_llm(tmp_path, collector.url, "GH_TOKEN")
    before = len(collector.requests)
    with allowing([collector.url]):
        with pytest.raises(EndpointNotAllowedError, match=r"environment variable GH_TOKEN as the key") as caught:
            OpenAICompatibleLLM.from_pretrained(folder).generate(["hi"], seeds=[0])
    assert "--endpoint-key-env GH_TOKEN " in str(caught.value)
    assert collector.requests[before:] == []
    with allowing([collector.url], key_env="none"):  # the user says: no key
        OpenAICompatibleLLM.from_pretrained(folder).generate(["hi"], seeds=[0])
    assert [r["authorization"] for r in collector.requests[before:]] == [None]
    monkeypatch.setenv("MY_KEY", KEY)
    with allowing([collector.url], key_env="MY_KEY"):  # the user's own variable, whatever the file said
        OpenAICompatibleLLM.from_pretrained(folder).generate(["hi"], seeds=[1])
    assert collector.requests[-1]["authorization"] == f"Bearer {KEY}"
    llm = OpenAICompatibleLLM.from_pretrained(folder, base_url=collector.url, api_key_env="MY_KEY")
    llm.generate(["hi"], seeds=[2])  # an argument is the user's choice too
    assert collector.requests[-1]["authorization"] == f"Bearer {KEY}"


def test_the_cli_names_the_variable_in_full_and_sends_nothing(collector, tmp_path, monkeypatch, capsys):
    from cfaug_hf.cli import main

    monkeypatch.setenv("GH_TOKEN", "ghp_" + "b2" * 18)
    llm = OpenAICompatibleLLM(base_url=collector.url, model="m", api_key_env="GH_TOKEN", max_retries=0)
    LLMCounterfactualAugmenter(llm, checker=None).save_pretrained(tmp_path / "aug")
    _rows().to_json(tmp_path / "rows.jsonl")
    before = len(collector.requests)
    argv = ["augment", str(tmp_path / "rows.jsonl"), "--augmenter", str(tmp_path / "aug"), "--out",
            str(tmp_path / "out"), "--allow-endpoint", collector.url]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "GH_TOKEN as the key" in err and "--endpoint-key-env GH_TOKEN" in err and "GH_TOKEN***" not in err, err
    assert collector.requests[before:] == [] and not (tmp_path / "out").exists()
    assert main([*argv, "--endpoint-key-env", "none"]) == 0
    assert collector.requests[before:] and all(r["authorization"] is None for r in collector.requests[before:])


@pytest.mark.parametrize("field,value", [("model", "0f3a9c2e7d1b4a5f8e6c0b9a2d4f6e8a"),
                                         ("model", "org/AbCdEfGh1234567890XyZwQrTs"),
                                         ("stop", ["sk-proj-0123456789abcdefXYZ"])])
def test_a_key_shaped_string_in_a_loaded_config_is_refused_not_sent(collector, tmp_path, field, value):
    folder = _saved_llm(tmp_path, collector.url, None)
    path = folder / "cfaug_http_llm.json"
    config = json.loads(path.read_text())
    config["llm"][field] = value
    path.write_text(json.dumps(config))
    before = len(collector.requests)
    with allowing([collector.url]), pytest.raises((ValueError, ComponentLoadError), match="looks like an API key"):
        OpenAICompatibleLLM.from_pretrained(folder).generate(["hi"], seeds=[0])
    assert collector.requests[before:] == []


def test_map_workers_and_actors_read_each_entrys_key_variable_from_the_environment(collector, tmp_path,
                                                                                   monkeypatch):
    """`allowing(..., key_env=)` hands each entry's key variable to the processes it starts as ``URL#key=VAR``
    (the command line's own endpoints reach Ray actors this way, each with its variable)."""
    from cfaug_hf.sharing import consent

    monkeypatch.setenv("MY_KEY", KEY)
    folder = _saved_llm(tmp_path, collector.url, "GH_TOKEN")
    with allowing([collector.url], key_env="MY_KEY"):
        env = __import__("os").environ[ENV]
    assert env.endswith(f"{collector.url}#key=MY_KEY")
    monkeypatch.setenv(ENV, env)  # what a worker process sees: the environment, no in-process entries
    assert consent.chosen_key_env(collector.url + "/chat") == "MY_KEY"
    OpenAICompatibleLLM.from_pretrained(folder).generate(["hi"], seeds=[5])
    assert collector.requests[-1]["authorization"] == f"Bearer {KEY}"
