from kgeval.training.steps import convert_libkge
from kgeval.workflow import run_step

run_step(
    snakemake,
    convert_libkge,
    path=snakemake.input.checkpoint,
    kg_path=snakemake.input.kg,
    sha256=snakemake.params.sha256,
    out=snakemake.output.model,
)
