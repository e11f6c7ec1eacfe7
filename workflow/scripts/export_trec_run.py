from kgeval.pools.steps import export_trec_run_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    export_trec_run_step,
    dump=snakemake.input.dump,
    kg_path=snakemake.input.kg,
    out=snakemake.output.run,
    tag=snakemake.wildcards.model,
    depth=snakemake.params.depth,
)
