"""model.chat_template: a chat template that replaces the tokenizer's, given as Jinja text or as a .jinja file."""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError, Problem

SUFFIXES = (".jinja", ".j2")


def template_text(value: str | None, base_dir: Path | None = None, field: str = "model.chat_template") -> str | None:
    """The template's Jinja text: `value` itself, or the file it names (a one-line value ending in .jinja or .j2,
    read from the working directory, else from `base_dir`, the config's folder)."""
    if value is None or "\n" in value or "{" in value or not value.strip().endswith(SUFFIXES):
        return value
    name = Path(value.strip()).expanduser()
    for candidate in (name, *([base_dir / name] if base_dir is not None and not name.is_absolute() else [])):
        if candidate.is_file():
            try:
                return candidate.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                problem = Problem(field, f"{candidate} cannot be read ({exc}). Fix: check the file.")
                raise ConfigError([problem]) from None
    where = f"the working directory {Path.cwd()}"
    if base_dir is not None and base_dir.resolve() != Path.cwd():
        where += f" or the config's folder {base_dir.resolve()}"
    raise ConfigError(
        [
            Problem(
                field,
                f"{value!r} names a template file that is not in {where}. Fix: check the path, or write the "
                "template's Jinja text there instead.",
            )
        ]
    )
