from kgeval.sampling.steps import plan_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    plan_step,
    dumps={k[len("dump_") :]: v for k, v in snakemake.input.items() if k.startswith("dump_")},
    kg_path=snakemake.input.kg,
    templates=snakemake.input.templates,
    out_sheet=snakemake.output.sheet,
    out_items=snakemake.output.sidecar,
    out_pairs=snakemake.output.pairs,
    testset=snakemake.wildcards.testset,
    **dict(snakemake.params.items()),
)
