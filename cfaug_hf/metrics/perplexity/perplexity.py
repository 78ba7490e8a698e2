"""cfaug-hf perplexity as an ``evaluate`` module: ``cfaug_hf.metrics.load("perplexity")``.

``predictions`` are the texts to score.
See ``cfaug_hf.metrics.intrinsic.perplexity``.
"""

import evaluate
from datasets import Value

from cfaug_hf.metrics import intrinsic
from cfaug_hf.metrics._module import metric_info


class Perplexity(evaluate.Metric):
    def _info(self):
        return metric_info("perplexity", intrinsic.perplexity,
                           {"predictions": Value("string")})

    def _compute(self, predictions, model="HuggingFaceTB/SmolLM2-135M-Instruct", tokenizer=None, batch_size=16):
        return intrinsic.perplexity(predictions, model, tokenizer, batch_size=batch_size)
