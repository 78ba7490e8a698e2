"""Text utilities: word tokens with character offsets and span substitution (`cfaug_hf.text.spans`), whether an
edit changes meaning (`cfaug_hf.text.meaning`), sentence splitting (`cfaug_hf.text.sentences`) and entity swaps
(`cfaug_hf.text.entities`), keywords from retrieved text (`cfaug_hf.text.keywords`). The names of the first two
import from here too.
"""

from .meaning import ClaimEdit, classify_edit, same_meaning, set_lemmatizer, set_synonym_test
from .spans import (NEGATION_WORDS, SpanDiff, Substitution, Token, diff_tokens, find_span, is_negation, is_word,
                    substitute_span, tokenize)

__all__ = ["Token", "tokenize", "SpanDiff", "diff_tokens", "find_span", "substitute_span", "Substitution",
           "NEGATION_WORDS", "is_negation", "is_word", "ClaimEdit", "classify_edit", "same_meaning",
           "set_lemmatizer", "set_synonym_test"]
