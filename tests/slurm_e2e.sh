#!/usr/bin/env bash
# End-to-end check of the SLURM profile on a real (one-node) SLURM cluster:
#   bash .ci/slurm-up.sh && bash tests/slurm_e2e.sh; bash .ci/slurm-down.sh
#
# 1. the SLURM profiles: profiles/slurm-ci has the keys of profiles/slurm, asks for no GPU, and both use
#    `slurm-status-command: squeue` (with accounting off, sacct makes the plugin wait forever);
# 2. copies the working tree (tracked and untracked, not ignored, files: uncommitted changes included; no .venv,
#    results/, resources/, logs/, .snakemake/) into two scratch folders, so the developer's outputs stay untouched;
# 3. runs the tiny workflow locally (profiles/workstation, --cores 2) in one folder and through SLURM
#    (profiles/slurm-ci) in the other, each under `timeout`;
# 4. checks that every job of the SLURM run went through SLURM: the profile groups the jobs (fewer than 50 sbatch
#    submissions for the tiny config), each submission has its log under .snakemake/slurm_logs/{rule,group}_<name>/,
#    the rule jobs the snakemake inside each allocation ran add up, per rule, to the jobs planned, and (when
#    readable) slurmctld's log says each SLURM job completed with exit status 0;
# 5. compares every file under results/ of the two runs: byte-identical, except the measured fields (MEASURED in
#    the checker below: wall-clock times `seconds`, `*_seconds`, `timings` everywhere; in results/kp/ also
#    codecarbon's energy readings and what is computed from them), which are left out of JSON files, CSV/TSV/
#    parquet columns and markdown tables. Training checkpoints hold no wall-clock time (the per-epoch seconds
#    live in their JSON sidecars), so checkpoints must be byte-identical and their hashes (`sha256`,
#    `model_sha256`) equal; a checkpoint that differs is reported with the fields and tensors that differ.
#    Figures (png, pdf, svg) are compared for information only.
# Prints a summary; exits 1 on any failure. The kgeval package is imported from each copy's src/ (PYTHONPATH), so
# edits made to the working tree while the test runs do not reach it.
#
# Environment (all optional):
#   KGEVAL_PYTHON        interpreter with kgeval's dependencies, snakemake and the SLURM plugin
#                        (default: .venv/bin/python of this repository, else python3 on PATH)
#   E2E_CONFIG           workflow config (default config/tiny.yaml)
#   E2E_CORES            cores of the local run (default 2)
#   E2E_LOCAL_TIMEOUT    seconds for the local run (default 1800)
#   E2E_SLURM_TIMEOUT    seconds for the SLURM run (default 3600)
#   E2E_WORKDIR          scratch folder (default: a new mktemp -d under ${TMPDIR:-/tmp})
#   E2E_KEEP             1: keep the scratch folder after success (it is always kept after a failure)
#   E2E_REFERENCE        a checkout where the same config already ran to completion locally with --cores 2
#                        (tests/check.sh's tiny run): its results/ stand in for the local run, which is skipped
#   E2E_REFERENCE_LOG    that run's snakemake log (for the planned-jobs comparison; without it that check is skipped)
#   E2E_MODELS           space-separated model names: the SLURM run builds only the data stage's tables and every
#                        output whose path names one of these models (trainings, selection, score dumps, TREC runs,
#                        KP records), and the comparison covers the files it wrote (each must exist in the local
#                        run and equal it); per rule, it may plan no more jobs than the local run. Default: the
#                        whole workflow. tests/check.sh names two models: every rule job inside an allocation
#                        starts a fresh Snakemake (7-9 s), which made the whole tiny workflow 27 minutes of CI
#   SLURMCTLD_LOG        slurmctld's log (default /var/log/slurm/slurmctld.log, as .ci/slurm-up.sh writes it)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"

if [ -n "${KGEVAL_PYTHON:-}" ]; then
  PY="$KGEVAL_PYTHON"
elif [ -x "${REPO}/.venv/bin/python" ]; then
  PY="${REPO}/.venv/bin/python"
else
  PY="$(command -v python3)"
fi
CONFIG="${E2E_CONFIG:-config/tiny.yaml}"
CORES="${E2E_CORES:-2}"
LOCAL_TIMEOUT="${E2E_LOCAL_TIMEOUT:-1800}"
SLURM_TIMEOUT="${E2E_SLURM_TIMEOUT:-3600}"
CTLD_LOG="${SLURMCTLD_LOG:-/var/log/slurm/slurmctld.log}"
export PYTHONHASHSEED=0

