"""textrl-train from YAML: real training, flag precedence, --dry-run and its failure classes, duplicate keys,
reward references, output_dir protection, resume, and two processes under accelerate."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import BIN, GRPO, ROOT, write

pytestmark = pytest.mark.slow


def test_trains_grpo_from_yaml(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "grpo.yaml", GRPO)
    done = cli("textrl-train", "--config", "grpo.yaml")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "textrl-train: done at global step 4, 4 logged steps" in done.stdout and "mean reward: first" in done.stdout
    out = tmp_path / "out/grpo"
    assert (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file()
    manifest = json.loads((out / "textrl_manifest.json").read_text())
    assert manifest["textrl_config"]["num_generations"] == 4 and manifest["processes"] == 1


def test_trains_dpo_from_yaml_with_lora(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = [{"prompt": f"Repeat: {w} ->", "chosen": f" {w}", "rejected": " no"} for w in ("sea", "sky", "sun", "sand")]
    write(tmp_path / "pairs.jsonl", "".join(json.dumps(r) + "\n" for r in rows * 4))
    write(tmp_path / "dpo.yaml", "algo: dpo\noutput_dir: out/dpo\nmax_steps: 2\nper_device_train_batch_size: 4\n"
          "logging_steps: 1\nsave_strategy: 'no'\ngradient_checkpointing: false\nmax_length: 32\n"
          "model: {name: 'textrl:tiny', peft: {r: 4}}\ndataset: {path: pairs.jsonl}\n")  # fmt: skip
    done = cli("textrl-train", "--config", "dpo.yaml")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "out/dpo/adapter_config.json").is_file()
    assert "loss: first" in done.stdout


def test_flags_override_yaml_and_report_their_source(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "grpo.yaml", GRPO)
    done = cli("textrl-train", "--config", "grpo.yaml", "--dry-run", "--learning-rate", "1e-5", "--num-generations", "2",
               "--no-gradient-checkpointing", "--set", "log_unique_prompts=true")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "learning_rate = 1e-05   (TRL default 1e-06; from flag)" in done.stdout
    assert "num_generations = 2   (TRL default 8; from flag)" in done.stdout
    assert "max_completion_length = 8   (TRL default 512; from YAML)" in done.stdout
    assert "log_unique_prompts = True   (TRL default False; from --set)" in done.stdout  # a typed TRL option
    assert "generation batch: 8 completions = 4 prompts x 2 generations per round" in done.stdout
    assert "dry run: the run would start" in done.stdout


def test_dry_run_imports_no_torch(tmp_path: Path) -> None:
    import os
    import subprocess

    shutil.copy(Path(__file__).resolve().parents[2] / "examples/quickstart_prompts.jsonl", tmp_path)
    shutil.copy(Path(__file__).resolve().parents[2] / "examples/quickstart_rewards.py", tmp_path)
    write(tmp_path / "grpo.yaml", GRPO)
    code = ("import sys\nfrom textrl.cli import train_main\nrc = train_main(['--config', 'grpo.yaml', '--dry-run'])\n"
            "print('RC', rc, sorted(m for m in ('torch', 'transformers', 'trl') if m in sys.modules))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=os.environ)
    assert done.stdout.strip().endswith("RC 0 []"), done.stdout + done.stderr


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        (
            "num_generations: 4",
            "num_generations: 3",
            r"grpo\.yaml:3: num_generations: the generation batch .* not divisible by num_generations=3",
        ),
        (
            "learning_rate: 1e-3",
            "lerning_rate: 1e-3",
            r"grpo\.yaml:6: lerning_rate: unknown option for algo='grpo', and not a field of trl\.GRPOConfig in TRL "
            r"1\.16\.0\. Did you mean 'learning_rate'\?",
        ),
        (
            "gradient_checkpointing: false",
            "gradient_checkpointing: false\nmax_steps: 5",
            r"grpo\.yaml:11: max_steps: appears twice \(lines 7 and 11\)",
        ),
        (
            "algo: grpo",
            "algo: simpo",
            r"grpo\.yaml:1: algo: algo='simpo' is not available: .*Fix: use algo='sigmoid_norm'",
        ),
        ("save_steps: 2", "save_steps: [2]", r"grpo\.yaml:9: save_steps: got \[2\] \(list\); allowed: a number > 0"),
    ],
)
def test_dry_run_config_errors_name_the_line(cli, tmp_path: Path, old: str, new: str, match: str) -> None:  # type: ignore[no-untyped-def]
    import re

    assert old in GRPO
    write(tmp_path / "grpo.yaml", GRPO.replace(old, new))
    done = cli("textrl-train", "--config", "grpo.yaml", "--dry-run")
    assert done.returncode == 2
    assert done.stderr.startswith("textrl-train: Invalid TextRL config")
    assert re.search(match, done.stderr), done.stderr


def test_nested_error_points_at_its_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = GRPO.replace('model: {name: "textrl:tiny"}', "model:\n  name: textrl:tiny\n  peft:\n    r: zero")
    write(tmp_path / "grpo.yaml", text)
    done = cli("textrl-train", "--config", "grpo.yaml", "--dry-run")
    assert done.returncode == 2
    assert "grpo.yaml:14: model.peft.r: got 'zero' (str); allowed: an integer >= 1" in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("dataset", "reward", "match"),
    [
        (
            "{path: missing.jsonl}",
            "quickstart_rewards:lowercase_share",
            r"dataset\.path: .*missing\.jsonl does not exist",
        ),
        ("{path: bad.jsonl}", "quickstart_rewards:lowercase_share", r"bad\.jsonl:2: not valid JSON"),
        ("{path: noprompt.jsonl}", "quickstart_rewards:lowercase_share", r"missing column 'prompt'"),
        ("{path: quickstart_prompts.jsonl}", "nope_rewards:f", r"reward: 'nope_rewards:f': no module 'nope_rewards'"),
        (
            "{path: quickstart_prompts.jsonl}",
            "quickstart_rewards:nope",
            r"module quickstart_rewards has no attribute 'nope'; its callables: lowercase_share",
        ),
        (
            "{path: quickstart_prompts.jsonl}",
            "bad_rewards:NOT_CALLABLE",
            r"'bad_rewards:NOT_CALLABLE' is a int, not a function",
        ),
        (
            "{path: quickstart_prompts.jsonl}",
            "bad_rewards:short",
            r"reward 'short' returned 1 values for 4 completions",
        ),
    ],
)
def test_dry_run_data_and_reward_failures(cli, tmp_path: Path, dataset: str, reward: str, match: str) -> None:  # type: ignore[no-untyped-def]
    import re

    write(tmp_path / "bad.jsonl", '{"prompt": "a"}\n{"prompt": \n')
    write(tmp_path / "noprompt.jsonl", '{"question": "a"}\n')
    write(tmp_path / "bad_rewards.py", "NOT_CALLABLE = 3\ndef short(prompts, completions, **_):\n    return [1.0]\n")
    text = GRPO.replace("dataset: {path: quickstart_prompts.jsonl}", f"dataset: {dataset}").replace(
        "reward: quickstart_rewards:lowercase_share", f"reward: {reward}")  # fmt: skip
    write(tmp_path / "grpo.yaml", text)
    done = cli("textrl-train", "--config", "grpo.yaml", "--dry-run")
    assert done.returncode == 2, done.stdout
    assert re.search(match, done.stderr), done.stderr


def test_dry_run_batch_arithmetic_with_processes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "grpo.yaml", GRPO.replace("per_device_train_batch_size: 8", "per_device_train_batch_size: 2"))
    alone = cli("textrl-train", "--config", "grpo.yaml", "--dry-run")
    assert (
        alone.returncode == 2 and "2 completions on one process) is not divisible by num_generations=4" in alone.stderr
    )
    two = cli("textrl-train", "--config", "grpo.yaml", "--dry-run", env={"WORLD_SIZE": "2"})
    assert two.returncode == 0, two.stderr
    assert "effective batch: 2 per device x 1 accumulation x 2 process(es) = 4" in two.stdout


def test_output_dir_is_never_clobbered_and_resume_continues(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path / "grpo.yaml", GRPO)
    first = cli("textrl-train", "--config", "grpo.yaml", "--max-steps", "2")
    assert first.returncode == 0, first.stderr[-3000:]
    assert (tmp_path / "out/grpo/checkpoint-2").is_dir()
    again = cli("textrl-train", "--config", "grpo.yaml")
    assert again.returncode == 2
    assert "output_dir: out/grpo is not empty" in again.stderr and "Fix: --resume to continue" in again.stderr
    dry = cli("textrl-train", "--config", "grpo.yaml", "--dry-run")
    assert dry.returncode == 2 and "is not empty" in dry.stderr
    resumed = cli("textrl-train", "--config", "grpo.yaml", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resuming from out/grpo/checkpoint-2" in resumed.stderr
    state = json.loads((tmp_path / "out/grpo/checkpoint-4/trainer_state.json").read_text())
    assert state["global_step"] == 4
    fresh = cli("textrl-train", "--config", "grpo.yaml", "--overwrite", "--max-steps", "1")
    assert fresh.returncode == 0 and not (tmp_path / "out/grpo/checkpoint-4").exists()
    nothing = cli("textrl-train", "--config", "grpo.yaml", "--resume", "--output-dir", "out/empty")
    assert nothing.returncode == 2 and "found no complete checkpoint-N folder" in nothing.stderr


def test_overwrite_never_deletes_the_model_it_trains(cli, textrl_home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The reported data loss, with real files: output_dir equal to model.name's folder used to pass the dry run, and
    the real run deleted the model, then failed to load it. Both refuse now, and the model is intact."""
    shutil.copytree(textrl_home / "tiny", tmp_path / "base")
    before = sorted(p.name for p in (tmp_path / "base").iterdir())
    write(tmp_path / "grpo.yaml", GRPO.replace('model: {name: "textrl:tiny"}', "model: {name: base}")
          .replace("output_dir: out/grpo", "output_dir: base"))  # fmt: skip
    for extra in (["--dry-run"], []):
        done = cli("textrl-train", "--config", "grpo.yaml", "--overwrite", *extra)
        assert done.returncode == 2, done.stdout[-2000:]
        assert "output_dir: --overwrite would delete base, which holds model.name base" in done.stderr, done.stderr
    assert sorted(p.name for p in (tmp_path / "base").iterdir()) == before
    assert "model.safetensors" in before


