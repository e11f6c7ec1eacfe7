from kgeval.metrics.steps import reweighted_table
from kgeval.workflow import run_step

run_step(
    snakemake,
    reweighted_table,
    dumps={k[len("dump_") :]: v for k, v in snakemake.input.items() if k.startswith("dump_")},
    kg_path=snakemake.input.kg,
    reference_testset=snakemake.input.reference,
    out=snakemake.output.table,
)
