"""What each template is rendered with: one context per generated artifact (config class, TRL builder, CLI
flags, option and section docs), and the view of the spec the codegen renders."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel

from textrl import spec
from textrl.spec import choices, forms, trl_releases
from textrl.validation.annotations import describe, source, strip_optional, union_members

from .python_source import WIDTH, TypeNames, docstring, field_source, import_line, py_literal
from .schema import class_description, option_description


def config_module(algo: spec.Algorithm, names: TypeNames) -> dict[str, Any]:
    used: set[str] = set()
    lookup = names.name_of(used)
    fields = []
    for option in algo.options:
        line = field_source(option, source(option.annotation, lookup))
        fields.append({"line": line, "doc": docstring(option_description(algo, option))})
    algo_values = (algo.name, *algo.aliases)
    choice_imports = sorted(n for n in used if hasattr(choices, n))
    form_imports = sorted(n for n in used if hasattr(forms, n) and not hasattr(choices, n))
    section_imports = sorted(n for n in used if not hasattr(choices, n) and not hasattr(forms, n))
    uses_field = any("Field(" in f["line"] for f in fields)
    return {
        "algo": algo,
        "class_doc": docstring(class_description(algo)),
        "algo_literal": "Literal[" + ", ".join(py_literal(v) for v in algo_values) + "]",
        "fields": fields,
        "choice_imports": choice_imports,
        "imports": [
            line
            for module, names in (
                ("textrl.generated.configs.choices", choice_imports),
                ("textrl.spec.forms", form_imports),
                ("textrl.spec.sections", section_imports),
                ("textrl.validation.generated_support", ["TextRLConfig"]),
            )
            if names
            for line in [import_line(module, names)]
        ],
        "section_imports": section_imports,
        "needs_any": any("Any" in f["line"] for f in fields),
        "uses_field": uses_field,
    }


def trl_builder_module(algo: spec.Algorithm) -> dict[str, Any]:
    module, _, cls = algo.trl_config.rpartition(".")
    values = []
    converters = set()
    for option in algo.options:
        if option.trl_name is None or option.mirrored:
            continue
        expr = f"cfg.{option.name}"
        if option.trl_convert:
            converters.add(option.trl_convert)
            expr = f"{option.trl_convert}({expr})"
        values.append((option.trl_name, expr))
    return {
        "algo": algo,
        "trl_module": module,
        "trl_class": cls,
        "values": values,
        "fixed": [(k, py_literal(v)) for k, v in algo.fixed.items()],
        "mirrored": [o.name for o in algo.options if o.mirrored],
        "build_imports": sorted({"finish", *converters}),
    }


def _algos_source(algos: tuple[str, ...], everyone: tuple[str, ...]) -> str:
    if algos == everyone:
        return "ALL"
    text = py_literal(algos)
    if len(text) + 14 <= WIDTH:
        return text
    return "(\n" + "".join(f"            {py_literal(a)},\n" for a in algos) + "        )"


def flag_rows(algos: Sequence[spec.Algorithm]) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for algo in algos:
        for option in algo.options:
            if not option.cli:
                continue
            row = rows.setdefault(
                option.name, {"dest": option.name, "variants": {}, "algos": [], "group": option.group}
            )
            row["algos"].append(algo.name)
            variant = (option_description(algo, option), _metavar(option.annotation))
            row["variants"].setdefault(variant, []).append(algo.name)
    everyone = tuple(a.name for a in algos)
    out = []
    for row in rows.values():
        variants = row["variants"]
        metavars = {m for _, m in variants}
        if len(variants) == 1:
            help_text = next(iter(variants))[0]
        else:
            help_text = " | ".join(f"{', '.join(algos)}: {desc}" for (desc, _), algos in variants.items())
        metavar = next(iter(metavars)) if len(metavars) == 1 else "VALUE"
        out.append(
            {
                "dest": row["dest"],
                "flag": "--" + row["dest"].replace("_", "-"),
                "metavar": metavar,
                "algos": tuple(row["algos"]),
                "algos_source": _algos_source(tuple(row["algos"]), everyone),
                "algos_text": "all" if tuple(row["algos"]) == everyone else ", ".join(row["algos"]),
                "help": help_text,
                "group": row["group"],
            }
        )
    return out


def _metavar(tp: Any) -> str:
    base = strip_optional(tp)
    if get_origin(base) is Annotated:  # a value form (forms.ShellPath, ...): named by the type it holds
        base = get_args(base)[0]
    if base is bool:
        return ""
    if get_origin(base) is Literal:
        return "{" + ",".join(str(v) for v in get_args(base)) + "}"
    if get_origin(base) is list:
        return "LIST"
    return {int: "INT", float: "FLOAT", str: "TEXT"}.get(base, "VALUE")


def doc_rows(algo: spec.Algorithm) -> list[dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for option in algo.options:
        default = "required" if option.required else f"`{json.dumps(option.default)}`"
        groups.setdefault(option.group, []).append(
            {
                "name": option.name,
                "allowed": describe(option.annotation, option.bounds).replace("|", "\\|"),
                "default": default,
                "trl": f"`{option.trl_name}`" if option.trl_name else "TextRL only",
                "description": _cell(option_description(algo, option)),
            }
        )
    return [{"group": g, "rows": rows} for g, rows in groups.items()]


def section_docs(algos: Sequence[spec.Algorithm]) -> list[dict[str, Any]]:
    """Each section option (model, dataset, reward, ...) with the keys of its section models."""
    everyone = [a.name for a in algos]
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for algo in algos:
        for option in algo.options:
            models = _union_models(option.annotation)
            models += [n for m in models for f in m.model_fields.values() for n in _union_models(f.annotation)]
            if option.trl_name is not None or not models or option.name in seen:
                continue
            seen.add(option.name)
            users = [a.name for a in algos if option.name in a.option_names]
            out.append(
                {
                    "key": option.name,
                    "algos": "" if users == everyone else ", ".join(users),
                    "doc": _cell(option.description),
                    "models": [_model_doc(m) for m in models],
                }
            )
    return out


def _cell(text: str) -> str:
    """Text for one Markdown table cell: a docstring's line breaks become spaces, pipes are escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _union_models(tp: Any) -> list[type[BaseModel]]:
    return [m for m in union_members(strip_optional(tp)) if isinstance(m, type) and issubclass(m, BaseModel)]


