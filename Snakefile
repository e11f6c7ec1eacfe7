# kgeval: knowledge-graph-completion evaluation from an information-retrieval perspective.
# Rules live in workflow/rules/<stage>.smk; all logic lives in the kgeval package (src/kgeval).


from snakemake.utils import min_version

from kgeval.config import validate_workflow_config
from kgeval.home import locate_defaults
from kgeval.workflow import forward_stop_signals
from kgeval.workflow_env import set_job_environment

min_version("9.0")


configfile: "config/config.yaml"


# kgeval's own validator: one line naming the key, what was expected and the closest valid key (snakemake's
# validate printed the whole schema), model hyperparameters checked against their declared types and bounds
# (not again inside a cluster job: the submitting process checked the same config). The schema is the one next
# to this Snakefile and the manifest the checkout's where the working folder has none, so that `snakemake -s
# <checkout>/Snakefile --directory <elsewhere>` (kgeval.api.load_testset outside a checkout) runs as well.
validate_workflow_config(
    locate_defaults(config),
    f"{workflow.basedir}/config/schema.yaml",
    models=not workflow.remote_exec,
    configfiles=workflow.configfiles,
)


report: "workflow/report/workflow.rst"


# glibc's allocator settings for every job (kgeval.workflow_env.ALLOCATOR), unless the user set them. Set here,
# in Snakemake's own process, and not in profiles/*: a profile only gives Snakemake command-line options, none
# of which sets a job's environment (--envvars only names variables to pass on to cloud jobs), and a run
# without --profile would lose them; the envs/*.yaml conda environments apply only with --use-conda.
set_job_environment()


# Ctrl-C (SIGINT) or SIGTERM of Snakemake stops the running jobs within seconds instead of waiting for them
# (kgeval.workflow.forward_stop_signals); onstart runs after Snakemake installed its own SIGTERM handler. Not in
# a process that submits to a cluster: its children are the submission commands, not the jobs.
onstart:
    if workflow.local_exec:
        forward_stop_signals()


# One .smk per stage: its helpers (get_* input functions), its rules, and one add_final_outputs(...) call that
# makes its final outputs targets of rule all (docs/dev/layout.md). common.smk (config constants, shared
# helpers) and paths.smk (path templates) come first; a stage comes after those whose names it reads.
include: "workflow/rules/common.smk"
include: "workflow/rules/paths.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/training.smk"
include: "workflow/rules/scores.smk"
include: "workflow/rules/external.smk"
include: "workflow/rules/pools.smk"
include: "workflow/rules/metrics.smk"
include: "workflow/rules/bounds.smk"
include: "workflow/rules/sampling.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/hoyt.smk"
include: "workflow/rules/kp.smk"
include: "workflow/rules/tables.smk"
include: "workflow/rules/scale.smk"


rule all:
    default_target: True
    input:
        FINAL_OUTPUTS,
