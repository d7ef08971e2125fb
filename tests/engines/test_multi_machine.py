"""Two "machines" on this one: `--write-accelerate-config --num-machines 2 --main-process-ip 127.0.0.1` writes one
file, and the two printed commands (each its own --machine_rank), started at once, form one 2-process run."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest
import yaml

from .conftest import BIN, ROOT, TINY_GRPO, env

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_two_machines_form_one_run(tmp_path: Path, textrl_home: Path) -> None:
    for name in ("quickstart_prompts.jsonl", "quickstart_rewards.py"):
        (tmp_path / name).write_bytes((ROOT / "examples" / name).read_bytes())
    (tmp_path / "run.yaml").write_text(TINY_GRPO, encoding="utf-8")
    port = _free_port()
    e = env(textrl_home)
    wrote = subprocess.run([str(BIN / "textrl-train"), "--config", "run.yaml", "--write-accelerate-config", "acc.yaml",
                            "--num-processes", "2", "--num-machines", "2", "--main-process-ip", "127.0.0.1",
                            "--main-process-port", str(port)], cwd=tmp_path, env=e, capture_output=True, text=True,
                           timeout=120)  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr
    body = yaml.safe_load((tmp_path / "acc.yaml").read_text())
    assert (body["num_machines"], body["num_processes"], body["machine_rank"]) == (2, 2, 0)
    assert (body["main_process_ip"], body["main_process_port"]) == ("127.0.0.1", port)
    commands = [line.split(": ", 1)[1] for line in wrote.stdout.splitlines() if line.startswith("  machine ")]
    assert commands == [f"accelerate launch --config_file acc.yaml --machine_rank {r} -m textrl.cli train --config "
                        "run.yaml" for r in (0, 1)]  # fmt: skip
    machines = [subprocess.Popen([str(BIN / "accelerate"), *c.split()[1:]], cwd=tmp_path, env=e, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE) for c in commands]  # fmt: skip
    said = [m.communicate(timeout=600) for m in machines]
    assert [m.returncode for m in machines] == [0, 0], [err[-2000:] for _, err in said]
    assert "textrl: training with DDP, 2 processes on 2 machines" in said[0][1]
    manifest = json.loads((tmp_path / "out/textrl_manifest.json").read_text())
    assert manifest["processes"] == 2 and manifest["engine"] == "DDP, 2 processes on 2 machines"
    assert manifest["trl_config_changes"]["generation_batch_size"] == 8  # 4 per device x 2 processes
    assert "textrl-train: done at global step 2" in said[0][0]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--num-machines", "2"], "--num-machines: only shapes a launch config. Fix: add --write-accelerate-config"),
        (["--write-accelerate-config", "a.yaml", "--num-processes", "3", "--num-machines", "2", "--main-process-ip",
          "10.0.0.1"], "--num-processes: got 3 for 2 machines; each machine runs the same number of processes"),
        (["--write-accelerate-config", "a.yaml", "--num-processes", "2", "--num-machines", "2"],
         "--main-process-ip: missing with --num-machines 2: the other machines must know where machine 0 is"),
        (["--write-accelerate-config", "a.yaml", "--main-process-ip", "10.0.0.1"],
         "--main-process-ip: is for a launch on several machines. Fix: add --num-machines N"),
        (["--write-accelerate-config", "a.yaml", "--num-processes", "2", "--num-machines", "2", "--main-process-ip",
          "10.0.0.1", "--main-process-port", "70000"], "--main-process-port: got 70000; allowed: 1 to 65535"),
    ],
)  # fmt: skip
def test_machine_flags_are_checked(flags: list[str], message: str, tmp_path: Path, textrl_home: Path) -> None:
    (tmp_path / "run.yaml").write_text(TINY_GRPO, encoding="utf-8")
    done = subprocess.run([str(BIN / "textrl-train"), "--config", "run.yaml", *flags], cwd=tmp_path,
                          env=env(textrl_home), capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert not (tmp_path / "a.yaml").exists()
