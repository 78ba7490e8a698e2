"""Model and dataset cards for cfaug-hf, and helpers to push and pull components, augmenters and datasets.

>>> from hub_cards import push_augmented, component_card, dataset_card
"""

from .cards import component_card, dataset_card, merge_card, source_info, split_provenance
from .push import HubError, download_folder, pull, push_augmented, push_augmenter, push_component

__all__ = ["component_card", "dataset_card", "merge_card", "source_info", "split_provenance", "HubError", "pull",
           "push_augmented", "push_augmenter", "push_component", "download_folder"]
