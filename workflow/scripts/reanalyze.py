from pathlib import Path

from kgeval.analysis.reanalyze import reanalyze
from kgeval.workflow import run_step

run_step(
    snakemake,
    reanalyze,
    folder=snakemake.params.folder,
    out=str(Path(snakemake.output.notes).parent),
    names={k: v for k, v in snakemake.params.names.items() if v},
)
