# Path templates of the files that more than one rule or helper names: each is spelled here once, and every rule
# and helper uses the name (a rule's output, another's input, a target of rule all). Wildcards in braces; fill
# them with expand(TEMPLATE, ...) or TEMPLATE.format(...). A file only its own rule names (logs, benchmarks and
# most figures) stays spelled in that rule.

# data stage
DOWNLOAD = "resources/downloads/{path}"
SYNTH_FILE = "resources/synth/{dataset}/{file}"
SPLIT = "resources/datasets/{dataset}/splits/{split}.txt"
KG = "resources/datasets/{dataset}/kg.npz"
TESTSET = "resources/testsets/{testset}.tsv"
TESTSET_QUESTIONS = "resources/testsets/{testset}.questions.tsv"
TESTSET_SUMMARY = "resources/testsets/{testset}.json"
TABLE1 = "results/tables/table1.csv"
RESOURCES_TABLE = "results/tables/resources.csv"

# model stage
SEED_MODEL = "resources/models/{dataset}/{model}/seed{seed}.pt"
SEED_MODEL_INFO = "resources/models/{dataset}/{model}/seed{seed}.pt.json"
SNAPSHOTS = "resources/snapshots/{dataset}/{model}"
LIBKGE_CHECKPOINT = "resources/downloads/libkge/{dataset}/{model}.pt"
MODEL = "results/models/{dataset}/{model}/model.pt"
MODEL_INFO = "results/models/{dataset}/{model}/model.pt.json"
MODEL_SELECTION = "results/models/{dataset}/{model}/selection.json"

# score stage (a folder per system and test set)
SCORES = "results/scores/{testset}/{model}"

# metric stage, pool stage
EVALUATION = "results/metrics/{testset}/evaluation.csv"
PER_CATEGORY = "results/metrics/{testset}/lp_per_rel_type.csv"
PER_QUESTION = "results/metrics/{testset}/per_question.parquet"
PER_ANSWER = "results/metrics/{testset}/per_answer.parquet"
REWEIGHTED = "results/metrics/{testset}/lp_sample_rel_dist.csv"
POOLING_DEPTH = "results/metrics/{testset}/pooling_depth.csv"
POOLING_DEPTH_REBUILT = "results/metrics/{testset}/pooling_depth_rebuilt.csv"
DEPTH_ANSWERS = "results/metrics/{testset}/pooling_depth_answers.parquet"
DEPTH_QUESTIONS = "results/metrics/{testset}/pooling_depth_questions.parquet"
POOL = "results/pools/{testset}/pool.tsv"
COVERAGE = "results/pools/{testset}/coverage.csv"
ANNOTATION_BATCH = "results/annotations/{testset}/batch.tsv"
TREC_QRELS = "results/trec/{testset}/qrels.txt"
TREC_RUN = "results/trec/{testset}/{model}.run"

# bounds stage
BOUNDS_TAU = "results/bounds/{testset}/tau.csv"
BOUNDS_TAU_PRIOR = "results/bounds/{testset}/tau_prior.csv"
BOUNDS_NEXT = "results/bounds/{testset}/next_judgments.tsv"
BOUNDS_COUNTS = "results/bounds/{testset}/judgments_to_decide.csv"
BOUNDS_SIMULATION_SUMMARY = "results/bounds/{testset}/simulation_summary.csv"

# analysis stage
FIGURE2_KL = "results/analysis/figure2_kl.csv"
FIGURE3 = "results/analysis/figure3.png"
FIGURE4_CSV = "results/analysis/figure4.csv"
FIGURE5_CSV = "results/analysis/figure5.csv"
FIGURE6_CSV = "results/analysis/figure6.csv"
TABLE4 = "results/tables/table4.csv"
CLAIM_TAUS = "results/analysis/claim_taus.csv"
FIGURE7 = "results/analysis/figure7.png"
FIGURE7_SUMMARY = "results/analysis/figure7_summary.csv"
FIGURE8 = "results/analysis/figure8.png"
FIGURE8_SUMMARY = "results/analysis/figure8_summary.csv"
UMF_GRID = "results/analysis/umf_grid.csv"
REANALYSIS_OWN = "results/reanalysis/own/notes.txt"
REANALYSIS_RELEASE = "results/reanalysis/release/notes.txt"
TABLE2_PRINTED = "results/tables/table2_printed.csv"
POOL_STATISTICS = "results/tables/pool_statistics.csv"
TOP10_SHARES = "results/tables/top10_shares.csv"

# Knowledge Persistence stage
KP_RECORD = "results/kp/{dataset}/{model}.json"
KP_TIMING_RECORD = "results/kp/{dataset}/timing/{model}.json"
KP_EARLY_STOPPING_RECORD = "results/kp/{dataset}/early_stopping/{model}.csv"
KP_CORRELATIONS = "results/kp/{dataset}/correlations.csv"
KP_VALUES = "results/kp/{dataset}/values.csv"
KP_TIMING = "results/kp/{dataset}/timing.csv"
KP_CARBON = "results/kp/{dataset}/carbon.csv"
KP_CARBON_FIGURE = "results/kp/{dataset}/carbon.png"
KP_EARLY_STOPPING = "results/kp/{dataset}/early_stopping.csv"
KP_MODEL_RANGE = "results/kp/{dataset}/model_range.csv"
KP_VARIANTS_RECORD = "results/kp/{dataset}/variants/{model}.csv"
KP_SAMPLE_SIZE = "results/kp/{dataset}/sample_size.csv"
KP_SAMPLE_SIZE_FIGURE = "results/kp/{dataset}/sample_size.png"
KP_VARIANTS = "results/kp/{dataset}/variants.csv"

# summary stage
MODEL_QUALITY = "results/tables/model_quality.csv"
FINDINGS = "results/tables/findings.csv"
RUN_TIMES = "results/tables/run_times.csv"
RUN_MANIFEST = "results/manifest.json"
BENCHMARKS = "logs/benchmarks"
TRAIN_BENCHMARK = "logs/benchmarks/train_model/{dataset}/{model}/seed{seed}.tsv"

# sampling
SAMPLING_PLAN = "results/sampling/{testset}/sampling_plan.tsv"
SAMPLING_COVERAGE = "results/sampling/{testset}/sampling_coverage.png"
SAMPLING_BUDGETS = "results/sampling/{testset}/sampling_budgets.csv"
PRIOR_BUDGETS = "results/tables/{testset}/prior_budgets.csv"

# Hoyt et al.'s case study and the unified metric framework's properties
HOYT_RANKS = "results/hoyt/{dataset}/{model}.ranks.parquet"
HOYT_TABLE = "results/tables/hoyt_case_study.csv"
HOYT_SIZE_TREND = "results/tables/hoyt_size_trend.csv"
UMF_LONG_TAIL = "results/tables/umf_long_tail.csv"
