from kgeval.analysis.steps import pool_statistics_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    pool_statistics_step,
    kg=snakemake.input.kg,
    complete=snakemake.input.complete,
    complete_name=snakemake.params.complete,
    human_labeled=snakemake.input.human_labeled,
    filtered=snakemake.input.filtered,
    release={r: snakemake.input[f"release_{r}"] for r in ("original", "sample", "complete")},
    out=dict(snakemake.output.items()),
)
