"""cfaug-hf multihop coherence as an ``evaluate`` module: ``cfaug_hf.metrics.load("multihop_coherence")``.

``predictions`` are counterfactuals, ``references`` the evidence pieces of each claim.
See ``cfaug_hf.metrics.intrinsic.multihop_coherence``.
"""

import evaluate
from datasets import Sequence, Value

from cfaug_hf.metrics import intrinsic
from cfaug_hf.metrics._module import metric_info


class MultihopCoherence(evaluate.Metric):
    def _info(self):
        return metric_info("multihop_coherence", intrinsic.multihop_coherence,
                           {"predictions": Value("string"), "references": Sequence(Value("string"))})

    def _compute(self, predictions, references, embedder=None):
        return intrinsic.multihop_coherence(predictions, references, embedder)
