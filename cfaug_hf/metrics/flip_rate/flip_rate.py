"""cfaug-hf flip rate as an ``evaluate`` module: ``cfaug_hf.metrics.load("flip_rate")``.

``predictions`` are counterfactuals, ``references`` their intended labels.
See ``cfaug_hf.metrics.intrinsic.flip_rate``.
"""

import evaluate
from datasets import Value

from cfaug_hf.metrics import intrinsic
from cfaug_hf.metrics._module import metric_info


class FlipRate(evaluate.Metric):
    def _info(self):
        return metric_info("flip_rate", intrinsic.flip_rate,
                           {"predictions": Value("string"), "references": Value("string")})

    def _compute(self, predictions, references):
        return intrinsic.flip_rate(predictions, references)
