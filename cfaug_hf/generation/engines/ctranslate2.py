"""Generation on CTranslate2: a causal-LM `Generator` converted once (LoRA merged) and decoded by
CTranslate2's C++ engine, int8 on CPU by default.

Use it through the generator: ``generator.use_backend("ctranslate2")``, or ``"auto"`` (the default), which uses it in
float32 for beam search and greedy decoding. Everything around decoding stays the generator's (prompt template,
truncation, stop strings, constraints checked on the outputs, stats), so an augmenter does not know which engine
ran. What differs:

* quantised weights (``int8``, ``int8_float32``) can change which hypothesis wins; ``float32`` keeps the
  transformers outputs (measured in ``benchmarks/generation_backends.py``);
* sampled rows stay on transformers: CTranslate2's ``set_random_seed`` does not make its sampling repeatable
  (OpenNMT/CTranslate2#1757, and measured here: the same row and seed give new samples on every call), which
  would break the contract that a row's output depends only on its seed. Beam search and greedy decoding, CrossAug's
  and RACE's, run on CTranslate2;
* rows with lexical constraints and ``constrained_decoding=True`` still run on transformers (CTranslate2 has no
  constrained beam search).

On CPU it decodes with one single-threaded worker per thread (CTranslate2's ``inter_threads``, one shared copy of
the weights): a call's rows are split so that every worker gets a batch, and at most `SEQUENCES_PER_BATCH` sequences
(rows x beams) decode at once across them, which bounds the attention caches' memory. A row's outputs do not depend
on its worker or batch.

The converted copy lives in `cfaug_hf.pretrained.cache_dir` under ``ctranslate2/``, keyed by the generator's
weights digest, so every later load in any process reads it (the way GGUF checkpoints are cached).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ...deps import require
from ...pretrained import cache_problem, discard_cache, file_sizes
from . import DecodeRequest, DecodeResult, DecodeSettings, DecodeSource, Engine, register_engine
from ...verbosity import get_logger

logger = get_logger(__name__)

__all__ = ["CTranslate2Engine", "COMPUTE_TYPES", "converted_path"]

#: Most sequences (rows x beams) decoded at once, shared among the workers. Beam search keeps every beam's attention
#: cache, about 0.4 GB for 40 sequences of SmolLM2 claims: 32 claims x 5 beams held 1.8 GB, and 8 x 5 was faster as
#: well as 4x smaller (cache-friendlier on CPU).
SEQUENCES_PER_BATCH = 40

#: Decode with one single-threaded worker per thread (False: one worker using them all, as before 2026-12-02;
#: kept for the benchmark's comparison).
ONE_THREAD_WORKERS = True

#: Compute type of an explicit ``use_backend("ctranslate2")``; ``"auto"`` uses float32 (the transformers outputs).
DEFAULT_COMPUTE_TYPE = "int8_float32"

#: Compute types accepted on CPU (CTranslate2 also takes the float16/bfloat16 ones on GPUs).
COMPUTE_TYPES = ("default", "auto", "int8", "int8_float32", "int8_float16", "int8_bfloat16", "int16", "float16",
                 "bfloat16", "float32")
_MARKER = "cfaug_ct2.json"
_WHAT = "CTranslate2 copy of the generator"


def thread_budget() -> int:
    """Threads one decoder may use: ``OMP_NUM_THREADS`` where it is set (Ray sets it to an actor's CPU share, so two
    actors on two cores do not each start two threads), else the cores, at most 4."""
    try:
        budget = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:
        budget = 0
    return budget if budget > 0 else min(4, os.cpu_count() or 1)


def converted_path(source: DecodeSource) -> Path:
    """Where the CTranslate2 copy of ``source``'s weights is (or will be) cached."""
    from ...fingerprint import digest_json
    from ...pretrained import cache_dir

    key = digest_json({"weights": source.weights_digest(), "ct2": require("ctranslate2", "the CTranslate2 "
                                                                          "backend").__version__})
    return cache_dir() / "ctranslate2" / key[:20]


