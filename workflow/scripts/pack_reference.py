from kgeval.tables.steps import pack_reference_step
from kgeval.workflow import run_step

tables = {
    kind: {k[len(kind) + 1 :]: v for k, v in snakemake.input.items() if k.startswith(kind + "_")}
    for kind in ("evaluation", "per_answer", "per_question")
}
run_step(
    snakemake,
    pack_reference_step,
    **tables,
    out=snakemake.output.pack,
    config=dict(snakemake.config),
    name=snakemake.wildcards.name,
    cores=snakemake.params.cores,
    benchmark_dir=snakemake.params.benchmarks,
    runs=snakemake.params.runs,
    k=snakemake.params.k,
    run_times=snakemake.input.run_times,
    manifest=snakemake.input.manifest,
)
