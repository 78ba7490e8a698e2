"""Checking what a component returned before it is used: one check for every batch-in, batch-out contract.

A component given as a Python callable (a generator, an entity extractor, a tagger, a filter) can return a shape
that iterates like the right one and is silently misread: a dict iterates over its keys, a set in no fixed order, a
string over its characters, and ``zip`` drops whatever a short list leaves out. Each contract check refuses those,
naming the component and what it should return.

Examples:
    >>> batch_output(["a", "b"], 2, who="The generator", contract="expected one string per input")
    ['a', 'b']
    >>> batch_output({"a": 1, "b": 2}, 2, who="The generator", contract="expected one string per input")
    Traceback (most recent call last):
    ...
    TypeError: The generator returned dict for 2 inputs; expected one string per input.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

__all__ = ["batch_output", "string_list"]


def batch_output(outputs: Any, n: int, *, who: str, contract: str, what: str = "input") -> list[Any]:
    """``outputs`` as a list of exactly ``n`` items, refusing None, a string, a mapping, a set, a non-iterable and a
    list of the wrong length; ``contract`` says what was expected, ``what`` names the inputs."""
    if outputs is None or isinstance(outputs, (str, bytes, Mapping, Set)) or not hasattr(outputs, "__iter__"):
        raise TypeError(f"{who} returned {type(outputs).__name__} for {n} {what}s; {contract}.")
    outputs = list(outputs)
    if len(outputs) != n:
        raise TypeError(f"{who} returned {len(outputs)} outputs for {n} {what}s; {contract}.")
    return outputs


def string_list(value: Any, *, who: str, index: int, contract: str) -> list[str]:
    """One item of a batch output that must be a list (or tuple) of strings."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{who}'s output {index} is {type(value).__name__} {str(value)[:200]!r}; {contract}.")
    return list(value)
