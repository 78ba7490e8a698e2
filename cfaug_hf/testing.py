"""Tiny randomly initialised models and a word-level tokenizer built in-process, for tests and docstring examples.

Nothing here downloads anything; the models have a few thousand parameters and run in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .augmenter import Augmenter, AugmenterConfig, Counterfactual, RowResult

__all__ = ["tiny_tokenizer", "tiny_seq2seq", "tiny_causal_lm", "tiny_classifier", "tiny_encoder", "NegateAugmenter",
           "TINY_VOCAB", "tiny_word_encoder", "planted_reviews", "keyword_checker"]

_WORDS = """the a an of in on at to for with and or not no never did does was were is are be been has have had it
this that he she they his her their film movie claim evidence cat dog mat sat ran good bad great terrible
born died lived played team city country year years day days over less than more about one two three four
ten 30 10 2006 1990 paris london france england actor singer band album song book war king queen river
president won lost first last only never always food dish service room hotel staff clean dirty loved hated
. , ' " ( ) - : ; ! ?""".split()

# dict.fromkeys: a word listed twice would get two ids, and a reloaded tokenizer would then be one id short.
TINY_VOCAB: list[str] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[BOS]", "[EOS]", "[MASK]"] + list(dict.fromkeys(_WORDS))

_CHAT_TEMPLATE = ("{% for m in messages %}[BOS] {{ m['content'] }} [SEP] {% endfor %}"
                  "{% if add_generation_prompt %}answer : {% endif %}")


def tiny_tokenizer() -> Any:
    """A lower-casing word-level fast tokenizer over `TINY_VOCAB` (unknown words map to ``[UNK]``)."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(TINY_VOCAB)}
    tok = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="$A [EOS]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"]), ("[EOS]", vocab["[EOS]"])])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
                                   sep_token="[SEP]", bos_token="[BOS]", eos_token="[EOS]", mask_token="[MASK]",
                                   model_max_length=64)
    fast.chat_template = _CHAT_TEMPLATE
    return fast


def _seeded(seed: int) -> None:
    import torch

    torch.manual_seed(seed)


def tiny_seq2seq(seed: int = 0) -> tuple[Any, Any]:
    """A 2-layer T5 with d_model 32 and its tokenizer."""
    from transformers import T5Config, T5ForConditionalGeneration

    tok = tiny_tokenizer()
    _seeded(seed)
    cfg = T5Config(vocab_size=len(tok), d_model=32, d_ff=64, d_kv=16, num_layers=2, num_decoder_layers=2,
                   num_heads=2, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                   decoder_start_token_id=tok.pad_token_id, dropout_rate=0.0)
    model = T5ForConditionalGeneration(cfg)
    model.generation_config.decoder_start_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    return model, tok


def tiny_causal_lm(seed: int = 0) -> tuple[Any, Any]:
    """A 2-layer Llama with hidden size 32 and its tokenizer."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = tiny_tokenizer()
    _seeded(seed)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
                      pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    model = LlamaForCausalLM(cfg)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    return model, tok


def tiny_classifier(label_names: tuple[str, ...] = ("SUPPORTS", "REFUTES"), seed: int = 0) -> tuple[Any, Any]:
    """A 2-layer BERT sequence classifier with hidden size 32, labelled with ``label_names``, and its tokenizer."""
    from transformers import BertConfig, BertForSequenceClassification

    tok = tiny_tokenizer()
    _seeded(seed)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=2, max_position_embeddings=128, pad_token_id=tok.pad_token_id,
                     num_labels=len(label_names), id2label=dict(enumerate(label_names)),
                     label2id={n: i for i, n in enumerate(label_names)})
    return BertForSequenceClassification(cfg), tok


@dataclass
class _KeywordCheckerConfig:
    accept_threshold: float | None = 0.6


class _KeywordChecker:
    def __init__(self, words: dict[str, list[str]], threshold: float | None) -> None:
        self.label_names = tuple(words)
        self.words = {label: [w.casefold() for w in ws] for label, ws in words.items()}
        self.config = _KeywordCheckerConfig(threshold)
        self.calls: list[int] = []

    @property
    def accept_threshold(self) -> float | None:
        return self.config.accept_threshold

    def label_id(self, label: str) -> int:
        names = [n.casefold() for n in self.label_names]
        if label.casefold() not in names:
            raise ValueError(f"Label {label!r} is not one of the checker's labels {list(self.label_names)}.")
        return names.index(label.casefold())

    def predict_proba(self, first: Any, second: Any = None) -> Any:
        import re

        import numpy as np

        texts = list(first)
        self.calls.append(len(texts))
        out = np.zeros((len(texts), len(self.label_names)), dtype=np.float32)
        for r, text in enumerate(texts):
            tokens = re.findall(r"\w+", text.casefold())
            hits = np.array([sum(tokens.count(w) for w in self.words[n]) for n in self.label_names], dtype=np.float32)
            out[r] = np.exp(2 * hits) / np.exp(2 * hits).sum()
        return out

    def __repr__(self) -> str:
        return f"keyword_checker({self.words!r})"


def keyword_checker(words: dict[str, list[str]], accept_threshold: float | None = 0.6) -> Any:
    """A label checker that counts keywords: each label's probability grows with the number of its words in the
    text (softmax of twice the counts). A stand-in for `LabelChecker` in tests and examples of checker-driven
    loops; ``calls`` records the size of each `predict_proba` call.

    Examples:
        >>> checker = keyword_checker({"negative": ["bad"], "positive": ["good"]})
        >>> [round(float(p), 2) for p in checker.predict_proba(["good good bad"])[0]]
        [0.12, 0.88]
    """
    return _KeywordChecker(words, accept_threshold)


