"""Sampling stage: decide system comparisons with a random sample of judgments drawn with known inclusion
probabilities (issue 42): designs, the difference estimator with the prior as control variate, its variance and
interval, an anytime-valid confidence sequence, the plan and the simulation on the published labels."""
