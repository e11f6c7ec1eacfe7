"""Exact bounds on IR metrics and system comparisons when some (question, entity) pairs are unjudged."""
