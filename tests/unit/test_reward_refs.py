"""`module:function` references from a config: found beside the config or in the working directory, or a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from textrl import ConfigError
from textrl.reward_refs import resolve_ref


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "ref_rewards_ok.py").write_text(
        "def good(prompts, completions, **_):\n    return [1.0] * len(completions)\nVALUE = 3\n"
    )
    (tmp_path / "ref_rewards_broken.py").write_text("import package_that_is_not_installed\n")
    (tmp_path / "ref_rewards_prefix.py").write_text("import ref_rewards_pre\n")  # a missing dependency named like it
    return tmp_path


def test_found_beside_the_config(folder: Path) -> None:
    fn = resolve_ref("ref_rewards_ok:good", folder)
    assert fn(prompts=["p"], completions=["c"]) == [1.0]
    import sys

    assert str(folder.resolve()) not in sys.path, "the config folder is removed from sys.path again"


@pytest.mark.parametrize(
    ("ref", "match"),
    [
        (
            "missing_module_xyz:f",
            r"reward: 'missing_module_xyz:f': no module 'missing_module_xyz' in .* Fix: put the module beside",
        ),
        ("ref_rewards_ok:nope", r"module ref_rewards_ok has no attribute 'nope'; its callables: good\. Fix"),
        ("ref_rewards_ok:VALUE", r"'ref_rewards_ok:VALUE' is a int, not a function"),
        (
            "ref_rewards_broken:f",
            r"'ref_rewards_broken:f': importing ref_rewards_broken failed: No module named 'package_that_is_not_installed'",
        ),
    ],
)
def test_bad_references(folder: Path, ref: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        resolve_ref(ref, folder)
