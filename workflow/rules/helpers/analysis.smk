# Helpers of the rules in workflow/rules/analysis.smk, in a file of their own: snakemake --lint wants no function
# beside rules.

from pathlib import Path

from kgeval.published import PINNED_RELEASE, PUBLISHED_NAMES, RELEASE


def analysis_files(role):
    """The files the analyses read for the test set playing ``role`` (original, sample, complete, second)."""
    name = STUDY[role]
    files = {
        "name": name,
        "kg": KG.format(dataset=testset_dataset(name)),
        "testset": TESTSET.format(testset=name),
        "questions": TESTSET_QUESTIONS.format(testset=name),
        "evaluation": EVALUATION.format(testset=name),
        "per_category": PER_CATEGORY.format(testset=name),
        "per_answer": PER_ANSWER.format(testset=name),
        "per_question": PER_QUESTION.format(testset=name),
    }
    if name in POOLED_SETS:
        files.update(
            pooling_depth=POOLING_DEPTH.format(testset=name),
            pooling_depth_rebuilt=POOLING_DEPTH_REBUILT.format(testset=name),
            depth_answers=DEPTH_ANSWERS.format(testset=name),
            depth_questions=DEPTH_QUESTIONS.format(testset=name),
            reweighted=REWEIGHTED.format(testset=name),
        )
    return files


def get_analysis_inputs(roles):
    """Every file of the given study roles (roles without a test set are skipped)."""
    out = []
    for role in roles:
        if STUDY.get(role):
            out += [v for k, v in analysis_files(role).items() if k != "name"]
    return sorted(set(out))


def get_ranking_roles(wildcards):
    return {role: analysis_files(role) for role in ("original", "sample", "complete")}


def get_study_test_sets(wildcards):
    """The files of the original, second and complete test sets, those the study has."""
    return [
        analysis_files(r) for r in ("original", "second", "complete") if STUDY.get(r)
    ]


def get_family_roles(wildcards):
    return {
        role: analysis_files(role) if STUDY.get(role) else None
        for role in ("original", "complete", "second")
    }


def get_bounds_overlay(wildcards):
    """The bounds stage's τ intervals and the prior's expected τ, which Figure 5 draws (none without bounds)."""
    bounded = get_bounded_study_set()
    if not bounded:
        return {}
    return {
        "bounds_tau": BOUNDS_TAU.format(testset=bounded),
        "bounds_prior": BOUNDS_TAU_PRIOR.format(testset=bounded),
    }


def get_reanalysis_inputs(wildcards):
    files = []
    for role in ("original", "sample", "complete", "second"):
        name = STUDY.get(role)
        if name:
            files += [
                EVALUATION.format(testset=name),
                PER_CATEGORY.format(testset=name),
            ]
    complete = STUDY["complete"]
    files += [
        POOLING_DEPTH.format(testset=complete),
        REWEIGHTED.format(testset=complete),
    ]
    return files


def release_folder():
    """The folder the release's re-analysis reads (config key analysis/reanalyze): ``release`` is the authors'
    result tables pinned in the manifest, fetched by the download rule; anything else a folder of tables.
    """
    value = config["analysis"]["reanalyze"]
    if value == PINNED_RELEASE:
        return DOWNLOAD.format(path=RELEASE.rstrip("/"))
    return value


def get_release_tables(wildcards):
    """The CSV tables of the release folder to re-analyse (config key analysis/reanalyze)."""
    value = config["analysis"]["reanalyze"]
    if value == PINNED_RELEASE:
        return sorted(
            DOWNLOAD.format(path=p) for p in MANIFEST if p.startswith(RELEASE)
        )
    return sorted(str(p) for p in Path(value).glob("*/*.csv")) if value else []


def sigir_dataset():
    """The dataset of the completed test set where its config names the published pool files (file roles
    human_labeled and filtered) and the manifest pins the authors' release: the outputs of the paper's data
    section (Table 2 as printed, the pool's statistics, the top-10 shares) need both; None elsewhere.
    """
    complete = STUDY.get("complete")
    if not complete:
        return None
    dataset = testset_dataset(complete)
    files = dataset_spec(dataset).get("files", {})
    pinned = any(p.startswith(RELEASE) for p in MANIFEST)
    return (
        dataset if pinned and "human_labeled" in files and "filtered" in files else None
    )


def release_evaluation(role):
    """The release's evaluation.csv of one study role, as the download rule fetches it."""
    return DOWNLOAD.format(path=f"{RELEASE}{PUBLISHED_NAMES[role]}/evaluation.csv")


def get_printed_inputs(wildcards):
    return {
        "kg": KG.format(dataset=testset_dataset(STUDY["complete"])),
        "sample": TESTSET.format(testset=STUDY["sample"]),
        "complete": TESTSET.format(testset=STUDY["complete"]),
    }


def get_pool_statistics_inputs(wildcards):
    dataset = testset_dataset(STUDY["complete"])
    return {
        "kg": KG.format(dataset=dataset),
        "complete": TESTSET.format(testset=STUDY["complete"]),
        "human_labeled": role_path(dataset, "human_labeled"),
        "filtered": role_path(dataset, "filtered"),
        **{
            f"release_{role}": release_evaluation(role)
            for role in ("original", "sample", "complete")
        },
    }


def get_top10_inputs(wildcards):
    complete = STUDY["complete"]
    return {
        "kg": KG.format(dataset=testset_dataset(complete)),
        "complete": TESTSET.format(testset=complete),
        "release_original": release_evaluation("original"),
        **{
            f"dump_{system}": SCORES.format(testset=complete, model=system)
            for system in testset_systems(complete)
        },
    }
