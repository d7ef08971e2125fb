"""Training curves of a run: `report.png` (one panel per metric TRL logged) and `report.md` (a summary beside it).

The log history comes from `output_dir/log_history.json`, which `TextRLTrainer.train()` writes at the end of a
run, or else from the newest `checkpoint-N/trainer_state.json`. matplotlib is imported by `write_report` only,
and drawn through its object API (`Figure` on an Agg canvas): no pyplot state, no change to the caller's backend.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from .run_files import CHECKPOINT, LOG_HISTORY, MANIFEST, REPORT, TRAINER_STATE

_COMPONENT = re.compile(r"^rewards/([^/]+)/mean$")  # GRPO/RLOO: one per reward function


@dataclass(frozen=True)
class Panel:
    """One plot: a metric over steps, with an optional ± band from a second metric."""

    metric: str
    title: str
    band: str | None = None


# In display order; a panel is drawn only where some run logged its metric.
_PANELS = (
    Panel("loss", "Training loss"),
    Panel("eval_loss", "Eval loss"),
    Panel("reward", "Reward (mean ± std)", band="reward_std"),
    Panel("kl", "KL to the reference model"),
    Panel("completions/mean_length", "Completion length (tokens)"),
    Panel("rewards/accuracies", "Preference accuracy (chosen > rejected)"),
    Panel("rewards/margins", "Reward margin (chosen − rejected)"),
    Panel("accuracy", "Reward model accuracy (chosen > rejected)"),
    Panel("learning_rate", "Learning rate"),
)


@dataclass(frozen=True)
class Run:
    """One run's log history, and where it came from."""

    folder: Path
    label: str
    history: list[dict[str, Any]]
    source: Path
    algo: str | None
    beta: float | None = None
    """The run's beta (from its manifest), which decides what its loss means."""

    def points(self, metric: str) -> dict[float, float]:
        """{step: value} of a metric, in logging order, finite numbers only."""
        found = {}
        for entry in self.history:
            value, step = entry.get(metric), entry.get("step")
            if _number(value) and _number(step) and math.isfinite(value):
                found[float(step)] = float(value)
        return found

    @property
    def global_step(self) -> int:
        return max((int(e["step"]) for e in self.history if _number(e.get("step"))), default=0)

    @property
    def logged_steps(self) -> int:
        return sum(1 for e in self.history if "loss" in e)


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def find_log_history(output_dir: str | os.PathLike[str]) -> Path:
    """The file holding a run's log history: `log_history.json` or the newest checkpoint's trainer_state.json,
    whichever was written last."""
    folder = Path(output_dir)
    if not folder.is_dir():
        raise FileNotFoundError(
            f"{folder} is not a folder. Fix: pass the output_dir of a TextRL run (the folder holding its "
            "checkpoints and textrl_manifest.json)."
        )
    checkpoints = sorted(
        (int(m.group(1)), p / TRAINER_STATE)
        for p in folder.iterdir()
        if (m := CHECKPOINT.match(p.name)) and (p / TRAINER_STATE).is_file()
    )
    candidates = [folder / LOG_HISTORY] if (folder / LOG_HISTORY).is_file() else []
    candidates += [checkpoints[-1][1]] if checkpoints else []
    if candidates:  # the newer one: a resumed run that was stopped again is newer than an older log_history.json
        return max(candidates, key=lambda p: (p.stat().st_mtime, p.name == LOG_HISTORY))
    raise FileNotFoundError(
        f"{folder} holds no log history: looked for {LOG_HISTORY} (written when a run finishes) and "
        "checkpoint-N/trainer_state.json (written at each save). Fix: let the run finish, or save checkpoints "
        "during it (save_strategy: steps, save_steps: N), then run textrl-report again."
    )


def load_run(output_dir: str | os.PathLike[str], label: str | None = None) -> Run:
    """Read one run's log history (see `find_log_history`) and, when present, the algorithm from its manifest."""
    folder = Path(output_dir)
    source = find_log_history(folder)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{source}: could not read the log history ({exc}). Fix: re-run or resume the run.") from exc
    history = data if source.name == LOG_HISTORY else data.get("log_history") if isinstance(data, dict) else None
    if not isinstance(history, list) or not all(isinstance(e, dict) for e in history):
        raise ValueError(f"{source}: expected a list of logged steps, got {type(history).__name__}.")
    algo, beta = None, None
    if (folder / MANIFEST).is_file():
        try:
            config = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["textrl_config"]
            algo, beta = config["algo"], config.get("beta")
        except (OSError, ValueError, KeyError, TypeError):
            algo = None  # the manifest only adds a name to the summary
    return Run(folder, label or folder.resolve().name, history, source, algo, beta)


def panels(runs: Sequence[Run]) -> list[Panel]:
    """The panels some run has data for: the fixed ones in order, each reward component after `reward`."""
    logged = {metric for run in runs for entry in run.history for metric in entry}
    components = sorted({m for m in logged if _COMPONENT.match(m)})
    chosen: list[Panel] = []
    for panel in _PANELS:
        if panel.metric in logged:
            chosen.append(panel)
        if panel.metric == "reward":
            for metric in components:
                name = metric.split("/")[1]
                band = f"rewards/{name}/std"
                chosen.append(Panel(metric, f"Reward component: {name}", band=band if band in logged else None))
    return [p for p in chosen if any(run.points(p.metric) for run in runs)]