say() { echo "slurm-e2e: $*"; }
fail() {
  echo "slurm-e2e: FAIL: $*" >&2
  [ -n "${WORK:-}" ] && echo "slurm-e2e: scratch folder kept: ${WORK}" >&2
  exit 1
}

# ---- 0. preconditions
[ -x "$PY" ] || fail "no interpreter at ${PY} (set KGEVAL_PYTHON)"
"$PY" -c 'import snakemake, snakemake_executor_plugin_slurm, kgeval' ||
  fail "${PY} lacks snakemake, snakemake-executor-plugin-slurm or kgeval"
[ -f "$CONFIG" ] || fail "no config ${CONFIG}"
command -v sinfo >/dev/null 2>&1 || fail "no SLURM commands on PATH: run .ci/slurm-up.sh first"
state="$(timeout 20 sinfo -h -o %T 2>/dev/null | head -n 1 || true)"
case "$state" in
idle | mixed | allocated | completing) ;;
*) fail "no usable SLURM node (sinfo says '${state}'): run .ci/slurm-up.sh first" ;;
esac

# ---- 1. the profiles
say "checking profiles/slurm and profiles/slurm-ci"
"$PY" - <<'EOF' || fail "the SLURM profiles are out of step (see above)"
import sys

import yaml

main = yaml.safe_load(open("profiles/slurm/config.yaml"))
ci = yaml.safe_load(open("profiles/slurm-ci/config.yaml"))
problems = []
if set(main) != set(ci):
    problems.append(f"top-level keys differ: only in slurm {sorted(set(main) - set(ci))}, "
                    f"only in slurm-ci {sorted(set(ci) - set(main))}")
for name, prof in (("slurm", main), ("slurm-ci", ci)):
    if prof.get("executor") != "slurm":
        problems.append(f"profiles/{name}: executor is not slurm")
    if prof.get("slurm-status-command") != "squeue":
        problems.append(f"profiles/{name}: slurm-status-command must be squeue (sacct hangs with accounting off)")
gpu_keys = {"gpu", "gres", "gpu_model", "cpus_per_gpu", "tasks_per_gpu"}
main_sr, ci_sr = main.get("set-resources", {}), ci.get("set-resources", {})
if set(main_sr) != set(ci_sr):
    problems.append(f"set-resources rules differ: {sorted(main_sr)} vs {sorted(ci_sr)}")
for rule in set(main_sr) & set(ci_sr):
    a, b = set(main_sr[rule]) - gpu_keys, set(ci_sr[rule])
    if a != b:
        problems.append(f"set-resources of {rule}: keys {sorted(a)} vs {sorted(b)}")
for rule, res in ci_sr.items():
    if gpu_keys & set(res) or "gpu" in str(res.get("slurm_extra", "")):
        problems.append(f"profiles/slurm-ci asks for a GPU in {rule}: the CI node has none")
main_dr, ci_dr = set(main.get("default-resources", {})), set(ci.get("default-resources", {}))
if main_dr - {"slurm_partition"} != ci_dr - {"slurm_partition"}:
    problems.append(f"default-resources keys differ: {sorted(main_dr)} vs {sorted(ci_dr)}")
for p in problems:
    print("  " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
EOF

# ---- 2. two copies of the working tree
WORK="${E2E_WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/kgeval-slurm-e2e.XXXXXX")}"
mkdir -p "$WORK"
REFERENCE="${E2E_REFERENCE:-}"
if [ -n "$REFERENCE" ]; then
  REFERENCE="$(cd "$REFERENCE" && pwd)"
  [ -f "${REFERENCE}/results/tables/table1.csv" ] || fail "E2E_REFERENCE=${REFERENCE} has no finished run (results/tables/table1.csv)"
  COPIES=(slurm)
else
  COPIES=(local slurm)
