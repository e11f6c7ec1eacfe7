from kgeval.data.steps import verify_resources
from kgeval.workflow import run_step

run_step(
    snakemake,
    verify_resources,
    manifest=snakemake.input.manifest,
    files=list(snakemake.input.files),
    out=snakemake.output.table,
    entries=list(snakemake.params.entries),
)
