"""`textrl-convert`: write the TextRL YAML a recipe for TRL's CLI amounts to, each translation commented."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import ConfigError, Problem

if TYPE_CHECKING:
    from ..trl_recipe import ProcessFit

TRL_COMMANDS = ("grpo", "rloo", "dpo", "kto", "reward", "sft")


def convert_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="textrl-convert",
        description="Convert a recipe written for TRL's CLI (trl dpo --config recipe.yaml) into a TextRL YAML "
        "config: TRL's config fields stay options, ModelConfig becomes model:, the dataset keys dataset:, the "
        "GRPO script's rewards reward:. Keys TRL renamed are translated with a note; a key whose meaning cannot be "
        "kept is listed with what to do. Exit status: 0 converted, 1 written but some keys need your hand, 2 error.",
    )
    parser.add_argument("--trl", required=True, choices=TRL_COMMANDS, help="The TRL command the recipe is for.")
    parser.add_argument("recipe", help="The recipe YAML file.")
    parser.add_argument("-o", "--output", required=True, metavar="FILE.yaml", help="Where to write the TextRL YAML.")
    parser.add_argument("--overwrite", action="store_true", help="Replace FILE.yaml if it exists.")
    parser.add_argument(
        "--num-processes",
        type=int,
        metavar="N",
        help="Check the batch for a run on N processes (a recipe written for several GPUs). Default: list the "
        "process counts the batch divides on, and check the smallest.",
    )
    parser.add_argument("--version", action="version", version=f"textrl {__version__}")
    return parser


def schema_reference(out_dir: Path) -> str:
    """The installed JSON Schema, as a path an editor resolves from the converted file's folder."""
    from importlib import resources

    schema = Path(str(resources.files("textrl.generated").joinpath("schema/textrl.schema.json")))
    try:
        return os.path.relpath(schema, out_dir.resolve())
    except ValueError:  # another drive on Windows
        return str(schema)


def render(
    config: dict[str, Any],
    *,
    recipe: Path,
    trl: str,
    notes: list[str],
    problems: list[str],
    out_dir: Path,
    processes: str | None = None,
) -> str:
    """The TextRL YAML text: schema modeline, where it came from, the process counts it holds on (when that
    matters), each translation and each key left, then the config."""
    import yaml

    head = [
        f"# yaml-language-server: $schema={schema_reference(out_dir)}",
        f"# Converted by textrl-convert (TextRL {__version__}) from {recipe}, a recipe for `trl {trl}`.",
    ]
    if processes:
        head.append(f"# Processes: {processes}.")
    if notes:
        head.append("# Translations (line numbers are the recipe's):")
        head += [f"#   {note}" for note in notes]
    if problems:
        head.append("# NOT CONVERTED: these keys need your hand (see each fix), then delete these lines:")
        head += [f"#   {problem}" for problem in problems]
    body = yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=120, default_flow_style=False)
    return "\n".join(head) + "\n" + body


def convert_main(argv: list[str] | None = None) -> int:
    args = convert_parser().parse_args(argv)
    recipe, output = Path(args.recipe), Path(args.output)
    try:
        if output.exists() and output.resolve() == recipe.resolve():
            raise ConfigError(
                [Problem("--output", f"{output} is the recipe itself. Fix: write the TextRL config to another file.")]
            )
        if output.exists() and not args.overwrite:
            raise ConfigError(
                [Problem("--output", f"{output} exists. Fix: --overwrite to replace it, or another file.")]
            )
        if args.num_processes is not None and args.num_processes < 1:
            raise ConfigError(
                [Problem("--num-processes", f"got {args.num_processes}; allowed: 1 or more. Fix: e.g. 8.")]
            )
        from ..run.assemble import locate
        from ..trl_recipe import not_a_recipe, process_fit, translate, with_launch_hint
        from ..validation.config import TextRLConfig
        from ..validation.yaml_io import read_mapping

        data, lines = read_mapping(recipe, "recipe")
        if (textrl_config := not_a_recipe(data, recipe, trl=args.trl, converting=True, lines=lines)) is not None:
            raise ConfigError([textrl_config])
        out_dir = output.parent
        translation = translate(data, args.trl, lines=lines, base_dir=recipe.parent, out_dir=out_dir)
        fit = process_fit(translation.config, data)
        count, processes = _processes(fit, args.num_processes)
        try:
            TextRLConfig.model_validate(translation.config, processes=count)
        except ConfigError as error:
            advice = "Convert it for such a count: --num-processes {n}, and launch the run on that many processes"
            raise locate(with_launch_hint(error, fit, count, advice), translation.lines, recipe, {}) from None
        problems = [str(p) for p in translation.problems]  # "line N: key: what to do", for the file's comments
        notes = [str(note) for note in translation.notes]
        out_dir.mkdir(parents=True, exist_ok=True)
        output.write_text(
            render(
                translation.config,
                recipe=recipe,
                trl=args.trl,
                notes=notes,
                problems=problems,
                out_dir=out_dir,
                processes=processes,
            ),
            encoding="utf-8",
        )
    except ConfigError as exc:
        print(f"textrl-convert: {exc}", file=sys.stderr)
        return 2
    print(f"textrl-convert: wrote {output} ({len(notes)} translations)")
    if processes:
        print(f"textrl-convert: processes: {processes}", file=sys.stderr)
    for problem in translation.located(recipe):
        print(f"textrl-convert: {problem}", file=sys.stderr)
    if problems:
        print(
            f"textrl-convert: {len(problems)} key(s) of the recipe need your hand; they are listed at the top of "
            f"{output}",
            file=sys.stderr,
        )
        return 1
    return 0


def _processes(fit: ProcessFit | None, requested: int | None) -> tuple[int, str | None]:
    """The process count to check the batch on, and what to say about process counts: None when nothing is worth
    saying (the batch divides on one process, and on the count the recipe names)."""
    if requested is not None:
        said = f"checked on {requested} process{'es' if requested > 1 else ''} (--num-processes {requested})"
        if fit is None or (not fit.fails_on(1) and fit.own is None):
            return requested, said
        return requested, f"{said}; {fit.describe(requested)}"
    if fit is None:
        return 1, None
    found = fit.counts()
    if not fit.fails_on(1):
        own_fails = fit.own is not None and bool(fit.fails_on(fit.own[0]))
        return 1, fit.describe(1) if own_fails else None
    if not found:
        return 1, None  # divides on no count: refused as on one process
    return found[0], (
        f"{fit.describe(1)}. Checked on {found[0]}; launch the run on one of these counts (textrl-train checks the "
        "batch against the run's own count), or convert with --num-processes N to check another"
    )