fi
rm -rf "${WORK}/local" "${WORK}/slurm" "${WORK}/snapshot"
mkdir -p "${WORK}/snapshot"
# tracked and untracked files that git does not ignore, as they are in the working tree now (one snapshot, then
# two copies of it, so both runs see the same files even if the working tree changes meanwhile)
bash tests/copy_tree.sh "${WORK}/snapshot" "$PY"
for d in "${COPIES[@]}"; do
  cp -a "${WORK}/snapshot" "${WORK}/${d}"
  # Snakemake 9 does not pass --replace-workflow-config on to the jobs it submits: a SLURM job re-reads the
  # Snakefile, whose `configfile: "config/config.yaml"` is then MERGED with the --configfile (other datasets, extra
  # model and training keys: different models). In the copies the default config is the test config itself, so
  # both runs, and every SLURM job, see exactly the test config.
  if [ "$CONFIG" != config/config.yaml ]; then
    cp "${WORK}/${d}/${CONFIG}" "${WORK}/${d}/config/config.yaml"
  fi
done
rm -rf "${WORK}/snapshot"
say "scratch folder ${WORK} ($(find "${WORK}/slurm" -type f | wc -l) files per copy)"

run_snakemake() { # run_snakemake DIR TIMEOUT LOG ARGS...: snakemake in DIR under timeout; returns its status
  local dir=$1 limit=$2 log=$3
  shift 3
  (cd "$dir" && PYTHONPATH="${dir}/src${PYTHONPATH:+:${PYTHONPATH}}" \
    timeout -k 60 "$limit" "$PY" -m snakemake --configfile "$CONFIG" --replace-workflow-config "$@") \
    >"$log" 2>&1
}

# ---- 3a. the local run (or the reference run's results)
if [ -n "$REFERENCE" ]; then
  say "local run: the finished run in ${REFERENCE} (E2E_REFERENCE)"
  ln -s "$REFERENCE" "${WORK}/local"
  if [ -n "${E2E_REFERENCE_LOG:-}" ]; then cp "$E2E_REFERENCE_LOG" "${WORK}/local.log"; else : >"${WORK}/local.log"; fi
  LOCAL_S=0
else
  say "local run: snakemake --profile profiles/workstation --cores ${CORES} (timeout ${LOCAL_TIMEOUT}s)"
  t0=$SECONDS
  rc=0
  run_snakemake "${WORK}/local" "$LOCAL_TIMEOUT" "${WORK}/local.log" --profile profiles/workstation --cores "$CORES" ||
    rc=$?
  LOCAL_S=$((SECONDS - t0))
  if ((rc != 0)); then
    tail -n 40 "${WORK}/local.log" >&2
    fail "local run exited ${rc} after ${LOCAL_S}s ($([ "$rc" -ge 124 ] && echo 'timed out' || echo 'failed'); log ${WORK}/local.log)"
  fi
  say "local run done in ${LOCAL_S}s: $(grep -E '[0-9]+ of [0-9]+ steps' "${WORK}/local.log" | tail -n 1)"
fi

# ---- 3b. the SLURM run (of the whole workflow, or of the chosen models' outputs)
TARGETS=()
if [ -n "${E2E_MODELS:-}" ]; then
  # every output the workflow can build, with its rule, as Snakemake plans it in this copy
  (cd "${WORK}/slurm" && PYTHONPATH="${WORK}/slurm/src${PYTHONPATH:+:${PYTHONPATH}}" \
    "$PY" -m snakemake --configfile "$CONFIG" --replace-workflow-config --summary) \
    >"${WORK}/summary.tsv" 2>"${WORK}/summary.err" || { cat "${WORK}/summary.err" >&2; fail "snakemake --summary failed"; }
  # shellcheck disable=SC2086 # E2E_MODELS is a list of names
  mapfile -t TARGETS < <("$PY" - "${WORK}/summary.tsv" $E2E_MODELS <<'EOF'
import csv
import sys
from pathlib import PurePosixPath

summary, models = sys.argv[1], set(sys.argv[2:])
DATA_RULES = {"table1", "export_trec_qrels"}  # the data stage's own tables (the rest comes as their inputs)
with open(summary, newline="") as f:
    for row in csv.DictReader(f, delimiter="\t"):
        path = PurePosixPath(row["output_file"])
        if row["rule"] in DATA_RULES or models & set(path.parts) or path.name.split(".")[0] in models:
            print(path)
EOF
  )
  [ "${#TARGETS[@]}" -gt 0 ] || fail "no output names the models ${E2E_MODELS}"
  say "SLURM run limited to ${#TARGETS[@]} outputs: the data tables and those of ${E2E_MODELS} (E2E_MODELS)"
  TARGETS=(-- "${TARGETS[@]}")
