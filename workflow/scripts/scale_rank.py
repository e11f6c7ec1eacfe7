from kgeval.scale.steps import rank_shard_step
from kgeval.workflow import run_step

s = snakemake.params.scale
run_step(
    snakemake,
    rank_shard_step,
    graph=snakemake.input.graph,
    sample=snakemake.input.sample,
    systems=s["systems"],
    shard=int(snakemake.wildcards.shard),
    shards=int(snakemake.wildcards.shards),
    k=s["k"],
    batch=s["batch"],
    memory_budget_mb=s["memory_budget_mb"],
    seed=s["seed"],
    out=snakemake.output.shard,
    models=list(snakemake.input.models) or None,
)