def test_two_processes_under_accelerate(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """README's launch path: --write-accelerate-config writes the accelerate config, and `accelerate launch
    --config_file` starts two real processes in one gloo process group on this CPU machine (a MULTI_GPU config
    uses the torchrun-based launcher; accelerate 1.16 runs `--cpu --num_processes 2` as one process without MPI)."""
    write(tmp_path / "grpo.yaml", GRPO.replace("per_device_train_batch_size: 8", "per_device_train_batch_size: 2")
          .replace("max_steps: 4", "max_steps: 2"))  # fmt: skip
    wrote = cli(
        "textrl-train", "--config", "grpo.yaml", "--write-accelerate-config", "acc.yaml", "--num-processes", "2"
    )
    assert wrote.returncode == 0, wrote.stderr
    assert (
        "launch with: accelerate launch --config_file acc.yaml -m textrl.cli train --config grpo.yaml" in wrote.stdout
    )
    written = yaml.safe_load((tmp_path / "acc.yaml").read_text())
    assert written["distributed_type"] == "MULTI_GPU" and written["num_processes"] == 2
    assert written["mixed_precision"] == "no"  # bf16 auto on a machine without a bf16 GPU
    done = cli(str(BIN / "accelerate"), "launch", "--config_file", "acc.yaml", "-m", "textrl.cli", "train",
               "--config", "grpo.yaml")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    manifest = json.loads((tmp_path / "out/grpo/textrl_manifest.json").read_text())
    assert manifest["processes"] == 2
    assert manifest["trl_config_changes"]["generation_batch_size"] == 4  # 2 per device x 2 processes


def test_readme_main_job(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """README's main-job command, verbatim, from a copy of the repository's examples folder."""
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples", tmp_path / "examples")
    done = cli("textrl-train", "--config", "examples/quickstart.yaml", "--overwrite")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "mean reward: first 5 logged steps" in done.stdout


DPO_BEST = """algo: dpo
output_dir: out/dpo
per_device_train_batch_size: 2
per_device_eval_batch_size: 2
max_length: 32
learning_rate: 1e-3
max_steps: 4
logging_steps: 1
save_steps: 2
eval_strategy: steps
eval_steps: 2
metric_for_best_model: eval_loss
gradient_checkpointing: false
model: {name: "textrl:tiny"}
dataset: {path: pairs.jsonl}
eval_dataset: {path: pairs.jsonl}
extra: {load_best_model_at_end: true}
"""


def test_two_processes_agree_on_the_best_checkpoint(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Checkpoints are staged, then renamed: every process (not only the one that renames) must end up naming the
    real best checkpoint, or load_best_model_at_end leaves the other ranks on their last weights."""
    rows = [{"prompt": f"Repeat: {w} ->", "chosen": f" {w}", "rejected": " no"} for w in ("sea", "sky", "sun", "sand")]
    write(tmp_path / "pairs.jsonl", "".join(json.dumps(r) + "\n" for r in rows * 2))
    write(tmp_path / "dpo.yaml", DPO_BEST)
    wrote = cli("textrl-train", "--config", "dpo.yaml", "--write-accelerate-config", "acc.yaml", "--num-processes", "2")
    assert wrote.returncode == 0, wrote.stderr
    done = cli(str(BIN / "accelerate"), "launch", "--config_file", "acc.yaml", "-m", "textrl.cli", "train",
               "--config", "dpo.yaml")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Could not locate the best model" not in done.stderr, done.stderr[-3000:]
    state = json.loads((tmp_path / "out/dpo/checkpoint-4/trainer_state.json").read_text())
    assert Path(state["best_model_checkpoint"]).parent.name == "dpo", state["best_model_checkpoint"]
    assert not (tmp_path / "out/dpo/.textrl-partial").exists()


def test_smollm2_example_dry_run_fetches_nothing(cli, textrl_home: Path) -> None:  # type: ignore[no-untyped-def]
    """The main job's config checks in a dry run before textrl:smollm2 is fetched (TEXTRL_HOME here has only tiny)."""
    done = cli("textrl-train", "--config", str(ROOT / "examples/smollm2/grpo.yaml"), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert (
        "textrl:smollm2" in done.stdout and "134.5M parameters, SmolLM2-135M-Instruct, not fetched yet" in done.stdout
    )
    assert not (textrl_home / "smollm2").exists() and not (textrl_home / "downloads").exists()


def test_held_out_scores_before_and_after_are_printed(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """eval_on_start plus a last evaluation: textrl-train prints the eval set's reward and components both times."""
    config = GRPO.replace("max_steps: 4", "max_steps: 2").replace("save_steps: 2", 'save_strategy: "no"')
    config += ("eval_dataset: {path: quickstart_prompts.jsonl}\neval_strategy: steps\neval_steps: 2\neval_on_start: true\n"
               "per_device_eval_batch_size: 8\n")  # fmt: skip
    done = cli("textrl-train", "--config", str(write(tmp_path / "run.yaml", config)))
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    start = lines.index("held-out evaluation (eval_dataset), step 0 -> step 2:")
    assert lines[start + 1].split()[0] == "reward" and lines[start + 2].split()[0] == "lowercase_share"
    before, after = map(float, lines[start + 2].split()[1::2])
    history = json.loads((tmp_path / "out/grpo/log_history.json").read_text())
    evals = [h for h in history if "eval_reward" in h]
    assert [h["step"] for h in evals] == [0, 2]
    assert (before, after) == (round(evals[0]["eval_rewards/lowercase_share/mean"], 4),
                               round(evals[1]["eval_rewards/lowercase_share/mean"], 4))  # fmt: skip


def test_probe_exit_status_says_whether_the_run_can_learn(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The command's exit status: 3 for a reward that scores every completion the same, 0 for the demo's reward,
    2 for a bad N; the probe writes nothing into output_dir."""
    (tmp_path / "flat.py").write_text("def flat(completions, **_):\n    return [0.5] * len(completions)\n")
    write(tmp_path / "flat.yaml", GRPO.replace("quickstart_rewards:lowercase_share", "flat:flat"))
    flat = cli("textrl-train", "--config", "flat.yaml", "--probe", "2")
    assert flat.returncode == 3, flat.stderr[-3000:]
    assert "FATAL: every group's 4 completions got the same total reward" in flat.stdout
    write(tmp_path / "grpo.yaml", GRPO)
    good = cli("textrl-train", "--config", "grpo.yaml", "--probe")
    assert good.returncode == 0, good.stderr[-3000:]
    assert "4 prompt group(s) x 4 generations" in good.stdout and "reward lowercase_share (weight 1)" in good.stdout
    bad = cli("textrl-train", "--config", "grpo.yaml", "--probe", "0")
    assert bad.returncode == 2 and "--probe: got 0; allowed: 1 or more. Fix: use --probe 4." in bad.stderr
    assert not (tmp_path / "out").exists()
