"""ScriptArguments and dataset-mixture keys of a recipe as TextRL's dataset and eval_dataset sections."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import spec
from .recipe import Recipe


def _source(recipe: Recipe, name: str) -> dict[str, Any]:
    local = recipe.local(name)
    return {"path": local} if local is not None else {"hub": name}


def translate_data(recipe: Recipe, algo: spec.Algorithm) -> None:
    evaluates = recipe.left.get("eval_strategy", "no") not in ("no", None, False)
    if "dataset_id_or_path" in recipe.left and "dataset_name" not in recipe.left:
        recipe.rename("dataset_id_or_path", "dataset_name")
        recipe.note("dataset_id_or_path", "dataset_name (the name some recipe collections' scripts use)")
    if "dataset_mixer" in recipe.left:
        _old_mixer(recipe, evaluates=evaluates)
        return
    name, subset = recipe.take("dataset_name"), recipe.take("dataset_config")
    train_split, test_split = recipe.take("dataset_train_split", "train"), recipe.take("dataset_test_split", "test")
    streaming_key = "dataset_streaming" if recipe.left.get("dataset_streaming") else "streaming"
    streaming = recipe.take("dataset_streaming", False) | bool(recipe.take("streaming", False))
    trl_mixture, mixture = recipe.take("datasets"), recipe.take("dataset_mixture")
    held_out = recipe.take("test_split_size")
    if streaming:
        recipe.refuse(
            streaming_key,
            "streaming is not offered: TextRL checks and counts the rows before training. Fix: drop it; for a "
            "large dataset, slice the split (dataset_train_split: train[:100000]).",
        )  # fmt: skip
    if trl_mixture and mixture:
        recipe.refuse("dataset_mixture", "and datasets both describe a mixture. Fix: keep one.")
        return
    if trl_mixture or mixture:
        if name is not None:
            recipe.note("dataset_name", "ignored: the mixture is used, as TRL's scripts do when both are given")
        section = _trl_mixture(recipe, trl_mixture, held_out) if trl_mixture else _collection_mixture(recipe, mixture)
        if not section:
            return
        recipe.put(("dataset",), section, "datasets" if trl_mixture else "dataset_mixture")
        if "test_split_size" in section and not evaluates:
            recipe.note("test_split_size", "rows held out of training; not evaluated (eval_strategy is no), as TRL")
        return
    if held_out is not None:
        recipe.refuse("test_split_size", "belongs to a datasets: mixture, and the recipe has none. Fix: drop it.")
    if name is None:
        recipe.refuse(
            "dataset_name", "is missing (nor is there a datasets: mixture); TRL's scripts need one. Fix: add "
            "dataset_name: <hub id or local file>.",
        )  # fmt: skip
        return
    source = _source(recipe, str(name))
    if "path" in source:
        recipe.note("dataset_name", f"dataset.path {source['path']}: a local file, read by TextRL's checked reader")
    if subset is not None:
        source["subset"] = subset
    recipe.put(("dataset",), {**source, "split": train_split}, "dataset_name")
    if evaluates:
        recipe.put(("eval_dataset",), {**source, "split": test_split}, "dataset_name")
        recipe.note("dataset_test_split", f"eval_dataset: split {test_split} of {name}")
    elif recipe.line("dataset_test_split"):
        recipe.note("dataset_test_split", "not used: eval_strategy is no, so TRL's scripts evaluate on nothing")


def _old_mixer(recipe: Recipe, *, evaluates: bool) -> None:
    """The alignment-handbook's first form: `dataset_mixer: {id: fraction}` and `dataset_splits: [train..., test...]`
    (a split whose name holds train is trained on, one whose name holds test is evaluated on)."""
    mixer, splits = recipe.take("dataset_mixer"), recipe.take("dataset_splits", ["train", "test"])
    if not isinstance(mixer, Mapping) or not isinstance(splits, list):
        recipe.refuse("dataset_mixer", "takes {dataset id: fraction} and dataset_splits a list. Fix: write them so.")
        return
    train = [s for s in splits if "train" in str(s)]
    test = [s for s in splits if "test" in str(s)]
    parts = [{**_source(recipe, str(n)), "split": s, "weight": w} for s in train for n, w in mixer.items()]
    for part in parts:
        if part["weight"] == 1:
            del part["weight"]
    recipe.put(("dataset",), {"mixture": parts, "seed": 42}, "dataset_mixer")
    recipe.note(
        "dataset_mixer",
        f"dataset.mixture of {len(parts)} datasets (splits {', '.join(map(str, train))}); a "
        "fraction below 1 keeps a random share of the rows, where the handbook kept the first rows",
    )
    if evaluates and test:
        held = [{**_source(recipe, str(n)), "split": s} for s in test for n in mixer]
        recipe.put(("eval_dataset",), {"mixture": held}, "dataset_splits")
        recipe.note("dataset_splits", f"eval_dataset: splits {', '.join(map(str, test))}")


def _parts(recipe: Recipe, parts: Any, key: str, source: str, renamed: dict[str, str]) -> list[dict[str, Any]]:
    """A recipe's list of datasets as `dataset.mixture` parts: `source` names the dataset, `renamed` maps the
    other keys a part may have to TextRL's."""
    allowed = ", ".join([source, *renamed])
    if not isinstance(parts, list):
        recipe.refuse(key, f"takes a list of mappings {{{allowed}}}. Fix: write one mapping per dataset.")
        return []
    found = []
    for i, part in enumerate(parts):
        at: tuple[str | int, ...] = (*key.split("."), i)
        if not isinstance(part, Mapping) or source not in part:
            recipe.refuse(
                f"{key}[{i}]", f"needs {source}. Fix: write {{{source}: <hub id or file>, split: ...}}.", at=at
            )
            continue
        strange = sorted(map(str, set(part) - {source, *renamed}))
        if strange:
            recipe.refuse(f"{key}[{i}]", f"has {', '.join(strange)}; allowed: {allowed}. Fix: drop them.", at=at)
            continue
        found.append(_source(recipe, str(part[source])) | {renamed[k]: v for k, v in part.items()
                                                            if k in renamed and v is not None})  # fmt: skip
    return found


