"""Recipes written for TRL's own CLI (`trl dpo --config recipe.yaml`), as TextRL configs.

A TRL recipe is one flat mapping: the fields of the trainer's config (DPOConfig, GRPOConfig, ...), of ModelConfig
(`model_name_or_path`, `dtype`, `use_peft`, `lora_*`, `load_in_4bit`, ...), of ScriptArguments (`dataset_name`,
splits) and DatasetMixtureConfig (`datasets:`), the GRPO and RLOO scripts' `reward_funcs` and
`reward_model_name_or_path`, and an `env:` block. Recipe collections built on TRL add `dataset_mixture:` and keys
that TRL or transformers have since renamed or removed.

`translate` sorts every key: a TRL config field stays an option under its own name; the rest become TextRL's
sections (model, dataset, eval_dataset, reward, env), each translation with a note naming the recipe's line. A key
whose meaning cannot be kept is refused with what to do instead, never dropped in silence. Imports no torch.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import spec
from .errors import ConfigError, Problem
from .validation_errors import closest

TRAINERS = {"grpo": "grpo", "rloo": "rloo", "dpo": "dpo", "kto": "kto", "reward": "reward_model"}
"""TRL's CLI commands and the TextRL algorithm each runs."""

MODEL_KEYS = (
    "model_name_or_path", "model_revision", "dtype", "torch_dtype", "attn_implementation", "use_peft", "lora_r",
    "lora_alpha", "lora_dropout", "lora_target_modules", "lora_target_parameters", "lora_modules_to_save",
    "lora_task_type", "use_rslora", "use_dora", "load_in_8bit", "load_in_4bit", "bnb_4bit_quant_type",
    "use_bnb_nested_quant", "bnb_4bit_quant_storage",
)  # fmt: skip
"""ModelConfig's fields (and its old torch_dtype), which become the model section."""

DATA_KEYS = (
    "dataset_name", "dataset_config", "dataset_train_split", "dataset_test_split", "dataset_streaming", "datasets",
    "streaming", "test_split_size", "dataset_mixture",
)  # fmt: skip
"""ScriptArguments' and DatasetMixtureConfig's dataset keys, and the recipe collections' dataset_mixture."""

TRL_REWARDS = {
    "accuracy_reward": "trl.rewards:accuracy_reward",
    "reasoning_accuracy_reward": "trl.rewards:reasoning_accuracy_reward",
    "think_format_reward": "trl.rewards:think_format_reward",
    "get_soft_overlong_punishment": "textrl.trl_rewards:soft_overlong_punishment",
}
"""The reward names of TRL's GRPO and RLOO scripts, as references TextRL resolves."""

OPEN_R1_REWARDS = {
    "accuracy": "accuracy_reward", "format": "format_reward", "reasoning_steps": "reasoning_steps_reward",
    "length": "len_reward", "tag_count": "tag_count_reward",
}  # fmt: skip
"""open-r1's reward names that are plain functions of open_r1.rewards (its others are built from script settings)."""

RENAMED = {r.old: (r.new_name, r.what_happened) for r in spec.RENAMED if r.new_name} | {
    "hub_model_revision": ("hub_revision", "the recipe collections' name for the branch pushed to"),
}
"""Keys recipes still carry whose meaning a field of today's TRL keeps under another name: the spec's one-to-one
renames, and the recipe collections' own name for one."""

DROPPED = {
    "overwrite_output_dir": "transformers 5 removed it; textrl-train refuses a non-empty output_dir unless you pass "
    "--overwrite (start over) or --resume (continue)",
    "benchmarks": "the recipe collection's evaluation jobs after a push; they do not change training",
    "callbacks": "the recipe collection's push-to-hub callbacks; they do not change training",
    "ignore_bias_buffers": "a work-around of TRL's DPO script for DDP and boolean buffers, off",
}
"""Keys with no effect on the training run, dropped with a note (ignore_bias_buffers only when false)."""

WANDB_ENV = {"wandb_entity": "WANDB_ENTITY", "wandb_project": "WANDB_PROJECT", "wandb_run_group": "WANDB_RUN_GROUP"}
"""The recipe collections set these environment variables from their own keys."""

_CODE_REWARDS = (
    "open-r1's setting of its own code rewards. Fix: drop it, and configure the reward function you point "
    "reward_funcs at"
)

