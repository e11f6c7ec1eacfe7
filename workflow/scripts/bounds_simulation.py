from kgeval.bounds.steps import simulation_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    simulation_step,
    dumps={k[len("dump_") :]: v for k, v in snakemake.input.items() if k.startswith("dump_")},
    kg_path=snakemake.input.kg,
    out_table=snakemake.output.table,
    out_summary=snakemake.output.summary,
    out_figure=snakemake.output.figure,
    out_figure_pdf=snakemake.output.figure_pdf,
    k=snakemake.params.k,
    rbp_p=snakemake.params.rbp_p,
    metrics=snakemake.params.metrics,
    prior=snakemake.params.prior,
    folds=snakemake.params.folds,
    batch=snakemake.params.batch,
    draws=snakemake.params.draws,
    random_seeds=snakemake.params.random_seeds,
    seed=snakemake.params.seed,
    max_depth=snakemake.params.max_depth,
    testset=snakemake.wildcards.testset,
)
