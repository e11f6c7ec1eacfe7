from kgeval.scale.steps import sample_step
from kgeval.workflow import run_step

s = snakemake.params.scale
run_step(
    snakemake,
    sample_step,
    graph=snakemake.input.graph,
    sample_size=s["sample_size"],
    half_width=s["half_width"],
    seed=s["seed"],
    k=s["k"],
    batch=s["batch"],
    memory_budget_mb=s["memory_budget_mb"],
    exact_max_answers=s["exact_max_answers"],
    out=snakemake.output.sample,
    models=list(snakemake.input.models) or None,
)
