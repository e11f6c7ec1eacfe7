from kgeval.kp.steps import carbon_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    carbon_step,
    timings={k[len("timing_") :]: v for k, v in snakemake.input.items() if k.startswith("timing_")},
    out_csv=snakemake.output.table,
    out_md=snakemake.output.markdown,
    out_png=snakemake.output.png,
    out_pdf=snakemake.output.pdf,
    dataset=snakemake.wildcards.dataset,
    **snakemake.params.projection,
)
