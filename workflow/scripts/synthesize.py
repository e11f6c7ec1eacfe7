from kgeval.data.steps import synthesize_dataset
from kgeval.workflow import run_step

run_step(snakemake, synthesize_dataset, spec=snakemake.params.spec, outputs=dict(snakemake.output.items()))
