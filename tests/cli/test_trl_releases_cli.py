"""The same example configs on whichever TRL release is installed: the main suite runs these on TRL 1.16, and CI's
release legs (scripts/test.sh) run them, with the drift tests, on each older supported release put first on the
path (scripts/trl_release.sh). One online and one pairwise example train two steps, a recipe for TRL's own CLI is
converted and trains, and what the installed release lacks is refused before any model loads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from textrl.spec import trl_releases
from textrl.trl_support.env import version

from .conftest import ROOT, write

INSTALLED = version("trl") or ""
RELEASE = trl_releases.release_of(INSTALLED)

pytestmark = pytest.mark.slow


def test_the_installed_release_is_supported() -> None:
    assert RELEASE is not None, f"TRL {INSTALLED} is outside {trl_releases.RELEASES}"


def test_online_example_trains(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    shutil.copy(ROOT / "examples/quickstart.yaml", tmp_path)
    done = cli("textrl-train", "--config", "quickstart.yaml", "--max-steps", "2", "--logging-steps", "1",
               "--save-strategy", "no", "--output-dir", "out/q")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "textrl-train: done at global step 2, 2 logged steps" in done.stdout, done.stdout[-2000:]
    assert json.loads((tmp_path / "out/q/textrl_manifest.json").read_text())["versions"]["trl"] == INSTALLED


def test_pairwise_example_trains(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """examples/smollm2/dpo.yaml (DPO + SFT term, LoRA) with the tiny model in place of SmolLM2."""
    shutil.copytree(ROOT / "examples/smollm2", tmp_path / "smollm2")
    done = cli("textrl-train", "--config", "smollm2/dpo.yaml", "--set", "model.name=textrl:tiny", "--max-steps", "2",
               "--logging-steps", "1", "--output-dir", "out/d")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "textrl-train: done at global step 2, 2 logged steps" in done.stdout, done.stdout[-2000:]


def test_supervised_example_trains(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """examples/smollm2/sft.yaml (SFT, LoRA, chat prompt and completion) with the tiny model in place of SmolLM2:
    TRL 1.13 and 1.14 default SFT's loss_type to chunked_nll, TextRL passes nll on every release."""
    shutil.copytree(ROOT / "examples/smollm2", tmp_path / "smollm2")
    done = cli("textrl-train", "--config", "smollm2/sft.yaml", "--set", "model.name=textrl:tiny", "--max-steps", "2",
               "--logging-steps", "1", "--output-dir", "out/s")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "textrl-train: done at global step 2, 2 logged steps" in done.stdout, done.stdout[-2000:]
    assert json.loads((tmp_path / "out/s/textrl_manifest.json").read_text())["versions"]["trl"] == INSTALLED


def test_a_trl_recipe_is_converted_and_trains(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    shutil.copytree(ROOT / "examples/trl", tmp_path / "trl")
    converted = cli("textrl-convert", "--trl", "grpo", "trl/grpo_recipe.yml", "-o", "trl/converted.yaml")
    assert converted.returncode == 0, converted.stderr[-3000:]
    done = cli("textrl-train", "--config", "trl/converted.yaml", "--max-steps", "2", "--logging-steps", "1",
               "--save-strategy", "no", "--output-dir", "out/r")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "textrl-train: done at global step 2, 2 logged steps" in done.stdout, done.stdout[-2000:]


def test_what_the_release_lacks_is_refused_before_a_model_loads(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """pad_to_multiple_of='auto' is TRL 1.16's; router_aux_loss_coef=null came in 1.14. The dry run of a config
    without them names the installed release and its defaults that differ from TRL 1.16's."""
    write(tmp_path / "pairs.jsonl", '{"prompt": "a", "chosen": "b", "rejected": "c"}\n')
    write(tmp_path / "dpo.yaml", "algo: dpo\noutput_dir: out/x\nmodel: {name: 'textrl:tiny'}\n"
          "dataset: {path: pairs.jsonl}\npad_to_multiple_of: auto\nrouter_aux_loss_coef: null\n")  # fmt: skip
    done = cli("textrl-train", "--config", "dpo.yaml", "--dry-run")
    expected = [o for o, since in (("pad_to_multiple_of", "1.16"), ("router_aux_loss_coef", "1.14"))
                if RELEASE is not None and trl_releases.RELEASES.index(RELEASE) < trl_releases.RELEASES.index(since)]  # fmt: skip
    if not expected:
        assert done.returncode == 0, done.stderr[-3000:]
    else:
        assert done.returncode == 2, done.stdout + done.stderr
        for option in expected:
            assert f"{option}: " in done.stderr and f"installed {INSTALLED}" in done.stderr, done.stderr
        assert "'auto' needs TRL >= 1.16" in done.stderr and "Fix: upgrade TRL" in done.stderr
        assert "Loading" not in done.stderr and "model" not in done.stdout
    write(tmp_path / "plain.yaml", "algo: dpo\noutput_dir: out/y\nmodel: {name: 'textrl:tiny'}\n"
          "dataset: {path: pairs.jsonl}\n")  # fmt: skip
    plain = cli("textrl-train", "--config", "plain.yaml", "--dry-run")
    assert plain.returncode == 0, plain.stderr[-3000:]
    assert f"trl: {INSTALLED}, in the tested window 1.13 to 1.16" in plain.stdout
    if RELEASE != trl_releases.NEWEST:
        assert "pad_to_multiple_of: TRL" in plain.stdout and "defaults that differ from TRL 1.16's" in plain.stdout
    else:
        assert "defaults that differ" not in plain.stdout


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.yaml")), ids=lambda p: p.name)
def test_every_example_config_is_valid_on_the_installed_release(path: Path) -> None:
    """The configs that need a GPU or the hub to train (QLoRA on Llama, ...) are at least valid on each release."""
    from textrl import TextRLConfig

    assert TextRLConfig.from_yaml(path).algorithm()


def test_env_names_the_installed_release_and_the_window(cli) -> None:  # type: ignore[no-untyped-def]
    done = cli("textrl-train", "--env")
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"trl {INSTALLED} is in the tested window, 1.13 to 1.16 (CI trains on" in done.stdout, done.stdout
