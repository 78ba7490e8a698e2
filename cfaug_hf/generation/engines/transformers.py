"""The transformers engine: supports every generator and setting, and is the reference the others are measured by.

Beam search, greedy decoding and seq2seq models run ``model.generate``. Sampled candidates of a causal LM run a
decoding loop of its own, which gives exactly the tokens ``generate`` gives with the per-row Gumbel noise
(`gumbel_warpers`) at a fraction of the cost (``benchmarks/engines.py``):

* each prompt is computed once for all of its candidates (``generate`` repeats it ``num_return_sequences`` times);
* candidates of a row that have sampled the same tokens so far are one sequence in the batch until their samples
  differ (a prefix tree), since their next-token distribution is the same; each still draws its own noise;
* a candidate leaves the batch when it ends (an end token or a stop string), instead of riding along until the
  longest one in its batch ends;
* logits are computed for the last position only.

A row's candidates depend on (its seed, its prompt, the model) only: never on its batch neighbours.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...fingerprint import stable_hash
from . import DecodeRequest, DecodeResult, DecodeSettings, DecodeSource, Engine, register_engine

__all__ = ["TransformersEngine", "gumbel_warpers", "candidate_seeds", "cut_at_stop"]


def candidate_seeds(seed: int, k: int) -> list[int]:
    """The seeds of a row's ``k`` sampled candidates (the row's own seed when it has one candidate)."""
    return [seed] if k == 1 else [stable_hash("return", seed, j) for j in range(k)]


def cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    r"""``text`` up to the first of the ``stop`` strings, and whether one was found.

    Examples:
        >>> cut_at_stop("Paris is small.\nNext claim:", ["\n"])
        ('Paris is small.', True)
    """
    ends = [pos for pos in (text.find(s) for s in stop) if pos >= 0]
    return (text[:min(ends)], True) if ends else (text, False)


def gumbel_noise_uniforms(seed: int, step: int, vocab: int, out: Any = None) -> Any:
    """The uniform draws behind one candidate's Gumbel noise at one step: a stream of its own, seeded from (its
    seed, the step), so its sample depends on nothing else."""
    import torch

    g = torch.Generator().manual_seed(stable_hash("gumbel", seed, step))
    return torch.rand(vocab, generator=g, dtype=torch.float32, out=out)


def gumbel_warpers(seeds: list[int], temperature: float, top_k: int, top_p: float) -> Any:
    """Logits processors for ``model.generate``: temperature, top-k and top-p, then sampling as argmax(log p +
    Gumbel noise), the noise of candidate ``i`` drawn from ``seeds[i]`` and the step number.

    ``generate(do_sample=True)`` draws from one global RNG across the batch, so a row's sample depends on its
    neighbours. Adding per-row Gumbel noise to the warped logits and decoding greedily samples from exactly the same
    distribution, and a row's sample depends only on (its seed, the model, its input).
    """
    import torch
    from transformers import LogitsProcessor, LogitsProcessorList

    class RowGumbel(LogitsProcessor):
        def __init__(self) -> None:
            self.start: int | None = None

        def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
            if self.start is None:
                self.start = input_ids.shape[1]
            step = input_ids.shape[1] - self.start
            noise = torch.empty_like(scores)
            for i, seed in enumerate(seeds):
                u = gumbel_noise_uniforms(seed, step, scores.shape[1]).clamp_(1e-10, 1 - 1e-7)
                noise[i] = -torch.log(-torch.log(u)).to(scores.device, scores.dtype)
            return scores.log_softmax(-1) + noise

    return LogitsProcessorList([*_warpers(temperature, top_k, top_p), RowGumbel()])


def _warpers(temperature: float, top_k: int, top_p: float) -> list[Any]:
    from transformers import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    procs: list[Any] = []
    if temperature != 1.0:
        procs.append(TemperatureLogitsWarper(temperature))
    if top_k:
        procs.append(TopKLogitsWarper(top_k))
    if top_p < 1.0:
        procs.append(TopPLogitsWarper(top_p))
    return procs


def stop_on_strings(tokenizer: Any, stop: Sequence[str], prompt_length: int) -> Any:
    """Stopping criteria that end each row once its decoded output contains one of ``stop``.

    transformers' own ``stop_strings`` needs a tokenizer whose vocabulary it can map back to strings, which not
    every tokenizer allows; decoding the new tokens of the unfinished rows at each step works with any.
    """
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    class StopOnStrings(StoppingCriteria):
        def __call__(self, input_ids: torch.LongTensor, scores: Any, **kwargs: Any) -> torch.BoolTensor:
            texts = tokenizer.batch_decode(input_ids[:, prompt_length:], skip_special_tokens=True)
            done = [any(s in t.strip() for s in stop) for t in texts]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return StoppingCriteriaList([StopOnStrings()])


@register_engine
class TransformersEngine(Engine):
    """In-process transformers: every model and setting; the reference."""

    name = "transformers"
    rank = 0

    def __init__(self, source: DecodeSource) -> None:
        self.source = source

    @classmethod
    def load(cls, source: DecodeSource, options: dict[str, Any], settings: DecodeSettings) -> TransformersEngine:
        return cls(source)

    @classmethod
    def exact(cls, options: dict[str, Any]) -> bool:
        return True

    def describe(self) -> dict[str, Any]:
        import transformers

        return {"engine": "transformers", "version": transformers.__version__}

    def decode(self, request: DecodeRequest) -> DecodeResult:
        cfg, result = request.settings, DecodeResult.empty(len(request.prompts))
        # Longest first, so each batch pads to similar lengths.
        order = sorted(range(len(request.prompts)), key=lambda i: -len(request.prompts[i]))
        sampler = cfg.do_sample and not self.source.is_encoder_decoder and cfg.shared_prefix
        for start in range(0, len(order), cfg.batch_size):
            idx = order[start:start + cfg.batch_size]
            (self._sample if sampler else self._generate)(request, idx, result)
        return result

    # ---------------------------------------------------------------------------------- model.generate
    def _generate(self, request: DecodeRequest, idx: list[int], result: DecodeResult) -> None:
        import torch

        source, cfg = self.source, request.settings
        tok, k, eos_ids = source.tokenizer, cfg.num_return_sequences, source.eos_ids
        enc = _encode(source, cfg, [request.prompts[i] for i in idx])
        gen_kwargs: dict[str, Any] = dict(max_new_tokens=cfg.max_new_tokens, pad_token_id=tok.pad_token_id,
                                          eos_token_id=eos_ids, do_sample=False)
        processors = None
        if cfg.do_sample:
            row_seeds = [s for i in idx for s in candidate_seeds(request.seeds[i], k)]
            enc = {key: v.repeat_interleave(k, dim=0) for key, v in enc.items()}
            gen_kwargs.update(num_beams=1)
            processors = gumbel_warpers(row_seeds, cfg.temperature, cfg.top_k, cfg.top_p)
        else:
            gen_kwargs.update(num_beams=cfg.num_beams, num_return_sequences=k, early_stopping=cfg.num_beams > 1)
        stop = cfg.stop if not source.is_encoder_decoder else ()
        criteria = None
        if stop and gen_kwargs["num_beams"] == 1:
            # Rows end at a stop string without waiting for the end token; beam search is left as it is, since a
            # beam that stops early would change which hypotheses win.
            criteria = stop_on_strings(tok, stop, enc["input_ids"].shape[1])
        with torch.inference_mode():
            seqs = source.model.generate(**enc, generation_config=_generation_config(source.model, **gen_kwargs),
                                         logits_processor=processors, stopping_criteria=criteria)
        seqs = seqs[:, enc["input_ids"].shape[1]:] if not source.is_encoder_decoder else seqs[:, 1:]
        finished = torch.zeros(seqs.shape[0], dtype=torch.bool, device=seqs.device)
        for e in eos_ids:
            finished |= (seqs == e).any(-1)
        pad = tok.pad_token_id
        lengths = ((seqs != pad).sum(-1) if pad is not None else torch.full((len(seqs),), seqs.shape[1])).tolist()
        decoded = tok.batch_decode(seqs, skip_special_tokens=True)
        for r, i in enumerate(idx):
            for j in range(k):
                text, stopped = cut_at_stop(decoded[r * k + j].strip(), stop)
                result.add(i, text.strip(), cut=not (stopped or bool(finished[r * k + j])),
                           tokens=lengths[r * k + j])

    # ------------------------------------------------------------------------------- shared-prefix sampling
    def _sample(self, request: DecodeRequest, idx: list[int], result: DecodeResult) -> None:
        import torch

        source, cfg = self.source, request.settings
        tok, model = source.tokenizer, source.model
        k, stop, eos = cfg.num_return_sequences, cfg.stop, set(source.eos_ids)
        cand_seeds = [s for i in idx for s in candidate_seeds(request.seeds[i], k)]
        warpers = _warpers(cfg.temperature, cfg.top_k, cfg.top_p)
        tokens: list[list[int]] = [[] for _ in cand_seeds]
        ended = [False] * len(cand_seeds)
        enc = _encode(source, cfg, [request.prompts[i] for i in idx])
        cache_arg = _cache_argument(model)
        with torch.inference_mode():
            attn = enc["attention_mask"]
            position = (attn.cumsum(-1) - 1).clamp(min=0)
            out = model(input_ids=enc["input_ids"], attention_mask=attn, position_ids=position, use_cache=True,
                        logits_to_keep=1)
            cache, logits = _cache_of(out), out.logits[:, -1, :].float()
            next_position = attn.sum(-1)
            # Each batch entry is a node of the rows' prefix trees; at first a row's candidates all share its prompt.
            node_of = [c // k for c in range(len(cand_seeds))]
            active = list(range(len(cand_seeds)))
            for step in range(cfg.max_new_tokens):
                chosen = _draw(logits, warpers, node_of, active, cand_seeds, step)
                groups: dict[tuple[int, int], list[int]] = {}
                for c, t in zip(active, chosen):
                    tokens[c].append(t)
                    if t in eos or (stop and any(s in tok.decode(tokens[c], skip_special_tokens=True).strip()
                                                 for s in stop)):
                        ended[c] = True
                    else:
                        groups.setdefault((node_of[c], t), []).append(c)
                if not groups or step == cfg.max_new_tokens - 1:
                    break
                keys = list(groups)
                parents = [p for p, _ in keys]
                if parents != list(range(logits.shape[0])):  # candidates split, or some ended: re-form the batch
                    chosen_rows = torch.tensor(parents)
                    cache.batch_select_indices(chosen_rows)
                    attn, next_position = attn[chosen_rows], next_position[chosen_rows]
                active = []
                for j, key in enumerate(keys):
                    for c in groups[key]:
                        node_of[c] = j
                        active.append(c)
                attn = torch.cat([attn, attn.new_ones((len(keys), 1))], -1)
                out = model(input_ids=torch.tensor([[t] for _, t in keys]), attention_mask=attn,
                            position_ids=next_position[:, None], use_cache=True, logits_to_keep=1,
                            **{cache_arg: cache})
                cache, logits = _cache_of(out), out.logits[:, -1, :].float()
                next_position = next_position + 1
        for r, i in enumerate(idx):
            for j in range(k):
                c = r * k + j
                text, stopped = cut_at_stop(tok.decode(tokens[c], skip_special_tokens=True).strip(), stop)
                result.add(i, text.strip(), cut=not (stopped or ended[c]), tokens=len(tokens[c]))


def _encode(source: DecodeSource, cfg: DecodeSettings, prompts: list[str]) -> dict[str, Any]:
    tok = source.tokenizer
    tok.padding_side = "right" if source.is_encoder_decoder else "left"
    add_special = source.is_encoder_decoder or not cfg.chat
    return dict(tok(prompts, return_tensors="pt", padding=True, add_special_tokens=add_special).to(source.device))


def _generation_config(model: Any, **kwargs: Any) -> Any:
    from transformers import GenerationConfig

    # A fresh config, so sampling flags a checkpoint ships (temperature, top_p) do not leak into beam search.
    base = model.generation_config
    return GenerationConfig(bos_token_id=base.bos_token_id, decoder_start_token_id=base.decoder_start_token_id,
                            **kwargs)


def _cache_argument(model: Any) -> str:
    """The keyword a model's forward takes its KV cache by (``cache`` in recent transformers, else
    ``past_key_values``)."""
    import inspect

    forward = getattr(model, "get_base_model", lambda: model)().forward
    return "cache" if "cache" in inspect.signature(forward).parameters else "past_key_values"


def _cache_of(output: Any) -> Any:
    # ``cache`` in recent transformers (``past_key_values`` warns there), ``past_key_values`` before
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


def _draw(logits: Any, warpers: list[Any], node_of: list[int], active: list[int], seeds: list[int],
          step: int) -> list[int]:
    """Each active candidate's next token: argmax over its node's warped log-probabilities plus its own Gumbel
    noise. The noise stream is drawn in full (it is the candidate's own) but its logs are taken only where the
    warpers kept a token, in ascending vocabulary order so that ties break as over the whole vocabulary."""
    import torch

    scores = logits
    dummy = torch.zeros((scores.shape[0], 1), dtype=torch.long)
    for warp in warpers:
        scores = warp(dummy, scores)
    logp = scores.log_softmax(-1)
    width = int(torch.isfinite(logp).sum(-1).max())
    kept = torch.topk(logp, width, dim=-1).indices.sort(-1).values
    nodes = torch.tensor([node_of[c] for c in active])
    uniforms = torch.empty((len(active), logp.shape[1]))
    for r, c in enumerate(active):
        gumbel_noise_uniforms(seeds[c], step, logp.shape[1], out=uniforms[r])
    cols = kept[nodes]
    u = uniforms.gather(1, cols).clamp_(1e-10, 1 - 1e-7)
    values = logp[nodes].gather(1, cols) - torch.log(-torch.log(u))
    return cols.gather(1, values.argmax(-1, keepdim=True))[:, 0].tolist()
