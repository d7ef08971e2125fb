"""Turning pydantic's validation errors into TextRL's: field, value seen, what is allowed, and the fix."""

from __future__ import annotations

from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from .. import spec
from ..errors import ConfigError, Problem, closest
from .annotations import describe, literal_values, strip_optional, union_members

_SHAPE_ERRORS = {"string_type", "list_type", "model_type", "dict_type", "int_type", "float_type", "bool_type"}


class RuleViolations(ValueError):
    """Raised inside validation by the spec's cross-field rules; carries finished problems."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("; ".join(map(str, problems)))


def _shown(value: Any) -> str:
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} ({type(value).__name__})"


def unknown_key(key: str, algo: spec.Algorithm) -> str:
    """Why `key` is not accepted by `algo`, and what to write instead."""
    renamed = spec.RENAMED_BY_KEY.get(key)
    if renamed and (not renamed.families or algo.family in renamed.families):
        return f"is not a TextRL option: {renamed.what_happened}. Fix: {renamed.replacement}."
    if key in algo.not_offered:
        return f"is not offered: {algo.not_offered[key]}."
    if key in spec.NOT_OFFERED and key in spec.trl_field_names(algo.trl_config):
        return f"is a field of {algo.trl_config} that TextRL does not offer: {spec.NOT_OFFERED[key]}."
    if key in algo.fixed:
        combine = ", or use algo='dpo' with loss_type=[...] to choose or combine losses" if key == "loss_type" else ""
        return f"is fixed to {algo.fixed[key]!r} by algo={algo.name!r}. Fix: remove {key}{combine}."
    elsewhere = spec.algorithms_with_option(key)
    if elsewhere:
        return (
            f"does not apply to algo={algo.name!r}; it is an option of {', '.join(elsewhere)}. "
            f"Fix: remove {key}, or choose one of those algorithms."
        )
    guess = closest(key, algo.option_names) or closest(key, spec.all_option_names())
    hint = f" Did you mean {guess!r}?" if guess else ""
    rename = f"rename it to {guess}" if guess else "check the spelling"
    return (
        f"unknown option for algo={algo.name!r}, and not a field of {algo.trl_config} in TRL "
        f"{spec.SNAPSHOT['trl']}.{hint} Fix: {rename}; a field that only a newer TRL has goes in extra={{...}}."
    )


def _models_in(tp: Any) -> list[type[BaseModel]]:
    """Section models reachable from an annotation (through Optional, unions and lists)."""
    found: list[type[BaseModel]] = []
    for member in union_members(strip_optional(tp)):
        if get_origin(member) is list:
            found += _models_in(get_args(member)[0])
        elif isinstance(member, type) and issubclass(member, BaseModel):
            found.append(member)
    return found


def _branch(current: Any, tag: str) -> Any:
    """The union member pydantic names `tag` in a loc (e.g. 'list[constrained-str]', 'ModelReward')."""
    for member in union_members(strip_optional(current)):
        if isinstance(member, type) and issubclass(member, BaseModel) and member.__name__ in tag:
            return member
        if get_origin(member) is list and tag.startswith("list["):
            return member
        if get_origin(member) is not list and tag.startswith(("str", "constrained-str")):
            return member
    return None


class _Place:
    """Where an error sits: the key path as the user wrote it, the section holding it, and its type."""

    def __init__(self, annotation: Any, loc: tuple[Any, ...]) -> None:
        self.path: list[Any] = [loc[0]]
        self.section: type[BaseModel] | None = None
        self.type: Any = annotation
        for part in loc[1:]:
            current = strip_optional(self.type)
            if isinstance(part, int):
                self.path.append(part)
                if get_origin(current) is list:
                    self.type = get_args(current)[0]
                continue
            owner = next((m for m in _models_in(current) if part in m.model_fields), None)
            if owner is not None and get_origin(current) is not list:
                self.section = owner
                self.path.append(part)
                self.type = owner.model_fields[part].annotation
                continue
            member = _branch(current, part)  # a union branch name, not a user key
            if member is not None:
                self.type = member
                if isinstance(member, type) and issubclass(member, BaseModel):
                    self.section = member

    @property
    def dotted(self) -> str:
        return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(self.path))

    def bounds(self) -> dict[str, float | int]:
        key = self.path[-1]
        if self.section is None or not isinstance(key, str) or key not in self.section.model_fields:
            return {}
        out: dict[str, float | int] = {}
        for meta in self.section.model_fields[key].metadata:
            for name in ("ge", "gt", "le", "lt", "min_length", "max_length"):
                if getattr(meta, name, None) is not None:
                    out[name] = getattr(meta, name)
        return out


def _best_branch(errors: list[dict[str, Any]], annotation: Any) -> list[dict[str, Any]]:
    """Of a union's errors, those of the branch the input was meant for (the one it got furthest into).

    pydantic names the union member in the second place of a location (`reward.ModelReward.model`); a second
    place that is a key of a section (`model.name`) is not a branch, and all such errors are kept together.
    """
    branches: dict[Any, list[dict[str, Any]]] = {}
    for err in errors:
        second = err["loc"][1] if len(err["loc"]) > 1 and isinstance(err["loc"][1], str) else None
        tag = second if second is not None and _branch(annotation, second) is not None else None
        branches.setdefault(tag, []).append(err)
    if len(branches) == 1:
        return errors
    matched = {
        tag: errs
        for tag, errs in branches.items()
        if not all(len(e["loc"]) <= 2 and e["type"] in _SHAPE_ERRORS for e in errs)
    }
    if not matched:
        return errors[:1]

    def fit(errs: list[dict[str, Any]]) -> tuple[int, int]:
        """Unknown keys that look like a typo of this branch's keys count for it; then fewer complaints win."""
        member = _branch(annotation, str(errs[0]["loc"][1]))
        keys = list(member.model_fields) if isinstance(member, type) and issubclass(member, BaseModel) else []
        typos = sum(1 for e in errs if e["type"] == "extra_forbidden" and closest(str(e["loc"][-1]), keys))
        return (-typos, len(errs))

    return min(matched.values(), key=fit)


