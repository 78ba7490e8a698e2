"""cfaug-hf mover score as an ``evaluate`` module: ``cfaug_hf.metrics.load("mover_score")``.

``predictions`` are counterfactuals, ``references`` their originals.
See ``cfaug_hf.metrics.intrinsic.mover_score``.
"""

import evaluate
from datasets import Value

from cfaug_hf.metrics import intrinsic
from cfaug_hf.metrics._module import metric_info


class MoverScore(evaluate.Metric):
    def _info(self):
        return metric_info("mover_score", intrinsic.mover_score,
                           {"predictions": Value("string"), "references": Value("string")})

    def _compute(self, predictions, references, embedder=None, idf_corpus=None):
        return intrinsic.mover_score(predictions, references, embedder, idf_corpus=idf_corpus)
