# Config constants and helpers of the rules in workflow/rules/scale.smk, in a file of their own: snakemake --lint
# wants no function beside rules.

from kgeval.scale.readers import layout_inputs

SCALE = config["scale"]
SCALE_SHAPES = SCALE["shapes"]
SCALE_REAL = SCALE["graphs"]
SCALE_ALL = SCALE_SHAPES + list(SCALE_REAL)
# the settings the jobs read: without the graphs and models, so that naming a real graph reruns no synthetic one
# (Snakemake reruns a job whose params changed)
SCALE_SETTINGS = {k: v for k, v in SCALE.items() if k not in ("graphs", "models")}
SCALE_SHARDS = SCALE["shards"]
SCALE_GRAPH = "resources/scale/{shape}/graph.npz"
SCALE_SAMPLE = "results/scale/{shape}/sample.npz"
SCALE_RANKING = "results/scale/{shape}/ranks/system{system}.npz"
SCALE_TABLES = [
    "exact",
    "estimates",
    "paired",
    "negatives",
    "pools",
    "pool_bounds",
    "sampling_plan",
]
# a real graph has no planted truth to judge pools by
SCALE_REAL_TABLES = SCALE_TABLES[:4]


def scale_model_files(wildcards):
    """A real graph's model files (inputs: a changed model reruns its graph), none for a synthetic shape."""
    return list(SCALE["models"].get(wildcards.shape, {}).values())


def scale_model_names(wildcards):
    """The names of a real graph's systems in its tables; a synthetic graph's are their numbers."""
    return (
        list(SCALE["models"][wildcards.shape])
        if wildcards.shape in SCALE_REAL
        else None
    )


def scale_rankings(wildcards):
    n = (
        len(SCALE["models"][wildcards.shape])
        if wildcards.shape in SCALE_REAL
        else SCALE["systems"]
    )
    return expand(SCALE_RANKING, shape=wildcards.shape, system=range(n))


def scale_real_files(wildcards):
    """The graph's files: those its layout needs (missing ones are Snakemake's missing inputs) and the optional
    ones present."""
    g = SCALE_REAL[wildcards.shape]
    return [
        str(f) for f in layout_inputs(g["from"], g["path"], scale_prefix(wildcards))
    ]


def scale_prefix(wildcards):
    return SCALE_REAL[wildcards.shape].get("prefix", "wikidata5m_transductive")
