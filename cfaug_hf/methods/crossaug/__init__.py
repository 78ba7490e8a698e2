"""CrossAug (Lee et al., CIKM 2021): negative claims and cross-paired evidence edits for fact verification."""

from .augmenter import CrossAugAugmenter
from .config import CROSSAUG_KINDS, CrossAugConfig

__all__ = ["CrossAugAugmenter", "CrossAugConfig", "CROSSAUG_KINDS"]
