from kgeval.pools.steps import build_pool_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    build_pool_step,
    runs={k[len("run_") :]: v for k, v in snakemake.input.items() if k.startswith("run_")},
    kg_path=snakemake.input.kg,
    annotations=snakemake.input.annotations,
    pooling_depth=snakemake.input.pooling_depth,
    out_pool=snakemake.output.pool,
    out_coverage=snakemake.output.coverage,
    out_prefilter=snakemake.output.prefilter,
    max_depth=snakemake.params.max_depth,
)