def _trl_mixture(recipe: Recipe, parts: Any, held_out: Any) -> dict[str, Any]:
    """TRL's DatasetMixtureConfig: `datasets: [{path, name, data_dir, data_files, split, columns, fraction}]`."""
    renamed = {"name": "subset", "data_dir": "data_dir", "data_files": "data_files", "split": "split",
               "columns": "columns", "fraction": "fraction"}  # fmt: skip
    section: dict[str, Any] = {"mixture": _parts(recipe, parts, "datasets", "path", renamed)}
    if held_out is not None:
        section["test_split_size"] = held_out
    recipe.note("datasets", f"dataset.mixture of {len(section['mixture'])} datasets, TRL's sizes by fraction")
    return section


def _collection_mixture(recipe: Recipe, mixture: Any) -> dict[str, Any] | None:
    """The alignment-handbook and open-r1 form: `dataset_mixture: {datasets: [{id, config, split, columns,
    weight}], seed, test_split_size}`."""
    if not isinstance(mixture, Mapping):
        recipe.refuse("dataset_mixture", "takes {datasets: [{id, config, split, columns, weight}], seed, "
                      "test_split_size}. Fix: write it in that form.")  # fmt: skip
        return None
    strange = sorted(map(str, set(mixture) - {"datasets", "seed", "test_split_size"}))
    if strange:
        recipe.refuse("dataset_mixture", f"has {', '.join(strange)}; allowed: datasets, seed, test_split_size. "
                      "Fix: drop them.")  # fmt: skip
    renamed = {"config": "subset", "split": "split", "columns": "columns", "weight": "weight"}
    parts = _parts(recipe, mixture.get("datasets"), "dataset_mixture.datasets", "id", renamed)
    section: dict[str, Any] = {"mixture": parts, "seed": mixture.get("seed", 0)}
    if mixture.get("test_split_size") is not None:
        section["test_split_size"] = mixture["test_split_size"]
    recipe.note("dataset_mixture", f"dataset.mixture of {len(parts)} datasets, each kept in the share its weight says")
    return section
