from kgeval.kp.steps import correlations_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    correlations_step,
    kp_records={k[len("kp_") :]: v for k, v in snakemake.input.items() if k.startswith("kp_")},
    evaluation_csv=snakemake.input.evaluation,
    out_csv=snakemake.output.correlations,
    out_md=snakemake.output.markdown,
    out_values=snakemake.output.values,
    dataset=snakemake.wildcards.dataset,
)