CANNOT_KEEP = {
    "system_prompt": "the recipe collection's script adds it to every prompt as a system message; TRL's trainers "
    "do not. Fix: add the system message to the dataset's prompts, then drop the key",
    "chat_template": "the recipe collection's script sets it on the tokenizer; TextRL uses the model folder's "
    "template. Fix: save the tokenizer with that template beside the model (tokenizer.chat_template = ...; "
    "save_pretrained), then drop the key",
    "dataset_prompt_column": "the recipe collection's script builds prompts from this column. Fix: rename the "
    "column to prompt in the data, then drop the key",
    "dataset_mixture_seed": "not read by TRL. Fix: write seed inside dataset_mixture",
    "code_eval_scoring_mode": _CODE_REWARDS,
    "code_eval_test_batch_size": _CODE_REWARDS,
    "code_language": _CODE_REWARDS,
    "vllm_device": "TRL 0.16 removed it: vLLM no longer runs on a GPU of its own inside the trainer. Fix: drop it, "
    "and set vllm_mode: server (with trl vllm-serve on that GPU) or vllm_mode: colocate",
}
"""Keys whose meaning TextRL cannot keep, each refused with its fix: recipe collections' own keys that change what
is trained, and TRL keys removed without a successor."""

ACCELERATE_PROFILES: dict[str, dict[str, Any]] = {
    "zero1": {"strategy": "deepspeed", "zero_stage": 1},
    "zero2": {"strategy": "deepspeed", "zero_stage": 2},
    "zero3": {"strategy": "deepspeed", "zero_stage": 3},
    "fsdp1": {"strategy": "fsdp", "fsdp_version": 1},
    "fsdp2": {"strategy": "fsdp", "fsdp_version": 2},
    "multi_gpu": {"strategy": "ddp"},
}
"""The accelerate profiles TRL's CLI ships (`accelerate_config: zero2`), as the distributed section."""


@dataclass(frozen=True)
class Note:
    """One key of the recipe and what became of it."""

    key: str
    line: int | None
    text: str

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.key}: {self.text}"


@dataclass
class Translation:
    """A recipe as TextRL config data, with a note per translation and a problem per key that needs a hand."""

    config: dict[str, Any]
    notes: list[Note] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    lines: dict[tuple[str | int, ...], int] = field(default_factory=dict)

    def located(self, path: Path | str) -> list[Problem]:
        """The problems, each where `path:line` (its `where` is `line N`, or empty for a key the recipe lacks)."""
        return [replace(p, where=f"{path}:{p.where.removeprefix('line ')}" if p.where else str(path))
                for p in self.problems]  # fmt: skip


class _Recipe:
    """The state of one translation: what is left of the recipe, what has been written, where each key was."""

    def __init__(
        self, data: Mapping[str, Any], trainer: str, lines: Mapping[tuple[str | int, ...], int], base_dir: Path,
        out_dir: Path,
    ) -> None:  # fmt: skip
        self.left = dict(data)
        self.trainer = trainer
        self.lines = lines
        self.base_dir, self.out_dir = base_dir, out_dir
        self.out = Translation(config={})
        self.model_name: Any = None

    def line(self, key: str | tuple[str | int, ...]) -> int | None:
        return self.lines.get((key,) if isinstance(key, str) else key)

    def take(self, key: str, default: Any = None) -> Any:
        return self.left.pop(key, default)

    def note(self, key: str, text: str) -> None:
        self.out.notes.append(Note(key, self.line(key), text))

    def refuse(self, key: str, text: str, *, unknown: bool = False, at: tuple[str | int, ...] | None = None) -> None:
        line = self.line(at or key)
        self.out.problems.append(Problem(key, text, where=f"line {line}" if line else ""))
        if unknown:
            self.out.unknown.append(key)

    def rename(self, old: str, new: str) -> None:
        """Read the recipe's `old` key as `new` from here on, at the same line."""
        self.left[new] = self.left.pop(old)
        if (old,) in self.lines:
            self.lines = {**self.lines, (new,): self.lines[(old,)]}

    def put(self, path: tuple[str, ...], value: Any, source: str) -> None:
        """Write a value at a TextRL path (e.g. ("model", "name")), remembering the recipe line it came from."""
        node = self.out.config
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
        line = self.line(source)
        if line is not None:
            for size in range(1, len(path) + 1):
                self.out.lines.setdefault(path[:size], line)

    def local(self, value: str) -> str | None:
        """A recipe's relative path as the TextRL config should write it, when the file or folder exists here
        (TRL resolves it from the working directory; TextRL from the config's folder)."""
        for root in (self.base_dir, Path.cwd()):
            candidate = Path(value) if Path(value).is_absolute() else root / value
            if candidate.exists():
                return value if Path(value).is_absolute() else os.path.relpath(candidate, self.out_dir)
        return None


