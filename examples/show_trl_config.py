"""Validate a TextRL YAML config and print the TRL config it becomes: the fields that differ from TRL's defaults.

    python examples/show_trl_config.py examples/grpo.yaml

Exit status 0 when the config is valid, 1 with TextRL's error message when it is not.
"""

from __future__ import annotations

import sys

from textrl import ConfigError, TextRLConfig
from textrl.checkpoints.manifest import trl_changes
from textrl.trl_build import build_trl_config


def main(path: str) -> int:
    try:
        cfg = TextRLConfig.from_yaml(path)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"{path}: valid, algo={cfg.algo} ({type(cfg).__name__})")
    try:
        trl_cfg = build_trl_config(cfg)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"{type(trl_cfg).__module__}.{type(trl_cfg).__name__}, fields that differ from TRL's defaults:")
    for name, value in trl_changes(trl_cfg).items():
        print(f"  {name} = {value!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "examples/grpo.yaml"))
