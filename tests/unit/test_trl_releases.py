"""The supported TRL releases as data (spec/trl_releases.py, one snapshot each) and what a config meets on an older
one: an option or value it lacks refused with the first release that has it, a renamed field translated, a default
that differs said. The real older releases run in CI's release legs (scripts/test.sh: tests/drift, tests/cli/test_trl_releases_cli.py)."""

from __future__ import annotations

import pytest

from textrl import TextRLConfig
from textrl.errors import ConfigError
from textrl.spec import ALGORITHMS
from textrl.spec import trl_releases as releases
from textrl.trl_support.env import TESTED_TRL, trl_range_problem
from textrl.trl_support.releases import default_notes, for_release, for_transformers, release_problems


def test_every_supported_release_has_its_snapshot() -> None:
    for release in releases.RELEASES:
        taken = releases.snapshot(release)
        assert releases.release_of(taken["trl"]) == release
        assert taken["trl"] == releases.CI_PINS[release], "the snapshot was taken from the release CI installs"
        assert set(taken["classes"]) == {a.trl_config for a in ALGORITHMS}
    assert releases.release_of("1.12.3") is None and releases.release_of("1.17.0") is None
    assert releases.release_of("1.14.1") == "1.14" and releases.release_of(None) is None


def test_every_default_that_differs_between_releases_says_what_it_does() -> None:
    """A new release whose snapshot changes a default fails here until DEFAULT_CHANGES says what that does."""
    differing = {
        name
        for config in {a.trl_config for a in ALGORITHMS}
        for release in releases.RELEASES[:-1]
        for name in releases.default_differences(config, release)
    }
    assert differing == set(releases.DEFAULT_CHANGES), "update DEFAULT_CHANGES in spec/trl_releases.py"


def test_availability_names_the_release_of_each_value_and_default() -> None:
    """Measured from the snapshots: 1.16 added pad_to_multiple_of='auto' (its new default); 1.14 made
    router_aux_loss_coef optional (default: the model config's) where 1.13 had 0.001."""
    assert releases.availability("trl.DPOConfig", "pad_to_multiple_of") == (
        "'auto' needs TRL >= 1.16; default null before TRL 1.16"
    )
    assert releases.availability("trl.GRPOConfig", "router_aux_loss_coef") == (
        "null needs TRL >= 1.14; default 0.001 before TRL 1.14"
    )
    assert releases.availability("trl.DPOConfig", "beta") is None
    assert releases.availability("trl.DPOConfig", "no_such_field") is None


def dpo(**options: object) -> TextRLConfig:
    return TextRLConfig(algo="dpo", output_dir="out", **options)


def test_a_value_the_installed_release_lacks_is_refused_with_the_release_that_has_it() -> None:
    cfg = dpo(pad_to_multiple_of="auto", router_aux_loss_coef=None)
    problems = {p.field: p.message for p in release_problems(cfg, "1.13.0")}
    assert problems["pad_to_multiple_of"] == (
        "'auto' needs TRL >= 1.16; installed 1.13.0, whose pad_to_multiple_of takes int | null. Fix: upgrade TRL "
        "(pip install 'trl>=1.16,<1.17'), or set pad_to_multiple_of to one of those (or leave it unset for TRL "
        "1.13.0's default, None)."
    )
    assert problems["router_aux_loss_coef"].startswith("None needs TRL >= 1.14; installed 1.13.0, whose")
    assert [p.field for p in release_problems(cfg, "1.14.1")] == ["pad_to_multiple_of"]
    assert release_problems(cfg, "1.16.0") == []
    assert release_problems(dpo(pad_to_multiple_of=8, router_aux_loss_coef=0.01), "1.13.0") == []
    assert release_problems(cfg, "1.12.0") == [], "outside the window: UntestedTRLWarning speaks instead"


def test_a_loss_type_from_a_later_release_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """VALUES_SINCE is empty between 1.13 and 1.16 (every release's trainer has the same loss names: the drift
    test of each release checks it); this fills it as a later release would, to test the refusal."""
    monkeypatch.setitem(releases.VALUES_SINCE, "loss_type", {"sigmoid_norm": "1.15"})
    cfg = dpo(loss_type=["sigmoid_norm", "sft"])
    assert [str(p) for p in release_problems(cfg, "1.13.0")] == [
        "loss_type: 'sigmoid_norm' needs TRL >= 1.15; installed 1.13.0. Fix: upgrade TRL (pip install "
        "'trl>=1.15,<1.17'), or choose a value TRL 1.13.0 has."
    ]
    assert release_problems(cfg, "1.15.0") == []