fi
ctld_offset=0
[ -r "$CTLD_LOG" ] && ctld_offset=$(wc -c <"$CTLD_LOG")
say "SLURM run: snakemake --profile profiles/slurm-ci (timeout ${SLURM_TIMEOUT}s)"
t0=$SECONDS
rc=0
run_snakemake "${WORK}/slurm" "$SLURM_TIMEOUT" "${WORK}/slurm.log" --profile profiles/slurm-ci "${TARGETS[@]}" || rc=$?
SLURM_S=$((SECONDS - t0))
if ((rc != 0)); then
  run_id="$(sed -n 's/.*SLURM run ID: \([A-Za-z0-9_-]*\).*/\1/p' "${WORK}/slurm.log" | head -n 1)"
  if [ -n "$run_id" ]; then # the plugin names every job after the run ID
    timeout 20 scancel --name="$run_id" 2>/dev/null || true
  fi
  tail -n 40 "${WORK}/slurm.log" >&2
  fail "SLURM run exited ${rc} after ${SLURM_S}s ($([ "$rc" -ge 124 ] && echo 'timed out' || echo 'failed'); log ${WORK}/slurm.log)"
fi
say "SLURM run done in ${SLURM_S}s: $(grep -E '[0-9]+ of [0-9]+ steps' "${WORK}/slurm.log" | tail -n 1)"
CTLD_PART="${WORK}/slurmctld.part.log"
if [ -r "$CTLD_LOG" ]; then
  tail -c +"$((ctld_offset + 1))" "$CTLD_LOG" >"$CTLD_PART"
else
  : >"$CTLD_PART"
fi

# ---- 4 + 5. evidence and comparison
set +e
"$PY" - "$WORK" "$CTLD_PART" "$LOCAL_S" "$SLURM_S" "${E2E_MODELS:-}" <<'EOF'
import csv
import fnmatch
import io
import json
import re
import sys
from pathlib import Path

work, ctld_part, local_s, slurm_s = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
subset = sys.argv[5] if len(sys.argv) > 5 else ""  # E2E_MODELS: the SLURM run built only those models' outputs
local, slurm = work / "local", work / "slurm"
failures = []


# ---- evidence that the jobs went through SLURM
def job_stats(log):
    """Rule -> job count from the 'Job stats' table snakemake prints when it starts."""
    text = log.read_text(errors="replace")
    block = text.split("Job stats:", 1)[1] if "Job stats:" in text else ""
    counts = {}
    for line in block.splitlines()[3:]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        if parts[0] != "total":
            counts[parts[0]] = int(parts[1])
    return counts


local_stats, slurm_stats = job_stats(work / "local.log"), job_stats(work / "slurm.log")
if not slurm_stats:
    failures.append("no 'Job stats' table in the SLURM run's log")
if local_stats and not subset and local_stats != slurm_stats:  # no stats: a reference run without its log
    failures.append(f"the two runs planned different jobs: {local_stats} vs {slurm_stats}")
if local_stats and subset:
    extra = {r: n for r, n in slurm_stats.items() if n > local_stats.get(r, 0)}
    if extra:
        failures.append(f"the SLURM run of {subset} planned more jobs than the whole local run: {extra}")
# rules without run/shell/script (rule all) run in the main process, never as a SLURM job
norun = {"all"}
MAX_SUBMISSIONS = 50  # the tiny config's 247 jobs in grouped SLURM jobs (profiles/slurm-ci: groups)
expected = {rule: n for rule, n in slurm_stats.items() if rule not in norun}
slurm_log = (work / "slurm.log").read_text(errors="replace")
# a plain job is submitted under its numeric job id, a group job (profiles/slurm-ci groups the rules) under a UUID
submitted = re.findall(r"Job (\S+) has been submitted with SLURM jobid (\d+) \(log: ([^)]+)\)", slurm_log)
slurm_ids = {sid for _, sid, _ in submitted}
if len(slurm_ids) != len(submitted):
    failures.append(f"{len(submitted)} SLURM submissions but {len(slurm_ids)} distinct SLURM job ids")
if len(submitted) >= MAX_SUBMISSIONS:
    failures.append(f"{len(submitted)} SLURM submissions for {sum(expected.values())} jobs: grouping should keep "
                    f"them under {MAX_SUBMISSIONS}")
