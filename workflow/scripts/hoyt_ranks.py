from kgeval.scores.steps import split_ranks_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    split_ranks_step,
    model_path=snakemake.input.model,
    kg_path=snakemake.input.kg,
    out=snakemake.output.ranks,
)
