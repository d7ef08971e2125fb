"""SFT from the command line: a YAML run, its dry run agreeing with the run about the chat template, the probe, and
the next run (GRPO) started from the SFT run's LoRA adapter, naming it as its parent."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.test_supervised import MARKED_CHATML

from .conftest import write

CHATS = [{"messages": [{"role": "user", "content": f"Say {w}"}, {"role": "assistant", "content": w}]}
         for w in ("sea", "sky", "sun", "sand")]  # fmt: skip
SFT = """algo: sft
output_dir: out/sft
max_steps: 2
per_device_train_batch_size: 2
logging_steps: 1
gradient_checkpointing: false
assistant_only_loss: true
model: {name: "textrl:tiny", peft: {r: 4}}
dataset: {path: chat.jsonl}
"""
GRPO = """algo: grpo
output_dir: out/grpo
num_generations: 4
per_device_train_batch_size: 8
max_completion_length: 8
max_steps: 2
logging_steps: 1
gradient_checkpointing: false
model: {name: out/sft, peft: {r: 4}}
dataset: {list: ["Say sea", "Say sky"]}
reward: quickstart_rewards:lowercase_share
"""


def test_sft_run_then_grpo_from_its_adapter(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "chat.jsonl", "".join(json.dumps(r) + "\n" for r in CHATS))
    write(tmp_path / "sft.yaml", SFT)
    for flag in ("--dry-run", "--probe"):  # the tiny model's ChatML marks no assistant turn: both refuse, before TRL
        refused = cli("textrl-train", "--config", "sft.yaml", flag)
        assert refused.returncode != 0 and "does not mark the assistant's turns with {% generation %}" in (
            refused.stdout + refused.stderr
        ), refused.stderr[-2000:]
    write(tmp_path / "marked.jinja", MARKED_CHATML)
    write(tmp_path / "sft.yaml", SFT.replace("peft: {r: 4}}", "peft: {r: 4}, chat_template: marked.jinja}"))
    dry = cli("textrl-train", "--config", "sft.yaml", "--dry-run")
    assert dry.returncode == 0 and "supervised format: ok" in dry.stdout, dry.stderr[-2000:]
    probe = cli("textrl-train", "--config", "sft.yaml", "--probe")
    assert probe.returncode == 0 and "4 row(s) of a supervised run" in probe.stdout, probe.stderr[-2000:]
    done = cli("textrl-train", "--config", "sft.yaml")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "mean_token_accuracy: first" in done.stdout and (tmp_path / "out/sft/adapter_config.json").is_file()
    write(tmp_path / "grpo.yaml", GRPO)
    dry = cli("textrl-train", "--config", "grpo.yaml", "--dry-run")
    assert dry.returncode == 0 and "a LoRA adapter on" in dry.stdout and "(merged into it: model.adapter)" in dry.stdout
    done = cli("textrl-train", "--config", "grpo.yaml")
    assert done.returncode == 0, done.stderr[-3000:]
    parent = json.loads((tmp_path / "out/grpo/textrl_manifest.json").read_text())["parent"]
    assert parent["algo"] == "sft" and parent["path"] == str((tmp_path / "out/sft").resolve())
    both = cli("textrl-train", "--config", "grpo.yaml", "--dry-run", "--set", "model.adapter=continue", "--overwrite")
    assert both.returncode != 0 and "a model trains one adapter. Fix: drop peft" in both.stderr, both.stderr[-2000:]