def translate(
    data: Mapping[str, Any],
    trainer: str,
    *,
    lines: Mapping[tuple[str | int, ...], int] | None = None,
    base_dir: Path | None = None,
    out_dir: Path | None = None,
) -> Translation:
    """A TRL recipe (parsed YAML) for `trl <trainer>` as TextRL config data.

    `lines` maps the recipe's keys to their line numbers (`yaml_io.key_lines`); `base_dir` is the recipe's folder,
    where local models and data are looked for; `out_dir` is the folder the TextRL config will be read from.
    """
    if trainer not in TRAINERS:
        raise ConfigError(
            [Problem("--trl", f"got {trainer!r}; allowed: {', '.join(TRAINERS)}. Fix: name the TRL command.")]
        )
    base = base_dir or Path.cwd()
    recipe = _Recipe(data, trainer, lines or {}, base, out_dir or base)
    algo = _algorithm(recipe)
    recipe.put(("algo",), algo.name, "algo")
    _env(recipe)
    _model(recipe, algo)
    _data(recipe, algo)
    if algo.family is spec.Family.ONLINE:
        _reward(recipe)
    _renamed(recipe, algo)
    _rest(recipe, algo)
    if "output_dir" not in recipe.out.config:
        recipe.put(("output_dir",), "trainer_output", "output_dir")
        recipe.note("output_dir", "not set: trainer_output, transformers' default")
    recipe.out.notes.sort(key=lambda note: note.line or 0)
    return recipe.out


def _algorithm(recipe: _Recipe) -> spec.Algorithm:
    algo = spec.BY_NAME[TRAINERS[recipe.trainer]]
    written = recipe.take("algo")
    if written is None:
        return algo
    found = spec.find_algorithm(str(written))
    trl_trainer = algo.trl_trainer
    if not isinstance(found, spec.Algorithm) or found.trl_trainer != trl_trainer:
        recipe.refuse(
            "algo",
            f"says {written!r}, which is not an algorithm of TRL's {trl_trainer} (trl {recipe.trainer}). Fix: drop "
            f"algo, or run the recipe with the --trl command it was written for.",
        )
        return algo
    return found


def _env(recipe: _Recipe) -> None:
    env = recipe.take("env")
    if env is None:
        return
    if not isinstance(env, Mapping):
        recipe.refuse("env", f"got {type(env).__name__}; TRL's CLI takes a mapping. Fix: write NAME: value lines.")
        return
    recipe.put(("env",), dict(env), "env")
    recipe.note("env", f"{', '.join(map(str, env))} set before the run starts, as TRL's CLI does")


# --- model ---------------------------------------------------------------------------------------------------------


def _model(recipe: _Recipe, algo: spec.Algorithm) -> None:
    name = recipe.model_name = recipe.take("model_name_or_path")
    if name is None:
        recipe.refuse(
            "model_name_or_path", "is missing; TRL's CLI needs it too. Fix: add model_name_or_path: <hub id or folder>."
        )
    else:
        local = recipe.local(str(name))
        recipe.put(("model", "name"), local if local is not None else name, "model_name_or_path")
        if local is not None and local != name:
            recipe.note(
                "model_name_or_path", f"the local folder {name}, written as {local} from the new config's folder"
            )
    revision = recipe.take("model_revision")
    if revision is not None:
        recipe.put(("model", "revision"), revision, "model_revision")
    dtype, old = recipe.take("dtype"), recipe.take("torch_dtype")
    if dtype is not None and old is not None and dtype != old:
        recipe.refuse("torch_dtype", f"is {old!r} and dtype is {dtype!r}. Fix: keep one (dtype, TRL's name now).")
    chosen = dtype if dtype is not None else old
    source = "dtype" if dtype is not None else "torch_dtype"
    if chosen is None:
        recipe.put(("model", "torch_dtype"), "float32", "model_name_or_path")
        recipe.note(
            "dtype", "not set: float32, the default of TRL's ModelConfig (TextRL alone would pick bf16 on a GPU)"
        )
    else:
        recipe.put(("model", "torch_dtype"), chosen, source)
        if old is not None:
            recipe.note("torch_dtype", "model.torch_dtype (TRL's ModelConfig renamed it dtype in 0.23)")
    attention = recipe.take("attn_implementation")
    if attention is not None:
        recipe.put(("model", "attn_implementation"), attention, "attn_implementation")
    if "trust_remote_code" in recipe.left:  # a field of TRL's config too: stays an option, and loads the model
        recipe.put(("model", "trust_remote_code"), recipe.left["trust_remote_code"], "trust_remote_code")
    _peft(recipe, algo)
    _quantization(recipe)


