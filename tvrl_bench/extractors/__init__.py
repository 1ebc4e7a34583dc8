"""Reward-agnostic feature extractors for the feature-map credit router (`credit.feature_map`): frame
differences and DINOv2 saliency. Contract: `extractor(video[B, F, 3, H, W]) -> saliency[B, F, H, W]`."""
