from kgeval.pools.steps import annotation_batch_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    annotation_batch_step,
    pool=snakemake.input.pool,
    kg_path=snakemake.input.kg,
    annotations=snakemake.input.annotations,
    templates=snakemake.input.templates,
    out=snakemake.output.sheet,
    batch=snakemake.params.batch,
    use_prefilter=snakemake.params.prefilter,
)
