"""Model and dataset cards, and pushing to and pulling from the Hub: what ``push_to_hub`` of every augmenter and
component uses. The top-level ``hub_cards`` package is the public face of this module (``from hub_cards import
push_augmented``).
"""

from .cards import component_card, dataset_card, merge_card, source_info, split_provenance
from .push import HubError, download_folder, pull, push_augmented, push_augmenter, push_component

__all__ = ["component_card", "dataset_card", "merge_card", "source_info", "split_provenance", "HubError", "pull",
           "push_augmented", "push_augmenter", "push_component", "download_folder"]
