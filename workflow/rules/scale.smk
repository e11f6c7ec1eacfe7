# kgeval at millions of entities (issue 53): synthetic graphs of Wikidata5M's and ogbl-wikikg2's shapes and their
# evaluation (exact over entity blocks, question-sampled estimates, sampled negatives). A stage of its own: nothing
# runs while config scale.shapes is empty, and it reads nothing of the study. Logic: kgeval.scale.


SCALE = config["scale"]
SCALE_SHAPES = SCALE["shapes"]
SCALE_GRAPH = "resources/scale/{shape}/graph.npz"
SCALE_TABLES = ["exact", "estimates", "paired", "negatives"]


rule scale_graph:
    output:
        graph=SCALE_GRAPH,
    log:
        "logs/scale_graph/{shape}.log",
    benchmark:
        "logs/benchmarks/scale_graph/{shape}.tsv"
    wildcard_constraints:
        shape=alternatives(SCALE_SHAPES),
    conda:
        "../../envs/models.yaml"
    threads: 2
    params:
        factor=SCALE["factor"],
        seed=SCALE["seed"],
    script:
        "../scripts/scale_graph.py"


rule scale_evaluate:
    input:
        graph=SCALE_GRAPH,
    output:
        exact="results/scale/{shape}/exact.csv",
        estimates="results/scale/{shape}/estimates.csv",
        paired="results/scale/{shape}/paired.csv",
        negatives="results/scale/{shape}/negatives.csv",
        tau="results/scale/{shape}/negatives_tau.json",
    log:
        "logs/scale_evaluate/{shape}.log",
    benchmark:
        "logs/benchmarks/scale_evaluate/{shape}.tsv"
    wildcard_constraints:
        shape=alternatives(SCALE_SHAPES),
    conda:
        "../../envs/models.yaml"
    threads: 2
    params:
        scale=SCALE,
    script:
        "../scripts/scale_evaluate.py"


SCALE_OUTPUTS = expand(
    "results/scale/{shape}/{table}.csv", shape=SCALE_SHAPES, table=SCALE_TABLES
) + expand("results/scale/{shape}/negatives_tau.json", shape=SCALE_SHAPES)


# `snakemake --configfile config/scale.yaml -- scale_all` runs this stage alone
rule scale_all:
    input:
        SCALE_OUTPUTS,


add_final_outputs(SCALE_OUTPUTS)
