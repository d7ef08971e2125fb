"""Build a run's TextRLConfig from a YAML file, generated flags and --set, remembering where each value came from.

Precedence: flag > YAML > the spec's default. Errors point at the YAML line or the flag that set the value.
Imports no torch: `textrl-train --dry-run` runs all of this in well under a second.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from ..errors import ConfigError, Problem
from ..trl_recipe import Translation
from ..validation.annotations import is_optional, strip_optional, union_members
from ..validation.config import TextRLConfig, config_class, route_extra
from ..validation.yaml_io import load_yaml, read_mapping

SECTIONS = ("model", "dataset", "eval_dataset", "reward", "distributed", "extra", "env")


@dataclass
class Assembled:
    """A validated config, the file it came from, and the source of every top-level value."""

    config: TextRLConfig
    path: Path | None
    sources: dict[str, str] = field(default_factory=dict)
    translation: Translation | None = None
    """For a TRL-format recipe (`--trl`): what became of each of its keys."""

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path else Path.cwd()


def require_section(run: Assembled, key: str) -> Any:
    """The config's `key` section (model, dataset, reward), which a run from the command line cannot do without."""
    value = getattr(run.config, key, None)
    if value is None:
        raise ConfigError(
            [
                Problem(
                    key,
                    f"a run from the command line needs a {key} section. Fix: add {key}: to "
                    f"{run.path or 'the config'}.",
                )
            ]
        )
    return value


def _path_of(dotted: str) -> tuple[str | int, ...]:
    return tuple(int(p[1:-1]) if p.startswith("[") else p for p in re.findall(r"\[\d+\]|[^.\[\]]+", dotted))


def locate(
    error: ConfigError, lines: dict[tuple[str | int, ...], int], path: Path | None, flags: dict[str, str]
) -> ConfigError:
    """The same error with each problem pointing at the flag or YAML line that set the value."""
    located = []
    for problem in error.problems:
        parts = _path_of(problem.field)
        where = ""
        if parts and parts[0] in flags:
            where = f"flag {flags[str(parts[0])]}"
        elif path is not None:
            for size in range(len(parts), 0, -1):
                if parts[:size] in lines:
                    where = f"{path}:{lines[parts[:size]]}"
                    break
            else:
                where = str(path)
        located.append(replace(problem, where=where))
    return type(error)(located, algo=error.algo)


def parse_value(raw: str, annotation: Any, flag: str = "--flag") -> Any:
    """A flag's text as the option's type: YAML scalars (1e-5, true), `none`/`null` for optional options, and
    comma-separated lists for list options. Text options keep the text as typed."""
    if is_optional(annotation) and raw.strip().lower() in ("none", "null"):
        return None
    base = strip_optional(annotation)
    texts = [
        m
        for m in union_members(base)
        if m is str or (get_origin(m) is Literal and all(isinstance(v, str) for v in get_args(m)))
    ]
    if len(texts) == len(union_members(base)):
        return raw  # text and closed text choices: `--save-strategy no` means "no", not false
    value = load_yaml(raw, source=flag) if raw.strip() else raw
    wants_list = any(get_origin(m) is list for m in union_members(base))
    if wants_list and isinstance(value, str | int | float) and not isinstance(value, bool):
        value = [load_yaml(part.strip(), source=flag) for part in str(raw).split(",") if part.strip()]
    return value


