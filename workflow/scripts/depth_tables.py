from kgeval.pools.steps import depth_tables_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    depth_tables_step,
    dumps={k[len("dump_") :]: v for k, v in snakemake.input.items() if k.startswith("dump_")},
    kg_path=snakemake.input.kg,
    pooled_testset=snakemake.input.pooled,
    seed_testset=snakemake.input.seed,
    pool=snakemake.input.pool,
    annotations=snakemake.input.annotations,
    out_published=snakemake.output.published,
    out_rebuilt=snakemake.output.rebuilt,
    measures=snakemake.params.measures,
    max_depth=snakemake.params.max_depth,
    use_prefilter=snakemake.params.prefilter,
    items_out=(snakemake.output.items_answers, snakemake.output.items_questions),
)
