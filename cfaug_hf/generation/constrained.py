"""Lexically constrained beam search: every returned output holds, for each group of a constraint, at least one of
the group's phrases (a conjunction of disjunctions, `cfaug_hf.generation.Constraint`).

transformers 5 removed ``constrained_beam_search``; this is a small decoding loop in the spirit of grid beam
search (Hokamp and Liu 2017) with dynamic beam allocation (Post and Vilar 2018), over disjunctive groups as in
RACE (Zhu et al. 2023): at each step the candidates are each beam's best next tokens plus, for every group a beam
has not met yet, the next token of each of the group's phrases (continuing a phrase it has started, or starting
one); the beam is then shared out between "banks" by the constraint tokens produced so far, so hypotheses that
took on a constraint are not crowded out by freer ones with a better score. A hypothesis may end only once every group is
met. Decoding reuses the key/value cache (reordered per step), so a step costs about what a beam-search step does.

Examples:
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

__all__ = ["constrained_beam_search", "constrained_beam_search_batch", "phrase_token_ids"]


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
    ``max_new_tokens``. Works with seq2seq and causal LMs. `constrained_beam_search_batch` decodes many
    prompts at once."""
    return constrained_beam_search_batch(model, tokenizer, [prompt], [constraint], num_beams=num_beams,
                                         num_return_sequences=num_return_sequences, max_new_tokens=max_new_tokens,
                                         max_source_length=max_source_length, length_penalty=length_penalty,
                                         eos_token_ids=eos_token_ids)[0]


@dataclass
class _Row:
    groups: list[list[list[int]]]
    alive: list[_Hyp]
    finished: list[tuple[float, list[int]]]
    done: bool = False

    @property
    def n_banks(self) -> int:
        return sum(max(len(o) for o in g) for g in self.groups) + 1


