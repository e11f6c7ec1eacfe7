from kgeval.scale.steps import real_graph_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    real_graph_step,
    layout=snakemake.params.layout,
    root=snakemake.params.root,
    out=snakemake.output.graph,
    prefix=snakemake.params.prefix,
)