if re.search(r"^localrule (?!all:)", slurm_log, re.M):
    failures.append("the SLURM run executed some rules locally: " +
                    ", ".join(sorted(set(re.findall(r"^localrule (\w+):", slurm_log, re.M)) - norun)))
logs_dir = slurm / ".snakemake" / "slurm_logs"
log_files = {p.stem: p for p in logs_dir.rglob("*.log")} if logs_dir.is_dir() else {}
missing_logs = sorted(slurm_ids - set(log_files), key=int)
if missing_logs:
    failures.append(f"{len(missing_logs)} SLURM jobs without a log under {logs_dir}: {missing_logs[:10]}")
# Every planned job ran inside some SLURM job: the snakemake inside the allocation prints `rule X:` for the job of
# a plain submission and `localrule X:` for each job it runs of a group; summed over the SLURM logs, per rule,
# these must equal the planned jobs.
per_rule = {}
silent_logs = []
for sid, path in log_files.items():
    if sid not in slurm_ids:
        continue
    folder = path.relative_to(logs_dir).parts[0]
    text = path.read_text(errors="replace")
    if folder.startswith("group_"):
        ran = re.findall(r"^localrule (\w+):$", text, re.M)
    else:
        rule = folder.removeprefix("rule_")
        ran = [rule] if re.search(rf"^rule {re.escape(rule)}:$", text, re.M) else []
    if not ran:
        silent_logs.append(path.relative_to(slurm).as_posix())
    for rule in ran:
        per_rule[rule] = per_rule.get(rule, 0) + 1
if silent_logs:
    failures.append(f"{len(silent_logs)} SLURM logs do not show any rule running: {silent_logs[:5]}")
if per_rule != expected:
    failures.append(f"jobs run inside SLURM jobs, per rule {dict(sorted(per_rule.items()))} != jobs planned per rule "
                    f"{dict(sorted(expected.items()))}")
ctld = ctld_part.read_text(errors="replace") if ctld_part.exists() else ""
if ctld:
    completed_ok = set(re.findall(r"_job_complete: JobId=(\d+) WEXITSTATUS 0\b", ctld))
    allocated = {a or b for a, b in re.findall(
        r"sched: Allocate JobId=(\d+) NodeList=|sched/backfill: _start_job: Started JobId=(\d+) ", ctld)}
    not_ok = sorted(slurm_ids - completed_ok, key=int)
    if not_ok:
        failures.append(f"slurmctld's log has no 'WEXITSTATUS 0' for {len(not_ok)} jobs: {not_ok[:10]}")
    ctld_note = (f"slurmctld's log: {len(allocated & slurm_ids)} of them started on the node, "
                 f"{len(completed_ok & slurm_ids)} completed with exit status 0")
else:
    ctld_note = "slurmctld's log not readable: skipped"

# ---- comparison of results/
# Fields (JSON keys, CSV/TSV/parquet/markdown-table columns) that hold wall-clock measurements or values computed
# from them. Everywhere: times. In the Knowledge Persistence timing study (results/kp/): codecarbon's energy
# readings (energy = power x measured time), time ratios, the timing loops' repeat counts (a loop repeats until a
# minimum time has passed), per-step times, and the CPU power model codecarbon picked (its TDP share follows the
# CPUs the process sees: all of them locally, the 1 allocated CPU in a SLURM job). Rules: (glob, name regex).
MEASURED = [
    ("*", r"^(seconds|timings?)$|_seconds$"),
    ("kp/*/timing/*.json", r"^(energy|speedup|repeats|steps)$"),
    ("kp/*/timing.*", r"^speedup$|^kp_\w+_share$"),
    ("kp/*/carbon.*", r"_kwh$|_co2e_g$|^method$"),
    ("tables/model_quality.md", r"training s$"),  # the Markdown rendering of train_seconds
]
# Rows (glob, regex on the first cell) whose values are wall-clock measurements: the findings claim on KP's time.
MEASURED_ROWS = [("tables/findings.*", r"^11b\. ")]
MEASURED_PROSE = ["kp/*/carbon.md"]  # the caption names codecarbon's CPU power model (see above)
FIGURES = {".png", ".pdf", ".svg"}
_rules = [(glob, re.compile(rx)) for glob, rx in MEASURED]


def measured(rel, name):
    return any(fnmatch.fnmatch(rel, glob) and rx.search(str(name)) for glob, rx in _rules)


