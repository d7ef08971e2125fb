"""`textrl-train --probe`: each finding triggered by a reward or setting built for it, on the tiny model, in-process
(train_main, the same entry point as the command; tests/cli/test_train_cli.py runs the command itself)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from textrl.cli.train import train_main
from textrl.data.lengths import LengthWarning
from textrl.probe import LEARNS_NOTHING

pytestmark = pytest.mark.slow

REWARDS = """
def constant(completions, **_):
    return [1.0 for _ in completions]

def letters(completions, **_):
    return [sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]

def letters_x100(completions, **_):
    return [100.0 * sum(ch.islower() for ch in c) / max(len(c), 1) for c in completions]

def never(completions, **_):
    return [None for _ in completions]
"""


def _write(folder: Path, model: Path | str, reward: str, **options: object) -> Path:
    (folder / "probe_rewards.py").write_text(REWARDS)
    (folder / "prompts.jsonl").write_text(
        "".join(json.dumps({"prompt": f"Write about {w}:"}) + "\n" for w in ["sea", "dog", "tree", "stone", "fire"])
    )
    body = {"algo": "grpo", "output_dir": str(folder / "out"), "num_generations": 4, "per_device_train_batch_size": 4,
            "max_completion_length": 8, "max_steps": 10, "gradient_checkpointing": False, **options}  # fmt: skip
    lines = [f"{k}: {json.dumps(v)}" for k, v in body.items()]
    lines += [f"model: {{name: {json.dumps(str(model))}}}", "dataset: {path: prompts.jsonl}", f"reward: {reward}"]
    config = folder / "run.yaml"
    config.write_text("\n".join(lines) + "\n")
    return config


def _probe(config: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = train_main(["--config", str(config), "--probe", *extra])
    return code, capsys.readouterr().out


def test_a_constant_reward_learns_nothing_and_exits_3(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _probe(_write(tmp_path, tiny, "probe_rewards:constant"), capsys, "3")
    assert code == LEARNS_NOTHING == 3
    assert "3 prompt group(s) x 4 generations" in out
    assert "groups whose 4 completions all score the same (no learning signal): 3/3 (100%)" in out
    assert "FATAL: every group's 4 completions got the same total reward" in out
    assert "Fix: make the reward graded (partial credit), raise num_generations (now 4)" in out
    assert "verdict: this run would learn nothing as configured (exit status 3)" in out
    assert not (tmp_path / "out").exists()  # the probe writes nothing into output_dir


def test_a_graded_reward_passes_and_the_numbers_are_reported(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _probe(_write(tmp_path, tiny, "probe_rewards:letters", max_completion_length=48), capsys)
    assert code == 0, out
    assert "4 prompt group(s) x 4 generations" in out  # the default N
    assert "sampling: max_new_tokens=48 (max_completion_length, YAML), temperature=1.0 (TextRL default)" in out
    assert "reward letters (weight 1): range [" in out
    assert "completions that every reward scored None/NaN: 0/16 (0%)" in out
    assert "tokens/s); one training pass over them" in out
    assert "s per optimizer step (4 completions), about" in out and "for 10 steps" in out
    assert "FATAL" not in out and "verdict: the run can learn" in out


def test_truncation_none_rewards_and_reward_scales_are_findings_with_fixes(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reward = "{compose: [probe_rewards:letters, probe_rewards:letters_x100, probe_rewards:never]}"
    code, out = _probe(_write(tmp_path, tiny, reward, max_completion_length=2), capsys, "2")
    assert code == 0, out
    assert "completions cut at max_completion_length=2: 8/8 (100%)" in out
    assert "WARNING: 100% of completions were cut at max_completion_length=2" in out
    assert "Fix: raise max_completion_length (e.g. to 4), or reward brevity." in out
    assert "reward never (weight 1): None for every completion" in out
    assert "WARNING: reward never returned None for all 8 completions" in out
    assert "WARNING: reward letters_x100 spans" in out and "letters_x100 decides the advantage alone" in out
    assert "Fix: scale them: give letters_x100 a weight near 0.01" in out


def test_a_sampling_setting_from_the_models_generation_config_is_named(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    model = tmp_path / "model"
    shutil.copytree(tiny, model)
    generation = model / "generation_config.json"
    shipped = json.loads(generation.read_text()) if generation.exists() else {}
    generation.write_text(json.dumps({**shipped, "no_repeat_ngram_size": 2, "typical_p": 0.9}))
    code, out = _probe(_write(tmp_path, model, "probe_rewards:letters", temperature=0.7), capsys, "1")
    assert code == 0, out
    assert "temperature=0.7 (YAML)" in out
    assert "no_repeat_ngram_size=2 (the model's generation_config.json)" in out
    assert "typical_p=0.9 (the model's generation_config.json)" in out
    warning = (
        "WARNING: the model's generation_config.json sets no_repeat_ngram_size=2; TRL leaves no_repeat_ngram_size "
        "unset, so it applies to every rollout. Fix: set it explicitly, e.g. generation_kwargs: "
        "{no_repeat_ngram_size: <value>}"
    )
    assert warning in out


def test_generation_kwargs_as_json_text_is_read_as_trl_reads_it(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """TRL takes a dict option as JSON text too, and so does the probe's sampling report. (The typed view showed that
    the probe handed the text on as if it were a mapping; names were then found as substrings of the text.)"""
    config = _write(tmp_path, tiny, "probe_rewards:letters", generation_kwargs='{"no_repeat_ngram_size": 2}')
    code, out = _probe(config, capsys, "1")
    assert code == 0, out
    assert "no_repeat_ngram_size=2 (generation_kwargs)" in out


def test_the_pairwise_probe_reports_reference_margins_and_lengths(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"prompt": f"Repeat the word: {w} ->", "chosen": f" {w}", "rejected": f" {w} {w} {w} {w} {w} {w} {w}"}
            for w in ["sea", "dog", "tree", "stone", "fire", "cloud"]]  # fmt: skip
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = tmp_path / "dpo.yaml"
    config.write_text(
        f"algo: dpo\noutput_dir: {tmp_path / 'out'}\nmax_length: 12\nper_device_train_batch_size: 2\n"
        f"gradient_checkpointing: false\nmodel: {{name: {json.dumps(str(tiny))}}}\ndataset: {{path: pairs.jsonl}}\n"
    )
    with pytest.warns(LengthWarning, match="5 of 5 rows .* are longer than max_length=12"):  # the trainer's own check
        code, out = _probe(config, capsys, "5")
    assert code == 0, out
    assert "5 preference row(s), tokenized and scored by the run's reference model" in out
    assert "cut at max_length=12: 5/5 (100%)" in out
    assert "reference log p(chosen) - log p(rejected), summed over the answer: mean " in out
    assert "the reference already prefers chosen on " in out
    assert "WARNING: 5/5 (100%) rows are longer than max_length=12" in out
    assert "Fix: raise max_length to at least" in out


def test_the_probe_says_what_it_does_while_it_works(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: 24 s on the main job before the probe printed anything."""
    assert train_main(["--config", str(_write(tmp_path, tiny, "probe_rewards:letters")), "--probe", "1"]) == 0
    err = capsys.readouterr().err
    steps = ["probe: reading the data of", f"probe: loading {tiny} and building the run's trainer on 1 row(s)",
             "probe: generating and scoring 1 group(s) x 4 completions of up to 8 tokens",
             "probe: generated in "]  # fmt: skip
    assert all(step in err for step in steps), err
    assert [err.index(step) for step in steps] == sorted(err.index(step) for step in steps)


def test_a_reward_that_scores_nothing_is_a_finding_not_a_crash(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In training such a batch stops the run (NoScoreError); the probe reports it instead, as the fatal finding."""
    code, out = _probe(_write(tmp_path, tiny, "probe_rewards:never"), capsys, "1")
    assert code == LEARNS_NOTHING, out
    assert "reward never (weight 1): None for every completion" in out and "FATAL" in out
