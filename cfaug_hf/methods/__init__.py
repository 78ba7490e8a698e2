"""One subpackage per method: a config dataclass and an augmenter, registered here by name."""

from .crossaug import CrossAugAugmenter, CrossAugConfig
from .icda import ICDAConfig, RationaleSwapAugmenter

#: Augmenter classes by their ``method`` name.
METHODS = {cls.method: cls for cls in (CrossAugAugmenter, RationaleSwapAugmenter)}

__all__ = ["CrossAugAugmenter", "CrossAugConfig", "RationaleSwapAugmenter", "ICDAConfig", "METHODS"]
