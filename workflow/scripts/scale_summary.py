from kgeval.scale.steps import summary_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    summary_step,
    shape=snakemake.wildcards.shape,
    exact=snakemake.input.exact,
    estimates=snakemake.input.estimates,
    negatives=snakemake.input.negatives,
    tau=snakemake.input.tau,
    out=snakemake.output.summary,
    planted=snakemake.params.planted,
)
