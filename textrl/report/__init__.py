"""Training curves of a run: `report.svg` (one panel per metric TRL logged) and `report.md` (a summary beside it).

The log history comes from `output_dir/log_history.json`, which `TextRLTrainer.train()` writes at the end of a
run, or else from the newest `checkpoint-N/trainer_state.json`. The figure is SVG text written by
`textrl.report.svg_chart` (standard library only, milliseconds), so drawing it costs a run nothing measurable.

The held-out evaluation comes first in both (`textrl.report.held_out`): what the run scored on its eval set, before and
after, or a line saying it has none and how to get one. An online run's losses (GRPO, RLOO, REINFORCE++) are
policy-gradient surrogates, so their panels come after the rewards and are titled as surrogates, never as scores.
Each ± band is cut at its metric's possible range (`textrl.report.metric_range` states the rule).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, TypeGuard

from ..checkpoints.files import CHECKPOINT, LOG_HISTORY, MANIFEST, REPORT, TRAINER_STATE
from . import held_out
from .metric_range import value_range

_COMPONENT = re.compile(r"^rewards/([^/]+)/mean$")  # GRPO/RLOO: one per reward function


@dataclass(frozen=True)
class Panel:
    """One plot: a metric over steps, with an optional ± band from a second metric, drawn for the runs it means
    the same thing in (a loss is a score for DPO, a surrogate for GRPO)."""

    metric: str
    title: str
    band: str | None = None
    runs: Literal["all", "online", "offline"] = "all"

    def shows(self, run: Run) -> bool:
        return self.runs == "all" or (self.runs == "online") == run.online


# After the held-out panels, in display order; a panel is drawn only where some run it shows logged its metric.
_PANELS = (
    Panel("loss", "Training loss", runs="offline"),
    Panel("reward", "Reward (mean ± std)", band="reward_std"),
    Panel("kl", "KL to the reference model"),
    Panel("completions/mean_length", "Completion length (tokens)"),
    Panel("rewards/accuracies", "Preference accuracy (chosen > rejected)"),
    Panel("rewards/margins", "Reward margin (chosen − rejected)"),
    Panel("accuracy", "Reward model accuracy (chosen > rejected)"),
    Panel("mean_token_accuracy", "Token accuracy (trained tokens predicted first)"),
    Panel("loss", f"Training loss {held_out.SURROGATE_TITLE}", runs="online"),
    Panel("eval_loss", f"Eval loss {held_out.SURROGATE_TITLE}", runs="online"),
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

    @cached_property
    def online(self) -> bool:
        """Whether the run scores its own samples with rewards (GRPO, RLOO, REINFORCE++): its losses are surrogates."""
        return held_out.is_online(self.history, self.algo)

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
    """The panels some run has data for: the held-out scores first (online runs' reward and components, then the
    others' loss, accuracy and margin), then the fixed ones in order, each reward component after `reward`."""
    logged = {metric for run in runs for entry in run.history for metric in entry}
    components = sorted({m for m in logged if _COMPONENT.match(m)})
    chosen: list[Panel] = []
    for online in (True, False):
        group = [entry for run in runs if run.online is online for entry in run.history]
        chosen += [Panel(s.metric, s.title, s.band, "online" if online else "offline")
                   for s in held_out.scores(group, online)]  # fmt: skip
    for panel in _PANELS:
        if panel.metric in logged:
            chosen.append(panel)
        if panel.metric == "reward":
            for metric in components:
                name = metric.split("/")[1]
                band = f"rewards/{name}/std"
                chosen.append(Panel(metric, f"Reward component: {name}", band=band if band in logged else None))
    return [p for p in chosen if any(p.shows(run) and run.points(p.metric) for run in runs)]


def _labels(folders: Sequence[Path]) -> list[str]:
    """Folder names, or whole paths where two runs share a name."""
    names = [f.resolve().name for f in folders]
    return names if len(set(names)) == len(names) else [str(f) for f in folders]


def _prefix(output: str | os.PathLike[str] | None, folder: Path) -> Path:
    if output is None:
        return folder / REPORT
    path = Path(output)
    return path.with_suffix("") if path.suffix in (".svg", ".png", ".md") else path


def write_report(
    output_dir: str | os.PathLike[str],
    *,
    compare: Sequence[str | os.PathLike[str]] | None = None,
    output: str | os.PathLike[str] | None = None,
) -> Path:
    """Write `report.svg` and `report.md` into output_dir (or `<output>.svg`/`.md`); returns the figure's path.

    `compare`: other runs' output dirs, drawn as lines of their own on the same panels, labelled by folder name.
    Raises FileNotFoundError when a folder holds no log history, ValueError when it logged nothing to plot.
    """
    folders = [Path(output_dir), *(Path(c) for c in compare or ())]
    runs = [load_run(folder, label) for folder, label in zip(folders, _labels(folders), strict=True)]
    chosen = panels(runs)
    if not chosen:
        raise ValueError(
            f"{runs[0].source}: the log history holds no metric to plot (looked for eval_reward, "
            f"{', '.join(dict.fromkeys(p.metric for p in _PANELS))}). Fix: set logging_steps so the run logs at "
            "least one step."
        )
    prefix = _prefix(output, folders[0])
    prefix.parent.mkdir(parents=True, exist_ok=True)
    svg, md = prefix.with_name(prefix.name + ".svg"), prefix.with_name(prefix.name + ".md")
    svg.write_text(_draw(runs, chosen), encoding="utf-8")
    md.write_text(_markdown(runs, chosen, svg.name), encoding="utf-8")
    return svg


def _draw(runs: Sequence[Run], chosen: Sequence[Panel]) -> str:
    from .svg_chart import COLORS, Chart, Series, figure

    colors = [COLORS[i % len(COLORS)] for i in range(len(runs))]
    charts = [
        Chart(panel.title, "step", panel.metric, [
            Series(run.label, color, list(run.points(panel.metric).items()),
                   run.points(panel.band) if panel.band else {},
                   value_range(panel.metric, run.points(panel.metric).values()))
            for run, color in zip(runs, colors, strict=True) if panel.shows(run) and run.points(panel.metric)
        ])
        for panel in chosen
    ]  # fmt: skip
    if len(runs) > 1:
        return figure(
            charts, f"{len(runs)} runs compared", [(run.label, c) for run, c in zip(runs, colors, strict=True)]
        )
    algo = f" ({runs[0].algo})" if runs[0].algo else ""
    return figure(charts, f"{runs[0].label}{algo}: {runs[0].global_step} steps")


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def _markdown(runs: Sequence[Run], chosen: Sequence[Panel], image: str) -> str:
    several = len(runs) > 1
    title = " vs ".join(run.label for run in runs)
    lines = [f"# Training report: {title}", ""]
    lines += held_out.markdown([held_out.Evaluated(run.label, run.algo, run.history) for run in runs])
    lines += ["## Runs", "", "| run | algorithm | steps | logged steps | folder | log history |", "|---" * 6 + "|"]
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
            if not values or not panel.shows(run):
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