def _model_doc(model: type[BaseModel]) -> dict[str, Any]:
    fields = []
    for name, info in model.model_fields.items():
        bounds = {k: getattr(m, k) for m in info.metadata for k in ("ge", "gt", "le", "lt", "min_length")
                  if getattr(m, k, None) is not None}  # fmt: skip
        default = "required" if info.is_required() else f"`{json.dumps(info.default)}`"
        fields.append({"name": name, "allowed": describe(info.annotation, bounds).replace("|", "\\|"),
                       "default": default, "description": _cell(info.description or "")})  # fmt: skip
    return {"name": model.__name__, "doc": (model.__doc__ or "").strip(), "fields": fields}


def trl_default_notes(algo: spec.Algorithm, view: SpecView) -> list[dict[str, str]]:
    notes = []
    for (who, name), difference in view.different_from_trl.items():
        if who in ("*", algo.name) and name in algo.option_names:
            notes.append({"name": name, "why": difference.why, "trl": json.dumps(difference.trl_default)})
    return notes


@dataclass(frozen=True)
class SpecView:
    """The parts of the spec the codegen renders (the whole spec, or a small fixture in golden tests)."""

    algorithms: Sequence[spec.Algorithm]
    removed: Sequence[spec.Removed] = ()
    renamed: Sequence[spec.Renamed] = ()
    different_from_trl: Mapping[tuple[str, str], spec.TrlDifference] = field(default_factory=dict)


FULL_SPEC = SpecView(spec.ALGORITHMS, spec.REMOVED, spec.RENAMED, spec.DIFFERENT_FROM_TRL)


def release_docs(algos: Sequence[spec.Algorithm]) -> dict[str, Any]:
    """The supported TRL releases and, per TRL field, what the older ones lack and how its default changed."""
    rows: dict[str, dict[str, Any]] = {}
    for algo in algos:
        for option in algo.options:
            note = trl_releases.availability(algo.trl_config, option.trl_name) if option.trl_name else None
            if note:
                row = rows.setdefault(option.name, {"name": option.name, "note": note, "algos": []})
                row["algos"].append(algo.name)
    everyone = [a.name for a in algos]
    for row in rows.values():
        row["algos"] = "all" if row["algos"] == everyone else ", ".join(row["algos"])
        row["effect"] = _cell(trl_releases.DEFAULT_CHANGES.get(row["name"], ""))
    return {
        "releases": [{"release": r, "pin": trl_releases.CI_PINS[r]} for r in trl_releases.RELEASES],
        "newest": trl_releases.NEWEST,
        "rows": list(rows.values()),
        "renamed": [
            {"release": r, "new": n, "old": o}
            for r, names in trl_releases.RENAMED_FIELDS.items()
            for n, o in names.items()
        ],
        "values": [
            {"option": o, "value": v, "since": s}
            for o, values in trl_releases.VALUES_SINCE.items()
            for v, s in values.items()
        ],
    }