def _peft(recipe: _Recipe, algo: spec.Algorithm) -> None:
    lora = {k: recipe.take(k) for k in MODEL_KEYS if k.startswith("lora_") or k in ("use_rslora", "use_dora")}
    lora = {k: v for k, v in lora.items() if v is not None}
    use_peft = recipe.take("use_peft", False)
    if not use_peft:
        if lora:
            recipe.note(
                ", ".join(lora) if len(lora) > 1 else next(iter(lora)),
                "dropped: TRL reads LoRA settings only with use_peft: true",
            )
        return
    target = lora.get("lora_target_modules")
    if isinstance(target, str) and target != "all-linear":
        recipe.refuse(
            "lora_target_modules",
            f"is the text {target!r}, which PEFT reads as a regular expression; TextRL takes a list of module names "
            "or all-linear. Fix: list the modules, e.g. [q_proj, v_proj].",
        )
    if lora.get("lora_target_parameters") is not None:
        recipe.refuse(
            "lora_target_parameters",
            "LoRA on parameters (PEFT's target_parameters, for mixture-of-experts layers) is not offered. "
            "Fix: drop it and adapt modules with lora_target_modules.",
        )
    task = lora.get("lora_task_type")
    wanted = "SEQ_CLS" if algo.family is spec.Family.REWARD_MODEL else "CAUSAL_LM"
    if task is not None and task != wanted:
        recipe.refuse(
            "lora_task_type",
            f"is {task!r}; algo {algo.name} trains a {wanted} adapter, and TextRL sets the task type itself. "
            "Fix: drop lora_task_type.",
        )
    peft: dict[str, Any] = {
        "type": "lora",
        "r": lora.get("lora_r", 16),
        "alpha": lora.get("lora_alpha", 32),  # ModelConfig's default, whatever r is (TextRL alone would take 2 x r)
        "dropout": lora.get("lora_dropout", 0.05),
        "target_modules": target,
    }
    if target is None:
        recipe.note("use_peft", "model.peft.target_modules: null: PEFT's default modules for the architecture, as TRL")
    for key in ("use_rslora", "use_dora"):
        if key in lora:
            peft[key] = lora[key]
    if lora.get("lora_modules_to_save") is not None:
        peft["modules_to_save"] = lora["lora_modules_to_save"]
    recipe.put(("model", "peft"), peft, "use_peft")
    recipe.note("use_peft", f"model.peft: LoRA r={peft['r']}, alpha={peft['alpha']}, dropout={peft['dropout']}")


def _quantization(recipe: _Recipe) -> None:
    four, eight = recipe.take("load_in_4bit", False), recipe.take("load_in_8bit", False)
    kind, nested = recipe.take("bnb_4bit_quant_type"), recipe.take("use_bnb_nested_quant")
    storage = recipe.take("bnb_4bit_quant_storage")
    if four and eight:
        recipe.refuse("load_in_8bit", "and load_in_4bit are both true. Fix: keep one.")
        return
    if four:
        recipe.put(("model", "quantization"), "4bit", "load_in_4bit")
        recipe.note("load_in_4bit", "model.quantization: 4bit (bitsandbytes nf4)")
        if kind not in (None, "nf4"):
            recipe.refuse(
                "bnb_4bit_quant_type", f"is {kind!r}; TextRL's 4-bit loading is nf4 (QLoRA's). Fix: drop it or use nf4."
            )
        if not nested:
            recipe.note(
                "use_bnb_nested_quant",
                "TextRL's 4-bit loading also quantizes the quantization constants (nested), which saves about 0.4 "
                "bit per weight and leaves the compute as it is",
            )
        if storage is not None:
            recipe.refuse(
                "bnb_4bit_quant_storage",
                f"is {storage!r}; choosing the storage dtype of 4-bit weights (for FSDP QLoRA) is not offered. "
                "Fix: drop it; with FSDP, use distributed: {strategy: deepspeed} for QLoRA.",
            )
    elif eight:
        recipe.put(("model", "quantization"), "8bit", "load_in_8bit")
        recipe.note("load_in_8bit", "model.quantization: 8bit (bitsandbytes)")


