"""--overwrite replaces only an earlier output of its kind: each refusal (the folder is, holds or lies inside an
input, holds another run, is not an earlier output, is a file, holds the working directory) beside a passing twin,
with the files proven still there. Resuming another algorithm's run is refused. No torch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from textrl import ConfigError
from textrl.checkpoints.files import MANIFEST, MERGE_RECORD
from textrl.checkpoints.overwrite import Input, check_replaceable
from textrl.cli.train import train_main

REWARD = "def f(prompts, completions, **_):\n    return [1.0] * len(completions)\n"


def run_folder(path: Path, algo: str = "grpo") -> Path:
    """What a finished TextRL run leaves: manifest, a whole checkpoint (a model folder, as --resume requires),
    model files."""
    model_folder(path / "checkpoint-2")
    for name in ("trainer_state.json", "optimizer.pt", "scheduler.pt", "rng_state.pth"):
        (path / "checkpoint-2" / name).write_text("{}")
    (path / "model.safetensors").write_text("weights")
    (path / MANIFEST).write_text(json.dumps({"textrl_config": {"algo": algo}}))
    return path


def model_folder(path: Path) -> Path:
    """A folder that load_model's checks take for a saved model (config, weights, tokenizer)."""
    from .test_model_source import model_folder as saved_model

    return saved_model(path)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_rewards.py").write_text(REWARD)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.jsonl").write_text('{"prompt": "a"}\n' * 8)
    return tmp_path


def files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def test_an_earlier_run_is_replaceable(project: Path) -> None:
    check_replaceable(run_folder(project / "out" / "run"), [], kind="run", field="output_dir")
    check_replaceable(project / "out" / "new", [], kind="run", field="output_dir")  # absent: nothing to refuse


@pytest.mark.parametrize(
    ("make", "target", "match"),
    [
        (lambda p: model_folder(p / "models" / "base"), "models/base",
         r"--overwrite would delete models/base, which holds model\.name models/base"),
        (lambda p: model_folder(p / "runs" / "base"), "runs",
         r"--overwrite would delete runs, which holds model\.name"),
        (lambda p: run_folder(model_folder(p / "base") / "run"), "base/run", r"base/run lies inside model\.name"),
        (lambda p: run_folder(p / "runs" / "other"), "runs", r"which holds other outputs \(.*runs/other\)"),
        (lambda p: (p / "notes").mkdir() or (p / "notes" / "todo.txt").write_text("x"), "notes",
         r"notes is not an earlier run \(no textrl_manifest\.json; it holds todo\.txt\)"),
        (lambda p: (p / "afile").write_text("x"), "afile", r"afile is a file, not a folder"),
        (lambda p: None, ".", r"--overwrite would delete \., which holds the working directory"),
    ],
)  # fmt: skip
def test_refusals_name_what_would_be_destroyed(project: Path, make, target: str, match: str) -> None:  # type: ignore[no-untyped-def]
    make(project)
    before = files(project)
    read = [Input(f"model.name {p}", (project / p).resolve()) for p in ("models/base", "runs/base", "base")]
    read = [i for i in read if i.path.exists()]
    with pytest.raises(ConfigError, match=match):
        check_replaceable(Path(target), read, kind="run", field="output_dir")
    assert files(project) == before


def test_a_lora_run_keeps_its_own_extra_adapter_replaceable(project: Path) -> None:
    """PEFT saves every adapter but "default" into a subfolder named after it: a LoRA DPO run leaves TRL's frozen
    `ref/` copy. That is part of the run; an adapter folder below a folder that is not a run, or deeper, is not."""
    run = run_folder(project / "out" / "lora")
    (run / "ref").mkdir()
    (run / "ref" / "adapter_config.json").write_text("{}")
    check_replaceable(Path("out/lora"), [], kind="run", field="output_dir")
    (run / "ref" / "deeper").mkdir()
    (run / "ref" / "deeper" / "adapter_config.json").write_text("{}")
    check_replaceable(Path("out/lora"), [], kind="run", field="output_dir")  # inside the run's own adapter
    with pytest.raises(ConfigError, match=r"which holds other outputs \(.*out/lora\)"):
        check_replaceable(Path("out"), [], kind="run", field="output_dir")
    loose = project / "adapters"
    (loose / "mine").mkdir(parents=True)
    (loose / "mine" / "adapter_config.json").write_text("{}")
    with pytest.raises(ConfigError, match=r"which holds other outputs \(.*adapters/mine\)"):
        check_replaceable(Path("adapters"), [], kind="run", field="output_dir")


