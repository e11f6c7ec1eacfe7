# Helpers of the rules in workflow/rules/hoyt.smk, in a file of their own: snakemake --lint wants no function
# beside rules.

HOYT = config["hoyt"]
HOYT_DATASETS = list(HOYT["datasets"])
HOYT_TEST_SETS = list(HOYT["test_sets"])
HOYT_MODELS = list(HOYT["models"])


def get_hoyt_small():
    """dataset -> its kg and the case study's ranks of each model (the graphs ranked here)."""
    return {
        d: {
            "kg": KG.format(dataset=d),
            "ranks": {m: HOYT_RANKS.format(dataset=d, model=m) for m in HOYT_MODELS},
        }
        for d in HOYT_DATASETS
    }


def get_hoyt_large():
    """test set -> the kg, evaluation.csv and per-answer ranks of a study test set reused by the case study."""
    return {
        t: {
            "kg": KG.format(dataset=testset_dataset(t)),
            "evaluation": EVALUATION.format(testset=t),
            "per_answer": PER_ANSWER.format(testset=t),
        }
        for t in HOYT_TEST_SETS
    }


def get_hoyt_inputs(wildcards):
    files = [f["kg"] for f in get_hoyt_small().values()]
    files += [r for f in get_hoyt_small().values() for r in f["ranks"].values()]
    files += [p for f in get_hoyt_large().values() for p in f.values()]
    return sorted(set(files))
