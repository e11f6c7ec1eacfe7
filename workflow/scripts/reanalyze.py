from pathlib import Path

from kgeval.analysis.steps import reanalyze_tables
from kgeval.workflow import run_step

run_step(
    snakemake,
    reanalyze_tables,
    folder=snakemake.params.folder,
    out=str(Path(snakemake.output.notes).parent),
    names={k: v for k, v in snakemake.params.names.items() if v},
)
