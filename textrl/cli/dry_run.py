"""`textrl-train --dry-run`: check everything a run would touch without loading a model (and without torch)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engines.distributed import check_engines, trl_arguments
from ..errors import ConfigError
from ..rewards import Composed, as_reward
from ..rewards.checks import check_distinct_names, check_preference_columns, check_signature
from ..run.assemble import Assembled, require_section
from ..spec import DIFFERENT_FROM_TRL, Family, Reference
from ..validation.view import online, options, supervised
from .evaluate import as_completion

if TYPE_CHECKING:
    from ..validation.config import TextRLConfig

PLACEHOLDER = "This is a placeholder completion."


def _trl_default(algo: Any, option: Any) -> Any:
    """TRL's default for a forwarded option: the spec's, unless the spec records a deliberate difference."""
    difference = DIFFERENT_FROM_TRL.get((algo.name, option.name)) or DIFFERENT_FROM_TRL.get(("*", option.name))
    return difference.trl_default if difference else option.default


def trl_changes(run: Assembled) -> list[tuple[str, Any, Any, str]]:
    """(TRL field, value, TRL's default, where the value came from) for every field that differs from TRL's."""
    cfg, algo = run.config, run.config.algorithm()
    rows = []
    for option in algo.options:
        if option.trl_name is None or option.required:
            continue
        value, default = getattr(cfg, option.name), _trl_default(algo, option)
        shown = "auto (bf16 where the GPU has it, decided at start)" if value == "auto" else value
        if value != default and not (option.name == "report_to" and value == ["none"]):
            source = {"flag": "flag", "YAML": "YAML", "--set": "--set"}.get(
                run.sources.get(option.name, ""), "TextRL default"
            )
            rows.append((option.trl_name, shown, default, source))
    rows += [(name, value, "-", f"fixed by algo={algo.name!r}") for name, value in algo.fixed.items()]
    extra = options(cfg).extra
    rows += [(name, value, "-", f"extra ({run.sources.get('extra', 'YAML')})") for name, value in extra.items()]
    return rows


def _batches(run: Assembled, rows: int) -> list[str]:
    from ..spec.rules import generation_batch
    from ..validation.batch_plan import batch_lines
    from ..validation.config import processes

    cfg, world = run.config, processes()
    per_device, accumulation = options(cfg).per_device_train_batch_size, options(cfg).gradient_accumulation_steps
    lines = [
        f"effective batch: {per_device} per device x {accumulation} accumulation x {world} process(es) = "
        f"{per_device * accumulation * world}"
    ]
    if (rollout := online(cfg)) is not None:  # the config's rules already refused a batch that splits groups
        n = rollout.num_generations
        gen, source = generation_batch(cfg.model_dump(), world)
        lines.append(f"generation batch: {gen} completions = {gen // n} prompts x {n} generations per round ({source})")
    return lines + batch_lines(cfg, rows, world)


def _check_reward(run: Assembled, rows: Any) -> str:
    from ..rewards.refs import reward_from_section

    section = require_section(run, "reward")
    if str(getattr(section, "model", "")).startswith("textrl:"):
        return f"reward model {section.model}: TextRL's built-in tiny classifier, built at start"
    reward = reward_from_section(section, run.base_dir)
    funcs = reward.components if isinstance(reward, Composed) else reward if isinstance(reward, list) else [reward]
    check_preference_columns(funcs, rows.column_names, run.config.algo)  # the trainer's check, before any model
    if isinstance(reward, str):
        from ..models.source import check_reward_model

        return f"reward model {check_reward_model(reward)}"
    sample = rows.select(range(min(4, len(rows))))
    prompts = list(sample["prompt"])
    columns = {c: list(sample[c]) for c in sample.column_names if c != "prompt"}
    rewards = reward if isinstance(reward, list) else [reward]
    components = [c for item in rewards for c in (item.components if isinstance(item, Composed) else [item])]
    check_distinct_names(components, "reward")
    for component in components:
        check_signature(component, rows.column_names)
    shown = []
    for item in rewards:
        completions = [as_completion(PLACEHOLDER, p) for p in prompts]
        values = as_reward(item)(prompts=prompts, completions=completions, **columns)
        name = getattr(item, "__name__", type(item).__name__)
        shown.append(f"{name} -> {[None if v is None else round(v, 4) for v in values]}")
    return f"reward called on {len(prompts)} dataset rows with placeholder completions: " + "; ".join(shown)


def _check_chat_rows(run: Assembled, datasets: dict[str, Any], own: str | None) -> str:
    """Conversational rows against the model folder's chat template, or `own` (model.chat_template's text) that
    replaces it (the trainers check the loaded tokenizer)."""
    from ..data.chat_rows import check_chat_template, conversational_columns
    from ..data.chat_template import chat_renderer, compile_template
    from ..models import builtin_path
    from ..models.source import resolve_local

    model = require_section(run, "model")
    if own is not None:
        compile_template(own, "model.chat_template")
    columns = sorted({c for data in datasets.values() if data is not None for c in conversational_columns(data)})
    if not columns:
        return "chat template: not needed (the rows are plain text)"
    name = model.name
    folder = builtin_path(name) if name.startswith("textrl:") else Path(resolve_local(name, run.base_dir))
    if folder is None or not folder.is_dir() or model.gguf_file:
        return f"chat template: {name} is not a local model folder yet; checked when the tokenizer loads"
    renderer = chat_renderer(folder, own)
    check_chat_template(datasets, renderer is not None, str(folder))  # as the loaded tokenizer names it
    sft = supervised(run.config)
    if sft is not None and sft.assistant_only_loss and sft.chat_template_path is None:
        from ..data.supervised import check_assistant_template

        default = renderer.templates.get("default") if renderer is not None else None
        check_assistant_template(default[0] if default else None, str(folder))
    return f"chat template: {name} has one, for the chat rows ({', '.join(columns)})"


def _check_lengths(run: Assembled, datasets: dict[str, Any], own: str | None) -> str:
    """Token lengths against the model's context and max_length, counted with the model folder's tokenizer (chat
    rows through `own`, model.chat_template's text, where it is set)."""
    from ..checkpoints.overwrite import inputs, model_inputs
    from ..data.lengths import folder_counter, limits_for
    from ..data.notes import row_notes

    name = require_section(run, "model").name
    found = inputs(model_inputs("model", name, run.base_dir))
    counter = folder_counter(found[0].path, own) if found and found[0].path.is_dir() else None
    if counter is None:
        return f"lengths: not checked here ({name} is not a local folder with tokenizer.json); checked at start"
    count, context = counter
    limits = limits_for(run.config, context)
    notes = []
    for label, data in datasets.items():
        if data is not None:
            notes += row_notes(run.config, data, limits, count, name=label)
    shown = ", ".join(f"{k}={v}" for k, v in vars(limits).items() if v is not None)
    return "\n".join([f"lengths: rows fit ({shown})" if not notes else f"lengths ({shown}):"] +
                     [f"WARNING: {note}" for note in notes])  # fmt: skip


def _check_extra(cfg: TextRLConfig) -> str:
    """extra's keys (and --set keys that land there) against the installed release's TRL config class: the run's
    own check, from the snapshot instead of TRL itself."""
    from ..spec.trl_releases import class_field_names
    from ..trl_support.build import extra_problems
    from ..trl_support.releases import installed_release

    release, algo, extra = installed_release(), cfg.algorithm(), options(cfg).extra
    if release is None:
        return f"extra: {', '.join(extra)} are checked against the installed TRL config when the run starts"
    problems = extra_problems(cfg, set(class_field_names(release, algo.trl_config)), algo.trl_config, {}, algo.fixed)
    if problems:
        raise ConfigError(problems, algo=cfg.algo)
    return f"extra: {', '.join(extra)}: fields of {algo.trl_config} in TRL {release}"


def _trl_release(cfg: TextRLConfig) -> str:
    """The installed TRL against the tested window, and each TRL default of that release that differs from the
    newest release's and applies to this run."""
    from ..spec.trl_releases import NEWEST, window_text
    from ..trl_support.env import version
    from ..trl_support.releases import default_notes, installed_release

    found = version("trl")
    if installed_release() is None:
        return f"trl: {found}, outside the tested window {window_text()} (UntestedTRLWarning when the run starts)"
    notes = default_notes(cfg)
    head = f"trl: {found}, in the tested window {window_text()}"
    if not notes:
        return head
    return head + f"; defaults that differ from TRL {NEWEST}'s:\n" + "\n".join(f"  {n}" for n in notes)


def dry_run(
    run: Assembled, *, resume: bool, overwrite: bool, resume_changed: bool = False, device_memory: float | None = None
) -> int:
    """Print what the run would do; exit status 0 when it would start."""
    from ..data import from_section, load_split
    from ..data.checks import check_rows

    cfg, algo = run.config, run.config.algorithm()
    if run.translation is not None:
        notes = run.translation.notes
        print(f"recipe: {run.path}, written for TRL's CLI; {len(notes)} of its keys translated:")
        print("\n".join(f"  {note}" for note in notes))
    print(f"config: valid, algo={algo.name} ({algo.title}, {algo.family.value}) -> {algo.trl_trainer}")
    print(_trl_release(cfg))
    from ..models.source import check_model_reference, resolve_local

    model = require_section(run, "model")
    name = resolve_local(model.name, run.base_dir, model.gguf_file)
    found = check_model_reference(name, "model.name", gguf_file=model.gguf_file, revision=model.revision)
    from ..models.adapter import adapter_base, check_mode

    if adapter_base(name) is not None:  # a LoRA run's output: what its adapter: mode can do, as the load checks it
        check_mode(name, model.adapter, new_peft=model.peft is not None, quantization=model.quantization)
        found += f" ({'merged into it' if model.adapter == 'merge' else 'trained further'}: model.adapter)"
    lora = f" with LoRA r={model.peft.r}" if model.peft else ""
    print(f"model: {model.name}{lora} (not loaded in a dry run; {found.removeprefix(name + ': ')})")
    from ..run.memory import describe_plan

    what = "--device-memory" if device_memory is not None else ""
    print("\n".join(describe_plan(cfg, run.base_dir, device_memory, what)))
    section = require_section(run, "dataset")
    rows, evaluation = load_split(section, run.base_dir, light=True)
    rows = check_rows(cfg, rows)
    parts = f" from a mixture of {len(section.mixture)} datasets" if section.mixture else ""
    print(
        f"dataset: {len(rows)} rows{parts}, columns {', '.join(rows.column_names)}; {algo.data_format.name} format: ok"
    )
    eval_section = options(cfg).eval_dataset
    if eval_section is not None:
        evaluation = from_section(eval_section, run.base_dir, light=True, where="eval_dataset")
    if evaluation is not None:
        evaluation = check_rows(cfg, evaluation)
        held = f" (held out of dataset by test_split_size={section.test_split_size})" if eval_section is None else ""
        print(f"eval_dataset: {len(evaluation)} rows{held}: ok")
    if options(cfg).env:
        print("env: " + ", ".join(f"{k}={v}" for k, v in options(cfg).env.items()))
    from ..models.template import template_text

    own = template_text(model.chat_template, run.base_dir)  # model.chat_template: read once, replaces the folder's
    print(_check_chat_rows(run, {"the training set": rows, "the evaluation set": evaluation}, own))
    print(_check_lengths(run, {"dataset": rows, "eval_dataset": evaluation}, own))
    if algo.family is Family.ONLINE:
        print(_check_reward(run, rows))
    if algo.family.reference is Reference.LOADED:
        from ..reference_cache.plan import decide
        from ..validation.config import processes

        print(decide(cfg, rows, evaluation, processes()).line())
    batches = _batches(run, len(rows))
    print("\n".join(batches))
    from ..checkpoints.run_folder import contents, stopped_before_saving
    from .output_dir import check_output_target, prepare_output_dir

    output_dir = Path(options(cfg).output_dir)
    check_output_target(run, overwrite=overwrite)
    checkpoint = prepare_output_dir(run, resume=resume, overwrite=overwrite, resume_changed=resume_changed)
    replaced = not checkpoint and not overwrite and stopped_before_saving(output_dir)
    check_engines(cfg)  # DeepSpeed / vLLM / bitsandbytes installed: the same check a run makes, importing none
    from ..engines.quantization import check_attention

    check_attention(model.attn_implementation, "model.attn_implementation")
    if model.quantization:
        from ..engines.quantization import check_runs, device

        check_runs(model.quantization, "model.quantization")
        print(f"quantization: {model.quantization} layers run here (bitsandbytes, on {device()})")
    # the run's own check on what vLLM's CPU build refuses
    if (rollout := online(cfg)) is not None and rollout.use_vllm:
        from ..rollout.vllm import dry_run_line

        print(dry_run_line(cfg, name))
    if options(cfg).bf16 is True:  # the run's own check; it needs torch, so only when bf16 is forced
        import warnings

        from ..trl_support.build import resolve_bf16

        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            resolve_bf16(True)
        print(f"precision: {said[0].message}" if said else "precision: bf16 on this machine's bf16-capable GPU")
    section = options(cfg).distributed
    if section is not None and section.strategy == "fsdp":  # the run's own check (needs torch)
        from ..engines.distributed import fsdp_refusal
        from ..engines.hardware import has_accelerator

        refusal = fsdp_refusal(cfg, accelerator=has_accelerator())
        if refusal is not None:
            raise ConfigError([refusal], algo=cfg.algo)
    for name, value in trl_arguments(cfg).items():
        print(f"distributed: TRL gets {name}={json.dumps(value)}")
    if options(cfg).extra:
        print(_check_extra(cfg))
    state = f" (resuming from {checkpoint.name})" if checkpoint else ""
    if replaced:
        state = f" (holds a run that stopped before its first checkpoint: {', '.join(contents(output_dir))}; replaced)"
    print(f"output_dir: {output_dir}{state}")
    print(f"TRL config ({algo.trl_config}), fields that differ from TRL's defaults:")
    for name, value, default, source in trl_changes(run):
        print(f"  {name} = {value!r}   (TRL default {default!r}; from {source})")
    if any(line.startswith("ERROR") for line in batches):
        return 2
    print("dry run: the run would start")
    return 0
