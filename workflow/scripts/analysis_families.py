from kgeval.analysis.steps import families_step
from kgeval.workflow import run_step

roles = snakemake.params.roles
run_step(
    snakemake,
    families_step,
    original=roles["original"],
    complete=roles["complete"],
    second=roles["second"],
    out_dir="results/analysis",
    tables_dir="results/tables",
)
