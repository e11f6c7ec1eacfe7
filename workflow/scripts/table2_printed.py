from kgeval.analysis.steps import table2_printed_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    table2_printed_step,
    kg=snakemake.input.kg,
    sample=snakemake.input.sample,
    complete=snakemake.input.complete,
    out_csv=snakemake.output.table,
    out_md=snakemake.output.md,
    out_tex=snakemake.output.tex,
    answers_csv=snakemake.output.answers,
    sample_name=snakemake.params.sample,
    complete_name=snakemake.params.complete,
)
