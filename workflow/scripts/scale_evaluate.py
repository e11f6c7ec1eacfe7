from kgeval.scale.steps import evaluate_step
from kgeval.workflow import run_step

s = snakemake.params.scale
run_step(
    snakemake,
    evaluate_step,
    graph=snakemake.input.graph,
    systems=s["systems"],
    k=s["k"],
    negatives_k=s["negatives"],
    sample_size=s["sample_size"],
    half_width=s["half_width"],
    hits=s["hits"],
    seed=s["seed"],
    batch=s["batch"],
    memory_budget_mb=s["memory_budget_mb"],
    bootstrap=s["bootstrap"],
    exact_max_answers=s["exact_max_answers"],
    out_exact=snakemake.output.exact,
    out_estimates=snakemake.output.estimates,
    out_paired=snakemake.output.paired,
    out_negatives=snakemake.output.negatives,
    out_tau=snakemake.output.tau,
)
