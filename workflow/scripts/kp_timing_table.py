from kgeval.kp.steps import timing_table_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    timing_table_step,
    timings={k[len("timing_") :]: v for k, v in snakemake.input.items() if k.startswith("timing_")},
    out_csv=snakemake.output.table,
    out_md=snakemake.output.markdown,
)
