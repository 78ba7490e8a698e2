"""Lexically constrained beam search: every returned output holds, for each group of a constraint, at least one of
the group's phrases (a conjunction of disjunctions, :data:`cfaug_hf.generation.Constraint`).

transformers 5 removed ``constrained_beam_search``; this is a small decoding loop in the spirit of grid beam
search (Hokamp and Liu 2017) with dynamic beam allocation (Post and Vilar 2018), over disjunctive groups as in
RACE (Zhu et al. 2023): at each step the candidates are each beam's best next tokens plus, for every group a beam
has not met yet, the next token of each of the group's phrases (continuing a phrase it has started, or starting
one); the beam is then shared out between "banks" by the constraint tokens produced so far, so hypotheses that
took on a constraint are not crowded out by freer ones with a better score. A hypothesis may end only once every group is
met. Decoding reuses the key/value cache (reordered per step), so a step costs about what a beam-search step does.

>>> from cfaug_hf.testing import tiny_seq2seq
>>> model, tok = tiny_seq2seq()
>>> outs = constrained_beam_search(model, tok, "the cat sat on the mat", [["paris", "london"], ["king"]],
...                                num_beams=6, max_new_tokens=8)
>>> all(("paris" in o or "london" in o) and "king" in o for o in outs)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["constrained_beam_search", "phrase_token_ids"]


def phrase_token_ids(tokenizer: Any, phrase: str) -> list[list[int]]:
    """The token id sequences that spell ``phrase`` inside a text: as tokenized alone and after a space (BPE and
    SentencePiece tokenizers mark a word start), de-duplicated."""
    out: list[list[int]] = []
    for variant in (phrase, " " + phrase):
        ids = tokenizer(variant, add_special_tokens=False)["input_ids"]
        if ids and ids not in out:
            out.append(list(ids))
    return out


@dataclass
class _Hyp:
    tokens: list[int]
    score: float
    met: frozenset[int]


def _met_groups(tokens: list[int], groups: list[list[list[int]]]) -> frozenset[int]:
    found = set()
    for g, options in enumerate(groups):
        for opt in options:
            n = len(opt)
            if any(tokens[i:i + n] == opt for i in range(len(tokens) - n + 1)):
                found.add(g)
                break
    return frozenset(found)


def _progress(tokens: list[int], met: frozenset[int], groups: list[list[list[int]]]) -> int:
    """Constraint tokens produced: a met group counts its longest phrase; an unmet one the longest start of one of
    its phrases that ends the hypothesis (a phrase in progress, undone if the next token breaks it)."""
    total = 0
    for g, options in enumerate(groups):
        if g in met:
            total += max(len(o) for o in options)
            continue
        total += max((k for o in options for k in range(min(len(o) - 1, len(tokens)), 0, -1)
                      if tokens[-k:] == o[:k]), default=0)
    return total


def _forced_next(tokens: list[int], options: list[list[int]]) -> set[int]:
    """Next tokens that continue (or start) one of ``options`` at the end of ``tokens``."""
    out = set()
    for opt in options:
        started = False
        for k in range(min(len(opt) - 1, len(tokens)), 0, -1):  # longest proper prefix of opt ending tokens
            if tokens[-k:] == opt[:k]:
                out.add(opt[k])
                started = True
                break
        if not started:
            out.add(opt[0])
    return out


def constrained_beam_search(model: Any, tokenizer: Any, prompt: str, constraint: Sequence[Sequence[str]], *,
                            num_beams: int = 10, num_return_sequences: int = 1, max_new_tokens: int = 64,
                            max_source_length: int = 512, length_penalty: float = 1.0,
                            eos_token_ids: Sequence[int] | None = None) -> list[str]:
    """Decode ``prompt`` with beam search under ``constraint`` (a list of groups of phrases; each output contains
    at least one phrase of every group). Returns up to ``num_return_sequences`` texts, best first (by log
    probability over length ** ``length_penalty``); fewer, or none, when no hypothesis met every group within
    ``max_new_tokens``. Works with seq2seq and causal LMs."""
    import torch

    device = next(model.parameters()).device
    groups = [[ids for phrase in group for ids in phrase_token_ids(tokenizer, phrase)] for group in constraint]
    groups = [g for g in groups if g]
    n_groups = len(groups)
    eos = list(eos_token_ids if eos_token_ids is not None else
               ([model.generation_config.eos_token_id] if isinstance(model.generation_config.eos_token_id, int)
                else model.generation_config.eos_token_id or [tokenizer.eos_token_id]))
    seq2seq = bool(getattr(model.config, "is_encoder_decoder", False))
    enc = tokenizer(prompt, return_tensors="pt", truncation=True, max_length=max_source_length,
                    add_special_tokens=True).to(device)
    model.eval()
    with torch.inference_mode():
        if seq2seq:
            from transformers.cache_utils import DynamicCache, EncoderDecoderCache

            encoder_hidden = model.get_encoder()(**enc).last_hidden_state
            cache: Any = EncoderDecoderCache(DynamicCache(), DynamicCache())
            start = model.generation_config.decoder_start_token_id
            if start is None:
                start = model.config.decoder_start_token_id
            next_input = torch.tensor([[start]], device=device)

            def forward(ids: Any, n: int) -> Any:
                return model(encoder_outputs=(encoder_hidden.expand(n, -1, -1),),
                             attention_mask=enc["attention_mask"].expand(n, -1), decoder_input_ids=ids,
                             past_key_values=cache, use_cache=True)
        else:
            prefill = model(**enc, use_cache=True)
            cache = prefill.past_key_values
            first_logits = prefill.logits[:, -1, :]
            next_input = None

            def forward(ids: Any, n: int) -> Any:
                steps = cache.get_seq_length() + 1
                return model(input_ids=ids, attention_mask=torch.ones(n, steps, dtype=torch.long, device=device),
                             past_key_values=cache, use_cache=True)

        alive = [_Hyp([], 0.0, frozenset())]
        finished: list[tuple[float, list[int]]] = []
        for step in range(max_new_tokens):
            if seq2seq or step > 0:
                logits = forward(next_input, len(alive)).logits[:, -1, :]
            else:
                logits = first_logits
            logprobs = torch.log_softmax(logits.float(), dim=-1)
            top = torch.topk(logprobs, k=min(num_beams, logprobs.shape[-1]), dim=-1)
            candidates: dict[tuple[int, int], float] = {}
            for b, hyp in enumerate(alive):
                for lp, t in zip(top.values[b].tolist(), top.indices[b].tolist()):
                    candidates[(b, t)] = hyp.score + lp
                for g in range(n_groups):
                    if g not in hyp.met:
                        for t in _forced_next(hyp.tokens, groups[g]):
                            candidates.setdefault((b, t), hyp.score + float(logprobs[b, t]))
            n_banks = sum(max(len(o) for o in g) for g in groups) + 1
            banks: list[list[tuple[float, int, int, frozenset[int]]]] = [[] for _ in range(n_banks)]
            for (b, t), score in candidates.items():
                tokens = alive[b].tokens + [t]
                if t in eos:
                    if len(alive[b].met) == n_groups:
                        finished.append((score / max(1, len(tokens)) ** length_penalty, alive[b].tokens))
                    continue
                met = alive[b].met | _met_groups(tokens[-max((len(o) for g in groups for o in g), default=1):],
                                                 groups) if n_groups else frozenset()
                banks[_progress(tokens, met, groups)].append((score, b, t, met))
            # Dynamic beam allocation: an equal share per bank (hypotheses grouped by constraint tokens produced),
            # the most advanced bank first; unused slots go to the best remaining candidates of any bank.
            share = max(1, num_beams // n_banks)
            chosen: list[tuple[float, int, int, frozenset[int]]] = []
            rest: list[tuple[float, int, int, frozenset[int]]] = []
            for bank in reversed(banks):
                bank.sort(key=lambda c: -c[0])
                chosen += bank[:share]
                rest += bank[share:]
            rest.sort(key=lambda c: -c[0])
            chosen = (chosen + rest)[:num_beams]
            best_alive = max((c[0] for c in chosen), default=float("-inf"))
            done = sorted(finished, key=lambda f: -f[0])
            if not chosen or (len(done) >= num_return_sequences and
                              done[num_return_sequences - 1][0] >= best_alive / max(1, step + 1) ** length_penalty):
                break
            beam_idx = torch.tensor([b for _, b, _, _ in chosen], device=device)
            cache.reorder_cache(beam_idx)
            alive = [_Hyp(alive[b].tokens + [t], score, met) for score, b, t, met in chosen]
            next_input = torch.tensor([[t] for _, _, t, _ in chosen], device=device)
    if len(finished) < num_return_sequences:  # out of length: hypotheses that met every group still count
        finished += [(h.score / max(1, len(h.tokens)) ** length_penalty, h.tokens) for h in alive
                     if len(h.met) == n_groups]
    finished.sort(key=lambda f: -f[0])
    texts: list[str] = []
    for _, tokens in finished:
        text = tokenizer.decode(tokens, skip_special_tokens=True).strip()
        if text not in texts:
            texts.append(text)
        if len(texts) == num_return_sequences:
            break
    return texts
