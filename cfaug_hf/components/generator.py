"""Text-to-text generation with any seq2seq or causal language model, batched and reproducible per row."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..sharing.configs import TypedConfig
from ..generation.engines import (AUTO, DecodeRequest, DecodeSettings, DecodeSource, choose_engine, engine_class,
                       engine_names)

#: The options of ``use_backend("auto")``: an engine that takes a compute type runs in float32, which keeps the
#: transformers outputs (CTranslate2's int8 changes some).
AUTO_OPTIONS: dict[str, Any] = {"compute_type": "float32"}
from ..generation.engines.transformers import cut_at_stop
from ..fingerprint import stable_hash
from ..generation import Constraint, GenerationResult, apply_constraints
from ..sharing.credentials import scrub_text
from .base import ComponentLoadError, PretrainedComponent, load_weights
from ..verbosity import get_logger

__all__ = ["Generator", "GeneratorConfig", "GenerationResult"]

logger = get_logger(__name__)


@dataclass
class GeneratorConfig(TypedConfig):
    """How a `Generator` turns input texts into prompts and decodes outputs."""

    input_template: str = field(default="{text}", metadata={
        "help": "Prompt built from each input; must contain '{text}'. For causal LMs it is followed by the output."})
    chat: bool = field(default=False, metadata={
        "help": "Wrap the prompt as a user message with the tokenizer's chat template (instruction-tuned LMs)."})
    max_source_length: int = field(default=128, metadata={
        "help": "Input tokens kept per text; longer inputs are cut at a token boundary and counted."})
    max_new_tokens: int = field(default=64, metadata={"help": "Most tokens generated per output."})
    num_beams: int = field(default=5, metadata={"help": "Beam width (CrossAug uses 5). 1 means greedy or sampling."})
    num_return_sequences: int = field(default=1, metadata={"help": "Outputs per input (<= num_beams with beams)."})
    do_sample: bool = field(default=False, metadata={
        "help": "Sample instead of beam search (needs num_beams=1). Sampling is seeded per row, so it is "
                "reproducible whatever the batch."})
    temperature: float = field(default=1.0, metadata={"help": "Sampling temperature."})
    top_k: int = field(default=50, metadata={"help": "Sample among the k most likely tokens (0 = all)."})
    top_p: float = field(default=1.0, metadata={"help": "Nucleus sampling mass (1.0 = off)."})
    batch_size: int = field(default=32, metadata={"help": "Inputs per forward pass."})
    constrained_decoding: bool = field(default=True, metadata={
        "help": "With per-row constraints (generate_with_info(constraints=...)) and beam search, decode each "
                "constrained row with lexically constrained beam search (cfaug_hf.generation.constrained), so the beams work "
                "the required phrases in; False only drops the outputs of plain beam search that miss them. Every "
                "output is verified either way."})
    stop: tuple[str, ...] = field(default=("\n",), metadata={
        "help": "Causal LMs: each output is cut at the first of these strings, and an output that reached one counts "
                "as finished. The default, a newline, keeps one line; () keeps everything up to the end token. With "
                "greedy decoding or sampling, generation of a row also stops there (saving time)."})

    def __post_init__(self) -> None:
        self.stop = tuple(self.stop)
        if any(not isinstance(s, str) or not s for s in self.stop):
            raise ValueError(f"stop must hold non-empty strings, got {list(self.stop)}.")
        if "{text}" not in self.input_template:
            raise ValueError(f"input_template must contain '{{text}}', got {self.input_template!r}.")
        if self.do_sample and self.num_beams != 1:
            raise ValueError("do_sample=True needs num_beams=1: beam sampling is not reproducible per row.")
        if not self.do_sample and self.num_return_sequences > self.num_beams:
            raise ValueError(f"num_return_sequences={self.num_return_sequences} exceeds num_beams={self.num_beams}.")
        for name in ("max_source_length", "max_new_tokens", "num_beams", "num_return_sequences", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}.")


class Generator(PretrainedComponent):
    """Wraps a seq2seq (``AutoModelForSeq2SeqLM``) or causal (``AutoModelForCausalLM``) model for batched rewriting.

    Inputs are formatted with ``input_template`` (optionally as a chat message), cut to ``max_source_length`` tokens
    at a token boundary (counted in ``stats["input_truncated"]``, with one warning), generated in batches with beam
    search or per-row seeded sampling, and decoded without the prompt.

    Examples:
        >>> from cfaug_hf.testing import tiny_seq2seq
        >>> gen = Generator(*tiny_seq2seq(), num_beams=2, max_new_tokens=5)
        >>> outs = gen.generate(["the cat sat on the mat", "a dog"])
        >>> len(outs), len(outs[0])
        (2, 1)
    """

    config_name = "cfaug_generator.json"
    component_type = "generator"
    config_class = GeneratorConfig
    card_summary = ("A text rewriter used by cfaug-hf augmenters to write counterfactuals, e.g. CrossAug's negative "
                    "claims: given a text it returns a minimally edited version whose label should flip.")

    @property
    def pipeline_tag(self) -> str:  # type: ignore[override]
        return "text2text-generation" if self.is_encoder_decoder else "text-generation"

    def card_tags(self) -> list[str]:
        return ["lora"] if self._is_peft() else []

    def card_usage(self) -> str:
        return ("It is used as `CrossAugAugmenter(generator)`, or directly: `generator.generate([\"Paris is the "
                "capital of France.\"])`. Prompt template: `" + self.config.input_template.replace("\n", "\\n")
                + "`.")

    def __init__(self, model: Any, tokenizer: Any, config: GeneratorConfig | None = None, *,
                 device: str | None = None, base_model: str | None = None,
                 training_info: dict[str, Any] | None = None, **overrides: Any) -> None:
        self._setup(model, tokenizer, config=config, overrides=overrides, device=device, base_model=base_model,
                    training_info=training_info)
        # The engine choice (see use_backend): "auto" from the start, as use_backend("auto") sets it, so the Python
        # API decodes on the same engine as the command line (CTranslate2 in float32 for beams, when installed).
        self._backend: tuple[str, dict[str, Any]] = (AUTO, dict(AUTO_OPTIONS))
        self._engines: dict[str, Any] = {}  # loaded engines by name, shared with twins (same weights)
        if tokenizer.pad_token_id is None:
            # Causal LMs often ship without a pad token; padding is masked, so the end token can stand in.
            tokenizer.pad_token = tokenizer.eos_token

    # ----------------------------------------------------------------------------------------------- construction
    @property
    def is_encoder_decoder(self) -> bool:
        return bool(getattr(self.model.config, "is_encoder_decoder", False))

    @classmethod
    def from_base(cls, name_or_path: str | os.PathLike, *, revision: str | None = None, device: str | None = None,
                  config: GeneratorConfig | None = None, **overrides: Any) -> Generator:
        """A generator on pretrained weights (Hub id, folder or embedded copy), seq2seq or causal as configured."""
        from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

        from ..pretrained import load_config, load_model, load_tokenizer, resolve_model

        ref = resolve_model(name_or_path, revision)
        model_config = load_config(name_or_path, revision=revision)
        auto = AutoModelForSeq2SeqLM if getattr(model_config, "is_encoder_decoder", False) else AutoModelForCausalLM
        model = load_model(auto, name_or_path, revision=revision)
        tokenizer = load_tokenizer(name_or_path, revision=revision)
        return cls(model, tokenizer, config, device=device, base_model=ref.name, **overrides)

    @classmethod
    def from_encoder_decoder(cls, encoder: str | os.PathLike, decoder: str | os.PathLike | None = None, *,
                             device: str | None = None, config: GeneratorConfig | None = None,
                             **overrides: Any) -> Generator:
        """A seq2seq generator warm-started from two encoder checkpoints (e.g. MiniLM), as in BERT2BERT."""
        from transformers import EncoderDecoderModel

        from ..pretrained import load_tokenizer, resolve_model

        enc, dec = resolve_model(encoder), resolve_model(decoder or encoder)
        model = EncoderDecoderModel.from_encoder_decoder_pretrained(enc.path, dec.path)
        tokenizer = load_tokenizer(encoder)
        model.config.decoder_start_token_id = tokenizer.cls_token_id or tokenizer.bos_token_id
        model.config.eos_token_id = tokenizer.sep_token_id or tokenizer.eos_token_id
        model.config.pad_token_id = tokenizer.pad_token_id
        model.generation_config.decoder_start_token_id = model.config.decoder_start_token_id
        model.generation_config.eos_token_id = model.config.eos_token_id
        model.generation_config.pad_token_id = model.config.pad_token_id
        return cls(model, tokenizer, config, device=device, base_model=f"{enc.name}+{dec.name}", **overrides)

    # ---------------------------------------------------------------------------------------------------- prompts
    def _cut(self, text: str) -> tuple[str, bool]:
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        limit = self.config.max_source_length
        if len(enc["input_ids"]) <= limit:
            return text, False
        return text[:enc["offset_mapping"][limit - 1][1]], True

    def format_prompt(self, text: str) -> str:
        """The exact string fed to the model for ``text`` (template, then chat wrapping if enabled)."""
        prompt = self.config.input_template.format(text=text)
        if self.config.chat:
            prompt = self.tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                                        add_generation_prompt=True)
        return prompt

    def prompts(self, texts: list[str]) -> tuple[list[str], list[bool]]:
        cut = [self._cut(t) for t in texts]
        return [self.format_prompt(t) for t, _ in cut], [c for _, c in cut]

    # ------------------------------------------------------------------------------------------------- generation
    def generate(self, texts: list[str], *, seeds: list[int] | None = None) -> list[list[str]]:
        """``num_return_sequences`` outputs for each text."""
        return self.generate_with_info(texts, seeds=seeds).texts

    def generate_with_info(self, texts: list[str], *, seeds: list[int] | None = None,
                           constraints: Sequence[Constraint | None] | None = None) -> GenerationResult:
        """Like `generate`, plus which inputs and outputs were truncated. ``seeds`` matter only for sampling;
        candidates that break their row's ``constraints`` are dropped and counted (see `cfaug_hf.generation`).
        """
        if seeds is not None and len(seeds) != len(texts):
            raise ValueError(f"Got {len(seeds)} seeds for {len(texts)} texts.")
        cfg = self.config
        if cfg.do_sample:  # beam search never reads the seeds (they may be derived lazily, see RowSeeds)
            seeds = list(seeds) if seeds is not None else [stable_hash("text", t) for t in texts]
        prompts, in_cut = self.prompts(list(texts))
        self._count_truncated(sum(in_cut), "max_source_length", cfg.max_source_length)
        outputs: list[list[str]] = [[] for _ in texts]
        out_cut: list[list[bool]] = [[] for _ in texts]
        constrained = set()
        if constraints is not None and cfg.constrained_decoding and not cfg.do_sample and cfg.num_beams > 1:
            if len(constraints) != len(texts):
                raise ValueError(f"Got {len(constraints)} constraints for {len(texts)} texts.")
            constrained = {i for i, c in enumerate(constraints) if c}
            if constrained:
                self.merge_adapter()
                self._constrained_rows(prompts, constraints, constrained, outputs, out_cut)
        # Longest first, so each batch pads to similar lengths.
        order = sorted((i for i in range(len(texts)) if i not in constrained), key=lambda i: -len(prompts[i]))
        self.model.eval()
        if order:
            self._eos_ids()  # a model without an end token fails here, saying how to give it one
            engine = self._engine()
            if engine.name == "transformers":  # another engine decodes its own copy: the torch weights stay unread
                self.merge_adapter()
            decoded = engine.decode(DecodeRequest([prompts[i] for i in order],
                                                  [seeds[i] for i in order] if seeds is not None else None,
                                                  self._decode_settings()))
            for j, i in enumerate(order):
                outputs[i], out_cut[i] = decoded.texts[j], decoded.cut[j]
        n_out_cut = sum(sum(c) for c in out_cut)
        if n_out_cut:
            self.stats["output_truncated"] += n_out_cut
        self.stats["inputs"] += len(texts)
        result = apply_constraints(GenerationResult(outputs, in_cut, out_cut), constraints)
        self.stats["constraint_failures"] += sum(result.constraint_failures)
        return result

    def _stop_token_ids(self, stop: tuple[str, ...]) -> list[int]:
        """Vocabulary entries whose text holds a stop string: greedy and sampled rows end on them (the text is
        cut at the stop string afterwards, as on the transformers backend)."""
        if not stop:
            return []
        key = tuple(stop)
        memo = self.__dict__.get("_stop_ids_memo")
        if memo is None or memo[0] != key:
            vocab = self.tokenizer.convert_ids_to_tokens(list(range(len(self.tokenizer))))
            ids = [i for i, piece in enumerate(vocab) if piece is not None
                   and any(s in self.tokenizer.convert_tokens_to_string([piece]) for s in key)]
            memo = (key, ids)
            self._stop_ids_memo = memo
        return memo[1]

    def configure(self, **changes: Any) -> Generator:
        """Change decoding settings (fields of `GeneratorConfig`), checked together as a new config is:
        setting fields one by one could leave a combination the config refuses (beam search with sampling).

        Examples:
            >>> from cfaug_hf.testing import tiny_seq2seq
            >>> gen = Generator(*tiny_seq2seq(), num_beams=2, max_new_tokens=5)
            >>> gen.configure(num_beams=4, num_return_sequences=3).config.num_return_sequences
            3
            >>> Generator(*tiny_seq2seq(), do_sample=True, num_beams=1).configure(num_beams=3)
            Traceback (most recent call last):
            ...
            ValueError: do_sample=True needs num_beams=1: beam sampling is not reproducible per row.
        """
        self.config = dataclasses.replace(self.config, **changes)
        return self

    def use_backend(self, backend: str = AUTO, *, compute_type: str | None = None, threads: int = 0) -> Generator:
        """Decode on ``backend``, a name in the engine table (`cfaug_hf.generation.engines`): ``"auto"`` (the default)
        uses, for each call, the best installed engine that supports the settings and gives the transformers
        outputs (CTranslate2 in float32 for beam search and greedy decoding of a causal LM, when the ``fast`` extra
        is installed; transformers otherwise); ``"transformers"``; ``"ctranslate2"`` (causal LMs, converted once
        and cached; ``compute_type`` ``int8_float32`` by default, ``float32`` keeps the transformers outputs).
        Settings an engine cannot reproduce (sampled rows on CTranslate2) run on transformers. The engine is
        loaded now, so a conversion happens here rather than in the first batch. Returns the generator; its
        fingerprint records the engine when its outputs may differ from transformers'.

        Examples:
            >>> from cfaug_hf.testing import tiny_causal_lm
            >>> gen = Generator(*tiny_causal_lm(), max_new_tokens=4)
            >>> gen.use_backend("transformers").backend is None
            True
        """
        if backend != AUTO:
            engine_class(backend)  # an unknown name fails here, naming the table
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
            raise ValueError(f"threads must be a whole number >= 0 (0: the engine's default), got {threads!r}.")
        options: dict[str, Any] = {"threads": threads} if threads else {}
        if compute_type is not None:
            options["compute_type"] = compute_type
        elif backend == AUTO:
            options.update(AUTO_OPTIONS)
        for name in engine_names():  # each engine checks the options it reads, whichever decodes
            engine_class(name).check_options(options)
        if backend not in (AUTO, "transformers"):
            cls = engine_class(backend)
            if not cls.available():
                from ..deps import require

                require(cls.requires, f"backend={backend!r}")
            problem = cls.supports(self._decode_source(), self._decode_settings(), options)
            if problem and self.is_encoder_decoder:
                raise ValueError(f"backend={backend!r} cannot decode this generator: {problem}; it stays on "
                                 f"backend='transformers'.")
        self._backend = (backend, options)
        self._engines = {}  # loaded again (a damaged cache entry is repaired here), for this generator only
        self._engine()
        return self

    def _engine(self) -> Any:
        """The engine that decodes the next call with the current settings, loaded on first use and again when
        the options or the weights changed (an engine with a converted copy would decode the old weights)."""
        choice, options = self._backend
        source, settings = self._decode_source(), self._decode_settings()
        cls = choose_engine(source, settings, choice, options)
        loaded, weights = self._engines.get(cls.name), self._weights_digests()
        if loaded is None or loaded[:2] != (options, weights):
            loaded = (options, weights, cls.load(source, options, settings))
            self._engines[cls.name] = loaded
        return loaded[2]

    def _decode_settings(self) -> DecodeSettings:
        # encoder-decoder outputs end at their end token: stop strings are for causal LMs
        return DecodeSettings.of(self.config, shared_prefix=getattr(self, "shared_prefix", True),
                                 **({"stop": ()} if self.is_encoder_decoder else {}))

    def _decode_source(self) -> DecodeSource:
        """What an engine may read of this generator: the model, the tokenizer and facts about them."""
        try:
            eos = self._eos_ids()
        except ValueError:  # refused when generating; choosing an engine does not need it
            eos = []
        return DecodeSource(self.model, self.tokenizer, self.is_encoder_decoder, eos, self.device, self.base_model,
                            weights_digest=self._weights_digests, merged_model=self.merged_model,
                            stop_token_ids=self._stop_token_ids)

    def merged_model(self) -> Any:
        """The model with its LoRA adapter folded into the base weights, as a copy (the generator keeps its adapter
        as it was); the model itself when it has no adapter. What another runtime converts (CTranslate2, vLLM),
        or what to save as a standalone model.

        Examples:
            >>> from cfaug_hf.testing import tiny_causal_lm
            >>> gen = Generator(*tiny_causal_lm())
            >>> gen.merged_model() is gen.model
            True
        """
        if not self._is_peft():
            return self.model
        import copy

        self.unmerge_adapter()  # a merged adapter would be folded in twice
        return copy.deepcopy(self.model).merge_and_unload()

    def __getstate__(self) -> dict[str, Any]:
        # Loaded engines hold native handles (CTranslate2's model): a worker process loads its own, from the cache.
        state = dict(self.__dict__)
        state["_engines"] = {}
        return state

    @property
    def backend(self) -> Any:
        """The engine decoding this generator's current settings, or None for transformers."""
        engine = self._engine()
        return None if engine.name == "transformers" else engine

    def fingerprint(self) -> str:
        base = super().fingerprint()
        choice, options = self._backend
        cls = choose_engine(self._decode_source(), self._decode_settings(), choice, options)
        if cls.exact(options):  # the transformers outputs: the same cache entries serve every such engine
            return base
        from ..fingerprint import digest_json

        return digest_json({"generator": base, "backend": cls.key(options)})

    def _constrained_rows(self, prompts: list[str], constraints: Sequence[Constraint | None], rows: set[int],
                          outputs: list[list[str]], out_cut: list[list[bool]]) -> None:
        """Constrained beam search over batches of rows (each row has its own constraint and beams)."""
        from ..generation.constrained import constrained_beam_search_batch

        cfg = self.config
        order = sorted(rows, key=lambda i: -len(prompts[i]))
        for start in range(0, len(order), cfg.batch_size):
            idx = order[start:start + cfg.batch_size]
            found = constrained_beam_search_batch(
                self.model, self.tokenizer, [prompts[i] for i in idx], [constraints[i] for i in idx],
                num_beams=cfg.num_beams, num_return_sequences=cfg.num_return_sequences,
                max_new_tokens=cfg.max_new_tokens, max_source_length=cfg.max_source_length + 8,
                eos_token_ids=self._eos_ids())
            for i, texts in zip(idx, found):
                texts = [cut_at_stop(t, cfg.stop if not self.is_encoder_decoder else ())[0].strip() for t in texts]
                outputs[i] = texts
                out_cut[i] = [False] * len(texts)
        self.stats["constrained_rows"] += len(rows)

    def _eos_ids(self) -> list[int]:
        ids = self.model.generation_config.eos_token_id
        ids = [ids] if isinstance(ids, int) else list(ids or [])
        if self.tokenizer.eos_token_id is not None and self.tokenizer.eos_token_id not in ids:
            ids.append(self.tokenizer.eos_token_id)
        if not ids:
            raise ValueError("The model has no end-of-sequence token; set model.generation_config.eos_token_id.")
        return ids

    # --------------------------------------------------------------------------------------------- save and load
    def get_config_dict(self) -> dict[str, Any]:
        return {"generator": dataclasses.asdict(self.config), "base_model": self.base_model,
                "is_encoder_decoder": self.is_encoder_decoder, "adapter": self._saves_adapter(),
                "training": self.training_info}

    def _lora_layers(self) -> list[Any]:
        if not self._is_peft():
            return []
        from peft.tuners.tuners_utils import BaseTunerLayer

        return [m for m in self.model.modules() if isinstance(m, BaseTunerLayer)]

    def merge_adapter(self) -> None:
        """Fold a LoRA adapter into the base weights for generation (1.1-1.2x faster, same outputs); a no-op
        without an adapter or when already merged. `generate` calls it; the adapter-only save and the
        fingerprint are unchanged. Call `unmerge_adapter` before training ``generator.model`` yourself
        (``train_generator`` does)."""
        layers = self._lora_layers()
        if not layers or all(m.merged for m in layers):
            return
        digests, tensors = self._weights_digests(), self.weights_fingerprint()
        from ..pretrained import quiet_dependency_warnings

        with quiet_dependency_warnings():
            self.model.base_model.merge_adapter()
        self._keep_fingerprint(digests, tensors)

    def unmerge_adapter(self) -> None:
        """Undo `merge_adapter`, so the adapter's own weights take gradients again."""
        layers = self._lora_layers()
        if not any(m.merged for m in layers):
            return
        digests, tensors = self._weights_digests(), self.weights_fingerprint()
        self.model.base_model.unmerge_adapter()
        self._keep_fingerprint(digests, tensors)

    @classmethod
    def _load(cls, folder: Path, config: dict[str, Any], *, device: str | None = None, **overrides: Any) -> Generator:
        from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer, EncoderDecoderModel

        gen_config = cls._config_section(folder, config, "generator", cls.config_class)
        tokenizer = AutoTokenizer.from_pretrained(folder)
        if config.get("adapter"):
            auto = AutoModelForSeq2SeqLM if config.get("is_encoder_decoder") else AutoModelForCausalLM
            model = cls._load_adapter(auto, folder, config)
        else:
            import json

            if not (folder / "config.json").is_file():
                raise ComponentLoadError(f"{folder} is an incomplete saved Generator: 'config.json' is missing.")
            model_type = json.loads((folder / "config.json").read_text()).get("model_type")
            auto = (EncoderDecoderModel if model_type == "encoder-decoder" else
                    AutoModelForSeq2SeqLM if config.get("is_encoder_decoder") else AutoModelForCausalLM)
            model = load_weights(auto, folder, "Generator")
        generator = cls(model, tokenizer, gen_config, device=device, training_info=config.get("training"),
                        **overrides)
        generator.base_model = config.get("base_model")  # the original base, not the folder it was loaded from
        return generator

    def __repr__(self) -> str:
        kind = "seq2seq" if self.is_encoder_decoder else "causal"
        return scrub_text(f"Generator({kind}, base_model={self.base_model!r}, {self.config})")
