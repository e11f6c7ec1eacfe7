from kgeval.sampling.steps import priors_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    priors_step,
    dumps={k[len("dump_") :]: v for k, v in snakemake.input.items() if k.startswith("dump_")},
    kg_path=snakemake.input.kg,
    out_calibration=snakemake.output.calibration,
    out_reliability=snakemake.output.reliability,
    out_budgets=snakemake.output.budgets,
    testset=snakemake.wildcards.testset,
    **dict(snakemake.params.items()),
)
