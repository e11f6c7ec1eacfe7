from kgeval.sampling.steps import estimate_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    estimate_step,
    dumps={k[len("dump_") :]: v for k, v in snakemake.input.items() if k.startswith("dump_")},
    kg_path=snakemake.input.kg,
    plan_items=snakemake.input.sidecar,
    plan_pairs=snakemake.input.pairs,
    labels=snakemake.input.labels,
    out_estimates=snakemake.output.estimates,
    out_audit=snakemake.output.audit,
    testset=snakemake.wildcards.testset,
    **dict(snakemake.params.items()),
)