def _labels(folders: Sequence[Path]) -> list[str]:
    """Folder names, or whole paths where two runs share a name."""
    names = [f.resolve().name for f in folders]
    return names if len(set(names)) == len(names) else [str(f) for f in folders]


def _prefix(output: str | os.PathLike[str] | None, folder: Path) -> Path:
    if output is None:
        return folder / REPORT
    path = Path(output)
    return path.with_suffix("") if path.suffix in (".png", ".md") else path


def write_report(
    output_dir: str | os.PathLike[str],
    *,
    compare: Sequence[str | os.PathLike[str]] | None = None,
    output: str | os.PathLike[str] | None = None,
) -> Path:
    """Write `report.png` and `report.md` into output_dir (or `<output>.png`/`.md`); returns the PNG's path.

    `compare`: other runs' output dirs, drawn as lines of their own on the same panels, labelled by folder name.
    Raises FileNotFoundError when a folder holds no log history, ValueError when it logged nothing to plot.
    """
    folders = [Path(output_dir), *(Path(c) for c in compare or ())]
    runs = [load_run(folder, label) for folder, label in zip(folders, _labels(folders), strict=True)]
    chosen = panels(runs)
    if not chosen:
        raise ValueError(
            f"{runs[0].source}: the log history holds no metric to plot (looked for "
            f"{', '.join(p.metric for p in _PANELS)}). Fix: set logging_steps so the run logs at least one step."
        )
    prefix = _prefix(output, folders[0])
    prefix.parent.mkdir(parents=True, exist_ok=True)
    png, md = prefix.with_name(prefix.name + ".png"), prefix.with_name(prefix.name + ".md")
    _draw(runs, chosen, png)
    md.write_text(_markdown(runs, chosen, png.name), encoding="utf-8")
    return png


def _draw(runs: Sequence[Run], chosen: Sequence[Panel], path: Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    columns = min(3, len(chosen))
    rows = -(-len(chosen) // columns)
    fig = Figure(figsize=(5.2 * columns, 3.6 * rows + 0.6), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    for ax, panel in zip(axes, chosen, strict=False):  # the grid may have more cells than panels
        for i, run in enumerate(runs):
            _plot(ax, run, panel, color=f"C{i % 10}")
        ax.set_title(panel.title, fontsize=11)
        ax.set_xlabel("step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(panel.metric)
        ax.grid(True, alpha=0.3)
        if panel.metric == "learning_rate":
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
    for ax in axes[len(chosen) :]:
        ax.set_visible(False)
    if len(runs) > 1:
        lines = {line.get_label(): line for ax in axes for line in ax.get_lines()}  # one per run, whichever panel
        fig.legend(list(lines.values()), list(lines), loc="outside lower center", ncols=min(len(runs), 4))
        fig.suptitle(f"{len(runs)} runs compared (legend below)", fontsize=13)
    else:
        algo = f" ({runs[0].algo})" if runs[0].algo else ""
        fig.suptitle(f"{runs[0].label}{algo}: {runs[0].global_step} steps", fontsize=13)
    fig.savefig(path)


def _plot(ax: Any, run: Run, panel: Panel, *, color: str) -> None:
    """One run's line on one panel, with its ± std band where the panel has one."""
    points = run.points(panel.metric)
    if not points:
        return
    marker = "o" if len(points) <= 50 else None
    ax.plot(list(points), list(points.values()), color=color, marker=marker, markersize=3, label=run.label)
    spread = run.points(panel.band) if panel.band else {}
    steps = [s for s in points if s in spread]
    if steps:
        low = [points[s] - spread[s] for s in steps]
        high = [points[s] + spread[s] for s in steps]
        ax.fill_between(steps, low, high, color=color, alpha=0.18, linewidth=0)


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _markdown(runs: Sequence[Run], chosen: Sequence[Panel], image: str) -> str:
    several = len(runs) > 1
    title = " vs ".join(run.label for run in runs)
    lines = [f"# Training report: {title}", "", "| run | algorithm | steps | logged steps | folder | log history |"]
    lines.append("|---|---|---|---|---|---|")
    for run in runs:
        lines.append(
            f"| {run.label} | {run.algo or '?'} | {run.global_step} | {run.logged_steps} | `{run.folder}` "
            f"| `{run.source.relative_to(run.folder)}` |"
        )
    lines += ["", "## Metrics", ""]
    lines.append(("| panel | metric | run |" if several else "| panel | metric |") + " first | last | min | max |")
    lines.append("|---" * (7 if several else 6) + "|")
    for panel in chosen:
        for run in runs:
            values = list(run.points(panel.metric).values())
            if not values:
                continue
            cells = [panel.title, f"`{panel.metric}`", *([run.label] if several else [])]
            cells += [_fmt(values[0]), _fmt(values[-1]), _fmt(min(values)), _fmt(max(values))]
            lines.append("| " + " | ".join(cells) + " |")
    from .learning_signs import summary_lines  # the spec (pydantic): not for `textrl-report --help`

    for run in runs:
        read = summary_lines(run.history, run.algo, run.beta)
        if read:
            lines += ["", f"## What shows learning{f': {run.label}' if several else ''}", ""]
            lines += [f"- {line}" for line in read]
    lines += ["", f"![report]({image})", ""]
    return "\n".join(lines)
