"""Config input that used to be accepted silently or escape as a raw traceback: NaN and infinite weights, YAML merge
keys, unhashable keys, deep nesting, files that are not UTF-8, and `--set` values that do not parse. Each refusal
names the field or the line, beside a passing twin. No torch."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from textrl import ConfigError, TextRLConfig
from textrl.cli.train import train_main
from textrl.errors import UnknownTRLFieldWarning
from textrl.run.assemble import assemble

HEAD = "algo: grpo\noutput_dir: o\n"


def from_yaml(tmp_path: Path, text: str | bytes) -> TextRLConfig:
    path = tmp_path / "c.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return TextRLConfig.from_yaml(path)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("algo", "key", "bad", "good", "match"),
    [
        ("grpo", "reward_weights", "[.nan, 1]", "[0.5, 1]", r"reward_weights\[0\]: got nan; allowed: a finite number"),
        ("grpo", "reward_weights", "[1, -.inf]", "[1, -1]", r"reward_weights\[1\]: got -inf; allowed: a finite number"),
        ("dpo", "loss_type: [sigmoid, sft]\nloss_weights", "[.nan, 1]", "[1, 1]", r"loss_weights\[0\]: got nan"),
        ("grpo", "learning_rate", ".inf", "1e-5", r"learning_rate: got inf; allowed: a finite number"),
        ("grpo", "reward", "{compose: [m:a, m:b], weights: [.nan, 1]}", "{compose: [m:a, m:b], weights: [2, 1]}",
         r"reward\.weights\[0\]: got nan; allowed: a finite number"),
    ],
)  # fmt: skip
def test_weights_and_rates_must_be_finite(tmp_path: Path, algo: str, key: str, bad: str, good: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        from_yaml(tmp_path, f"algo: {algo}\noutput_dir: o\n{key}: {bad}\n")
    from_yaml(tmp_path, f"algo: {algo}\noutput_dir: o\n{key}: {good}\n")
    with pytest.raises(ConfigError, match=r"reward_weights\[0\]: got nan"):
        TextRLConfig(algo="grpo", output_dir="o", reward_weights=[math.nan, 1.0])


def test_merge_keys_merge_and_written_keys_win(tmp_path: Path) -> None:
    cfg = from_yaml(
        tmp_path,
        HEAD + "dataset: &data {path: train.jsonl, split: train}\neval_dataset:\n  <<: *data\n  split: test\n",
    )
    assert cfg.eval_dataset.path == "train.jsonl" and cfg.eval_dataset.split == "test"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"c\.yaml:7: split: appears twice \(lines 6 and 7\)"):
        from_yaml(
            tmp_path, HEAD + "dataset: &data {path: a.jsonl}\neval_dataset:\n  <<: *data\n  split: a\n  split: b\n"
        )


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (HEAD + "? [a, b]\n: 1\n", r"c\.yaml:3: key: a key is a list \(\['a', 'b'\]\); option names and section keys"),
        (HEAD + "extra: {? {x: 1} : 2}\n", r"c\.yaml:3: key: a key is a dict"),
        (HEAD + "extra: {a: " + "[" * 100 + "]" * 100 + "}\n", r"nests lists or mappings more than 64 levels deep"),
        (HEAD + "extra: {a: " + "[" * 5000 + "]" * 5000 + "}\n", r"c\.yaml: .*nests"),
        (HEAD.encode() + b"run_name: caf\xe9\n", r"c\.yaml:3: config: is not UTF-8 text \(byte 0xe9 at column 14\)"),
        ((HEAD + "run_name: café\n").encode("latin-1"), r"c\.yaml:3: config: is not UTF-8 text"),
    ],
)  # fmt: skip
def test_unreadable_yaml_is_a_named_error(tmp_path: Path, text: str | bytes, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        from_yaml(tmp_path, text)


def test_a_byte_order_mark_and_moderate_nesting_are_fine(tmp_path: Path) -> None:
    assert from_yaml(tmp_path, b"\xef\xbb\xbf" + HEAD.encode()).output_dir == "o"  # type: ignore[attr-defined]
    assert from_yaml(tmp_path, (HEAD + "run_name: café\n").encode("utf-16")).run_name == "café"  # type: ignore[attr-defined]
    nested = from_yaml(tmp_path, HEAD + "lr_scheduler_kwargs: {a: " + "[" * 10 + "]" * 10 + "}\n")
    assert nested.lr_scheduler_kwargs["a"] == [[[[[[[[[[]]]]]]]]]]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("item", "match"),
    [
        ("foo=[1,", r"--set foo: is not valid YAML: expected the node content"),
        ("foo={[1]: 2}", r"--set foo: key: a key is a list \(\[1\]\)"),
        ("model.name=[a,", r"--set model\.name: is not valid YAML"),
    ],
)
def test_set_values_name_the_flag(tmp_path: Path, item: str, match: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(HEAD)
    with pytest.raises(ConfigError, match=match) as info:
        assemble(path, {}, {}, [item])
    assert "<config>" not in str(info.value)
    with pytest.warns(UnknownTRLFieldWarning, match=r"extra: foo is not field\(s\) of trl\.GRPOConfig"):
        assert assemble(path, {}, {}, ["foo=[1]"]).config.extra == {"foo": [1]}  # type: ignore[attr-defined]


def test_a_flag_value_that_does_not_parse_names_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(HEAD)
    assert train_main(["--config", str(path), "--dry-run", "--learning-rate", "[1,"]) == 2
    assert "--learning-rate: is not valid YAML" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("section", "problems"),
    [
        ({"model": {"nme": "x"}}, [r"model\.nme: unknown key\. Did you mean 'name'\?", r"model\.name: is required"]),
        ({"model": {"name": "x", "peft": {"rr": 4}}}, [r"model\.peft\.rr: unknown key\. Did you mean 'r'\?"]),
        ({"dataset": {"pth": "a.jsonl"}}, [r"dataset\.pth: unknown key\. Did you mean 'path'\?"]),
        ({"reward": {"modl": "judge"}}, [r"reward\.modl: unknown key\. Did you mean 'model'\?", r"reward\.model: is required"]),
        ({"reward": {"compse": ["m:f"]}}, [r"reward\.compse: unknown key\. Did you mean 'compose'\?"]),
        ({"distributed": {"stratgy": "deepspeed"}}, [r"distributed\.stratgy: unknown key\. Did you mean 'strategy'\?"]),
    ],
)  # fmt: skip
def test_a_typo_in_any_section_is_named(section: dict[str, object], problems: list[str]) -> None:
    """`model: {nme: x}` used to say only that model.name is required; the typo itself is named now."""
    with pytest.raises(ConfigError) as info:
        TextRLConfig(algo="grpo", output_dir="o", **section)
    text = str(info.value)
    for problem in problems:
        assert __import__("re").search(problem, text), text
    key = next(iter(section))
    good = {"model": {"name": "x", "peft": {"r": 4}}, "dataset": {"path": "a.jsonl"}, "reward": {"model": "judge"},
            "distributed": {"strategy": "deepspeed"}}[key]  # fmt: skip
    TextRLConfig(algo="grpo", output_dir="o", **{key: good})


RECIPE = """algo: dpo
output_dir: data/model-dpo
loss_type: apo_zero
beta: 0.1
learning_rate: 5.0e-7
lr_scheduler_type: cosine_with_min_lr
lr_scheduler_kwargs: {min_lr_rate: 0.1}
gradient_checkpointing: true
gradient_checkpointing_kwargs: {use_reentrant: false}
use_liger_kernel: true
do_eval: false
eval_strategy: 'no'
log_level: info
logging_strategy: steps
logging_steps: 5
dataset_num_proc: 12
push_to_hub: true
hub_model_id: org/model-dpo
hub_strategy: every_save
report_to: none
save_strategy: epoch
seed: 42
max_length: 2048
"""


def test_a_trl_recipes_fields_are_typed_options(tmp_path: Path) -> None:
    """The TRL fields a public DPO recipe carries (issue 13 counted 18 problems in one): each is a typed option now,
    in TRL's own value forms (report_to: none, loss_type: apo_zero, kwargs dicts)."""
    cfg = from_yaml(tmp_path, RECIPE)
    assert cfg.loss_type == ["apo_zero"] and cfg.report_to == ["none"] and cfg.use_liger_kernel is True  # type: ignore[attr-defined]
    assert cfg.hub_strategy == "every_save" and cfg.lr_scheduler_kwargs == {"min_lr_rate": 0.1}  # type: ignore[attr-defined]
    with pytest.raises(
        ConfigError, match=r"hub_strategy: got 'every_sav' \(str\); allowed: one of 'end', 'every_save'"
    ):
        from_yaml(tmp_path, RECIPE.replace("every_save", "every_sav"))


