"""Model references that cannot load are refused before anything loads (issue 31), with one message for the dry run
and the run: a missing path (transformers: "Repo id must be in the form ..."), a folder without config.json, without
weights or with a safetensors file cut short, without tokenizer files, and a hub id that is not cached while the hub
is off or out of reach. Each case beside a twin that passes; no torch is imported by the checks."""

from __future__ import annotations

import json
import re
import shutil
import struct
from pathlib import Path

import pytest

from textrl.cli import train_main
from textrl.errors import ConfigError
from textrl.models.source import check_model_reference, check_reward_model, safetensors_problem


def safetensors(path: Path, size: int = 16) -> Path:
    """A whole safetensors file with one float32 tensor of `size` bytes."""
    header = json.dumps({"w": {"dtype": "F32", "shape": [size // 4], "data_offsets": [0, size]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * size)
    return path


def model_folder(path: Path, *, skip: str = "") -> Path:
    """A folder as save_pretrained leaves it: config, weights, a (word-level) tokenizer; `skip` leaves one out."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    path.mkdir(parents=True)
    if skip != "config.json":
        (path / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}')
    if skip != "tokenizer.json":
        vocab = {w: i for i, w in enumerate(["[UNK]", "a", "b", "c", "d", "e", "f", "g", "h"])}
        tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
        tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
        tokenizer.save(str(path / "tokenizer.json"))
    if skip != "model.safetensors":
        safetensors(path / "model.safetensors")
    return path


@pytest.mark.parametrize(
    ("skip", "match"),
    [
        ("config.json", r"has no config\.json, so it is not a model saved with save_pretrained \(it holds "
                        r"model\.safetensors, tokenizer\.json\)\. Fix: point at the folder that holds config\.json"),
        ("model.safetensors", r"it holds no weights \(model\.safetensors, pytorch_model\.bin, or their shards"),
        ("tokenizer.json", r"has no tokenizer files \(tokenizer\.json, tokenizer\.model, .*Fix: save the tokenizer "
                           r"beside the model: tokenizer\.save_pretrained\(folder\)"),
    ],
)  # fmt: skip
def test_a_folder_that_from_pretrained_would_refuse(tmp_path: Path, skip: str, match: str) -> None:
    with pytest.raises(ConfigError, match=rf"model\.name: .*m.*{match}"):
        check_model_reference(str(model_folder(tmp_path / "m", skip=skip)), "model.name")
    assert "a model saved with save_pretrained" in check_model_reference(str(model_folder(tmp_path / "whole")))


def test_a_safetensors_file_cut_short_or_not_one(tmp_path: Path) -> None:
    whole = safetensors(tmp_path / "model.safetensors", 4096)
    assert safetensors_problem(whole) is None
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(whole.read_bytes()[:2000])
    assert safetensors_problem(cut) == f"cut.safetensors is cut short: 2000 of {whole.stat().st_size} bytes (an " \
                                      "interrupted copy, download or save)"  # fmt: skip
    (tmp_path / "junk.safetensors").write_bytes(b"not a safetensors file at all")
    assert "is not a readable safetensors file" in str(safetensors_problem(tmp_path / "junk.safetensors"))
    folder = model_folder(tmp_path / "m")
    shutil.copy(cut, folder / "model.safetensors")
    with pytest.raises(ConfigError, match=r"model: .*m: model\.safetensors is cut short: 2000 of .*Fix: copy the "
                       r"model folder again"):  # fmt: skip
        check_model_reference(str(folder))


def test_a_tokenizer_file_the_library_cannot_read(tmp_path: Path) -> None:
    folder = model_folder(tmp_path / "m")
    (folder / "tokenizer.json").write_text("{}")
    with pytest.raises(ConfigError, match=r"m/tokenizer\.json cannot be read by the tokenizers library \(.*\)\. Fix: "
                       r"save the tokenizer again"):  # fmt: skip
        check_model_reference(str(folder))


def test_sharded_weights_need_every_shard(tmp_path: Path) -> None:
    folder = model_folder(tmp_path / "m", skip="model.safetensors")
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    safetensors(folder / "model-00001-of-00002.safetensors")
    with pytest.raises(ConfigError, match=r"lists 2 shard\(s\), and model-00002-of-00002\.safetensors are missing"):
        check_model_reference(str(folder))
    safetensors(folder / "model-00002-of-00002.safetensors")
    check_model_reference(str(folder))


def test_paths_that_do_not_exist_and_values_that_are_no_reference(tmp_path: Path) -> None:
    for name in ("/no/such/folder", "./models/base", "~/nowhere/model", "runs/a/b", "model.gguf"):
        with pytest.raises(ConfigError, match=r"model\.name: .* does not exist\. Fix: check the path"):
            check_model_reference(name, "model.name")
    for value in (None, "", 3):
        with pytest.raises(ConfigError, match=r"got .*; allowed: a hub id \(org/name\), a local folder saved with "
                           r"save_pretrained, a \.gguf file, or a built-in model"):  # fmt: skip
            check_model_reference(value)
    (tmp_path / "weights.bin").write_text("x")
    with pytest.raises(ConfigError, match=r"weights\.bin is a file; a model is a folder saved with save_pretrained"):
        check_model_reference(str(tmp_path / "weights.bin"))
    (tmp_path / "fake.gguf").write_text("not gguf")
    with pytest.raises(ConfigError, match=r"fake\.gguf is not a GGUF file"):
        check_model_reference(str(tmp_path / "fake.gguf"))
    assert check_model_reference("textrl:tiny") == "textrl:tiny: a built-in model"


def test_load_model_says_it_before_importing_transformers(tmp_path: Path) -> None:
    """load_model(None) and load_model("/no/such/folder") were raw tracebacks from transformers."""
    from textrl import load_model

    with pytest.raises(ConfigError, match=r"name_or_path: got None; allowed: a hub id"):
        load_model(None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"name_or_path: /no/such/folder does not exist"):
        load_model("/no/such/folder")


def fake_cache(root: Path, repo: str) -> None:
    snapshot = root / f"models--{repo.replace('/', '--')}" / "snapshots" / "abc123"
    model_folder(snapshot)
    (root / f"models--{repo.replace('/', '--')}" / "refs").mkdir()
    (root / f"models--{repo.replace('/', '--')}" / "refs" / "main").write_text("abc123")


def test_a_hub_id_needs_the_cache_or_the_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants as hub

    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ConfigError, match=r"model\.name: 'Qwen/Qwen2\.5-0\.5B' is a hub id that is not in the local "
                       r"cache .* \(and no folder Qwen/Qwen2\.5-0\.5B exists here\), and HF_HUB_OFFLINE=1 keeps "
                       r"transformers off the hub\. Fix: give a local folder"):  # fmt: skip
        check_model_reference("Qwen/Qwen2.5-0.5B", "model.name")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(hub, "ENDPOINT", "http://127.0.0.1:9")  # nothing listens there: the hub out of reach
    with pytest.raises(ConfigError, match=r"and the hub \(127\.0\.0\.1\) cannot be reached from this machine"):
        check_model_reference("Qwen/Qwen2.5-0.5B", "model.name")
    fake_cache(tmp_path, "Qwen/Qwen2.5-0.5B")  # the twin: cached, so it loads offline
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert "from the local hub cache" in check_model_reference("Qwen/Qwen2.5-0.5B", "model.name")


def test_a_reward_model_must_be_a_classifier(tmp_path: Path) -> None:
    folder = model_folder(tmp_path / "rm")
    with pytest.raises(ConfigError, match=r"reward\.model: .*rm is \['LlamaForCausalLM'\], not a sequence classifier"):
        check_reward_model(str(folder))
    (folder / "config.json").write_text('{"architectures": ["LlamaForSequenceClassification"]}')
    assert check_reward_model(str(folder)).endswith("a sequence classifier (LlamaForSequenceClassification)")


CONFIG = """algo: grpo
output_dir: {out}
per_device_train_batch_size: 8
num_generations: 4
model: {{name: {model}}}
dataset: {{list: [a, b, c, d, e, f, g, h]}}
reward: here_rewards:one
"""


def test_the_dry_run_refuses_what_the_run_would_refuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here_rewards.py").write_text("def one(prompts, completions, **_):\n    return [1.0] * len(prompts)\n")
    model_folder(tmp_path / "models" / "nocfg", skip="config.json")
    model_folder(tmp_path / "conf" / "whole")  # relative to the config's folder, as dataset paths are
    cases = [
        ("/no/such/folder", r"model\.name: /no/such/folder does not exist"),
        ("models/nocfg", r"model\.name: models/nocfg has no config\.json"),
        ("Qwen/Qwen2.5-0.5B", r"model\.name: 'Qwen/Qwen2\.5-0\.5B' is a hub id that is not in the local cache"),
    ]
    (tmp_path / "conf").mkdir(exist_ok=True)
    for model, match in cases:
        (tmp_path / "conf" / "run.yaml").write_text(CONFIG.format(out=tmp_path / "out", model=model))
        assert train_main(["--config", "conf/run.yaml", "--dry-run"]) == 2
        err = capsys.readouterr().err
        assert re.search(match, err) and "Traceback" not in err, err
    shutil.copy(tmp_path / "here_rewards.py", tmp_path / "conf")
    (tmp_path / "conf" / "run.yaml").write_text(CONFIG.format(out=tmp_path / "out", model="whole"))
    assert train_main(["--config", "conf/run.yaml", "--dry-run"]) == 0
    assert "model: whole (not loaded in a dry run; a model saved with save_pretrained)" in capsys.readouterr().out
