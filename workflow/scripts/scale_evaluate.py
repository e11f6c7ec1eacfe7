from kgeval.scale.steps import evaluate_step
from kgeval.workflow import run_step

s = snakemake.params.scale
run_step(
    snakemake,
    evaluate_step,
    graph=snakemake.input.graph,
    sample=snakemake.input.sample,
    rankings=list(snakemake.input.rankings),
    negatives_k=s["negatives"],
    hits=s["hits"],
    seed=s["seed"],
    bootstrap=s["bootstrap"],
    out_exact=snakemake.output.exact,
    out_estimates=snakemake.output.estimates,
    out_paired=snakemake.output.paired,
    out_negatives=snakemake.output.negatives,
    out_tau=snakemake.output.tau,
    models=list(snakemake.input.models) or None,
    names=snakemake.params.names,
)
