from kgeval.analysis.steps import case_study_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    case_study_step,
    small=snakemake.params.small,
    large=snakemake.params.large,
    models=snakemake.params.models,
    out_dir="results/analysis",
    tables_dir="results/tables",
    seed=snakemake.params.seed,
)