def strip(obj, rel):
    """obj without its measured fields; dropped key paths are added to strip.dropped."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if measured(rel, k):
                strip.dropped.add(k)
            else:
                out[k] = strip(v, rel)
        return out
    if isinstance(obj, list | tuple):
        return [strip(v, rel) for v in obj]
    return obj


strip.dropped = set()


def json_diff(a, b, path=""):
    """Key paths at which two JSON values differ (for the failure message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [p for k in sorted(set(a) | set(b), key=str) for p in json_diff(a.get(k), b.get(k), f"{path}/{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in json_diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [path or "/"]


def compare_json(rel, a, b):
    strip.dropped = set()
    ja, jb = strip(json.loads(a.read_text()), rel), strip(json.loads(b.read_text()), rel)
    return ja == jb, sorted(strip.dropped), json_diff(ja, jb)


def compare_checkpoint(rel, a, b):
    """Only called when two checkpoints' bytes differ, which is a failure (a checkpoint holds no timing): the
    key paths that differ, for the message."""
    import torch

    def canon(x):
        if isinstance(x, torch.Tensor):
            return ["tensor", str(x.dtype), list(x.shape), x.detach().cpu().contiguous().view(-1).tolist()]
        if isinstance(x, dict):
            return {k: canon(v) for k, v in x.items()}
        if isinstance(x, list | tuple):
            return [canon(v) for v in x]
        return x

    ca, cb = (canon(torch.load(p, map_location="cpu", weights_only=False)) for p in (a, b))
    return False, [], json_diff(ca, cb) or ["bytes (same content after loading)"]


def compare_rows(rel, ra, rb):
    """Two tables as lists of rows, the first row the header: equal without the measured columns?"""
    if not ra or not rb or ra[0] != rb[0] or len(ra) != len(rb):
        return False, [], ["header or number of rows"]
    row_rules = [re.compile(rx) for glob, rx in MEASURED_ROWS if fnmatch.fnmatch(rel, glob)]
    if row_rules:
        timed = lambda row: bool(row) and any(rx.search(row[0]) for rx in row_rules)  # noqa: E731
        ra, rb = [ra[0]] + [r for r in ra[1:] if not timed(r)], [rb[0]] + [r for r in rb[1:] if not timed(r)]
        if len(ra) != len(rb):
            return False, [], ["number of rows"]
    keep = [i for i, name in enumerate(ra[0]) if not measured(rel, name)]
    dropped = [name for i, name in enumerate(ra[0]) if i not in keep]
    cell = lambda row, i: row[i] if i < len(row) else None  # noqa: E731
    diff_cols = sorted({ra[0][i] for x, y in zip(ra, rb) for i in keep if cell(x, i) != cell(y, i)})
    return not diff_cols, dropped, diff_cols


def compare_csv(rel, a, b):
    sep = "\t" if a.suffix.lower() == ".tsv" else ","
    rows = [list(csv.reader(io.StringIO(p.read_text()), delimiter=sep)) for p in (a, b)]
    return compare_rows(rel, *rows)


def compare_markdown(rel, a, b):
    """Markdown: prose lines verbatim (unless MEASURED_PROSE), each pipe table without its measured columns."""

    def blocks(text):
        out, table = [], None
        for line in text.splitlines():
            if line.lstrip().startswith("|"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if table is None:
                    table = []
                    out.append(("table", table))
                if not all(set(c) <= set("-: ") for c in cells):  # skip the |---|---| rule
                    table.append(cells)
            else:
                table = None
                if not any(fnmatch.fnmatch(rel, g) for g in MEASURED_PROSE):
                    out.append(("prose", line))
        return out

    ba, bb = blocks(a.read_text()), blocks(b.read_text())
    if [k for k, _ in ba] != [k for k, _ in bb]:
        return False, [], ["layout"]
    dropped, diffs = [], []
    for (kind, x), (_, y) in zip(ba, bb):
        if kind == "prose":
            diffs += [] if x == y else [f"line {x[:40]!r}"]
        else:
            _, d, cols = compare_rows(rel, x, y)
            dropped += d
            diffs += cols
    return not diffs, sorted(set(dropped)), diffs


def compare_parquet(rel, a, b):
    import pandas as pd

    da, db = pd.read_parquet(a), pd.read_parquet(b)
    if list(da.columns) != list(db.columns) or len(da) != len(db):
        return False, [], ["columns or number of rows"]
    keep = [c for c in da.columns if not measured(rel, c)]
    diff_cols = [c for c in keep if not da[c].equals(db[c])]
    return not diff_cols, [c for c in da.columns if c not in keep], diff_cols


COMPARE = {".json": compare_json, ".pt": compare_checkpoint, ".csv": compare_csv, ".tsv": compare_csv,
           ".md": compare_markdown, ".parquet": compare_parquet}


def files(root):
    base = root / "results"
    return {p.relative_to(base).as_posix(): p for p in base.rglob("*")
            if p.is_file() and p.name != ".snakemake_timestamp"} if base.is_dir() else {}


fa, fb = files(local), files(slurm)
if subset:  # the local run's files that the SLURM run built; it must not have built any the local run lacks
    only_slurm = sorted(set(fb) - set(fa))
    if only_slurm:
        failures.append(f"the SLURM run wrote files the local run lacks: {only_slurm[:10]}")
    fa = {rel: p for rel, p in fa.items() if rel in fb}
if set(fa) != set(fb):
    failures.append(f"results/ differ in their files: only local {sorted(set(fa) - set(fb))[:10]}, "
                    f"only SLURM {sorted(set(fb) - set(fa))[:10]}")
if not fa or "tables/table1.csv" not in fa or "tables/table1.csv" not in fb:
    failures.append("results/ of the local run lacks tables/table1.csv")
kinds = {}
differ = []
dropped_names = set()
for rel in sorted(set(fa) & set(fb)):
    a, b = fa[rel], fb[rel]
    ext = a.suffix.lower()
    kind = ext.lstrip(".") or "other"
    if ext in FIGURES:  # reported, never a failure
        verdict = "identical" if a.read_bytes() == b.read_bytes() else "different (figure: not checked)"
    elif a.read_bytes() == b.read_bytes():
        verdict = "identical"
    elif ext in COMPARE:
        try:
            same, dropped, diffs = COMPARE[ext](rel, a, b)
        except Exception as e:  # unreadable file: report, do not crash the summary
            same, dropped, diffs = False, [], [f"{type(e).__name__}: {e}"]
        dropped_names.update(dropped)
        verdict = "equal without measured fields" if same else "DIFFERENT"
        if not same:
            differ.append(f"{rel} (at {', '.join(map(str, diffs[:5]))})")
    else:
        verdict = "DIFFERENT"
        differ.append(f"{rel} (bytes)")
    kinds.setdefault(kind, {}).setdefault(verdict, 0)
    kinds[kind][verdict] += 1
if differ:
    failures.append(f"{len(differ)} files under results/ differ:\n        " + "\n        ".join(differ[:30]))

# ---- summary
print("=" * 100)
print("SLURM end-to-end summary")
print(f"  local run : {local_s:5d} s, {sum(local_stats.values())} jobs")
if subset:
    print(f"  SLURM run limited to the data tables and the outputs of {subset} (E2E_MODELS)")
print(f"  SLURM run : {slurm_s:5d} s, {sum(slurm_stats.values())} jobs, {len(submitted)} submitted with sbatch "
      f"(SLURM job ids {min(map(int, slurm_ids), default=0)}..{max(map(int, slurm_ids), default=0)})")
print(f"  SLURM logs: {len(log_files)} files under .snakemake/slurm_logs; jobs run inside them, per rule: "
      + ", ".join(f"{r}={n}" for r, n in sorted(per_rule.items())))
print(f"  {ctld_note}")
print(f"  results/  : {len(fa)} files compared; measured fields left out (of files not byte-identical): "
      + (", ".join(sorted(dropped_names, key=str)) or "none"))
for kind in sorted(kinds):
    print(f"    {kind:10s} " + ", ".join(f"{n} {v}" for v, n in sorted(kinds[kind].items())))
if failures:
    for f in failures:
        print(f"  FAIL: {f}")
    print("=" * 100)
    sys.exit(1)
print(f"  OK: every job ran inside one of {len(submitted)} SLURM jobs and results/ equal the local run's "
      "(measured fields aside)")
print("=" * 100)
EOF
rc=$?
set -e
((rc == 0)) || fail "see the summary above"
if [ "${E2E_KEEP:-0}" = 1 ]; then
  say "scratch folder kept: ${WORK}"
else
  rm -rf "$WORK"
fi
