# Config constants and the helpers every stage uses. A helper of one stage lives in that stage's .smk; path
# templates live in paths.smk; logic lives in the kgeval package.

import re

from kgeval.config import model_settings
from kgeval.data.manifest import read_manifest
from kgeval.data.synth import ROLE_FILES

MANIFEST = read_manifest(config["manifest"])
DATASETS = list(config["datasets"])
TEST_SETS = list(config["test_sets"])
STUDY = config["study"]
SYSTEMS = list(config["models"])
TRAINED_MODELS = [
    m for m in SYSTEMS if config["models"][m].get("source", "train") == "train"
]
LIBKGE_MODELS = [
    m for m in SYSTEMS if config["models"][m].get("source", "train") == "libkge"
]
# outside systems (config key external_systems): scored on their dataset's test sets beside the models
EXTERNAL_SYSTEMS = list(config["external_systems"])
POOLED_SETS = [t for t in TEST_SETS if config["test_sets"][t]["kind"] == "pooled"]

# Snakemake's priorities do not flow upstream: with trainings prioritised by cost, a dataset whose kg is not yet
# prepared would wait behind every ready training of the other dataset, and its longest trainings would start
# late. The cheap data jobs therefore outrank every training.
DATA_PRIORITY = 1_000_000

# The targets of rule all (Snakefile). Each stage's .smk adds its own, once, with add_final_outputs(...) after
# its rules; rule all requests this list after every include, and run_times waits for all of it.
FINAL_OUTPUTS = []


def add_final_outputs(paths):
    """Make ``paths`` targets of rule all (a stage's final outputs, computed from the config at parse time)."""
    FINAL_OUTPUTS.extend(paths)


def alternatives(values):
    """A wildcard constraint that admits exactly the configured values (none: a regex that never matches)."""
    values = list(values)
    return "|".join(re.escape(v) for v in values) if values else "(?!x)x"


wildcard_constraints:
    dataset=alternatives(DATASETS),
    testset=alternatives(TEST_SETS),


def dataset_spec(dataset):
    return config["datasets"][dataset]


def testset_spec(testset):
    return config["test_sets"][testset]


def testset_dataset(testset):
    return testset_spec(testset)["dataset"]


def testset_systems(testset):
    """The models, then the outside systems of the test set's dataset."""
    dataset = testset_dataset(testset)
    return SYSTEMS + [
        s
        for s in EXTERNAL_SYSTEMS
        if config["external_systems"][s]["dataset"] == dataset
    ]


def role_path(dataset, role):
    """Path of one input file of a dataset, by role (train, valid, test, names, annotations, ...)."""
    spec = dataset_spec(dataset)
    if spec["source"] == "synth":
        return SYNTH_FILE.format(dataset=dataset, file=ROLE_FILES[role])
    if role in ("train", "valid", "test"):
        return SPLIT.format(dataset=dataset, split=role)
    return DOWNLOAD.format(path=spec["files"][role])


def get_model_settings(wildcards):
    return model_settings(config, wildcards.dataset, wildcards.model)


def get_seed_models(wildcards):
    """The checkpoints of every seed of one model on one dataset."""
    return [
        SEED_MODEL.format(dataset=wildcards.dataset, model=wildcards.model, seed=seed)
        for seed in get_model_settings(wildcards)["seeds"]
    ]


def get_testset_kg(wildcards):
    return KG.format(dataset=testset_dataset(wildcards.testset))


def get_testset_dumps(wildcards):
    """Every system's score dump on the test set, as named inputs dump_<system>."""
    return {
        f"dump_{system}": SCORES.format(testset=wildcards.testset, model=system)
        for system in testset_systems(wildcards.testset)
    }


def get_seed_testset(wildcards):
    """The test set a pooled test set was drawn from (its seed_set)."""
    return TESTSET.format(testset=testset_spec(wildcards.testset)["seed_set"])


def get_pool_annotations(wildcards):
    return role_path(testset_dataset(wildcards.testset), "annotations")
