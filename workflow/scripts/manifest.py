from kgeval.reproduce.steps import write_manifest_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    write_manifest_step,
    models=list(snakemake.input.models),
    dumps=list(snakemake.input.dumps),
    tables=list(snakemake.input.tables),
    findings=snakemake.input.findings,
    out=snakemake.output.manifest,
    config=dict(snakemake.config),
    lock=snakemake.params.lock,
)
