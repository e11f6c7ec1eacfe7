"""Pools, qrels and annotation (workflow/rules/pools.smk): pooling, qrels and TREC exports, the annotation round
trip, and the steps of the pools rules."""