# --- data ----------------------------------------------------------------------------------------------------------


def _source(recipe: _Recipe, name: str) -> dict[str, Any]:
    local = recipe.local(name)
    return {"path": local} if local is not None else {"hub": name}


def _data(recipe: _Recipe, algo: spec.Algorithm) -> None:
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


def _old_mixer(recipe: _Recipe, *, evaluates: bool) -> None:
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


def _parts(recipe: _Recipe, parts: Any, key: str, source: str, renamed: dict[str, str]) -> list[dict[str, Any]]:
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


def _trl_mixture(recipe: _Recipe, parts: Any, held_out: Any) -> dict[str, Any]:
    """TRL's DatasetMixtureConfig: `datasets: [{path, name, data_dir, data_files, split, columns, fraction}]`."""
    renamed = {"name": "subset", "data_dir": "data_dir", "data_files": "data_files", "split": "split",
               "columns": "columns", "fraction": "fraction"}  # fmt: skip
    section: dict[str, Any] = {"mixture": _parts(recipe, parts, "datasets", "path", renamed)}
    if held_out is not None:
        section["test_split_size"] = held_out
    recipe.note("datasets", f"dataset.mixture of {len(section['mixture'])} datasets, TRL's sizes by fraction")
    return section


def _collection_mixture(recipe: _Recipe, mixture: Any) -> dict[str, Any] | None:
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


# --- reward --------------------------------------------------------------------------------------------------------


def _reward(recipe: _Recipe) -> None:
    funcs, model = recipe.take("reward_funcs"), recipe.take("reward_model_name_or_path")
    if isinstance(funcs, str):
        funcs = [funcs]
    refs = []
    for name in funcs or []:
        if name in TRL_REWARDS:
            refs.append(TRL_REWARDS[name])
        elif isinstance(name, str) and "." in name.strip("."):
            module, _, attr = name.rpartition(".")
            refs.append(f"{module}:{attr}")
        elif name in OPEN_R1_REWARDS:
            refs.append(f"open_r1.rewards:{OPEN_R1_REWARDS[name]}")
            recipe.note("reward_funcs", f"{name}: open_r1.rewards:{OPEN_R1_REWARDS[name]} (open-r1's reward registry; "
                        "the open_r1 package must be importable)")  # fmt: skip
        else:
            recipe.refuse(
                "reward_funcs",
                f"{name!r} is neither a reward of TRL's scripts ({', '.join(TRL_REWARDS)}) nor a dotted import path "
                f"(nor a plain function of open-r1's registry: {', '.join(OPEN_R1_REWARDS)}); recipe collections "
                "build some rewards from their own settings. Fix: write the function's import path, e.g. "
                "my_module.my_reward.",
            )
    if model is not None and refs:
        recipe.refuse(
            "reward_model_name_or_path",
            "and reward_funcs are both given; TextRL takes reward functions or one reward model. Fix: keep one, "
            "or wrap the model's scores in a reward function.",
        )
    elif model is not None:
        local = recipe.local(str(model))
        recipe.put(("reward",), {"model": local if local is not None else model}, "reward_model_name_or_path")
        recipe.note("reward_model_name_or_path", "reward: {model: ...}")
    elif refs:
        recipe.put(("reward",), refs if len(refs) > 1 else refs[0], "reward_funcs")
        recipe.note("reward_funcs", f"reward: {', '.join(refs)}")
        if "get_soft_overlong_punishment" in (funcs or []):
            recipe.note(
                "reward_funcs", "get_soft_overlong_punishment with max_completion_len=1280, soft_punish_cache=256, "
                "the values TRL's script uses",
            )  # fmt: skip
    elif not funcs:
        recipe.refuse(
            "reward_funcs", f"is missing (nor is there a reward_model_name_or_path); trl {recipe.trainer} needs a "
            "reward. Fix: add reward_funcs: [my_module.my_reward].",
        )  # fmt: skip


# --- keys TRL renamed or removed, and everything else --------------------------------------------------------------


