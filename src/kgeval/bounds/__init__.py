"""Exact bounds on IR metrics and system comparisons when some (question, entity) pairs are unjudged, and the
choice of the fewest new judgments that decide them (a relevance prior, MTC selection, a simulation on real labels)."""
