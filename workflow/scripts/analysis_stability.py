from kgeval.analysis.steps import stability_step
from kgeval.workflow import run_step

settings = snakemake.params.settings
run_step(
    snakemake,
    stability_step,
    test_sets=snakemake.params.test_sets,
    out_csv=snakemake.output.taus,
    out_summary=snakemake.output.summary,
    png=snakemake.output.figure,
    pdf=snakemake.output.pdf,
    families_png=snakemake.output.families,
    families_pdf=snakemake.output.families_pdf,
    sizes=settings["stability_sizes"],
    repeats=settings["stability_repeats"],
    seed=settings["seed"],
)
