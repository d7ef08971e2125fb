"""`textrl-convert`: write the TextRL YAML a recipe for TRL's CLI amounts to, each translation commented."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import ConfigError, Problem

TRL_COMMANDS = ("grpo", "rloo", "dpo", "kto", "reward")


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
    config: dict[str, Any], *, recipe: Path, trl: str, notes: list[str], problems: list[str], out_dir: Path
) -> str:
    """The TextRL YAML text: schema modeline, where it came from, each translation and each key left, then the
    config."""
    import yaml

    head = [
        f"# yaml-language-server: $schema={schema_reference(out_dir)}",
        f"# Converted by textrl-convert (TextRL {__version__}) from {recipe}, a recipe for `trl {trl}`.",
    ]
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
        from ..config import TextRLConfig
        from ..trl_recipe import translate
        from ..yaml_io import read_mapping
        from .assemble import locate

        data, lines = read_mapping(recipe, "recipe")
        out_dir = output.parent
        translation = translate(data, args.trl, lines=lines, base_dir=recipe.parent, out_dir=out_dir)
        try:
            TextRLConfig.model_validate(translation.config)
        except ConfigError as error:
            raise locate(error, translation.lines, recipe, {}) from None
        problems = [str(p) for p in translation.problems]  # "line N: key: what to do", for the file's comments
        notes = [str(note) for note in translation.notes]
        out_dir.mkdir(parents=True, exist_ok=True)
        output.write_text(
            render(translation.config, recipe=recipe, trl=args.trl, notes=notes, problems=problems, out_dir=out_dir),
            encoding="utf-8",
        )
    except ConfigError as exc:
        print(f"textrl-convert: {exc}", file=sys.stderr)
        return 2
    print(f"textrl-convert: wrote {output} ({len(notes)} translations)")
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
