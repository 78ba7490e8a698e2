"""Does augmentation make a classifier rely less on shortcuts? Train on original vs augmented data, test in-domain
and on contrast / out-of-distribution sets, over several seeds.

    python -m benchmarks.debias --config sentiment|nli|fv|fever|fv-ood|all [--model bow|frozen|MODEL_ID_OR_PATH]
                                [--seeds 0 1 2] [--rows none human eda crossaug] [--list-rows]

Configurations (``configs.py``; data from ../shared/data, see its MANIFEST.md): sentiment (CAD IMDb), nli
(CAD SNLI), fv (FEVEROUS, tested on FEVER-Symmetric), fever (the CrossAug paper's claim-only-bias setup) and fv-ood
(RACE's out-of-domain setup).

Rows (training sets) live one family a file in ``rows/`` (baselines: none, human, eda, reweight; crossaug; race;
icda; core; editors), each registered with the configurations it applies to; ``--list-rows`` prints them all with
what each is. A new row is one decorated function (``registry.row``).

Models (``classifiers.py``): ``bow`` is TF-IDF word 1-2 grams per text column + logistic regression (minutes for
everything); ``frozen`` is the frozen-encoder yardstick (benchmarks/frozen_yardstick.py: MiniLM vectors computed
once and cached, then a ``--head lr``, ``mlp`` or ``topN`` trained per seed); any other value is a Hugging Face model
id or folder fine-tuned with Trainer (default MiniLM, resolved offline).

Each table is checked for validity (``benchmarks.debias.validity.validity``): a yardstick counts for a task only if the
human counterfactuals (IMDb, SNLI) or the claim-only re-weighting (FEVER) beat ``none`` on the contrast set by more
than 2 sd of the difference (and, for FEVER, the held-out accuracy is at least 80%). A table whose checks fail says
so in its heading. Writes benchmarks/results/debias_<config>_<model>.{md,json}, with the git commit, date and
settings; generation is cached in benchmarks/.cache/ in resumable parts (``augmented.cached_augment``).
"""

from __future__ import annotations

from . import settings
from .augmented import archive_parts, cached_augment, restore_parts
from .configs import CONFIGS, schema_of
from .rows.editors import annotated_rows, editor_subset
from .run import main

__all__ = ["CONFIGS", "annotated_rows", "archive_parts", "cached_augment", "editor_subset", "main",
           "restore_parts", "schema_of", "settings"]
