from kgeval.tables.steps import model_quality_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    model_quality_step,
    models=snakemake.params.models,
    evaluations=snakemake.params.evaluations,
    out_csv=snakemake.output.table,
    out_md=snakemake.output.markdown,
)
