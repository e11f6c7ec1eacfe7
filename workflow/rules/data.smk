# Data stage: fetch every manifest file (URL or mirror, SHA-256 checked), extract and normalise the splits,
# build each knowledge graph and test set, and write Table 1.


include: "helpers/data.smk"


rule download:
    output:
        DOWNLOAD,
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
        files=expand(DOWNLOAD, path=list(MANIFEST)),
        manifest=config["manifest"],
    output:
        table=report(
            RESOURCES_TABLE,
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
        train=SPLIT.format(dataset="{dataset}", split="train"),
        valid=SPLIT.format(dataset="{dataset}", split="valid"),
        test=SPLIT.format(dataset="{dataset}", split="test"),
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
        spec=get_synth_spec,
    script:
        "../scripts/synthesize.py"


rule prepare_kg:
    input:
        unpack(get_kg_inputs),
    output:
        kg=KG,
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
        judgments=TESTSET,
        questions=TESTSET_QUESTIONS,
        summary=TESTSET_SUMMARY,
    log:
        "logs/build_testset/{testset}.log",
    benchmark:
        "logs/benchmarks/build_testset/{testset}.tsv"
    priority: DATA_PRIORITY
    conda:
        "../../envs/data.yaml"
    params:
        kind=get_testset_kind,
    script:
        "../scripts/build_testset.py"


rule table1:
    input:
        unpack(get_table1_inputs),
    output:
        csv=report(
            TABLE1,
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


# the resources table only where a dataset comes from the manifest
add_final_outputs(
    [TABLE1]
    + (
        [RESOURCES_TABLE]
        if any(dataset_spec(d)["source"] == "manifest" for d in DATASETS)
        else []
    )
    + expand(TESTSET_SUMMARY, testset=TEST_SETS)
)
