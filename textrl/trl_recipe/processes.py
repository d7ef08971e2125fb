"""The process counts a recipe's batch arithmetic holds on: recipes written for several GPUs.

The per-process rules (the generation batch divides num_generations, ...) depend on how many processes train, which
a recipe does not say: open-r1's GRPO recipes run on 7 GPUs (an 8th serves vLLM), where 16 × 4 × 7 = 448
completions split into groups of 14, while on one process 64 do not. A conversion lists the counts that work; a run
is still checked against its own count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from pydantic_core import PydanticUndefined

from .. import spec
from ..errors import ConfigError
from .tables import ACCELERATE_PROFILES, PROFILE_PROCESSES

SCAN = 1024
"""The largest process count looked at; a batch that holds on none up to it is refused as on one process."""
SHOWN = 3
"""How many of the smallest fitting counts are named ("7, 14, 21, ...")."""


@dataclass(frozen=True)
class ProcessFit:
    """Which process counts a config's per-process rules hold on, and the count the recipe itself launches."""

    values: Mapping[str, Any]
    rules: tuple[spec.Rule, ...]
    own: tuple[int, str] | None = None
    """The recipe's own process count and what names it (TRL's accelerate profile), when it names one."""

    def fails_on(self, count: int) -> list[spec.Rule]:
        return [rule for rule in self.rules if rule.violation(self.values, processes=count)]

    def counts(self) -> list[int]:
        """The smallest counts on which every per-process rule holds: SHOWN of them, and one more if there are
        more (so a caller knows to write "...")."""
        found: list[int] = []
        for count in range(1, SCAN + 1):
            if not self.fails_on(count):
                found.append(count)
                if len(found) > SHOWN:
                    break
        return found

    def describe(self, count: int = 1) -> str:
        """What holds where, e.g. "the generation batch divides num_generations=14 on 7, 14, 21, ... processes; on
        1 process it does not" (`count`: the count the caller checks, named when the rules fail on it)."""
        own = self.own[0] if self.own is not None else count
        failing = self.fails_on(count) or self.fails_on(own) or self.fails_on(1)
        what = " and ".join(_phrase(rule, self.values) for rule in failing) or "the batch divides"
        found = self.counts()
        if not found:
            return f"{what} on no process count up to {SCAN}"
        listed = ", ".join(map(str, found[:SHOWN])) + (", ..." if len(found) > SHOWN else "")
        text = f"{what} on {listed} processes"
        if count not in found:
            text += f"; on {count} process{'es' if count > 1 else ''} it does not"
        if self.own is not None:
            text += f"; {self.own[1]} launches {own} processes, on which it does{' not' if self.fails_on(own) else ''}"
        return text

    def hint(self, count: int, advice: str) -> str:
        """The advice added to a per-process rule's message for a recipe refused on `count` processes: the counts
        it divides on, then `advice` with {n} replaced by the count to use (the recipe's own, else the smallest)."""
        found = self.counts()
        if not found or count in found:
            return ""
        use = self.own[0] if self.own is not None and not self.fails_on(self.own[0]) else found[0]
        advice = advice.replace("{n}", str(use))
        return f" This recipe was written for several processes: {self.describe(count)}. {advice}."


def _phrase(rule: spec.Rule, values: Mapping[str, Any]) -> str:
    if rule.name == "generation_batch_divisible":
        return f"the generation batch divides num_generations={values.get('num_generations')}"
    if rule.name == "eval_generation_batch_divisible":
        which = "num_generations_eval" if values.get("num_generations_eval") else "num_generations"
        return f"the evaluation batch divides {which}={values.get(which)}"
    return f"rule {rule.name} holds"


def process_fit(config: Mapping[str, Any], recipe: Mapping[str, Any] | None = None) -> ProcessFit | None:
    """The per-process rules of a translated recipe (`config`, TextRL config data) with its values over the spec's
    defaults; None when the algorithm has none or a value is not a number the rules can count with (validation then
    names it). `recipe`: the recipe as written, for the process count it names itself."""
    from ..validation.config import config_class  # pydantic's models: only once a recipe is read

    algo = spec.BY_NAME.get(str(config.get("algo")))
    rules = tuple(rule for rule in algo.rules if rule.per_process) if algo is not None else ()
    if algo is None or not rules:
        return None
    fields = config_class(algo.name).model_fields
    values = {name: info.get_default(call_default_factory=True) for name, info in fields.items()}
    values = {name: value for name, value in values.items() if value is not PydanticUndefined} | dict(config)
    counted = {name for rule in rules for name in rule.fields} | {"gradient_accumulation_steps"}
    if any(isinstance(values.get(name), bool | float) for name in counted):
        return None
    fit = ProcessFit(values, rules, _own_count(recipe or {}))
    try:
        fit.fails_on(1)
    except (TypeError, KeyError, ValueError, ArithmeticError):  # a value of the wrong type: validation names it
        return None
    return fit


def _own_count(recipe: Mapping[str, Any]) -> tuple[int, str] | None:
    profile = recipe.get("accelerate_config")
    if isinstance(profile, str) and profile in ACCELERATE_PROFILES:
        return PROFILE_PROCESSES, f"the recipe's accelerate_config: {profile} (TRL's profile)"
    return None


def with_launch_hint(error: ConfigError, fit: ProcessFit | None, count: int, advice: str) -> ConfigError:
    """The same error, each problem of a per-process rule told the counts the recipe divides on and `advice` (with
    {n}, the count to use); as it was when no count fits, or when the rules hold on `count`."""
    if fit is None or not (failing := fit.fails_on(count)) or not (hint := fit.hint(count, advice)):
        return error
    fields = {rule.fields[0] for rule in failing}
    problems = [replace(p, message=p.message + hint) if p.field in fields else p for p in error.problems]
    return type(error)(problems, algo=error.algo)
