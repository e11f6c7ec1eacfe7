# kgeval at millions of entities (issue 53): synthetic graphs of Wikidata5M's and ogbl-wikikg2's shapes and their
# evaluation (exact over entity blocks, question-sampled estimates, sampled negatives), and real graphs (config
# scale.graphs, read from their downloaded files) with the user's trained models (scale.models) through the same
# rules. A stage of its own: nothing runs while scale.shapes and scale.graphs are empty, and it reads nothing of
# the study. Logic: kgeval.scale.
#
# Exact ranking is split into question shards (config scale.shards): one job per shard, so a cluster
# (profiles/slurm) runs them side by side, then a gather job merges them into one ranking per system, the same
# bytes for any number of shards, and one job tabulates. The {shape} wildcard names a synthetic shape or a real
# graph (the config check keeps the names apart).


include: "helpers/scale.smk"


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


# a real graph's downloaded files read as they are into the graph file (kgeval scale graph --from)
rule scale_real_graph:
    input:
        files=scale_real_files,
    output:
        graph=SCALE_GRAPH,
    log:
        "logs/scale_real_graph/{shape}.log",
    benchmark:
        "logs/benchmarks/scale_real_graph/{shape}.tsv"
    wildcard_constraints:
        shape=alternatives(SCALE_REAL),
    conda:
        "../../envs/models.yaml"
    threads: 2
    params:
        layout=lambda w: SCALE_REAL[w.shape]["from"],
        root=lambda w: SCALE_REAL[w.shape]["path"],
        prefix=scale_prefix,
    script:
        "../scripts/scale_real_graph.py"


# the answers of the estimates and the questions to rank (all of them up to exact_max_answers)
rule scale_sample:
    input:
        graph=SCALE_GRAPH,
        models=scale_model_files,
    output:
        sample=SCALE_SAMPLE,
    log:
        "logs/scale_sample/{shape}.log",
    benchmark:
        "logs/benchmarks/scale_sample/{shape}.tsv"
    wildcard_constraints:
        shape=alternatives(SCALE_ALL),
    conda:
        "../../envs/models.yaml"
    threads: 2
    params:
        scale=SCALE_SETTINGS,
    script:
        "../scripts/scale_sample.py"


# one job per question shard ranks every system on it (the graph read once); the shard count is in the path, so a
# run with another count never gathers stale shards
rule scale_rank:
    input:
        graph=SCALE_GRAPH,
        sample=SCALE_SAMPLE,
        models=scale_model_files,
    output:
        shard=temp("resources/scale/{shape}/shards/{shard}of{shards}.npz"),
    log:
        "logs/scale_rank/{shape}/{shard}of{shards}.log",
    benchmark:
        "logs/benchmarks/scale_rank/{shape}/{shard}of{shards}.tsv"
    wildcard_constraints:
        shape=alternatives(SCALE_ALL),
        shard=r"\d+",
        shards=str(SCALE_SHARDS),
    conda:
        "../../envs/models.yaml"
    threads: 2
    params:
        scale=SCALE_SETTINGS,
    script:
        "../scripts/scale_rank.py"


rule scale_gather:
    input:
        shards=expand(
            "resources/scale/{{shape}}/shards/{shard}of{shards}.npz",
            shard=range(SCALE_SHARDS),
            shards=SCALE_SHARDS,
        ),
    output:
        rankings=expand(SCALE_RANKING, shape="{shape}", system=range(SCALE["systems"])),
    log:
        "logs/scale_gather/{shape}.log",
    benchmark:
        "logs/benchmarks/scale_gather/{shape}.tsv"
    wildcard_constraints:
        shape=alternatives(SCALE_SHAPES),
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/scale_gather.py"


# a real graph's models: one gather job each (their number is the config's, not a rule's fixed outputs)
rule scale_gather_model:
    input:
        shards=expand(
            "resources/scale/{{shape}}/shards/{shard}of{shards}.npz",
            shard=range(SCALE_SHARDS),
            shards=SCALE_SHARDS,
        ),
    output:
        ranking=SCALE_RANKING,
    log:
        "logs/scale_gather_model/{shape}/{system}.log",
    benchmark:
        "logs/benchmarks/scale_gather_model/{shape}/{system}.tsv"
    wildcard_constraints:
        shape=alternatives(SCALE_REAL),
        system=r"\d+",
    conda:
        "../../envs/models.yaml"
    script:
        "../scripts/scale_gather_model.py"


rule scale_evaluate:
    input:
        graph=SCALE_GRAPH,
        sample=SCALE_SAMPLE,
        rankings=scale_rankings,
        models=scale_model_files,
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
        shape=alternatives(SCALE_ALL),
    conda:
        "../../envs/models.yaml"
    threads: 2
    params:
        scale=SCALE_SETTINGS,
        names=scale_model_names,
    script:
        "../scripts/scale_evaluate.py"


# pools of every system's top lists for a sample of the ranked questions, judged by the planted truth, bounds, and a
# sampling plan of judgments
rule scale_pools:
    input:
        graph=SCALE_GRAPH,
        sample=SCALE_SAMPLE,
        rankings=expand(SCALE_RANKING, shape="{shape}", system=range(SCALE["systems"])),
    output:
        pools="results/scale/{shape}/pools.csv",
        bounds="results/scale/{shape}/pool_bounds.csv",
        plan="results/scale/{shape}/sampling_plan.csv",
    log:
        "logs/scale_pools/{shape}.log",
    benchmark:
        "logs/benchmarks/scale_pools/{shape}.tsv"
    wildcard_constraints:
        shape=alternatives(SCALE_SHAPES),
    conda:
        "../../envs/models.yaml"
    params:
        scale=SCALE_SETTINGS,
    script:
        "../scripts/scale_pools.py"


# one markdown page per graph: what the run found, in the report
rule scale_summary:
    input:
        exact="results/scale/{shape}/exact.csv",
        estimates="results/scale/{shape}/estimates.csv",
        negatives="results/scale/{shape}/negatives.csv",
        tau="results/scale/{shape}/negatives_tau.json",
    output:
        summary=report(
            "results/scale/{shape}/summary.md",
            caption="../report/scale_summary.rst",
            category="9. Scale",
            subcategory="{shape}",
        ),
    log:
        "logs/scale_summary/{shape}.log",
    benchmark:
        "logs/benchmarks/scale_summary/{shape}.tsv"
    wildcard_constraints:
        shape=alternatives(SCALE_ALL),
    conda:
        "../../envs/models.yaml"
    params:
        planted=lambda w: w.shape in SCALE_SHAPES,
    script:
        "../scripts/scale_summary.py"


SCALE_OUTPUTS = (
    expand("results/scale/{shape}/{table}.csv", shape=SCALE_SHAPES, table=SCALE_TABLES)
    + expand("results/scale/{shape}/negatives_tau.json", shape=SCALE_SHAPES)
    + expand(
        "results/scale/{shape}/{table}.csv", shape=SCALE_REAL, table=SCALE_REAL_TABLES
    )
    + expand("results/scale/{shape}/negatives_tau.json", shape=SCALE_REAL)
    + expand("results/scale/{shape}/summary.md", shape=SCALE_ALL)
)


# `snakemake --configfile config/scale.yaml -- scale_all` runs this stage alone
rule scale_all:
    input:
        SCALE_OUTPUTS,


add_final_outputs(SCALE_OUTPUTS)
