from kgeval.kp.steps import early_stopping_table_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    early_stopping_table_step,
    per_model={k[len("es_") :]: v for k, v in snakemake.input.items() if k.startswith("es_")},
    out_csv=snakemake.output.table,
    out_md=snakemake.output.markdown,
    out_checkpoints=snakemake.output.checkpoints,
    out_range=snakemake.output.model_range,
    out_range_md=snakemake.output.model_range_markdown,
)
