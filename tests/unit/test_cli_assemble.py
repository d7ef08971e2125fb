"""Assembling a run from YAML, flags and --set, in-process (no torch): each mistake's message beside a passing twin."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from textrl import ConfigError
from textrl.checkpoints.run_folder import check_output_dir
from textrl.cli.train import train_main
from textrl.run.assemble import assemble, parse_value

NAMES = {"num_generations": "--num-generations", "learning_rate": "--learning-rate", "loss_type": "--loss-type"}


def yaml_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text)
    return path


def test_precedence_and_sources(tmp_path: Path) -> None:
    path = yaml_file(tmp_path, "algo: grpo\noutput_dir: o\nlearning_rate: 1e-4\nbeta: 0.1\n")
    run = assemble(path, {"learning_rate": "2e-5"}, NAMES, ["log_unique_prompts=true", "model.name=textrl:tiny"])
    assert run.config.learning_rate == 2e-5 and run.config.beta == 0.1 and run.config.num_generations == 8  # type: ignore[attr-defined]
    assert run.sources == {"algo": "YAML", "output_dir": "YAML", "learning_rate": "flag", "beta": "YAML",
                           "log_unique_prompts": "--set", "model": "--set"}  # fmt: skip
    assert run.config.log_unique_prompts is True and run.config.model.name == "textrl:tiny"  # type: ignore[attr-defined]
    assert run.config.extra == {}  # type: ignore[attr-defined]  # every TRL field is a typed option
    routed = assemble(yaml_file(tmp_path, "algo: grpo\noutput_dir: o\nextra: {log_level: info}\n"), {}, NAMES, [])
    assert routed.config.log_level == "info" and routed.sources["log_level"] == "YAML (extra)"  # type: ignore[attr-defined]


def test_flag_values_take_the_options_type() -> None:
    from textrl.spec import BY_NAME

    dpo, grpo = BY_NAME["dpo"], BY_NAME["grpo"]
    assert parse_value("sigmoid,sft", dpo.option("loss_type").annotation) == ["sigmoid", "sft"]
    assert parse_value("[sigmoid, sft]", dpo.option("loss_type").annotation) == ["sigmoid", "sft"]
    assert parse_value("1e-5", grpo.option("learning_rate").annotation) == 1e-5
    assert parse_value("none", grpo.option("epsilon_high").annotation) is None
    assert parse_value("auto", grpo.option("bf16").annotation) == "auto"
    assert parse_value("123", grpo.option("run_name").annotation) == "123"


@pytest.mark.parametrize(
    ("yaml_text", "flags", "sets", "match"),
    [
        (
            "algo: grpo\noutput_dir: o\n",
            {"loss_type": "sigmoid"},
            [],
            r"flag --loss-type: loss_type: got 'sigmoid' \(str\); allowed: one of 'grpo'",
        ),
        (
            "algo: dpo\noutput_dir: o\n",
            {"num_generations": "4"},
            [],
            r"flag --num-generations: num_generations: flag --num-generations does not apply to algo='dpo'",
        ),
        ("algo: grpo\noutput_dir: o\n", {}, ["oops"], r"--set: got 'oops'; allowed: key=value"),
        ("- algo: grpo\n", {}, [], r"run\.yaml: config: the file holds a YAML list; expected a mapping"),
        ("algo: grpo\noutput_dir: o\nmodel: x\n", {}, ["model.name=y"], r"--set: model is not a mapping in the config"),
        ("output_dir: o\n", {}, [], r"algo: is required; allowed: grpo"),
    ],
)
def test_assembly_errors(tmp_path: Path, yaml_text: str, flags: dict[str, str], sets: list[str], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        assemble(yaml_file(tmp_path, yaml_text), flags, NAMES, sets)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--config: .*nope\.yaml does not exist"):
        assemble(tmp_path / "nope.yaml", {}, NAMES, [])
    assert assemble(None, {"algo": "kto", "output_dir": "o"}, NAMES, []).config.algo == "kto"


def test_resume_and_overwrite_together(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--resume: --resume and --overwrite contradict each other"):
        check_output_dir(tmp_path, resume=True, overwrite=True)
    assert check_output_dir(tmp_path / "new", resume=False, overwrite=False) is None


def test_dry_run_rejects_a_reward_model_that_is_not_a_classifier(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from .test_model_source import model_folder

    not_rm = model_folder(tmp_path / "causal")  # config (LlamaForCausalLM), weights and tokenizer
    text = "algo: rloo\noutput_dir: OUT\nmodel: {name: textrl:tiny}\ndataset: {list: [hi, there, a, b]}\nreward: {model: causal}\n"
    yaml_file(tmp_path, text.replace("OUT", str(tmp_path / "out")))
    assert train_main(["--config", str(tmp_path / "run.yaml"), "--dry-run"]) == 2
    assert "reward.model: " in capsys.readouterr().err
    (not_rm / "config.json").write_text(json.dumps({"architectures": ["LlamaForSequenceClassification"]}))
    assert train_main(["--config", str(tmp_path / "run.yaml"), "--dry-run"]) == 0
    assert "a sequence classifier (LlamaForSequenceClassification)" in capsys.readouterr().out


def test_set_can_replace_a_whole_section(tmp_path: Path) -> None:
    path = yaml_file(tmp_path, "algo: grpo\noutput_dir: o\nreward: old_rewards:f\n")
    run = assemble(path, {}, NAMES, ["reward=new_rewards:g"])
    assert run.config.reward == "new_rewards:g" and run.sources["reward"] == "--set"  # type: ignore[attr-defined]


def test_no_is_a_word_not_false(tmp_path: Path) -> None:
    """YAML 1.1 reads `no` as false; TextRL reads YAML 1.2, where only true/false are booleans."""
    path = yaml_file(tmp_path, "algo: grpo\noutput_dir: o\nsave_strategy: no\n")
    assert assemble(path, {}, NAMES, []).config.save_strategy == "no"  # type: ignore[attr-defined]
    flagged = assemble(
        path, {"eval_strategy": "no", "save_strategy": "no"}, NAMES | {"save_strategy": "--save-strategy"}, []
    )
    assert flagged.config.save_strategy == "no" and flagged.config.eval_strategy == "no"  # type: ignore[attr-defined]


def test_overwrite_refuses_to_delete_the_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rewards_here.py").write_text(
        "def f(prompts, completions, **_):\n    return [1.0] * len(completions)\n"
    )
    yaml_file(tmp_path, "algo: grpo\noutput_dir: .\nmodel: {name: textrl:tiny}\ndataset: {list: [a, b, c, d, e, f, g, h]}\n"
              "reward: rewards_here:f\n")  # fmt: skip
    assert train_main(["--config", "run.yaml", "--overwrite", "--dry-run"]) == 2
    assert "output_dir: --overwrite would delete ., which holds the working directory" in capsys.readouterr().err
    assert train_main(["--config", "run.yaml", "--overwrite"]) == 2
    assert (tmp_path / "run.yaml").is_file() and (tmp_path / "rewards_here.py").is_file()


def test_dry_run_passes_chat_completions_as_trl_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "chat_rewards.py").write_text("def content_len(prompts, completions, **_):\n"
                                              "    return [float(len(c[0]['content'])) for c in completions]\n")  # fmt: skip
    rows = "[{prompt: [{role: user, content: hi}]}, {prompt: [{role: user, content: yo}]}]"
    text = f"algo: grpo\noutput_dir: OUT\nmodel: {{name: textrl:tiny}}\ndataset: {{list: {rows}}}\nreward: chat_rewards:content_len\n"
    yaml_file(tmp_path, text.replace("OUT", str(tmp_path / "out")))
    assert train_main(["--config", str(tmp_path / "run.yaml"), "--dry-run", "--per-device-train-batch-size", "8"]) == 0
    assert "content_len -> [33.0, 33.0]" in capsys.readouterr().out


def test_eval_refuses_greedy_with_several_generations(capsys: pytest.CaptureFixture[str]) -> None:
    from textrl.cli.evaluate import eval_main

    code = eval_main(
        ["--model", "m", "--dataset", "d.jsonl", "--reward", "a:b", "--temperature", "0", "--num-generations", "2"]
    )
    assert code == 2 and "--num-generations 2 would repeat it" in capsys.readouterr().err


def test_resume_skips_a_checkpoint_cut_off_mid_save(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from textrl.checkpoints.run_folder import last_checkpoint

    for step, complete in ((2, True), (4, True), (6, False)):
        folder = tmp_path / f"checkpoint-{step}"
        folder.mkdir()
        if complete:
            for name in ("trainer_state.json", "model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth"):
                (folder / name).write_text("{}")
    assert last_checkpoint(tmp_path) == tmp_path / "checkpoint-4"
    assert "ignoring checkpoint-6: it has no trainer_state.json, so its save was cut off" in capsys.readouterr().err
    assert check_output_dir(tmp_path, resume=True, overwrite=False) == tmp_path / "checkpoint-4"


@pytest.mark.skipif(importlib.util.find_spec("deepspeed") is not None, reason="deepspeed is installed here")
def test_dry_run_names_a_missing_engine_and_shows_what_trl_gets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """deepspeed is not installed in .venv: the dry run says so (with the extra). fsdp needs a GPU-class device: refused
    here; with one (has_accelerator made True, as on a GPU machine) the dry run shows what TRL gets."""
    (tmp_path / "rewards_here.py").write_text(
        "def f(prompts, completions, **_):\n    return [1.0] * len(completions)\n"
    )
    base = "algo: grpo\noutput_dir: OUT\nmodel: {name: textrl:tiny}\ndataset: {list: [a, b, c, d, e, f, g, h]}\nreward: rewards_here:f\n"
    yaml_file(
        tmp_path, base.replace("OUT", str(tmp_path / "out")) + "distributed: {strategy: deepspeed, zero_stage: 3}\n"
    )
    assert train_main(["--config", str(tmp_path / "run.yaml"), "--dry-run"]) == 2
    assert (
        "distributed.strategy: strategy deepspeed needs the deepspeed package, which is not installed here. "
        "Fix: pip install 'textrl[deepspeed]'" in capsys.readouterr().err
    )
    yaml_file(
        tmp_path, base.replace("OUT", str(tmp_path / "out")) + "distributed: {strategy: fsdp, offload: optimizer}\n"
    )
    assert train_main(["--config", str(tmp_path / "run.yaml"), "--dry-run"]) == 2
    assert "distributed.strategy: got 'fsdp' on a machine without a GPU" in capsys.readouterr().err
    monkeypatch.setattr("textrl.engines.hardware.has_accelerator", lambda: True)
    assert train_main(["--config", str(tmp_path / "run.yaml"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "distributed: TRL gets fsdp=true" in out
    assert (
        'distributed: TRL gets fsdp_config={"version": 2, "auto_wrap_policy": "TRANSFORMER_BASED_WRAP", "cpu_offload": true'
        in out
    )


def test_write_accelerate_config_checks_the_process_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--num-processes must be 1 or more; a good count writes the file and checks batches for that world size,
    passed to validation explicitly: this process's environment (WORLD_SIZE) is left as it was."""
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    config = yaml_file(tmp_path, f"algo: dpo\noutput_dir: {tmp_path / 'out'}\nmodel: {{name: textrl:tiny}}\n")
    target = tmp_path / "acc.yaml"
    assert train_main(["--config", str(config), "--write-accelerate-config", str(target), "--num-processes", "0"]) == 2
    assert "--num-processes: got 0; allowed: 1 or more. Fix: use >= 1." in capsys.readouterr().err
    assert not target.exists()
    assert train_main(["--config", str(config), "--write-accelerate-config", str(target), "--num-processes", "3"]) == 0
    assert "launch with: accelerate launch --config_file" in capsys.readouterr().out
    assert "num_processes: 3" in target.read_text()
    assert "WORLD_SIZE" not in os.environ
    grpo = yaml_file(
        tmp_path,
        f"algo: grpo\noutput_dir: {tmp_path / 'g'}\nper_device_train_batch_size: 2\nnum_generations: 4\n"
        "model: {name: textrl:tiny}\n",
    )
    fits = ["--config", str(grpo), "--write-accelerate-config", str(tmp_path / "g.yaml"), "--num-processes"]
    assert train_main([*fits, "2"]) == 0  # 2 per device x 2 processes = 4 completions: one group of 4
    capsys.readouterr()
    assert train_main([*fits, "3"]) == 2
    assert "= 2 × 1 × 3 processes = 6 completions over 3 processes) is not divisible" in capsys.readouterr().err
