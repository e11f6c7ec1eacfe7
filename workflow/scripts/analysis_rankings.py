from kgeval.analysis.steps import rankings_step
from kgeval.workflow import run_step

roles, settings = snakemake.params.roles, snakemake.params.settings
run_step(
    snakemake,
    rankings_step,
    original=roles["original"],
    sample=roles["sample"],
    complete=roles["complete"],
    out_dir="results/analysis",
    tables_dir="results/tables",
    per_relation_system=settings["per_relation_system"],
    bootstrap=settings["bootstrap"],
    relation_classes=settings["relation_classes"],
    seed=settings["seed"],
    bounds_tau=snakemake.input.get("bounds_tau"),
    bounds_prior=snakemake.input.get("bounds_prior"),
)
