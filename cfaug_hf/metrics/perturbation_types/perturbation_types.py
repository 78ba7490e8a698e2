"""cfaug-hf perturbation types as an ``evaluate`` module: ``cfaug_hf.metrics.load("perturbation_types")``.

``predictions`` are counterfactuals, ``references`` their originals.
See ``cfaug_hf.metrics.intrinsic.perturbation_types``.
"""

import evaluate
from datasets import Value

from cfaug_hf.metrics import intrinsic
from cfaug_hf.metrics._module import metric_info


class PerturbationTypes(evaluate.Metric):
    def _info(self):
        return metric_info("perturbation_types", intrinsic.perturbation_types,
                           {"predictions": Value("string"), "references": Value("string")})

    def _compute(self, predictions, references):
        return intrinsic.perturbation_types(references, predictions)
