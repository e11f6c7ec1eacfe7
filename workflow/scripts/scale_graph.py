from kgeval.scale.steps import graph_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    graph_step,
    shape=snakemake.wildcards.shape,
    factor=float(snakemake.params.factor),
    seed=int(snakemake.params.seed),
    out=snakemake.output.graph,
)
