"""cfaug-hf edit distance as an ``evaluate`` module: ``cfaug_hf.metrics.load("edit_distance")``.

``predictions`` are counterfactuals, ``references`` their originals.
See ``cfaug_hf.metrics.intrinsic.edit_distance``.
"""

import evaluate
from datasets import Value

from cfaug_hf.metrics import intrinsic
from cfaug_hf.metrics._module import metric_info


class EditDistance(evaluate.Metric):
    def _info(self):
        return metric_info("edit_distance", intrinsic.edit_distance,
                           {"predictions": Value("string"), "references": Value("string")})

    def _compute(self, predictions, references, level="word"):
        return intrinsic.edit_distance(predictions, references, level=level)