def _renamed(recipe: _Recipe, algo: spec.Algorithm) -> None:
    fields = spec.trl_field_names(algo.trl_config)
    for old, (new, why) in RENAMED.items():
        if old not in recipe.left:
            continue
        if new in recipe.left:
            recipe.refuse(old, f"and {new} are both given ({why}). Fix: keep {new}.")
            recipe.take(old)
            continue
        if new in fields:
            recipe.rename(old, new)
            recipe.note(old, f"{new} ({why})")
    ratio = recipe.left.get("warmup_ratio")
    if ratio is None:
        recipe.take("warmup_ratio")  # null: transformers' default, no warm-up from it
    elif recipe.left.get("warmup_steps", 0):
        recipe.take("warmup_ratio")
        recipe.refuse("warmup_ratio", f"and warmup_steps={recipe.left['warmup_steps']} are both set. Fix: keep one.")
    elif not isinstance(ratio, int | float) or not 0 <= ratio < 1:
        recipe.take("warmup_ratio")
        recipe.refuse("warmup_ratio", f"got {ratio!r}; a ratio lies in [0, 1). Fix: e.g. 0.1.")
    else:
        recipe.rename("warmup_ratio", "warmup_steps")
        recipe.note("warmup_ratio", f"warmup_steps: {ratio} (transformers 5 reads a value below 1 as a ratio)")
    _rpo_alpha(recipe)
    for key in ("max_prompt_length", "max_completion_length"):
        if key in recipe.left and key not in fields:
            value = recipe.take(key)
            if algo.family is spec.Family.ONLINE:
                why = "TRL removed it in 0.28 and no longer truncates prompts; the dry run and the dataset check flag "
                why += "prompts longer than the model's context"
            else:
                why = "TRL removed it in 0.29; max_length bounds prompt plus completion"
            recipe.note(key, f"dropped ({value}): {why}")
    if recipe.left.get("gradient_checkpointing_use_reentrant") is not None:
        value = recipe.take("gradient_checkpointing_use_reentrant")
        kwargs = dict(recipe.left.get("gradient_checkpointing_kwargs") or {})
        kwargs.setdefault("use_reentrant", value)
        recipe.left["gradient_checkpointing_kwargs"] = kwargs
        recipe.note("gradient_checkpointing_use_reentrant", "gradient_checkpointing_kwargs.use_reentrant")


def _rpo_alpha(recipe: _Recipe) -> None:
    alpha = recipe.take("rpo_alpha")
    if alpha is None:
        return
    if recipe.trainer != "dpo":
        recipe.refuse("rpo_alpha", "is a DPO option. Fix: drop it.")
        return
    losses = recipe.left.get("loss_type", ["sigmoid"])
    losses = [losses] if isinstance(losses, str) else list(losses)
    if "sft" in losses or recipe.left.get("loss_weights") is not None:
        recipe.refuse("rpo_alpha", "with an sft loss or loss_weights already set is ambiguous. Fix: keep loss_weights.")
        return
    recipe.left["loss_type"] = [*losses, "sft"]
    recipe.left["loss_weights"] = [1.0] * len(losses) + [alpha]
    recipe.note("rpo_alpha", f"loss_type {[*losses, 'sft']} with loss_weights {[1.0] * len(losses) + [alpha]} (RPO; "
                "TRL 0.29 made rpo_alpha a list of losses)")  # fmt: skip


