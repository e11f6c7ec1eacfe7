"""Metrics: KGC rank metrics (micro per answer, macro per question), trec_eval measures, metric families."""