def tiny_encoder(seed: int = 0) -> tuple[Any, Any]:
    """A 2-layer BERT encoder with hidden size 32 (for embedding metrics and rationale models) and its tokenizer."""
    from transformers import BertConfig, BertModel

    tok = tiny_tokenizer()
    _seeded(seed)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=2, max_position_embeddings=128, pad_token_id=tok.pad_token_id)
    return BertModel(cfg), tok


def tiny_word_encoder(seed: int = 0, hidden_size: int = 32) -> tuple[Any, Any]:
    """A BERT with no transformer layers over `tiny_tokenizer`: a sentence's mean-pooled vector is the mean of
    its (normalised) word vectors, so different sentences get well separated vectors. A random deep encoder maps
    every sentence to nearly the same direction (cosine 0.95-0.99 between any two here), which hides what a
    rationale model could learn; this one behaves like a bag of words, a stand-in for a pretrained encoder."""
    from transformers import BertConfig, BertModel

    tok = tiny_tokenizer()
    _seeded(seed)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                     num_hidden_layers=0, num_attention_heads=2, max_position_embeddings=128,
                     pad_token_id=tok.pad_token_id)
    return BertModel(cfg), tok


_NOUNS = "cat dog mat day city team river king queen band song book actor singer album war".split()
_FILLER = ["the cat sat on the mat .", "the dog ran in the city .", "it was one of ten days .",
           "he played with the team .", "they sat in the room .", "she was with her band .", "the king and the queen .",
           "it was a river in france ."]
_SPURIOUS = {1: "the hotel was in paris .", 0: "the hotel was in london ."}


def planted_reviews(n: int, *, agree: float, seed: int = 0) -> tuple[list[list[str]], list[int], list[list[bool]]]:
    """Synthetic 4-sentence reviews with a planted cause and a planted shortcut, for testing rationale methods.

    The label (0/1, alternating) is caused by one sentence, "the <noun> and the <noun> was good|great|bad|terrible
    ." (many variants: a weak signal among noise words); a spurious sentence, "the hotel was in paris|london .", says
    the label with probability ``agree`` (e.g. 0.85 in training and 0.5 in test, where it carries no information);
    two filler sentences say nothing. Positions are shuffled. Returns documents, labels and, per document, which
    sentence is the true rationale.

    Examples:
        >>> docs, labels, truth = planted_reviews(2, agree=1.0)
        >>> labels, [sum(t) for t in truth], len(docs[0])
        ([0, 1], [1, 1], 4)
    """
    import random

    rng = random.Random(seed)
    docs, labels, truth = [], [], []
    for i in range(n):
        y = i % 2
        a, b = rng.sample(_NOUNS, 2)
        cause = f"the {a} and the {b} was {rng.choice(['good', 'great'] if y else ['bad', 'terrible'])} ."
        shortcut = _SPURIOUS[y if rng.random() < agree else 1 - y]
        doc = rng.sample(_FILLER, 2) + [shortcut]
        at = rng.randrange(4)
        doc.insert(at, cause)
        docs.append(doc)
        labels.append(y)
        truth.append([j == at for j in range(4)])
    return docs, labels, truth


def _negate(text: str) -> str | None:
    words = text.split()
    for i, w in enumerate(words):
        if w.lower() in ("is", "was", "are", "were"):
            if i + 1 < len(words) and words[i + 1].lower() == "not":
                return " ".join(words[:i + 1] + words[i + 2:])
            return " ".join(words[:i + 1] + ["not"] + words[i + 1:])
    return None



def _busy(text: str, loops: int) -> int:
    value = 0
    for i in range(loops):
        value = hash((value, text, i))
    return value


@dataclass
class NegateConfig(AugmenterConfig):
    """`NegateAugmenter`'s options."""

    busy_loops: int = field(default=0, metadata={
        "help": "Pure-Python work per row (iterations of a hashing loop), standing in for a slow generator in "
                "scale-out benchmarks; 0 for none."})


class NegateAugmenter(Augmenter[NegateConfig]):
    """A rule augmenter for tests and examples: adds or removes "not" after is/was/are/were in the first edit column
    and gives the row the other label of a two-label schema; rows without such a verb are skipped.

    Examples:
        >>> from datasets import Dataset
        >>> from cfaug_hf import TaskSchema
        >>> ds = Dataset.from_dict({"text": ["the film was good"], "label": ["positive"]})
        >>> list(ds.map(NegateAugmenter(TaskSchema.sentiment()), batched=True)["text"])
        ['the film was good', 'the film was not good']
    """

    method = "negate"
    config_class = NegateConfig

    def augment_examples(self, examples: list[Any]) -> list[RowResult]:
        column = self.schema.edit_columns[0]
        names = self.schema.label_names
        out = []
        for ex in examples:
            _busy(str(ex[column]), self.config.busy_loops)
            new = _negate(ex[column])
            if new is None:
                out.append(RowResult([], ["skipped:no_verb"]))
                continue
            flipped = names[1] if ex.label == names[0] else names[0]
            out.append(RowResult([Counterfactual({column: new}, flipped, "negated", {"column": column})],
                                 ["produced:negated"]))
        return out


def peak_memory_gb() -> float:
    """This process's peak resident memory in GB, for memory tests and benchmarks.

    It reads ``VmHWM`` from ``/proc/self/status``: ``getrusage().ru_maxrss`` is carried over by Linux from the parent
    across ``fork`` + ``exec``, so a child started by a large process (a test runner) reports the parent's size.
    Elsewhere it falls back to ``ru_maxrss``.

    Examples:
        >>> 0 < peak_memory_gb() < 1024
        True
    """
    import resource

    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2 ** 20  # kB
    except OSError:  # no /proc (macOS): ru_maxrss is the best there is
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
