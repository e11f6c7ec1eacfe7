"""Energy and carbon footprint of training and of the two evaluation protocols (ranking vs Knowledge
Persistence), measured with codecarbon offline, and a formula-based projection to the paper's scale.

**Measurement.** ``EnergyMeter`` wraps a block of work in codecarbon's ``OfflineEmissionsTracker`` with a
configured country (3-letter ISO code, e.g. ``USA``): the carbon intensity comes from codecarbon's bundled
energy-mix table for that country, so nothing is looked up on the network. Every output method is switched off
(no CSV, no API, no HTTP endpoint), and several trackers may run at once (parallel Snakemake jobs). Tracking is
per process (``tracking_mode="process"``). How codecarbon obtains power depends on the machine, and every
measurement records it (``method``):

* CPU: Intel/AMD RAPL counters when ``/sys/class/powercap/intel-rapl`` is readable (a measurement); otherwise
  the *CPU-load* model — the process's CPU load times the CPU's TDP from codecarbon's CPU table (a generic 4 W
  per thread when the model is unknown), at least 10 % of the TDP — or a constant TDP without psutil;
* GPU: NVML power readings (NVIDIA) — a measurement;
* RAM: codecarbon's RAM power model (an estimate).

On the development machine (2 vCPUs "AMD EPYC", no RAPL, no GPU) codecarbon falls back on the **CPU-load
model with its generic 8 W TDP** (4 W × 2 threads) and its RAM model (10 W): an estimate, not a meter reading.

**Training** energy is not measured again: the training rule runs before this stage and re-training inside a
tracker would double the cost. It is estimated as E_train = P̄ × t_train, with t_train the training time
recorded in the model's checkpoint sidecar (``train_seconds``, evaluation excluded) and P̄ the mean power
codecarbon measured while the same model was evaluated in the same kind of process on the same device
(E / t over both protocols). Models without a recorded training time (LibKGE checkpoints) get no training
energy (NaN).

**Evaluation at intervals.** The ranking protocol also evaluates validation MRR during training; its recorded
time (sidecar ``eval_seconds``, ``n_evals`` evaluations) is costed at the ranking protocol's measured power.
The KP protocol replaces each of those evaluations by one KP(valid), costed at its measured energy per run.
Total per protocol = training + evaluation at intervals + final evaluation (validation + test).

**Short blocks.** codecarbon samples power every ``measure_power_secs`` (and the CPU-load model needs an interval
to see a load), so it cannot resolve a block of a few milliseconds: the timing step repeats each protocol until
it has run a minimum time and divides the energy by the number of repeats (``repeats`` in the timing record).

**Projection** (``ProjectionAssumptions``): the same protocols at the paper's scale on a stated GPU, by
formula — energy = power × PUE × time, CO₂e = energy × grid carbon intensity:

* time: training ``epochs`` (100) at this run's measured time per epoch; ``epochs / eval_every`` (20)
  validation evaluations plus one test evaluation, at this run's measured times of one full evaluation of each
  split (ranking and KP alike). The measured times are taken as they are: measured on a CPU they overstate the
  GPU's time, so the projection is an upper bound in that case (the table records the measuring device);
* power: 250 W, the board power (TDP) of an NVIDIA Tesla P100 PCIe 16 GB (NVIDIA Tesla P100 datasheet) — the
  GPU the paper used (Bastos et al., 2023, Section 5); drawing the full TDP throughout is again an upper bound;
* PUE: 1.0 by default (the device alone; Patterson et al., 2021, report 1.1 for Google's data centres, the
  Uptime Institute's 2020 survey an industry average of 1.58);
* intensity: 475 gCO₂e/kWh, the world-average carbon intensity of electricity generation in 2018 (IEA, Global
  Energy & CO₂ Status Report 2019).
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

log = logging.getLogger(__name__)

KWH_PER_JOULE = 1.0 / 3.6e6


# ---- measurement ----------------------------------------------------------------------------------------------------
@dataclass
class EnergyMeasurement:
    label: str
    seconds: float  # duration codecarbon covered
    energy_kwh: float
    cpu_kwh: float
    gpu_kwh: float
    ram_kwh: float
    emissions_kg: float
    cpu_power_w: float
    gpu_power_w: float
    ram_power_w: float
    method: str  # how codecarbon obtained the power (RAPL, CPU load × TDP, NVML, ...)
    rapl: bool  # True when the CPU energy is a RAPL reading
    country_iso_code: str
    intensity_g_per_kwh: float
    codecarbon_version: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def mean_power_w(self) -> float:
        return self.energy_kwh / KWH_PER_JOULE / self.seconds if self.seconds > 0 else float("nan")


def measurement_method(tracker: Any) -> tuple[str, bool]:
    """A readable description of how ``tracker`` measures power, and whether the CPU part is RAPL."""
    parts, rapl = [], False
    for hw in getattr(tracker, "_hardware", []):
        kind = type(hw).__name__
        if kind == "CPU":
            mode = getattr(hw, "_mode", "?")
            tdp = getattr(hw, "_tdp", None)
            model = getattr(hw, "_model", "?")
            if mode == "intel_rapl":
                rapl = True
                parts.append("CPU: RAPL energy counters (measured)")
            elif mode == "cpu_load":
                parts.append(f"CPU: process load x TDP {tdp} W of {model!r} (codecarbon CPU-load model, estimate)")
            elif mode == "constant":
                parts.append(f"CPU: constant power {tdp} W of {model!r} (estimate)")
            else:
                parts.append(f"CPU: {mode}")
        elif kind == "GPU":
            parts.append("GPU: NVML power readings (measured)")
        elif kind == "RAM":
            parts.append("RAM: codecarbon RAM power model (estimate)")
        else:
            parts.append(kind)
    if not any(p.startswith("GPU") for p in parts):
        parts.append("GPU: none")
    return "; ".join(parts) or "unknown", rapl


class EnergyMeter:
    """Context manager: energy and CO₂e of the enclosed block, measured by codecarbon offline.

    ``with EnergyMeter("ranking", "USA") as meter: ...`` then ``meter.result`` is an ``EnergyMeasurement``.
    """

    def __init__(self, label: str, country_iso_code: str = "USA", measure_power_secs: float = 1.0,
                 log_level: str = "warning"):
        self.label = label
        self.country_iso_code = country_iso_code
        self.measure_power_secs = measure_power_secs
        self.log_level = log_level
        self.result: EnergyMeasurement | None = None
        self._tracker = None

    def __enter__(self) -> EnergyMeter:
        from codecarbon import OfflineEmissionsTracker
        from codecarbon.input import DataSource

        if self.country_iso_code not in DataSource().get_global_energy_mix_data():
            raise ValueError(f"country ISO code {self.country_iso_code!r} is not in codecarbon's energy-mix table "
                             "(3-letter code, e.g. USA, DEU, FRA)")

        self._tracker = OfflineEmissionsTracker(
            country_iso_code=self.country_iso_code, measure_power_secs=self.measure_power_secs,
            tracking_mode="process", output_methods=[], emissions_endpoint=None, allow_multiple_runs=True,
            log_level=self.log_level, project_name=f"kgeval-{self.label}")
        self._tracker.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        import codecarbon

        tracker = self._tracker
        tracker.stop()
        if exc_type is not None:
            return
        d = tracker.final_emissions_data
        method, rapl = measurement_method(tracker)
        energy = float(d.energy_consumed)
        emissions = float(d.emissions)
        self.result = EnergyMeasurement(
            label=self.label, seconds=float(d.duration), energy_kwh=energy, cpu_kwh=float(d.cpu_energy),
            gpu_kwh=float(d.gpu_energy), ram_kwh=float(d.ram_energy), emissions_kg=emissions,
            cpu_power_w=float(d.cpu_power), gpu_power_w=float(d.gpu_power), ram_power_w=float(d.ram_power),
            method=method, rapl=rapl, country_iso_code=self.country_iso_code,
            intensity_g_per_kwh=emissions * 1000.0 / energy if energy > 0 else float("nan"),
            codecarbon_version=codecarbon.__version__)
        log.info("%s: %.3g kWh, %.3g g CO2e in %.2f s (%s)", self.label, energy, emissions * 1000, d.duration,
                 method)


def probe_method(country_iso_code: str = "USA") -> dict[str, Any]:
    """Measure one second of idle time: shows how codecarbon measures on this machine."""
    with EnergyMeter("probe", country_iso_code) as meter:
        time.sleep(1.0)
    return meter.result.to_dict()


# ---- formula ------------------------------------------------------------------------------------------------------
def energy_kwh(power_w: float, seconds: float, pue: float = 1.0) -> float:
    """Energy = power × PUE × time."""
    return power_w * pue * seconds * KWH_PER_JOULE


def co2e_g(kwh: float, intensity_g_per_kwh: float) -> float:
    """CO₂e = energy × grid carbon intensity."""
    return kwh * intensity_g_per_kwh


@dataclass
class ProjectionAssumptions:
    """The stated GPU and grid of the paper-scale projection (sources in the module docstring)."""

    gpu: str = "NVIDIA Tesla P100 PCIe 16 GB"
    power_w: float = 250.0
    pue: float = 1.0
    intensity_g_per_kwh: float = 475.0
    epochs: int = 100
    eval_every: int = 5

    @property
    def n_evals(self) -> int:
        return max(1, self.epochs // self.eval_every)


# ---- the carbon table -----------------------------------------------------------------------------------------------
PROTOCOLS = ("ranking", "kp")


def _split_share(seconds: dict[str, float], split: str) -> float:
    total = sum(seconds.values())
    return seconds[split] / total if total > 0 else float("nan")


def carbon_rows(model: str, timing: dict[str, Any], assumptions: ProjectionAssumptions) -> list[dict[str, Any]]:
    """Two rows (ranking, KP) of the carbon table from one model's timing record (``steps.kp.timing_step``)."""
    train = timing["train"]
    energy = {p: timing["energy"][p] for p in PROTOCOLS}
    measured_s = sum(e["seconds"] for e in energy.values())
    measured_kwh = sum(e["energy_kwh"] for e in energy.values())
    mean_power = measured_kwh / KWH_PER_JOULE / measured_s if measured_s > 0 else float("nan")
    intensity = energy["ranking"]["intensity_g_per_kwh"]
    train_s = train.get("train_seconds")
    train_s = float(train_s) if train_s is not None else float("nan")
    epochs = train.get("epochs") or np.nan
    n_evals = int(train.get("n_evals") or 0)
    train_kwh = energy_kwh(mean_power, train_s)
    split_seconds = {"ranking": timing["ranking"]["seconds"], "kp": timing["kp"]["seconds"]}
    rows = []
    for protocol in PROTOCOLS:
        e = energy[protocol]
        sec = split_seconds[protocol]  # one full evaluation of each split
        final_s = sec["valid"] + sec["test"]
        final_kwh = e["energy_kwh"] / max(1, int(timing[protocol].get("repeats", 1)))
        if protocol == "ranking":
            interval_s = float(train.get("eval_seconds") or 0.0)
            ranking_power = e["energy_kwh"] / KWH_PER_JOULE / e["seconds"] if e["seconds"] > 0 else np.nan
            interval_kwh = energy_kwh(ranking_power, interval_s)
        else:
            interval_s = n_evals * sec["valid"]
            interval_kwh = n_evals * final_kwh * _split_share(sec, "valid")
        total_kwh = np.nansum([train_kwh, interval_kwh, final_kwh])
        proj_train_s = train_s / epochs * assumptions.epochs if epochs else np.nan
        proj_eval_s = assumptions.n_evals * sec["valid"] + sec["test"]
        proj_train_kwh = energy_kwh(assumptions.power_w, proj_train_s, assumptions.pue)
        proj_eval_kwh = energy_kwh(assumptions.power_w, proj_eval_s, assumptions.pue)
        rows.append({
            "model": model, "protocol": protocol, "device": timing["device"], "method": e["method"],
            "rapl": e["rapl"], "country_iso_code": e["country_iso_code"], "intensity_g_per_kwh": intensity,
            "train_seconds": train_s, "train_kwh": train_kwh,
            "interval_evals": n_evals, "interval_eval_seconds": interval_s, "interval_eval_kwh": interval_kwh,
            "final_eval_seconds": final_s, "final_eval_kwh": final_kwh,
            "eval_kwh": interval_kwh + final_kwh, "total_kwh": total_kwh,
            "train_co2e_g": co2e_g(train_kwh, intensity),
            "eval_co2e_g": co2e_g(interval_kwh + final_kwh, intensity),
            "total_co2e_g": co2e_g(total_kwh, intensity),
            "proj_gpu": assumptions.gpu, "proj_power_w": assumptions.power_w, "proj_pue": assumptions.pue,
            "proj_intensity_g_per_kwh": assumptions.intensity_g_per_kwh, "proj_epochs": assumptions.epochs,
            "proj_evals": assumptions.n_evals, "proj_train_seconds": proj_train_s, "proj_eval_seconds": proj_eval_s,
            "proj_train_kwh": proj_train_kwh, "proj_eval_kwh": proj_eval_kwh,
            "proj_train_co2e_g": co2e_g(proj_train_kwh, assumptions.intensity_g_per_kwh),
            "proj_eval_co2e_g": co2e_g(proj_eval_kwh, assumptions.intensity_g_per_kwh),
            "proj_total_co2e_g": co2e_g(np.nansum([proj_train_kwh, proj_eval_kwh]),
                                        assumptions.intensity_g_per_kwh),
        })
    return rows


