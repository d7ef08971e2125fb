"""Removed algorithms, renamed keys and the legacy PFRL names each explain themselves and point at the fix."""

from __future__ import annotations

import re

import pytest

from textrl import ConfigError, MigrationError, TextRLConfig, spec


@pytest.mark.parametrize("removed", spec.REMOVED, ids=[r.name for r in spec.REMOVED])
def test_removed_algorithm_raises_migration_error(removed: spec.Removed) -> None:
    with pytest.raises(
        MigrationError, match=rf"algo: algo='{removed.name}' is not available: .*TRL \d+\.\d+.*Fix: use algo='"
    ) as info:
        TextRLConfig(algo=removed.name, output_dir="o")
    assert isinstance(info.value, ConfigError)
    assert removed.replacement in str(info.value)
    # the replacement names supported algorithms, and they really validate
    for name in re.findall(r"algo='([a-z_+]+)'", removed.replacement):
        assert TextRLConfig(algo=name, output_dir="o").algo in spec.BY_NAME


def test_removed_names_are_not_schema_values(root) -> None:  # type: ignore[no-untyped-def]
    import json

    schema = json.loads((root / "generated/schema/textrl.schema.json").read_text())
    algos = set(schema["discriminator"]["mapping"])
    assert algos == set(spec.BY_NAME)
    assert not algos & set(spec.REMOVED_BY_NAME)


@pytest.mark.parametrize("renamed", spec.RENAMED, ids=[r.old for r in spec.RENAMED])
def test_renamed_key_explains_the_new_spelling(renamed: spec.Renamed) -> None:
    algo = next(a.name for a in spec.ALGORITHMS if not renamed.families or a.family in renamed.families)
    with pytest.raises(ConfigError, match=rf"{renamed.old}: is not a TextRL option: .*Fix: "):
        TextRLConfig(algo=algo, output_dir="o", **{renamed.old: 1})


def test_simpo_message_matches_the_issue() -> None:
    with pytest.raises(MigrationError, match=r"SimPO .*0\.26.*Fix: use algo='sigmoid_norm'.* or algo='dpo'"):
        TextRLConfig(algo="simpo", output_dir="o")


@pytest.mark.parametrize("name", ["TextRLEnv", "TextRLActor", "train_agent_with_evaluation"])
def test_legacy_names_point_at_the_migration_guide(name: str, root) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ImportError, match=r"PFRL-based TextRL API, removed in TextRL 1\.0.*docs/migration\.md"):
        exec(f"from textrl import {name}")
    assert (root / "docs/migration.md").is_file()


def test_migration_guide_covers_every_removed_algorithm_and_rename(root) -> None:  # type: ignore[no-untyped-def]
    text = (root / "docs/migration.md").read_text(encoding="utf-8")
    for removed in spec.REMOVED:
        assert f"`{removed.name}`" in text, removed.name
    for key in ("processing_class", "max_prompt_length", "rpo_alpha", "vllm_structured_outputs_regex", "TextRLEnv"):
        assert key in text, key


def test_unknown_attribute_of_the_package_is_an_attribute_error() -> None:
    import textrl

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = textrl.Nope  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("written", "algo"),
    [("GRPO", "grpo"), ("REINFORCE++", "reinforce_pp"), ("Reinforce-PP", "reinforce_pp"), ("BCO-pair", "bco_pair"),
     ("Robust-DPO", "robust_dpo"), ("SPPO-hard", "sppo_hard"), ("EXO-pair", "exo_pair"), ("KTO", "kto"), (" dpo ", "dpo")],
)  # fmt: skip
def test_algorithm_names_as_papers_and_tables_spell_them(written: str, algo: str) -> None:
    """The README spec's tables write GRPO, REINFORCE++, BCO-pair, Robust-DPO: case, '-'/'_' and '++'/'_pp' are
    ignored when a name is matched."""
    cfg = TextRLConfig(algo=written, output_dir="o")
    assert cfg.algo == algo and type(cfg).__name__ == spec.BY_NAME[algo].class_name


@pytest.mark.parametrize(
    ("written", "removed"),
    [("PPO", "ppo"), ("OnlineDPO", "online_dpo"), ("Online-DPO", "online_dpo"), ("SimPO", "simpo")],
)
def test_removed_names_as_tables_spell_them_get_the_migration_error(written: str, removed: str) -> None:
    with pytest.raises(MigrationError, match=rf"algo: algo='{written}' is not available: .*Fix: use ") as info:
        TextRLConfig(algo=written, output_dir="o")
    assert spec.REMOVED_BY_NAME[removed].replacement in str(info.value)


def test_a_name_that_matches_nothing_still_gets_did_you_mean() -> None:
    with pytest.raises(ConfigError, match=r"unknown algorithm 'grpo2'\. Did you mean 'grpo'\?"):
        TextRLConfig(algo="grpo2", output_dir="o")
