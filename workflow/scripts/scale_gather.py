from kgeval.scale.steps import gather_step
from kgeval.workflow import run_step

run_step(snakemake, gather_step, shards=list(snakemake.input.shards), out=list(snakemake.output.rankings))