def test_a_renamed_field_is_translated_and_a_missing_one_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """RENAMED_FIELDS is empty between 1.13 and 1.16 (the snapshots have the same field names); as a later rename
    would: beta called `old_beta` in 1.13, so 1.13 has no `beta` and 1.14 is the first release with it."""
    monkeypatch.setitem(releases.RENAMED_FIELDS, "1.13", {"beta": "old_beta"})
    problems = release_problems(dpo(beta=0.2), "1.13.0")
    assert [p.field for p in problems] == ["beta"]
    assert problems[0].message.startswith("needs TRL >= 1.14; installed 1.13.0, whose trl.DPOConfig has no old_beta")
    assert release_problems(dpo(), "1.13.0") == [], "left unset: TextRL drops it rather than refuse"
    sent = {"beta": 0.1, "learning_rate": 1e-6, "new_field": 1}
    assert for_release(sent, {"old_beta", "learning_rate"}, set(), "1.13.0") == {"old_beta": 0.1, "learning_rate": 1e-6}
    assert for_release(sent, {"learning_rate"}, {"new_field"}, "1.13.0")["new_field"] == 1, "TRL names it"
    assert for_release(sent, set(), set(), "1.16.0") == sent


def test_an_option_written_in_extra_is_checked_as_the_option(monkeypatch: pytest.MonkeyPatch) -> None:
    """`extra` keys that name an option become that option, so the release check sees them too."""
    monkeypatch.setitem(releases.RENAMED_FIELDS, "1.13", {"use_weighting": "gone"})
    problems = release_problems(dpo(extra={"use_weighting": True}), "1.13.0")
    assert [p.field for p in problems] == ["use_weighting"]
    assert "needs TRL >= 1.14; installed 1.13.0" in problems[0].message


def test_the_dry_run_notes_defaults_that_differ_and_apply() -> None:
    notes = default_notes(dpo(), "1.13.0")
    assert [n.split(":")[0] for n in notes] == ["router_aux_loss_coef", "pad_to_multiple_of"]
    assert notes[0].startswith("router_aux_loss_coef: TRL 1.13.0 defaults to 0.001, TRL 1.16 to None; this run uses")
    assert "Mixture-of-Experts" in notes[0]
    assert [n.split(":")[0] for n in default_notes(dpo(pad_to_multiple_of=8), "1.14.1")] == [], "set: no default"
    assert default_notes(dpo(), "1.16.0") == []


def test_validation_refuses_for_the_installed_release(monkeypatch: pytest.MonkeyPatch) -> None:
    """TextRLConfig refuses on its own, before TRL or a model loads (the installed version is read from metadata)."""
    monkeypatch.setattr("textrl.trl_support.releases.version", lambda package: "1.13.0")
    with pytest.raises(ConfigError) as caught:
        dpo(pad_to_multiple_of="auto")
    assert "pad_to_multiple_of: 'auto' needs TRL >= 1.16; installed 1.13.0" in str(caught.value)
    dpo(pad_to_multiple_of=16)


def test_the_window() -> None:
    assert releases.window_text() == "1.13 to 1.16 (CI trains on 1.13.0, 1.14.1, 1.15.0, 1.16.0)"
    assert trl_range_problem("1.13.0") is None and trl_range_problem("1.16.0") is None
    assert "trl>=1.13,<1.17" in (trl_range_problem("1.12.0") or "") and trl_range_problem("1.17.0")
    low, high = TESTED_TRL
    assert ".".join(map(str, low)) == releases.RELEASES[0] and releases.release_of(releases.CI_PINS[releases.NEWEST])
    assert high == (int(releases.NEWEST.split(".")[0]), int(releases.NEWEST.split(".")[1]) + 1)


def test_a_transformers_before_5_20_gets_its_own_name_for_activation_checkpointing() -> None:
    """vLLM's CPU build pins transformers < 5.20, whose TrainingArguments (so every TRL config) has only
    gradient_checkpointing; tests/vllm trains with one."""
    sent = {"activation_checkpointing": False, "activation_checkpointing_kwargs": {"use_reentrant": False}, "beta": 0.1}
    older = {"gradient_checkpointing", "gradient_checkpointing_kwargs", "beta"}
    assert for_transformers(sent, older) == {"gradient_checkpointing": False,
                                             "gradient_checkpointing_kwargs": {"use_reentrant": False}, "beta": 0.1}  # fmt: skip
    newer = older | {"activation_checkpointing", "activation_checkpointing_kwargs"}
    assert for_transformers(sent, newer) == sent
    assert for_transformers({"activation_checkpointing": True}, {"beta"}) == {"activation_checkpointing": True}


def test_snapshots_record_exactly_the_config_classes_of_the_algorithms() -> None:
    """TRL_CONFIGS is kept as data (a class is snapshotted before an algorithm uses it); it must not drift from the
    algorithms, nor each snapshot from it."""
    assert set(releases.TRL_CONFIGS) == {a.trl_config for a in ALGORITHMS}
    for release in releases.RELEASES:
        assert set(releases.snapshot(release)["classes"]) == set(releases.TRL_CONFIGS), release
