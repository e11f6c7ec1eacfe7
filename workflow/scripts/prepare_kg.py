from kgeval.data.steps import prepare_kg
from kgeval.workflow import run_step

run_step(
    snakemake,
    prepare_kg,
    name=snakemake.wildcards.dataset,
    files=dict(snakemake.input.items()),
    out=snakemake.output.kg,
    summary=snakemake.output.summary,
)
