"""The transformers engine: supports every generator and setting, and is the reference the others are measured by.

Beam search, greedy decoding and seq2seq models run ``model.generate``. Sampled candidates of a causal LM run a
decoding loop of its own, which gives exactly the tokens ``generate`` gives with the per-row Gumbel noise
(`gumbel_warpers`) at a fraction of the cost (``benchmarks/engines.py``):

* each prompt is computed once for all of its candidates (``generate`` repeats it ``num_return_sequences`` times);
* candidates of a row that have sampled the same tokens so far are one sequence in the batch until their samples
  differ (a prefix tree), since their next-token distribution is the same; each still draws its own noise;
* a candidate leaves the batch when it ends (an end token or a stop string), instead of riding along until the
  longest one in its batch ends;
* logits are computed for the last position only;
* each candidate's noise stream is drawn only as far as the last token top-k / top-p kept (the same values).

A row's candidates depend on (its seed, its prompt, the model) only: never on its batch neighbours.
"""

from __future__ import annotations

import functools
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
        if cfg.do_sample and not self.source.is_encoder_decoder and cfg.shared_prefix:
            self._sample(request, order, result)
            return result
        for start in range(0, len(order), cfg.batch_size):
            self._generate(request, order[start:start + cfg.batch_size], result)
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
    def _sample(self, request: DecodeRequest, order: list[int], result: DecodeResult) -> None:
        """Sample every row's candidates, keeping up to ``batch_size`` rows in the batch: when half of them have
        finished, the next rows' prompts are computed and join the running batch (their KV caches padded on the
        left to a common length), so the decoding steps stay wide instead of trailing off with a few long
        candidates at the end of each batch."""
        import torch

        cfg, tok = request.settings, self.source.tokenizer
        k, stop, eos = cfg.num_return_sequences, cfg.stop, set(self.source.eos_ids)
        state = _Batch(self.source, cfg)
        queue = list(order)
        with torch.inference_mode():
            while queue or state.active:
                if queue and (not state.active or (state.mergeable and state.live_rows() <= cfg.batch_size // 2)):
                    take = cfg.batch_size - state.live_rows()
                    state.admit(queue[:take], [request.prompts[i] for i in queue[:take]],
                                [candidate_seeds(request.seeds[i], k) for i in queue[:take]])
                    del queue[:take]
                chosen = _draw(state.logits, state.warpers, state.node_of, state.active, state.seeds,
                               [len(state.tokens[c]) for c in state.active])
                groups: dict[tuple[int, int], list[int]] = {}
                for c, t in zip(state.active, chosen):
                    tokens = state.tokens[c]
                    tokens.append(t)
                    if t in eos or (stop and any(s in tok.decode(tokens, skip_special_tokens=True).strip()
                                                 for s in stop)):
                        state.ended[c] = True
                    elif len(tokens) < cfg.max_new_tokens:
                        groups.setdefault((state.node_of[c], t), []).append(c)
                state.advance(groups)
        for c, (i, _) in enumerate(state.rows):
            text, stopped = cut_at_stop(tok.decode(state.tokens[c], skip_special_tokens=True).strip(), stop)
            result.add(i, text.strip(), cut=not (stopped or state.ended[c]), tokens=len(state.tokens[c]))


class _Batch:
    """The running batch of the shared-prefix sampler. Each batch entry is a node of the rows' prefix trees: at
    first a row's candidates all share its prompt, and candidates that sampled the same tokens share a node until
    their samples differ. Candidates are numbered in the order their rows joined (``rows``: (row, candidate j))."""

    def __init__(self, source: DecodeSource, cfg: DecodeSettings) -> None:
        self.source, self.cfg = source, cfg
        self.model = source.model
        self.cache_arg = _cache_argument(self.model)
        self.warpers = _warpers(cfg.temperature, cfg.top_k, cfg.top_p)
        self.rows: list[tuple[int, int]] = []
        self.seeds: list[int] = []
        self.tokens: list[list[int]] = []
        self.ended: list[bool] = []
        self.node_of: list[int] = []
        self.active: list[int] = []
        self.cache: Any = None
        self.mergeable = True  # False once a cache turns out not to have per-layer key and value tensors

    def live_rows(self) -> int:
        return len({self.rows[c][0] for c in self.active})

    def admit(self, idx: list[int], prompts: list[str], seeds: list[list[int]]) -> None:
        """Compute the prompts of rows ``idx`` and add their candidates to the batch."""
        import torch

        enc = _encode(self.source, self.cfg, prompts)
        attn = enc["attention_mask"]
        out = self.model(input_ids=enc["input_ids"], attention_mask=attn,
                         position_ids=(attn.cumsum(-1) - 1).clamp(min=0), use_cache=True, logits_to_keep=1)
        cache, logits, position = _cache_of(out), out.logits[:, -1, :].float(), attn.sum(-1)
        first_node = 0
        if self.active:
            first_node = self.logits.shape[0]
            merged = _merged_caches(self.cache, cache, self.attn.shape[1], attn.shape[1])
            if merged is None:
                raise RuntimeError("admit() needs a cache with per-layer tensors when candidates are running")
            width = max(self.attn.shape[1], attn.shape[1])
            cache = merged
            attn = torch.cat([_pad_left(self.attn, width), _pad_left(attn, width)])
            logits, position = torch.cat([self.logits, logits]), torch.cat([self.position, position])
        self.mergeable = _merged_caches(cache, cache, 0, 0, check_only=True) is not None
        self.cache, self.attn, self.logits, self.position = cache, attn, logits, position
        for r, (i, row_seeds) in enumerate(zip(idx, seeds)):
            for j, seed in enumerate(row_seeds):
                self.active.append(len(self.rows))
                self.node_of.append(first_node + r)
                self.rows.append((i, j))
                self.seeds.append(seed)
                self.tokens.append([])
                self.ended.append(False)

    def advance(self, groups: dict[tuple[int, int], list[int]]) -> None:
        """One decoding step for the candidates still running (``groups``: (node, token) -> candidates that drew
        that token there), re-forming the batch where candidates split or finished."""
        import torch

        self.active = []
        if not groups:
            self.cache = None
            return
        keys = list(groups)
        parents = [p for p, _ in keys]
        if parents != list(range(self.logits.shape[0])):
            chosen_rows = torch.tensor(parents)
            self.cache.batch_select_indices(chosen_rows)
            self.attn, self.position = self.attn[chosen_rows], self.position[chosen_rows]
        for j, key in enumerate(keys):
            for c in groups[key]:
                self.node_of[c] = j
                self.active.append(c)
        self.attn = torch.cat([self.attn, self.attn.new_ones((len(keys), 1))], -1)
        out = self.model(input_ids=torch.tensor([[t] for _, t in keys]), attention_mask=self.attn,
                         position_ids=self.position[:, None], use_cache=True, logits_to_keep=1,
                         **{self.cache_arg: self.cache})
        self.cache, self.logits = _cache_of(out), out.logits[:, -1, :].float()
        self.position = self.position + 1


def _pad_left(t: Any, width: int) -> Any:
    """``t`` (batch x length [x ...]) with zeros before its columns to ``width`` columns."""
    import torch

    if t.shape[1] == width:
        return t
    return torch.cat([t.new_zeros((t.shape[0], width - t.shape[1], *t.shape[2:])), t], 1)


def _merged_caches(a: Any, b: Any, len_a: int, len_b: int, check_only: bool = False) -> Any:
    """One KV cache holding the entries of ``a`` then those of ``b``, each layer's keys and values padded on the
    left to the longer length (the attention mask hides the padding). None for a cache without per-layer key and
    value tensors (another model family's or transformers version's): the sampler then admits rows only when the
    batch is empty, one batch at a time."""
    layers_a, layers_b = getattr(a, "layers", None), getattr(b, "layers", None)
    if not layers_a or not layers_b or not all(
            getattr(layer, "keys", None) is not None and getattr(layer, "values", None) is not None
            and layer.keys.dim() == 4 for layer in (*layers_a, *layers_b)):
        return None
    if check_only:
        return a
    import torch
    from transformers.cache_utils import DynamicCache

    width = max(len_a, len_b)

    def pad(t: Any) -> Any:  # batch x heads x length x dim: pad the length
        return _pad_left(t.transpose(1, 2), width).transpose(1, 2)

    return DynamicCache([(torch.cat([pad(x.keys), pad(y.keys)]), torch.cat([pad(x.values), pad(y.values)]))
                         for x, y in zip(layers_a, layers_b)])


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


@functools.lru_cache(maxsize=None)
def prefix_stable() -> bool:
    """Whether this torch draws a stream's first n uniforms the same whether it is asked for n or for more: then
    a candidate's noise is drawn only up to the highest token the warpers kept (a fraction of the vocabulary, the
    same values). Checked once per process, so a torch that fills its draws otherwise is still exact."""
    import torch

    full = gumbel_noise_uniforms(0, 0, 4099)
    return all(torch.equal(full[:n], gumbel_noise_uniforms(0, 0, n)) for n in (1, 15, 16, 17, 1000, 4097))


def _draw(logits: Any, warpers: list[Any], node_of: list[int], active: list[int], seeds: list[int],
          steps: list[int]) -> list[int]:
    """Each active candidate's next token: argmax over its node's warped log-probabilities plus its own Gumbel
    noise for its own step (``steps``, one per active candidate: rows join the batch at different times). The noise
    stream is the candidate's own; its logs are taken only where the warpers kept a token, in ascending vocabulary
    order so that ties break as over the whole vocabulary, and it is drawn only as far as the last of those tokens
    (`prefix_stable`)."""
    import torch

    scores = logits
    dummy = torch.zeros((scores.shape[0], 1), dtype=torch.long)
    for warp in warpers:
        scores = warp(dummy, scores)
    logp = scores.log_softmax(-1)
    width = int(torch.isfinite(logp).sum(-1).max())
    kept = torch.topk(logp, width, dim=-1).indices.sort(-1).values
    nodes = torch.tensor([node_of[c] for c in active])
    cols = kept[nodes]
    vocab = logp.shape[1]
    need = (cols[:, -1] + 1).tolist() if prefix_stable() else [vocab] * len(active)
    uniforms = torch.empty((len(active), max(need)))
    for r, (c, step) in enumerate(zip(active, steps)):
        gumbel_noise_uniforms(seeds[c], step, need[r], out=uniforms[r, :need[r]])
    u = uniforms.gather(1, cols).clamp_(1e-10, 1 - 1e-7)
    values = logp[nodes].gather(1, cols) - torch.log(-torch.log(u))
    return cols.gather(1, values.argmax(-1, keepdim=True))[:, 0].tolist()
