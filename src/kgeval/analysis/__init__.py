"""The study's analyses: Kendall's τ between system rankings, stability under subsampling, discriminative
power, relation distributions, and the tables and figures of the paper."""
