# Data stage: fetch every manifest file (URL or mirror, SHA-256 checked), extract and normalise the splits,
# build each knowledge graph and test set, and write Table 1.


rule download:
    output:
        "resources/downloads/{path}",
    log:
        "logs/download/{path}.log",
    benchmark:
        "logs/benchmarks/download/{path}.tsv"
    wildcard_constraints:
        path=alternatives(MANIFEST),
    priority: DATA_PRIORITY
    conda:
        "../../envs/data.yaml"
    params:
        manifest=config["manifest"],
        mirror=config["mirror"],
        prefer_mirror=config["prefer_mirror"],
        timeout=config["download_timeout"],
    script:
        "../scripts/download.py"


rule verify_resources:
    input:
        files=expand("resources/downloads/{path}", path=list(MANIFEST)),
        manifest=config["manifest"],
    output:
        table=report(
            "results/tables/resources.csv",
            caption="../report/resources.rst",
            category="Data",
        ),
    log:
        "logs/verify_resources.log",
    benchmark:
        "logs/benchmarks/verify_resources.tsv"
    conda:
        "../../envs/data.yaml"
    params:
        entries=list(MANIFEST),
    script:
        "../scripts/verify_resources.py"


rule extract_splits:
    input:
        archive=get_archive,
    output:
        train="resources/datasets/{dataset}/splits/train.txt",
        valid="resources/datasets/{dataset}/splits/valid.txt",
        test="resources/datasets/{dataset}/splits/test.txt",
    log:
        "logs/extract_splits/{dataset}.log",
    benchmark:
        "logs/benchmarks/extract_splits/{dataset}.tsv"
    priority: DATA_PRIORITY
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/extract_splits.py"


rule synthesize:
    output:
        **synth_outputs(),
    log:
        "logs/synthesize/{dataset}.log",
    benchmark:
        "logs/benchmarks/synthesize/{dataset}.tsv"
    priority: DATA_PRIORITY
    conda:
        "../../envs/data.yaml"
    params:
        spec=lambda wildcards: dataset_spec(wildcards.dataset).get("synth", {}),
    script:
        "../scripts/synthesize.py"


rule prepare_kg:
    input:
        unpack(get_kg_inputs),
    output:
        kg="resources/datasets/{dataset}/kg.npz",
        summary="resources/datasets/{dataset}/summary.json",
    log:
        "logs/prepare_kg/{dataset}.log",
    benchmark:
        "logs/benchmarks/prepare_kg/{dataset}.tsv"
    priority: DATA_PRIORITY
    conda:
        "../../envs/data.yaml"
    script:
        "../scripts/prepare_kg.py"


rule build_testset:
    input:
        unpack(get_testset_inputs),
    output:
        judgments="resources/testsets/{testset}.tsv",
        questions="resources/testsets/{testset}.questions.tsv",
        summary="resources/testsets/{testset}.json",
    log:
        "logs/build_testset/{testset}.log",
    benchmark:
        "logs/benchmarks/build_testset/{testset}.tsv"
    priority: DATA_PRIORITY
    conda:
        "../../envs/data.yaml"
    params:
        kind=lambda wildcards: testset_spec(wildcards.testset)["kind"],
    script:
        "../scripts/build_testset.py"


rule table1:
    input:
        unpack(get_table1_inputs),
    output:
        csv=report(
            "results/tables/table1.csv",
            caption="../report/table1.rst",
            category="1. Data",
        ),
        md="results/tables/table1.md",
        tex="results/tables/table1.tex",
    log:
        "logs/table1.log",
    benchmark:
        "logs/benchmarks/table1.tsv"
    conda:
        "../../envs/data.yaml"
    params:
        kgs=get_table1_kgs(),
    script:
        "../scripts/table1.py"
