from kgeval.kp.steps import kp_model_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    kp_model_step,
    model_path=snakemake.input.model,
    kg_path=snakemake.input.kg,
    out=snakemake.output.record,
    model_name=snakemake.wildcards.model,
    splits=list(snakemake.params.splits),
    graph_kernel=snakemake.params.graph_kernel,
    **snakemake.params.kp,
)
