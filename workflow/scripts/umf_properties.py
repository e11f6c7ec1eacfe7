from kgeval.analysis.steps import umf_properties_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    umf_properties_step,
    per_answer=snakemake.input.per_answer,
    kg=snakemake.input.kg,
    out_dir="results/analysis",
    tables_dir="results/tables",
    num_districts=snakemake.params.districts,
)
