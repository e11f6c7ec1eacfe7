from kgeval.kp.steps import kp_variants_table_step
from kgeval.workflow import run_step

run_step(
    snakemake,
    kp_variants_table_step,
    records={k[len("var_") :]: v for k, v in snakemake.input.items() if k.startswith("var_")},
    evaluation_csv=snakemake.input.evaluation,
    out_sample_csv=snakemake.output.sample_size,
    out_sample_md=snakemake.output.sample_size_markdown,
    out_png=snakemake.output.png,
    out_pdf=snakemake.output.pdf,
    out_variants_csv=snakemake.output.variants,
    out_variants_md=snakemake.output.variants_markdown,
    dataset=snakemake.wildcards.dataset,
)