def test_a_merge_replaces_only_an_earlier_merge(project: Path) -> None:
    earlier = model_folder(project / "merged")
    with pytest.raises(ConfigError, match=r"merged is not an earlier merged model \(no textrl_merge\.json"):
        check_replaceable(Path("merged"), [], kind="merged model", field="--output")
    (earlier / MERGE_RECORD).write_text("{}")
    check_replaceable(Path("merged"), [], kind="merged model", field="--output")


CONFIG = """algo: grpo
output_dir: {out}
model: {{name: {model}}}
dataset: {{path: data/train.jsonl}}
reward: my_rewards:f
"""


@pytest.mark.parametrize(
    ("out", "model", "match"),
    [
        ("models/base", "models/base", r"would delete models/base, which holds model\.name models/base"),
        ("data", "textrl:tiny", r"would delete data, which holds dataset\.path data/train\.jsonl"),
        ("out", "out/run/checkpoint-2", r"would delete out, which holds model\.name out/run/checkpoint-2"),
    ],
)
def test_train_overwrite_keeps_what_the_run_reads(
    project: Path, out: str, model: str, match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reported data loss: output_dir equal to the model's folder was deleted, then the model failed to load."""
    model_folder(project / "models" / "base")
    run_folder(project / "out" / "run")
    (project / "run.yaml").write_text(CONFIG.format(out=out, model=model))
    before = files(project)
    for extra in (["--dry-run"], []):
        assert train_main(["--config", "run.yaml", "--overwrite", *extra]) == 2
        assert "textrl-train: Invalid TextRL config: output_dir: --overwrite" in (err := capsys.readouterr().err)
        assert __import__("re").search(match, err), err
    assert files(project) == before


def test_train_overwrite_keeps_the_reward_module_and_reward_model(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "rewardpkg").mkdir()
    (project / "rewardpkg" / "__init__.py").write_text("")
    (project / "rewardpkg" / "scoring.py").write_text(REWARD)
    text = CONFIG.format(out="rewardpkg", model="textrl:tiny").replace("my_rewards:f", "rewardpkg.scoring:f")
    (project / "run.yaml").write_text(text)
    assert train_main(["--config", "run.yaml", "--overwrite", "--dry-run"]) == 2
    assert "which holds reward module of rewardpkg.scoring:f" in capsys.readouterr().err
    model_folder(project / "judges" / "rm")
    (project / "judges" / "rm" / "config.json").write_text('{"architectures": ["LlamaForSequenceClassification"]}')
    (project / "run.yaml").write_text(
        CONFIG.format(out="judges", model="textrl:tiny").replace("my_rewards:f", "{model: judges/rm}")
    )
    assert train_main(["--config", "run.yaml", "--overwrite", "--dry-run"]) == 2
    assert "which holds reward.model judges/rm" in capsys.readouterr().err
    assert (project / "rewardpkg" / "scoring.py").is_file() and (
        project / "judges" / "rm" / "model.safetensors"
    ).is_file()


def test_output_dir_that_is_a_file_is_named_before_anything_loads(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "result").write_text("not a folder")
    (project / "run.yaml").write_text(CONFIG.format(out="result", model="textrl:tiny"))
    for extra in (["--dry-run"], []):
        assert train_main(["--config", "run.yaml", *extra]) == 2
        assert "output_dir: result is a file; output_dir is the folder for checkpoints" in capsys.readouterr().err
    assert (project / "result").read_text() == "not a folder"


def test_resume_refuses_another_algorithm(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_folder(project / "out" / "run", algo="grpo")
    (project / "run.yaml").write_text(CONFIG.format(out="out/run", model="textrl:tiny").replace("grpo", "rloo"))
    assert train_main(["--config", "run.yaml", "--resume", "--dry-run"]) == 2
    assert (
        "algo: --resume: out/run holds a run of algo='grpo' (textrl_manifest.json), and this config says algo='rloo'"
        in capsys.readouterr().err
    )
    (project / "run.yaml").write_text(CONFIG.format(out="out/run", model="textrl:tiny"))
    assert train_main(["--config", "run.yaml", "--resume", "--dry-run"]) == 0
    assert "(resuming from checkpoint-2)" in capsys.readouterr().out


def test_merge_overwrite_keeps_the_adapter_and_other_runs(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The reported data loss: `--adapter runs/lora --output runs --overwrite` replaced runs/ (adapter and a sibling)."""
    from textrl.cli.merge import merge_main

    lora = run_folder(project / "runs" / "lora")
    (lora / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "models/base"}))
    run_folder(project / "runs" / "other")
    model_folder(project / "models" / "base")
    before = files(project)
    cases = [
        ("runs", r"--output: --overwrite would delete runs, which holds --adapter runs/lora"),
        ("runs/lora", r"--output: --overwrite would delete runs/lora, which holds --adapter runs/lora"),
        ("models/base", r"--output: --overwrite would delete models/base, which holds the adapter's base model"),
        ("runs/other", r"--output: runs/other is not an earlier merged model \(no textrl_merge\.json"),
    ]
    for output, match in cases:
        assert merge_main(["--adapter", "runs/lora", "--output", output, "--overwrite"]) == 2
        assert __import__("re").search(match, err := capsys.readouterr().err), err
    (project / "merged.txt").write_text("x")
    assert merge_main(["--adapter", "runs/lora", "--output", "merged.txt", "--overwrite"]) == 2
    assert "--output: merged.txt is a file, not a folder" in capsys.readouterr().err
    assert files(project) == before | {"merged.txt"}


def test_eval_output_never_overwrites_an_input(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from textrl.cli.evaluate import eval_main

    data = project / "data" / "train.jsonl"
    before = data.read_text()
    assert eval_main(["--model", "m", "--dataset", str(data), "--reward", "my_rewards:f", "--output", str(data)]) == 2
    assert "--output: " in (err := capsys.readouterr().err) and "which this command reads" in err
    assert (
        eval_main(["--model", "m", "--dataset", str(data), "--reward", "my_rewards:f", "--output", "my_rewards.py"])
        == 2
    )
    assert "the module of --reward my_rewards:f" in capsys.readouterr().err
    assert eval_main(["--model", "m", "--dataset", str(data), "--reward", "my_rewards:f", "--output", "data"]) == 2
    assert "--output: data is a folder; --output takes a file. Fix: give a file name" in capsys.readouterr().err
    assert data.read_text() == before and (project / "my_rewards.py").read_text() == REWARD


@pytest.mark.parametrize(
    ("flag", "value", "match"),
    [
        ("--limit", "0", r"argument --limit: got 0; allowed: an integer >= 1 \(leave --limit out to use every row\)"),
        ("--limit", "-1", r"argument --limit: got -1; allowed: an integer >= 1"),
        ("--batch-size", "0", r"argument --batch-size: got 0; allowed: an integer >= 1"),
        ("--num-generations", "0", r"argument --num-generations: got 0; allowed: an integer >= 1"),
        ("--max-new-tokens", "0", r"argument --max-new-tokens: got 0; allowed: an integer >= 1"),
        ("--temperature", "-1", r"argument --temperature: got -1; allowed: a finite number >= 0"),
        ("--temperature", "nan", r"argument --temperature: got nan; allowed: a finite number >= 0"),
        ("--limit", "two", r"argument --limit: got 'two'; allowed: an integer >= 1"),
    ],
)
def test_eval_flags_are_checked_when_parsed(
    flag: str, value: str, match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from textrl.cli.evaluate import eval_parser

    base = ["--model", "m", "--dataset", "d.jsonl", "--reward", "a:b"]
    with pytest.raises(SystemExit) as info:
        eval_parser().parse_args([*base, flag, value])
    assert info.value.code == 2
    assert __import__("re").search(match, capsys.readouterr().err)
    good = {
        "--limit": "1",
        "--batch-size": "1",
        "--num-generations": "1",
        "--max-new-tokens": "1",
        "--temperature": "0",
    }
    assert eval_parser().parse_args([*base, flag, good[flag]]) is not None
