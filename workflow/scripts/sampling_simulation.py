from kgeval.sampling.steps import simulation_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    simulation_step,
    dumps={k[len("dump_") :]: v for k, v in snakemake.input.items() if k.startswith("dump_")},
    kg_path=snakemake.input.kg,
    out_table=snakemake.output.table,
    out_sequence=snakemake.output.sequence,
    out_vs_mtc=snakemake.output.vs_mtc,
    out_figure=snakemake.output.figure,
    out_figure_pdf=snakemake.output.figure_pdf,
    testset=snakemake.wildcards.testset,
    **dict(snakemake.params.items()),
)