def _select(row: _Row, logprobs: Any, offset: int, num_beams: int, eos: list[int], length_penalty: float,
            step: int, num_return: int) -> list[tuple[float, int, int, frozenset[int]]]:
    """One row's next beams (score, global index of the parent beam, token, groups met); marks the row done."""
    import torch

    groups, n_groups = row.groups, len(row.groups)
    width = max((len(o) for g in groups for o in g), default=1)
    top = torch.topk(logprobs, k=min(num_beams, logprobs.shape[-1]), dim=-1)
    values, indices = top.values.tolist(), top.indices.tolist()
    candidates: dict[tuple[int, int], float] = {}
    for b, hyp in enumerate(row.alive):
        for lp, t in zip(values[b], indices[b]):
            candidates[(b, t)] = hyp.score + lp
        for g in range(n_groups):
            if g not in hyp.met:
                for t in _forced_next(hyp.tokens, groups[g]):
                    candidates.setdefault((b, t), hyp.score + float(logprobs[b, t]))
    banks: list[list[tuple[float, int, int, frozenset[int]]]] = [[] for _ in range(row.n_banks)]
    for (b, t), score in candidates.items():
        hyp = row.alive[b]
        tokens = hyp.tokens + [t]
        if t in eos:
            if len(hyp.met) == n_groups:
                row.finished.append((score / max(1, len(tokens)) ** length_penalty, hyp.tokens))
            continue
        met = (hyp.met | _met_groups(tokens[-width:], groups)) if n_groups else frozenset()
        banks[_progress(tokens, met, groups)].append((score, offset + b, t, met))
    # Dynamic beam allocation: an equal share per bank (hypotheses grouped by constraint tokens produced), the
    # most advanced bank first; unused slots go to the best remaining candidates of any bank.
    share = max(1, num_beams // row.n_banks)
    chosen: list[tuple[float, int, int, frozenset[int]]] = []
    rest: list[tuple[float, int, int, frozenset[int]]] = []
    for bank in reversed(banks):
        bank.sort(key=lambda c: -c[0])
        chosen += bank[:share]
        rest += bank[share:]
    rest.sort(key=lambda c: -c[0])
    chosen = (chosen + rest)[:num_beams]
    best_alive = max((c[0] for c in chosen), default=float("-inf"))
    done = sorted(row.finished, key=lambda f: -f[0])
    if not chosen or (len(done) >= num_return and
                      done[num_return - 1][0] >= best_alive / max(1, step + 1) ** length_penalty):
        row.done = True
        return []
    return chosen


class _Forward:
    """One step of the model over the live beams of every row, with its key/value cache (encoder-decoder: the
    encoder runs once and each beam reads its row's states; decoder-only: the prompts are prefilled once)."""

    def __init__(self, model: Any, enc: Any, n_rows: int) -> None:
        import torch

        self.model, self.enc, self.device = model, enc, enc["input_ids"].device
        self.seq2seq = bool(getattr(model.config, "is_encoder_decoder", False))
        if self.seq2seq:
            from transformers.cache_utils import DynamicCache, EncoderDecoderCache

            self.encoder_hidden = model.get_encoder()(**enc).last_hidden_state
            self.cache: Any = EncoderDecoderCache(DynamicCache(), DynamicCache())
            start = model.generation_config.decoder_start_token_id
            if start is None:
                start = model.config.decoder_start_token_id
            self.first_input = torch.full((n_rows, 1), start, device=self.device)
        else:
            self.mask = enc["attention_mask"]
            positions = (self.mask.cumsum(-1) - 1).clamp(min=0)
            prefill = model(input_ids=enc["input_ids"], attention_mask=self.mask, position_ids=positions,
                            use_cache=True)
            self.cache, self.prefill_logits = prefill.past_key_values, prefill.logits[:, -1, :]
            self.lengths = self.mask.sum(-1)
            self.first_input = None

    def logits(self, step: int, owner: list[int], next_input: Any) -> Any:
        """Next-token logits of each beam (``owner``: the row of each beam; ``next_input``: its last token)."""
        import torch

        index = torch.tensor(owner, device=self.device)
        if self.seq2seq:
            return self.model(encoder_outputs=(self.encoder_hidden[index],),
                              attention_mask=self.enc["attention_mask"][index], decoder_input_ids=next_input,
                              past_key_values=self.cache, use_cache=True).logits[:, -1, :]
        if step == 0:
            return self.prefill_logits
        mask = self.mask
        full_mask = torch.cat([mask[index], torch.ones(len(owner), step, dtype=mask.dtype, device=self.device)], 1)
        return self.model(input_ids=next_input, attention_mask=full_mask,
                          position_ids=(self.lengths[index] + step - 1).unsqueeze(-1), past_key_values=self.cache,
                          use_cache=True).logits[:, -1, :]


def _eos_ids(model: Any, tokenizer: Any, eos_token_ids: Sequence[int] | None) -> list[int]:
    if eos_token_ids is not None:
        return list(eos_token_ids)
    gen_eos = model.generation_config.eos_token_id
    return [gen_eos] if isinstance(gen_eos, int) else list(gen_eos or [tokenizer.eos_token_id])


def _texts(row: _Row, tokenizer: Any, num_return_sequences: int, length_penalty: float) -> list[str]:
    """A row's best distinct texts; out of length, hypotheses that met every group still count."""
    finished = list(row.finished)
    if len(finished) < num_return_sequences:
        finished += [(h.score / max(1, len(h.tokens)) ** length_penalty, h.tokens) for h in row.alive
                     if not row.done and len(h.met) == len(row.groups)]
    finished.sort(key=lambda f: -f[0])
    texts: list[str] = []
    for _, tokens in finished:
        text = tokenizer.decode(tokens, skip_special_tokens=True).strip()
        if text not in texts:
            texts.append(text)
        if len(texts) == num_return_sequences:
            break
    return texts


def constrained_beam_search_batch(model: Any, tokenizer: Any, prompts: Sequence[str],
                                  constraints: Sequence[Sequence[Sequence[str]]], *, num_beams: int = 10,
                                  num_return_sequences: int = 1, max_new_tokens: int = 64,
                                  max_source_length: int = 512, length_penalty: float = 1.0,
                                  eos_token_ids: Sequence[int] | None = None) -> list[list[str]]:
    """`constrained_beam_search` over many prompts at once, each with its own constraint: the beams of all
    unfinished rows go through the model together, and each row selects its own next beams."""
    import torch

    device = next(model.parameters()).device
    rows = []
    for constraint in constraints:
        groups = [[ids for phrase in group for ids in phrase_token_ids(tokenizer, phrase)] for group in constraint]
        rows.append(_Row([g for g in groups if g], [_Hyp([], 0.0, frozenset())], []))
    eos = _eos_ids(model, tokenizer, eos_token_ids)
    tokenizer.padding_side = "right" if getattr(model.config, "is_encoder_decoder", False) else "left"
    enc = tokenizer(list(prompts), return_tensors="pt", truncation=True, max_length=max_source_length, padding=True,
                    add_special_tokens=True).to(device)
    owner = list(range(len(rows)))  # the row of each beam in the model's batch
    model.eval()
    with torch.inference_mode():
        forward = _Forward(model, enc, len(rows))
        next_input = forward.first_input
        for step in range(max_new_tokens):
            logprobs = torch.log_softmax(forward.logits(step, owner, next_input).float(), dim=-1)
            chosen_all: list[tuple[int, tuple[float, int, int, frozenset[int]]]] = []
            starts: dict[int, int] = {}  # row -> where its beams start in this step's batch
            offset = 0
            for r, row in enumerate(rows):
                if row.done:
                    continue
                n = len(row.alive)
                starts[r] = offset
                picked = _select(row, logprobs[offset:offset + n], offset, num_beams, eos, length_penalty, step,
                                 num_return_sequences)
                chosen_all += [(r, c) for c in picked]
                offset += n
            if not chosen_all:
                break
            forward.cache.reorder_cache(torch.tensor([c[1] for _, c in chosen_all], device=device))
            parents = {r: rows[r].alive for r in {r for r, _ in chosen_all}}
            for r in parents:
                rows[r].alive = []
            for r, (score, g, t, met) in chosen_all:
                rows[r].alive.append(_Hyp(parents[r][g - starts[r]].tokens + [t], score, met))
            owner = [r for r, _ in chosen_all]
            next_input = torch.tensor([[c[2]] for _, c in chosen_all], device=device)
    return [_texts(row, tokenizer, num_return_sequences, length_penalty) for row in rows]
