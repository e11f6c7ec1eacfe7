from kgeval.data.steps import build_testset
from kgeval.workflow import run_step

inputs = dict(snakemake.input.items())
run_step(
    snakemake,
    build_testset,
    kg_path=inputs.pop("kg"),
    name=snakemake.wildcards.testset,
    kind=snakemake.params.kind,
    out=snakemake.output.judgments,
    questions_out=snakemake.output.questions,
    seed_set=inputs.pop("seed_set", None),
    queries=inputs.pop("queries", None),
    files=inputs,
    summary=snakemake.output.summary,
)
