"""Which metrics each of the paper's tables and figures shows: declared once, read by the analysis steps, the
re-analysis of metric tables and the findings table (labels and directions come from
:data:`kgeval.metrics.registry.REGISTRY`)."""

from __future__ import annotations

FIG3 = "micro_mrr"
FIG4 = ["micro_mr", "micro_mrr", "micro_hits@1", "micro_hits@3", "micro_hits@10"]
FIG5 = ["micro_mrr", "macro_mrr", "micro_hits@10", "macro_hits@10"]
FIG6 = "micro_mrr"
TABLE3 = ["micro_mrr", "micro_hits@1", "micro_hits@3", "micro_hits@10"]
TABLE4 = FIG4
# Figures 7 and 8: the micro and macro metrics of the stability and discriminative-power studies
MICRO_STUDY = ["micro_mrr", "micro_hits@10"]
MACRO_STUDY = ["macro_mrr", "macro_hits@10", "map_cut_20", "ndcg_cut_20"]
UMF_STUDY_MICRO = ["micro_umf_a-1_p1_uniform", "micro_umf_a-0.5_p1_uniform", "micro_umf_h10_p1_uniform"]
UMF_STUDY_MACRO = ["macro_umf_a-1_p1_uniform", "macro_umf_h10_p1_uniform"]
# the depth-τ companion of Figure 4 for the metric families (plus the configured unified metrics)
FAMILIES_DEPTH = ["micro_mrr", "micro_amrr", "micro_zmrr", "micro_hits@10", "micro_ah@10"]
# the companions of Figures 7 and 8 for the unified metrics show them beside micro and macro MRR
MRR_PAIR = ["micro_mrr", "macro_mrr"]