VIEW_GROUPS: list[tuple[str, str | None, tuple[spec.Family, ...], str]] = [
    ("CommonOptions", None, tuple(spec.Family), "every algorithm"),
    ("OnlineOptions", "CommonOptions", (spec.Family.ONLINE,), "the online algorithms (GRPO, RLOO, REINFORCE++)"),
    ("PreferenceOptions", "CommonOptions", (spec.Family.PAIRWISE, spec.Family.BINARY),
     "the offline preference algorithms, pairwise and binary (a reference model, the reference cache)"),
    ("PairwiseOptions", "PreferenceOptions", (spec.Family.PAIRWISE,), "the pairwise preference algorithms (DPO's)"),
    ("BinaryOptions", "PreferenceOptions", (spec.Family.BINARY,), "the binary preference algorithms (KTO)"),
    ("RewardModelOptions", "CommonOptions", (spec.Family.REWARD_MODEL,), "reward model training"),
    ("SupervisedOptions", "CommonOptions", (spec.Family.SUPERVISED,), "supervised fine-tuning (SFT)"),
]  # fmt: skip
"""The typed view's protocols: name, parent, the families whose every algorithm has each option, and whom it covers."""


def view_module(algos: Sequence[spec.Algorithm], names: TypeNames) -> dict[str, Any]:
    """The typed view of a config for the runtime (generated/view.py): per group of families, a Protocol with each
    option that every algorithm of the group has, typed as the generated classes type it (a union where they
    differ), less what its parent declares."""
    used: set[str] = set()
    lookup = names.name_of(used)
    declared: dict[str, set[str]] = {}
    protocols: list[dict[str, Any]] = []
    for name, parent, families, covers in VIEW_GROUPS:
        members = [a for a in algos if a.family in families]
        if not members:
            continue
        inherited = declared.get(parent, set()) if parent else set()
        common = set.intersection(*(set(a.option_names) for a in members)) - inherited
        fields = []
        for option in members[0].options:
            if option.name not in common:
                continue
            kinds = dict.fromkeys(
                source(next(o for o in a.options if o.name == option.name).annotation, lookup) for a in members
            )
            fields.append({"name": option.name, "type": union_source(kinds), "doc": docstring(option.description)})
        declared[name] = inherited | common
        protocols.append({"name": name, "parent": parent or "Protocol", "covers": covers, "fields": fields})
    section_names = sorted(n for n in used if not hasattr(choices, n) and not hasattr(forms, n))
    imports = [
        import_line(module, names)
        for module, names in (
            ("textrl.generated.configs.choices", sorted(n for n in used if hasattr(choices, n))),
            ("textrl.spec.forms", sorted(n for n in used if hasattr(forms, n) and not hasattr(choices, n))),
            ("textrl.spec.model", ["Algorithm"]),
            ("textrl.spec.sections", section_names),
        )
        if names
    ]
    types = [f["type"] for p in protocols for f in p["fields"]]
    typing_names = [n for n in ("Any", "Literal") if any(re.search(rf"\b{n}\b", t) for t in types)]
    most_specific = {f: name for name, _, families, _ in VIEW_GROUPS if len(families) == 1 for f in families}
    checks = [{"algo": a.name, "cls": a.class_name, "protocol": most_specific[a.family]} for a in algos]
    return {"protocols": protocols, "imports": imports, "typing_names": ["TYPE_CHECKING", *typing_names, "Protocol"],
            "checks": sorted(checks, key=lambda c: c["cls"])}  # fmt: skip


def union_source(annotations: Iterable[str]) -> str:
    """One annotation for several (`bool | None` and `bool` -> `bool | None`): their members in order of first
    appearance, split at the top level only, None last."""
    members: dict[str, None] = {}
    for text in annotations:
        depth, start = 0, 0
        for i, ch in enumerate(text):
            depth += 1 if ch in "[(" else -1 if ch in "])" else 0
            if depth == 0 and text.startswith(" | ", i):
                members[text[start:i]] = None
                start = i + 3
        members[text[start:]] = None
    ordered = [m for m in members if m != "None"] + (["None"] if "None" in members else [])
    return " | ".join(ordered)
