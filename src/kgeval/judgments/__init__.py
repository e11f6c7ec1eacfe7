"""What the judgment stages share: labels, the universe of items, item features and the relevance prior."""