def _fix_for(where: str, allowed: str, tp: Any) -> str:
    if literal_values(tp):
        return "Fix: use one of the allowed values."
    if len(allowed) > 70:
        return f"Fix: give {where} a value of that form."
    return f"Fix: set {where} to {allowed}."


def _problem(err: dict[str, Any], option: spec.Option) -> Problem:
    loc = tuple(err["loc"])
    ctx = err.get("ctx") or {}
    place = _Place(option.annotation, loc)
    where = place.dotted
    if err["type"] == "value_error" and "error" in ctx:
        return Problem(where, str(ctx["error"]))
    if err["type"] == "extra_forbidden":
        holder = _Place(option.annotation, loc[:-1])
        models = _models_in(holder.type)
        names = list(models[0].model_fields) if len(models) == 1 else []
        key = str(loc[-1]) if str(loc[-1]).strip() else repr(loc[-1])
        guess = closest(key, names)
        hint = f" Did you mean {guess!r}?" if guess else ""
        allowed = f" Allowed keys: {', '.join(names)}." if names else ""
        return Problem(f"{holder.dotted}.{key}", f"unknown key.{hint}{allowed} Fix: remove or rename it.")
    if err["type"] == "missing":
        if len(place.path) == 1:
            return Problem(
                where,
                f"is required; expected {describe(option.annotation, option.bounds)}. "
                f"Fix: set {where}, e.g. {where}={option.example!r}.",
            )
        return Problem(where, "is required in this section. Fix: add it.")
    if err["type"] == "finite_number":
        return Problem(
            where,
            f"got {err.get('input')}; allowed: a finite number (NaN and infinity are refused: a NaN weight silently "
            f"drops what it weighs, an infinite value overflows in TRL). Fix: set {where} to a finite number.",
        )
    bounds = option.bounds if len(place.path) == 1 else place.bounds()
    allowed = describe(place.type, bounds)
    hint = f" ({option.hint})" if option.hint and len(place.path) == 1 else ""
    return Problem(
        where, f"got {_shown(err.get('input'))}; allowed: {allowed}{hint}. {_fix_for(where, allowed, place.type)}"
    )


def translate(exc: ValidationError, algo: spec.Algorithm) -> ConfigError:
    """One Problem per offending option (or nested key), each a full sentence with the fix."""
    by_field: dict[str, list[dict[str, Any]]] = {}
    problems: list[Problem] = []
    for details in exc.errors(include_url=False):
        err: dict[str, Any] = dict(details)
        error = (err.get("ctx") or {}).get("error")
        if isinstance(error, RuleViolations):
            problems.extend(error.problems)
        elif not err["loc"]:
            problems.append(Problem("config", f"{err['msg']}. Fix: pass options as keyword arguments."))
        else:
            by_field.setdefault(str(err["loc"][0]), []).append(err)
    for name, errs in by_field.items():
        option = next((o for o in algo.options if o.name == name), None)
        if option is None:
            problems.append(Problem(name if name.strip() else repr(name), unknown_key(name, algo)))
            continue
        seen = set()
        for err in _best_branch(errs, option.annotation):
            problem = _problem(err, option)
            if problem.field not in seen:
                seen.add(problem.field)
                problems.append(problem)
    return ConfigError(problems, algo=algo.name)