def assemble(
    path: str | Path | None,
    flags: dict[str, Any],
    flag_names: dict[str, str],
    sets: list[str],
    trl: str | None = None,
    processes: int | None = None,
) -> Assembled:
    """Merge YAML, `--set key=value` and flags (already parsed by argparse) and validate the result.

    `processes`: the number of processes the run will have, when it is not this process's world (writing an
    accelerate config for N processes); the batch rules check against it.

    With `trl` (a TRL CLI command: grpo, dpo, ...), the YAML file is a recipe for that command, translated first.
    """
    data: dict[str, Any] = {}
    lines: dict[tuple[str | int, ...], int] = {}
    config_path = Path(path) if path else None
    if config_path is not None:
        data, lines = read_mapping(config_path)
    written = data  # the file as written: for a recipe, the process count it names
    translation = None
    if trl is not None:
        from ..trl_recipe import not_a_recipe, raise_problems, translate

        if config_path is None:
            raise ConfigError([Problem("--trl", "needs --config RECIPE.yaml, the recipe written for TRL's CLI.")])
        if "algo" in flags:
            raise ConfigError([Problem("--algo", "--trl already names the algorithm. Fix: drop --algo.")])
        if (textrl_config := not_a_recipe(data, config_path, trl=trl, converting=False, lines=lines)) is not None:
            raise ConfigError([textrl_config])
        translation = translate(data, trl, lines=lines, base_dir=config_path.parent)
        raise_problems(translation, config_path)
        data, lines = translation.config, translation.lines
    sources = {key: "YAML" for key in data}
    pending: list[tuple[str, Any]] = []  # --set of a key outside the sections: an option, or a field for extra
    for item in sets:
        key, sep, raw = item.partition("=")
        key = key.strip()  # `--set " beta = 0.1"`: no option name has spaces, so they are only form
        if not sep or not key:
            raise ConfigError(
                [Problem("--set", f"got {item!r}; allowed: key=value. Fix: e.g. --set log_unique_prompts=true")]
            )
        value = load_yaml(raw, source=f"--set {key}") if raw else raw
        if key.split(".")[0] in SECTIONS:
            _set_nested(data, key, value)
            sources[key.split(".")[0]] = "--set"
        else:
            pending.append((key, value))
    try:
        cls = config_class(flags.get("algo", data.get("algo")))
    except ConfigError as error:
        raise locate(error, lines, config_path, {"algo": "--algo"} if "algo" in flags else {}) from None
    options = {o.name: o for o in cls.algorithm().options}
    for key, value in pending:
        if key in options:
            data[key] = value
            sources[key] = "--set"
        else:
            _set_nested(data, key, value)
            sources["extra"] = "--set"
    routed = route_extra(data, cls.algorithm())  # extra: {log_level: info} is the typed option log_level
    sources |= {name: "YAML (extra)" for name in routed.keys() - data.keys()}
    data = routed
    used_flags: dict[str, str] = {}
    for name, raw in flags.items():
        if name == "algo":
            data["algo"] = raw
        elif name not in options:
            raise ConfigError(
                [
                    Problem(
                        name,
                        f"flag {flag_names.get(name, name)} does not apply to "
                        f"algo={cls.algorithm().name!r}. Fix: drop the flag.",
                        where=f"flag {flag_names.get(name, name)}",
                    )
                ]
            )
        else:
            flag = flag_names.get(name, name)
            data[name] = raw if isinstance(raw, bool) else parse_value(raw, options[name].annotation, flag)
        sources[name] = "flag"
        used_flags[name] = flag_names.get(name, name)
    try:
        config = TextRLConfig.model_validate(data, processes=processes)
    except ConfigError as error:
        if trl is not None:  # a recipe written for several GPUs: the counts its batch divides on, and how to launch
            from ..trl_recipe import process_fit, with_launch_hint
            from ..validation.config import processes as run_processes

            count = processes if processes is not None else run_processes()
            launch = f"Launch it so: accelerate launch --num_processes {{n}} -m textrl.cli train --trl {trl} --config "
            launch += str(config_path)
            error = with_launch_hint(error, process_fit(data, written), count, launch)
        raise locate(error, lines, config_path, used_flags) from None
    return Assembled(config=config, path=config_path, sources=sources, translation=translation)


def _set_nested(data: dict[str, Any], key: str, value: Any) -> None:
    """`--set model.peft.r=8` writes into the section; any other key goes to `extra` (TRL fields)."""
    parts = key.split(".")
    if parts[0] not in SECTIONS:
        data.setdefault("extra", {})[key] = value
        return
    if len(parts) == 1:  # a whole section, e.g. --set reward=my_rewards:fn
        data[key] = value
        return
    node = data
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(
                [
                    Problem(
                        "--set",
                        f"{part} is not a mapping in the config, so {key} cannot be set. Fix: write {part} "
                        "as a mapping.",
                    )
                ]
            )
    node[parts[-1]] = value
