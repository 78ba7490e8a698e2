"""Fingerprints are cache keys (``datasets`` map caches, benchmark caches, saved augmenters): the same component must
give the same fingerprint in every process. Python randomises string hashing per process, so anything that follows
set order or random initialisation of an unused tensor breaks that; these tests load components under two hash
seeds and compare."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import torch

from cfaug_hf.data import CHECKER_TASKS
from cfaug_hf.fingerprint import digest_json, digest_module

SCRIPT = """
import json
from cfaug_hf.components.checker import default_checker
from cfaug_hf.data import CHECKER_TASKS
from cfaug_hf.fingerprint import digest_json
out = {task: default_checker(task).fingerprint() for task in sorted(CHECKER_TASKS)}
out["json-with-sets"] = digest_json({"target_modules": {"query", "key", "value", "dense"}, "n": {3, 1, 2}})
print(json.dumps(out))
"""


def _fingerprints(hash_seed: int) -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_shipped_checkers_and_json_with_sets_fingerprint_the_same_in_every_process():
    first, second = _fingerprints(1), _fingerprints(2)
    assert set(first) == {*CHECKER_TASKS, "json-with-sets"}
    assert first == second


def test_digest_json_does_not_depend_on_set_order():
    assert digest_json({"a": {"x", "y", "z"}}) == digest_json({"a": {"z", "y", "x"}}) == \
        digest_json({"a": frozenset(["y", "x", "z"])})
    assert digest_json({"a": {"x", "y"}}) != digest_json({"a": {"x", "z"}})


def test_peft_frozen_copies_of_trained_modules_do_not_change_the_digest():
    from peft import LoraConfig, get_peft_model

    from cfaug_hf.testing import tiny_classifier

    model, _ = tiny_classifier(["a", "b"])
    head = next(n for n, _ in model.named_children() if n in ("classifier", "score"))
    peft = get_peft_model(model, LoraConfig(r=2, target_modules=["query", "value"], modules_to_save=[head]))
    before = digest_module(peft)
    frozen = [p for n, p in peft.named_parameters() if ".original_module." in n]
    trained = [p for n, p in peft.named_parameters() if ".modules_to_save." in n]
    assert frozen and trained
    with torch.no_grad():
        frozen[0].add_(1.0)  # the copy the adapter never computes with: no change to outputs, none to the digest
    assert digest_module(peft) == before
    with torch.no_grad():
        trained[0].add_(1.0)  # the copy that computes the outputs
    assert digest_module(peft) != before


HISTORY = """
import sys
from cfaug_hf import TaskSchema
from cfaug_hf.testing import NegateAugmenter
if sys.argv[1] == "after":  # what running another augmenter does: import the modules it needs
    import cfaug_hf.text, cfaug_hf.filters, cfaug_hf.methods.crossaug.augmenter  # noqa: E401,F401
print(NegateAugmenter(TaskSchema.sentiment()).fingerprint())
"""


def test_an_augmenters_fingerprint_does_not_depend_on_what_the_process_imported_before():
    """A module that registers a process-wide hook (``text.set_lemmatizer``) registers it when first imported; an
    unset hook must count as absent, or an augmenter's fingerprint (its cache key) changes once another augmenter
    has run in the same process, and its cached rows are made again (seen: a 5-seed benchmark regenerating 1281
    reviews at its second seed)."""
    from cfaug_hf import TaskSchema
    from cfaug_hf import fingerprint as fp
    from cfaug_hf.testing import NegateAugmenter

    runs = {when: subprocess.run([sys.executable, "-c", HISTORY, when], capture_output=True, text=True, check=True,
                                 env={**os.environ, "HF_HUB_OFFLINE": "1"}).stdout.split()[-1]
            for when in ("fresh", "after")}
    assert runs["fresh"] == runs["after"]

    augmenter = NegateAugmenter(TaskSchema.sentiment())
    before = augmenter.fingerprint()
    box = {"value": None}
    fp.register_global_state("test.hook", lambda: box["value"])
    try:
        assert augmenter.fingerprint() == before  # registered, unset: absent
        box["value"] = "a setting that changes outputs"
        assert augmenter.fingerprint() != before  # set: part of the key
    finally:
        fp._GLOBAL_STATE.pop("test.hook")
