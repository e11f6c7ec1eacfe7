from kgeval.training.steps import select_best
from kgeval.workflow import run_step

run_step(
    snakemake,
    select_best,
    candidates=list(snakemake.input.candidates),
    out=snakemake.output.model,
    summary_out=snakemake.output.summary,
)