def carbon_table(timings: dict[str, dict[str, Any]], assumptions: ProjectionAssumptions) -> pd.DataFrame:
    rows = [r for model, t in timings.items() for r in carbon_rows(model, t, assumptions)]
    return pd.DataFrame(rows)


def plot_carbon(df: pd.DataFrame, png: str | Path, pdf: str | Path, title: str = "") -> None:
    """CO₂e per model: training, evaluation with full ranking and evaluation with KP (three bars per model, log
    scale), measured here (left) and projected to the paper's scale (right). The total of a protocol is the
    training bar plus that protocol's evaluation bar (``carbon.csv``: ``total_co2e_g``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io import atomic_path

    models = list(dict.fromkeys(df["model"]))
    x = np.arange(len(models))
    width = 0.27
    bars = (("training", "#9e9e9e", None), ("evaluation: full ranking", "#1f77b4", "ranking"),
            ("evaluation: Knowledge Persistence", "#ff7f0e", "kp"))
    fig, axes = plt.subplots(1, 2, figsize=(max(8.0, 0.9 * len(models) + 4), 4.4), constrained_layout=True)
    gpu = df["proj_gpu"].iloc[0] if len(df) else ""
    panels = (("", "Measured here (codecarbon, offline)"), ("proj_", f"Projected: paper scale on {gpu}"))
    for ax, (prefix, heading) in zip(axes, panels):
        for k, (label, colour, protocol) in enumerate(bars):
            if protocol is None:
                sub = df[df["protocol"] == "ranking"].set_index("model").reindex(models)
                y = sub[f"{prefix}train_co2e_g"].to_numpy(float)
            else:
                sub = df[df["protocol"] == protocol].set_index("model").reindex(models)
                y = sub[f"{prefix}eval_co2e_g"].to_numpy(float)
            y = np.where(np.isfinite(y) & (y > 0), y, np.nan)  # a log axis cannot show 0 or a missing value
            ax.bar(x + (k - 1) * width, y, width, color=colour, edgecolor="black", linewidth=0.4, label=label)
        ax.set_yscale("log")
        ax.set_xticks(x, models, rotation=45, ha="right")
        ax.set_xlabel("Model")
        ax.set_ylabel("CO₂e (g, log scale)")
        ax.set_title(heading, fontsize=10)
        ax.grid(axis="y", alpha=0.3, which="both")
    axes[0].legend(fontsize=8, loc="best")
    if title:
        fig.suptitle(title)
    for path, fmt in ((png, "png"), (pdf, "pdf")):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=150)
    plt.close(fig)
