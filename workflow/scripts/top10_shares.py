from kgeval.analysis.steps import top10_shares_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    top10_shares_step,
    kg=snakemake.input.kg,
    complete=snakemake.input.complete,
    complete_name=snakemake.params.complete,
    dumps={k[len("dump_"):]: v for k, v in snakemake.input.items() if k.startswith("dump_")},
    release_original=snakemake.input.release_original,
    out_csv=snakemake.output.table,
    out_md=snakemake.output.md,
    out_tex=snakemake.output.tex,
)
