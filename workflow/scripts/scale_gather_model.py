from kgeval.scale.steps import gather_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    gather_step,
    shards=list(snakemake.input.shards),
    out=[snakemake.output.ranking],
    first=int(snakemake.wildcards.system),
)
