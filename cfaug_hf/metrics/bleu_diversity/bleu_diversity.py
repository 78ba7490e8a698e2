"""cfaug-hf bleu diversity as an ``evaluate`` module: ``cfaug_hf.metrics.load("bleu_diversity")``.

``predictions`` are counterfactuals, ``references`` their originals.
See ``cfaug_hf.metrics.intrinsic.bleu_diversity``.
"""

import evaluate
from datasets import Value

from cfaug_hf.metrics import intrinsic
from cfaug_hf.metrics._module import metric_info


class BleuDiversity(evaluate.Metric):
    def _info(self):
        return metric_info("bleu_diversity", intrinsic.bleu_diversity,
                           {"predictions": Value("string"), "references": Value("string")})

    def _compute(self, predictions, references):
        return intrinsic.bleu_diversity(predictions, references)
