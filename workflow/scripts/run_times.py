from kgeval.tables.steps import run_times_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    run_times_step,
    benchmark_dir=snakemake.params.benchmark_dir,
    stages=snakemake.params.stages,
    graph=snakemake.params.graph,
    out_csv=snakemake.output.table,
    out_md=snakemake.output.markdown,
)
