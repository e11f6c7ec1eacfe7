from kgeval.kp.steps import timing_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    timing_step,
    model_path=snakemake.input.model,
    info_path=snakemake.input.info,
    kg_path=snakemake.input.kg,
    out=snakemake.output.timing,
    model_name=snakemake.wildcards.model,
    splits=list(snakemake.params.splits),
    repeats=snakemake.params.repeats,
    min_seconds=snakemake.params.min_seconds,
    memory_budget_mb=snakemake.params.memory_budget_mb,
    compile=snakemake.params.compile,
    country_iso_code=snakemake.params.country_iso_code,
    measure_power_secs=snakemake.params.measure_power_secs,
    **snakemake.params.kp,
)