def _rest(recipe: _Recipe, algo: spec.Algorithm) -> None:
    fields = spec.trl_field_names(algo.trl_config)
    offered = {**spec.NOT_OFFERED, **algo.not_offered}
    others = _other_trainer_fields(algo)
    sections = {o.name for a in spec.ALGORITHMS for o in a.options if o.group == "Sections"}  # model, reward, ...
    for key in list(recipe.left):
        value = recipe.take(key)
        if key in offered:
            _not_offered(recipe, key, value, offered[key])
        elif key in fields:
            recipe.put((key,), value, key)
        elif key in DROPPED and (key != "ignore_bias_buffers" or not value):
            recipe.note(key, f"dropped: {DROPPED[key]}")
        elif key in WANDB_ENV:
            recipe.put(("env", WANDB_ENV[key]), value, key)
            recipe.note(key, f"env: {WANDB_ENV[key]}, as the recipe collections' scripts set it")
        elif key == "accelerate_config":
            _accelerate(recipe, value)
        elif key == "tokenizer_name_or_path" and value in (None, recipe.model_name):
            recipe.note(key, "dropped: the model's own tokenizer, as TextRL loads it")
        elif key == "tokenizer_name_or_path":
            recipe.refuse(
                key, f"is {value!r}, not the model ({recipe.model_name}); TextRL loads the tokenizer saved with the "
                "model. Fix: save that tokenizer into the model folder, then drop the key.",
            )  # fmt: skip
        elif key in CANNOT_KEEP:
            recipe.refuse(key, f"{CANNOT_KEEP[key]}.")
        elif key in sections:
            recipe.refuse(
                key, "is a section of a TextRL config, not a key of TRL's CLI. Fix: run a TextRL config without --trl "
                "(textrl-train --config FILE).",
            )  # fmt: skip
        elif key in others:
            recipe.refuse(
                key, f"is a field of {', '.join(others[key])}, not of {algo.trl_config} (trl {recipe.trainer}). "
                "Fix: drop it, or run the recipe with the command it was written for.",
            )  # fmt: skip
        else:
            guess = closest(str(key), sorted(fields | set(MODEL_KEYS) | set(DATA_KEYS)))
            hint = f" Did you mean {guess!r}?" if guess else ""
            recipe.refuse(
                str(key), f"is not a field of {algo.trl_config}, ModelConfig or TRL's script arguments.{hint} If it "
                "belongs to a recipe collection's own script, drop it or map it by hand.", unknown=True,
            )  # fmt: skip


def _accelerate(recipe: _Recipe, value: Any) -> None:
    profile = ACCELERATE_PROFILES.get(str(value))
    if profile is not None:
        recipe.put(("distributed",), dict(profile), "accelerate_config")
        recipe.note("accelerate_config", f"distributed: {profile}; textrl-train --write-accelerate-config writes "
                    "the launch config")  # fmt: skip
    elif value == "single_gpu" or value is None:
        recipe.note("accelerate_config", "dropped: one process is what textrl-train runs without a launcher")
    else:
        recipe.refuse(
            "accelerate_config", f"names {value!r}, not one of TRL's profiles ({', '.join(ACCELERATE_PROFILES)}, "
            "single_gpu). Fix: write distributed: {strategy: deepspeed, zero_stage: N} (or fsdp), or launch with "
            "accelerate launch --config_file FILE -m textrl.cli train --trl ... .",
        )  # fmt: skip


def _other_trainer_fields(algo: spec.Algorithm) -> dict[str, list[str]]:
    """Fields of the other TRL configs TextRL runs, for a recipe run with the wrong command."""
    mine = spec.trl_field_names(algo.trl_config)
    found: dict[str, list[str]] = {}
    for config in dict.fromkeys(a.trl_config for a in spec.ALGORITHMS):
        for name in spec.trl_field_names(config) - mine:
            found.setdefault(name, []).append(config)
    return found


def _not_offered(recipe: _Recipe, key: str, value: Any, why: str) -> None:
    if value in (None, False, "", [], {}):
        recipe.note(key, "dropped: empty, as TRL's default")
        return
    if key == "model_init_kwargs" and isinstance(value, Mapping):
        places = {"torch_dtype": "torch_dtype", "dtype": "torch_dtype", "attn_implementation": "attn_implementation",
                  "revision": "revision", "trust_remote_code": "trust_remote_code"}  # fmt: skip
        for name, item in value.items():
            if name in places:
                recipe.put(("model", places[name]), item, key)
                recipe.note(key, f"{name}: model.{places[name]}")
            else:
                recipe.refuse(
                    key, f"{name} is not a model-loading setting TextRL offers ({', '.join(places)}). Fix: drop it "
                    "from model_init_kwargs.",
                )  # fmt: skip
        return
    fixes = {
        "deepspeed": "Fix: write distributed: {strategy: deepspeed, zero_stage: 2 or 3, offload: ...}; textrl-train "
        "--write-accelerate-config then writes the DeepSpeed config",
        "fsdp": "Fix: write distributed: {strategy: fsdp}",
        "fsdp_config": "Fix: write distributed: {strategy: fsdp}",
        "resume_from_checkpoint": "Fix: drop it and run textrl-train --resume",
    }
    recipe.refuse(key, f"{why}. {fixes.get(key, 'Fix: drop it.')}")


def raise_problems(translation: Translation, path: Path | str) -> None:
    """A ConfigError listing every key of the recipe that needs a hand, each with its line."""
    if translation.problems:
        raise ConfigError(translation.located(path))
