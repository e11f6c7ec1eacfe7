# Helpers of the rules in workflow/rules/data.smk, in a file of their own: snakemake --lint wants no function
# beside rules.

from kgeval.data.kg import CATEGORIES
from kgeval.data.synth import ROLE_FILES


def dataset_roles(dataset):
    spec = dataset_spec(dataset)
    if spec["source"] == "synth":
        roles = [
            "train",
            "valid",
            "test",
            "names",
            "categories",
            "relation_types",
            "entity_types",
        ]
        if spec.get("synth", {}).get("annotations", True):
            roles += ["sample_idxs", "samples", "annotations", "pooling_depth"]
        return roles
    return ["train", "valid", "test"] + list(spec.get("files", {}))


def synth_outputs():
    """Every file the synthesize rule writes, by role (one entry per relation-category file)."""
    out = {}
    for role, path in ROLE_FILES.items():
        if role == "categories":
            for cat in CATEGORIES:
                out[f"category_{cat}"] = SYNTH_FILE.format(
                    dataset="{dataset}", file=f"{path}/{cat}.txt"
                )
        else:
            out[role] = SYNTH_FILE.format(dataset="{dataset}", file=path)
    return out


def get_archive(wildcards):
    return DOWNLOAD.format(path=dataset_spec(wildcards.dataset)["archive"])


def get_synth_spec(wildcards):
    return dataset_spec(wildcards.dataset).get("synth", {})


def get_kg_inputs(wildcards):
    """Role files that build a knowledge graph (the categories role is the one_to_one.txt of its folder)."""
    out = {}
    for role in (
        "train",
        "valid",
        "test",
        "names",
        "categories",
        "relation_types",
        "entity_types",
    ):
        if role not in dataset_roles(wildcards.dataset):
            continue
        path = role_path(wildcards.dataset, role)
        out[role] = f"{path}/{CATEGORIES[0]}.txt" if role == "categories" else path
    if "categories" in out:
        folder = out["categories"].rsplit("/", 1)[0]
        for cat in CATEGORIES[1:]:
            out[f"category_{cat}"] = f"{folder}/{cat}.txt"
    return out


def get_testset_inputs(wildcards):
    spec = testset_spec(wildcards.testset)
    dataset = spec["dataset"]
    out = {"kg": KG.format(dataset=dataset)}
    if spec["kind"] == "sample":
        out["sample_idxs"] = role_path(dataset, "sample_idxs")
        if "samples" in dataset_roles(dataset):
            out["samples"] = role_path(dataset, "samples")
    elif spec["kind"] == "pooled":
        out["annotations"] = role_path(dataset, "annotations")
        out["pooling_depth"] = role_path(dataset, "pooling_depth")
        out["seed_set"] = TESTSET.format(testset=spec["seed_set"])
    if "queries" in spec:
        out["queries"] = DOWNLOAD.format(path=spec["queries"])
    return out


def get_testset_kind(wildcards):
    return testset_spec(wildcards.testset)["kind"]


def table1_sets():
    return [STUDY["original"], STUDY["sample"], STUDY["complete"]]


def get_table1_inputs(wildcards):
    return {name: TESTSET.format(testset=name) for name in table1_sets()}


def get_table1_kgs():
    return {n: KG.format(dataset=testset_dataset(n)) for n in table1_sets()}