@pytest.mark.parametrize(
    ("kwargs", "match", "twin"),
    [
        ({"algo": "grpo", "deepspeed": "ds.json"}, r"deepspeed: is a field of trl\.GRPOConfig that TextRL does not offer: "
         r"TextRL writes TRL's DeepSpeed settings from the distributed: section\. Fix: distributed:",
         {"algo": "grpo", "distributed": {"strategy": "deepspeed", "zero_stage": 3}}),
        ({"algo": "dpo", "extra": {"model_init_kwargs": {"dtype": "bfloat16"}}}, r"extra\.model_init_kwargs: is not offered: "
         r"TRL reads it only when it loads the policy from a name.*Fix: model: \{torch_dtype",
         {"algo": "dpo", "model": {"name": "m", "torch_dtype": "bfloat16"}}),
        ({"algo": "ipo", "loss_weights": [1.0]}, r"loss_weights: is not offered: algo='ipo' trains one loss \(ipo\).*Fix: use algo='dpo'",
         {"algo": "dpo", "loss_type": ["ipo", "sft"], "loss_weights": [1.0, 0.5]}),
    ],
)  # fmt: skip
def test_fields_not_offered_say_why(kwargs: dict[str, object], match: str, twin: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=match):
        TextRLConfig(output_dir="o", **kwargs)
    TextRLConfig(output_dir="o", **twin)
