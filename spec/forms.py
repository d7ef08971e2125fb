"""Value forms TRL accepts besides the canonical one, as annotations the codegen writes by name.

TRL takes `report_to="none"` and `loss_type="apo_zero"` as well as lists, and wraps the single value itself; these
annotations accept both, store the list, and tell the JSON Schema (so editors accept both as well).
"""

from __future__ import annotations

import os
import re
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from .choices import DpoLossType, ReferenceCache, ReportTarget, ScaleRewards


class OneOrList:
    """Metadata for `Annotated[list[X], ONE_OR_LIST]`: a single X is accepted too and stored as [X]."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_before_validator_function(_as_list, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        array = handler(schema)
        return {"anyOf": [array["items"], array]} if "items" in array else array

    def __repr__(self) -> str:
        return "ONE_OR_LIST"


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class FromBool:
    """Metadata for `Annotated[Literal[...], FromBool(true=..., false=...)]`: TRL's older boolean spelling of a
    choice is accepted and stored as the choice TRL reads it as (scale_rewards: true is "group")."""

    def __init__(self, true: str, false: str) -> None:
        self.true, self.false = true, false

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        def choice(value: Any) -> Any:
            return (self.true if value else self.false) if isinstance(value, bool) else value

        return core_schema.no_info_before_validator_function(choice, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"anyOf": [handler(schema), {"type": "boolean"}]}

    def __repr__(self) -> str:
        return f"FromBool(true={self.true!r}, false={self.false!r})"


class ShellExpanded:
    """Metadata for `Annotated[str, SHELL_EXPANDED]`: a path as a shell reads it. `~` and `~user` become the home
    folder, `$VAR` and `${VAR}` the variable's value, so `output_dir: $RUNS/grpo` writes where the same words typed
    after `cd` would; without it a folder literally named `$RUNS` (or `~`) appears in the working directory. A
    variable that is not set, or empty, is an error: a shell would put an empty string there (`$RUNS/grpo` ->
    `/grpo`)."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_before_validator_function(expand_path, handler(source))

    def __repr__(self) -> str:
        return "SHELL_EXPANDED"


_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
"""A shell variable: $NAME or ${NAME}, NAME starting with a letter or _ ($0, $$ are not environment variables)."""


def expand_path(value: Any) -> Any:
    """`value` with `~` and environment variables expanded as a shell expands them; other values as they are."""
    if not isinstance(value, str) or ("$" not in value and not value.startswith("~")):
        return value
    unset = [a or b for a, b in _VARIABLE.findall(value) if not os.environ.get(a or b)]
    if unset:
        name = unset[0]
        state = "is empty" if name in os.environ else "is not set"
        raise ValueError(
            f"{value!r} uses the environment variable {name}, which {state}, so the path cannot be known (a shell "
            f"would drop it and write elsewhere). Fix: export {name}=... before the run, or write the path out"
        )
    expanded = os.path.expanduser(_VARIABLE.sub(lambda m: os.environ[m.group(1) or m.group(2)], value))
    if expanded.startswith("~"):
        raise ValueError(
            f"{value!r} starts with ~, but the home folder of {expanded.split('/')[0]!r} is not known here. Fix: write "
            "the path out"
        )
    return expanded


ONE_OR_LIST = OneOrList()
SHELL_EXPANDED = ShellExpanded()

ShellPath = Annotated[str, SHELL_EXPANDED]
"""A file or folder path: `~`, `$VAR` and `${VAR}` expanded as a shell would (an unset variable is an error)."""
ReportTargets = Annotated[list[ReportTarget], ONE_OR_LIST]
"""report_to: one tracker or a list of them (TRL's `report_to: none` included)."""
DpoLossTypes = Annotated[list[DpoLossType], ONE_OR_LIST]
"""DPO loss_type: one loss or a list of them (`loss_type: apo_zero` included)."""
ScaleRewardsForm = Annotated[ScaleRewards, FromBool(true="group", false="none")]
"""scale_rewards: group, batch or none; true and false as TRL reads them (group, none)."""
ReferenceCacheForm = Annotated[ReferenceCache, FromBool(true="on", false="off")]
"""reference_cache: auto, on or off; true and false (YAML's on/off) as on and off."""
