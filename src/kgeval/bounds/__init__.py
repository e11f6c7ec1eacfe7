"""Bounds on system comparisons under unjudged triples, and the choice of the judgments that decide them."""
