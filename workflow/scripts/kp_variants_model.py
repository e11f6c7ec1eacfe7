from kgeval.kp.steps import kp_variants_model_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    kp_variants_model_step,
    model_path=snakemake.input.model,
    kg_path=snakemake.input.kg,
    out=snakemake.output.record,
    model_name=snakemake.wildcards.model,
    **snakemake.params.variants,
    **snakemake.params.kp,
)
