from kgeval.bounds.steps import bounds_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    bounds_step,
    dumps={k[len("dump_") :]: v for k, v in snakemake.input.items() if k.startswith("dump_")},
    kg_path=snakemake.input.kg,
    seed_testset=snakemake.input.seed,
    pool=snakemake.input.pool,
    annotations=snakemake.input.annotations,
    out_systems=snakemake.output.systems,
    out_pairs=snakemake.output.pairs,
    out_tau=snakemake.output.tau,
    out_figure=snakemake.output.figure,
    out_figure_pdf=snakemake.output.figure_pdf,
    k=snakemake.params.k,
    rbp_p=snakemake.params.rbp_p,
    metrics=snakemake.params.metrics,
    milp_metrics=snakemake.params.milp_metrics,
    milp_time_limit=snakemake.params.milp_time_limit,
    milp_node_limit=snakemake.params.milp_node_limit,
    milp_depths=snakemake.params.milp_depths,
    max_depth=snakemake.params.max_depth,
    use_prefilter=snakemake.params.prefilter,
    testset=snakemake.wildcards.testset,
)
