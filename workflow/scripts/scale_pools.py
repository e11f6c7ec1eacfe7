from kgeval.scale.steps import pools_step
from kgeval.workflow import run_step

s = snakemake.params.scale
run_step(
    snakemake,
    pools_step,
    graph=snakemake.input.graph,
    sample=snakemake.input.sample,
    rankings=list(snakemake.input.rankings),
    questions_n=s["pool_questions"],
    depths=s["pool_depths"],
    seed=s["seed"],
    out_pools=snakemake.output.pools,
    out_bounds=snakemake.output.bounds,
    plan_budget=s["plan_budget"],
    out_plan=snakemake.output.plan,
)
