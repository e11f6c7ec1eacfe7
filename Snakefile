# kgeval: knowledge-graph-completion evaluation from an information-retrieval perspective.
# Rules live in workflow/rules/<stage>.smk; all logic lives in the kgeval package (src/kgeval).


from snakemake.utils import min_version

from kgeval.config import validate_workflow_config

min_version("9.0")


configfile: "config/config.yaml"


# kgeval's own validator: one line naming the key, what was expected and the closest valid key (snakemake's
# validate printed the whole schema), model hyperparameters checked against their declared types and bounds
# (not again inside a cluster job: the submitting process checked the same config)
validate_workflow_config(
    config,
    "config/schema.yaml",
    models=not workflow.remote_exec,
    configfiles=workflow.configfiles,
)


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/training.smk"
include: "workflow/rules/scores.smk"
include: "workflow/rules/external.smk"
include: "workflow/rules/pools.smk"
include: "workflow/rules/metrics.smk"
include: "workflow/rules/bounds.smk"
include: "workflow/rules/sampling.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/kp.smk"
include: "workflow/rules/tables.smk"


rule all:
    default_target: True
    input:
        get_final_outputs(),
        KP_OUTPUTS,
