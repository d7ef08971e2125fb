"""The TRL config object for a TextRL config, for code that drives TRL itself (docs/migration.md):
`build_trl_config(cfg)` returns the `trl.<Algo>Config` that TextRL would train with. It lives in
`textrl.trl_support.build`; this module is its public address."""

from __future__ import annotations

from .trl_support.build import build_trl_config

__all__ = ["build_trl_config"]
