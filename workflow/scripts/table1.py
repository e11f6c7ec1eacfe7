from kgeval.data.steps import table1
from kgeval.workflow import run_step

run_step(
    snakemake,
    table1,
    testsets=dict(snakemake.input.items()),
    kgs=snakemake.params.kgs,
    csv=snakemake.output.csv,
    md=snakemake.output.md,
    tex=snakemake.output.tex,
)
