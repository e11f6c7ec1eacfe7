from kgeval.tables.steps import FINDINGS_TABLES, findings_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    findings_step,
    names=snakemake.params.names,
    evaluations=snakemake.params.evaluations,
    tables={k: v for k, v in snakemake.input.items() if k in FINDINGS_TABLES},
    out_csv=snakemake.output.table,
    out_md=snakemake.output.markdown,
)