def _convert(source: DecodeSource, target: Path) -> None:
    """Write ``source``'s model, LoRA merged, as a CTranslate2 model in ``target`` (atomically)."""
    ctranslate2 = require("ctranslate2", "the CTranslate2 backend")
    # a warning so that the default verbosity shows it: the first run pauses here for about 30 CPU-seconds
    logger.warning("Converting the generator to CTranslate2, once for these weights (about 30 s on 2 cores for "
                   "135M parameters); later runs read the copy in %s.", target)
    model = source.merged_model()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        hf_dir, ct2_dir = tmp / "hf", tmp / "ct2"
        model.save_pretrained(hf_dir)
        source.tokenizer.save_pretrained(hf_dir)
        # Converted without quantisation, so one copy serves every compute type chosen at load time.
        ctranslate2.converters.TransformersConverter(str(hf_dir), low_cpu_mem_usage=True).convert(str(ct2_dir))
        (ct2_dir / _MARKER).write_text(json.dumps({"base_model": source.base_model,
                                                   "files": file_sizes(ct2_dir)}, indent=2) + "\n")
        try:
            os.rename(ct2_dir, target)
        except OSError:
            if not (target / _MARKER).is_file():  # another process finished first: keep its copy
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@register_engine
@dataclass
class CTranslate2Engine(Engine):
    """A CTranslate2 ``Generator`` for one causal-LM `Generator`'s weights.

    Examples:
        >>> from cfaug_hf import Generator
        >>> from cfaug_hf.testing import tiny_causal_lm
        >>> gen = Generator(*tiny_causal_lm(), num_beams=2, max_new_tokens=4).use_backend("ctranslate2")
        >>> len(gen.generate(["the cat sat"])[0])  # doctest: +SKIP
        1
    """

    name: ClassVar[str] = "ctranslate2"
    requires: ClassVar[str | None] = "ctranslate2"
    rank: ClassVar[int] = 10

    path: Path
    compute_type: str = DEFAULT_COMPUTE_TYPE
    threads: int = 0
    source: DecodeSource | None = None  # the tokenizer and end tokens its requests are decoded with

    @classmethod
    def supports(cls, source: DecodeSource, settings: DecodeSettings, options: dict[str, Any]) -> str | None:
        if source.is_encoder_decoder:
            return "it runs causal LMs (e.g. SmolLM2); this generator is encoder-decoder"
        if settings.do_sample:
            return "its sampling is not repeatable per row (OpenNMT/CTranslate2#1757)"
        return None

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        if options.get("compute_type", DEFAULT_COMPUTE_TYPE) not in COMPUTE_TYPES:
            raise ValueError(f"compute_type must be one of {list(COMPUTE_TYPES)}, got {options['compute_type']!r}.")

    @classmethod
    def exact(cls, options: dict[str, Any]) -> bool:
        return options.get("compute_type", DEFAULT_COMPUTE_TYPE) == "float32"

    @classmethod
    def key(cls, options: dict[str, Any]) -> dict[str, Any]:
        return {"engine": cls.name, "version": require("ctranslate2", "the CTranslate2 backend").__version__,
                "compute_type": options.get("compute_type", DEFAULT_COMPUTE_TYPE)}

    @classmethod
    def load(cls, source: DecodeSource, options: dict[str, Any], settings: DecodeSettings) -> CTranslate2Engine:
        return cls.for_source(source, compute_type=options.get("compute_type", DEFAULT_COMPUTE_TYPE),
                              threads=options.get("threads", 0))

    @classmethod
    def for_source(cls, source: DecodeSource, *, compute_type: str = DEFAULT_COMPUTE_TYPE, threads: int = 0
                   ) -> CTranslate2Engine:
        if source.is_encoder_decoder:
            raise ValueError("The CTranslate2 backend runs causal-LM generators (e.g. SmolLM2); this generator is "
                             "encoder-decoder, so it stays on backend='transformers'.")
        cls.check_options({"compute_type": compute_type})
        path = converted_path(source)
        for attempt in (1, 2):  # a damaged cache entry is converted again, once
            problem = cache_problem(path, _MARKER)
            if problem:
                if problem != "missing":
                    discard_cache(path, problem, _WHAT)
                _convert(source, path)
            try:
                return cls(path, compute_type, threads, source)
            except (RuntimeError, OSError, ValueError) as err:
                if attempt == 2:
                    from ...sharing.folders import ComponentLoadError

                    raise ComponentLoadError(f"The CTranslate2 copy of the generator in {path} cannot be loaded "
                                             f"even after converting it again ({type(err).__name__}: {err}); use "
                                             f"backend='transformers'.") from None
                discard_cache(path, f"{type(err).__name__}: {str(err)[:200]}", _WHAT)
        raise AssertionError("unreachable")

    def __post_init__(self) -> None:
        ctranslate2 = require("ctranslate2", "the CTranslate2 backend")
        self._ct2 = ctranslate2
        # One single-threaded worker per thread, each decoding its own batch (the weights are shared): at 5-40
        # sequences a step the matrix products are too small for two threads to halve them. On 2 cores, claim
        # negation with identical outputs: 1.11x one batch on two threads at the same memory (the workers share
        # SEQUENCES_PER_BATCH); 1.30x with a full batch each, which held 0.5 GB more (benchmarks/engines.py).
        threads = self.threads or thread_budget()
        self.workers = threads if ONE_THREAD_WORKERS else 1
        self.model = ctranslate2.Generator(str(self.path), device="cpu", compute_type=self.compute_type,
                                           intra_threads=threads // self.workers, inter_threads=self.workers)

    def describe(self) -> dict[str, Any]:
        return {"engine": "ctranslate2", "version": self._ct2.__version__, "compute_type": self.compute_type,
                "workers": self.workers}

    def decode(self, request: DecodeRequest) -> DecodeResult:
        from .transformers import cut_at_stop

        source, cfg = self.source, request.settings
        if source is None:
            raise ValueError("This CTranslate2 engine was built from a path alone; load it for a source "
                             "(CTranslate2Engine.load) to decode requests.")
        tok, result = source.tokenizer, DecodeResult.empty(len(request.prompts))
        tokens = [tok.convert_ids_to_tokens(tok(prompt, add_special_tokens=not cfg.chat)["input_ids"])
                  for prompt in request.prompts]
        stop_ids = source.stop_token_ids(cfg.stop) if cfg.stop else []
        found = self.generate(tokens, cfg, eos_ids=source.eos_ids, stop_ids=stop_ids)
        for i, row in enumerate(found):
            for ids, finished in row:
                text, stopped = cut_at_stop(tok.decode(ids, skip_special_tokens=True).strip(), cfg.stop)
                result.add(i, text.strip(), cut=not (stopped or finished), tokens=len(ids))
        return result

    def generate(self, prompts: list[list[str]], config: Any, *, eos_ids: list[int], stop_ids: list[int]
                 ) -> list[list[tuple[list[int], bool]]]:
        """For each prompt (as tokens), ``config.num_return_sequences`` beam-search or greedy outputs as (token ids,
        finished). Like transformers' path, a beam search ends only at an end token (a beam cut at a stop string
        would change which hypotheses win); greedy rows also end at a token holding a stop string."""
        if config.do_sample:
            raise ValueError("CTranslate2 sampling is not repeatable per row; sampled rows run on transformers.")
        ends = list(eos_ids) + (list(stop_ids) if config.num_beams == 1 else [])
        results = self.model.generate_batch(prompts, beam_size=config.num_beams,
                                            num_hypotheses=config.num_return_sequences, end_token=ends,
                                            max_batch_size=self.rows_per_batch(len(prompts), config),
                                            max_length=config.max_new_tokens,
                                            include_prompt_in_result=False, return_end_token=True)
        return [[self._one(ids, ends) for ids in r.sequences_ids] for r in results]

    def rows_per_batch(self, n_rows: int, config: Any) -> int:
        """At most `SEQUENCES_PER_BATCH` sequences (rows x beams) decoding at once across the workers, and few
        enough rows a batch that every worker gets one when there are rows for them."""
        cap = min(config.batch_size, max(1, SEQUENCES_PER_BATCH // (config.num_beams * self.workers)))
        return max(1, min(cap, -(-n_rows // self.workers)))

    @staticmethod
    def _one(ids: list[int], ends: list[int]) -> tuple[list[int], bool]:
        return ids, bool(ids) and ids[-1] in ends
