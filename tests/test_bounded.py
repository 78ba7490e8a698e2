"""Bounded work for bounded input: very long rows through the default flip checker stay within a stated memory bound.

Reported: one row with a 10k-word claim and evidence used 7.1 GB with the default flip checker (0.5 GB without);
here it reached 24 GB and was killed. The cause was tokenizers' ``longest_first`` truncation of a long pair, which
takes time and memory quadratic in the length; each side is now cut to the model's maximum length first. The family
tried: a long claim, a long evidence, both; 10k and 100k words; in each process the peak must stay under
:data:`BOUND_GB`, and the row's outcome must count the truncation. The same measurement over every method's default
components is ``benchmarks/row_memory.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

BOUND_GB = 2.0

RUN = r"""
import json, sys
from datasets import Dataset
from cfaug_hf import CrossAugAugmenter, TaskSchema
from cfaug_hf.testing import peak_memory_gb
words, where = int(sys.argv[1]), sys.argv[2]
long = " ".join(f"w{i % 500}" for i in range(words))
claim = "Paris is in France. " + (long if where in ("claim", "both") else "")
evidence = "Paris is the capital of France. " + (long if where in ("evidence", "both") else "")
data = Dataset.from_dict({"claim": [claim], "evidence": [evidence], "label": ["SUPPORTS"]})
aug = CrossAugAugmenter(lambda cs: [c.replace("France", "Spain") for c in cs], TaskSchema.fact_verification(),
                        checker="default")
aug.augment(data, load_from_cache_file=False)
print(json.dumps({"peak_gb": peak_memory_gb(),
                  "stats": aug.stats.to_dict()}))
"""


@pytest.fixture(scope="module", autouse=True)
def warm_caches():
    """The first load of the shipped checker on a fresh machine builds its cached copies (a one-time peak that does
    not depend on the row); it happens here, in a process of its own, so the bound is on the row's own cost."""
    warm = "from cfaug_hf.components.checker import default_checker; default_checker('fact-verification')"
    subprocess.run([sys.executable, "-c", warm], check=True, capture_output=True, timeout=600)


@pytest.mark.parametrize("words,where", [(10_000, "evidence"), (100_000, "both")])
def test_a_very_long_row_stays_under_the_bound_and_counts_its_truncation(words, where):
    done = subprocess.run([sys.executable, "-c", RUN, str(words), where], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["peak_gb"] < BOUND_GB, result
    assert result["stats"]["truncated"] == {"label_flip_input": 1}
