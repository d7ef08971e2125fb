"""The dry run's memory plan: parameter counts from disk or config.json, and a warning when the run will not fit."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from textrl.cli.train import train_main
from textrl.run.memory import parameters_from_config, parameters_on_disk

LLAMA_3_8B = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32, "vocab_size": 128256,
              "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "tie_word_embeddings": False}  # fmt: skip


def test_parameters_from_safetensors_headers(tmp_path: Path) -> None:
    header = json.dumps({"a": {"dtype": "F32", "shape": [10, 20], "data_offsets": [0, 800]},
                         "b": {"dtype": "F32", "shape": [5], "data_offsets": [800, 820]}, "__metadata__": {}}).encode()  # fmt: skip
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(820))
    assert parameters_on_disk(tmp_path) == 205
    assert parameters_on_disk(tmp_path / "nothing") is None


def test_parameters_from_config_match_the_published_size() -> None:
    assert parameters_from_config(LLAMA_3_8B) == pytest.approx(8.03e9, rel=0.01)  # Llama 3 8B: 8.03B
    assert parameters_from_config({"hidden_size": 8}) is None


def _dry_run(tmp_path: Path, model: str, *flags: str) -> int:
    (tmp_path / "run.yaml").write_text(f"algo: dpo\noutput_dir: {tmp_path / 'out'}\nmodel: {model}\n"
                                       "dataset: {list: [{prompt: a, chosen: b, rejected: c}]}\n")  # fmt: skip
    return train_main(["--config", str(tmp_path / "run.yaml"), "--dry-run", *flags])


def test_dry_run_warns_when_the_plan_exceeds_the_device(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from .test_model_source import model_folder

    big = model_folder(tmp_path / "big", skip="model.safetensors")  # a whole folder, whose weights the plan cannot
    (big / "pytorch_model.bin").write_bytes(b"pickled weights")  # read without torch: it estimates from config.json
    (big / "config.json").write_text(json.dumps(LLAMA_3_8B))
    assert _dry_run(tmp_path, "{name: big}", "--device-memory", "24") == 0
    out = capsys.readouterr().out
    assert (
        "memory estimate (8030.3M parameters, estimated from config.json): policy 14.96 GiB, reference 14.96 GiB" in out
    )
    assert "WARNING: the estimate (119.7 GiB) exceeds 90% of --device-memory (24.0 GiB). Fix: LoRA (model.peft)" in out
    assert _dry_run(tmp_path, "{name: big, peft: {r: 16}, quantization: 4bit}", "--device-memory", "24") == 0
    out = capsys.readouterr().out
    # bitsandbytes quantizes the linear layers; the embeddings and the untied head (1.05B parameters) stay in bf16
    assert "reference 0.00 GiB" in out and "policy 5.21 GiB" in out and "WARNING" not in out


def test_dry_run_says_when_it_cannot_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.constants as hub

    from .test_model_source import fake_cache

    monkeypatch.setattr(hub, "HF_HUB_CACHE", str(tmp_path / "hub"))
    fake_cache(tmp_path / "hub", "org/not-downloaded")  # in the hub's cache (offline, the dry run refuses it else)
    assert _dry_run(tmp_path, "{name: org/not-downloaded}") == 0
    assert (
        "memory: org/not-downloaded: parameters not on disk (a hub id); downloaded at start; no estimate"
        in capsys.readouterr().out
    )


def test_dry_run_on_a_gguf_file_says_when_it_is_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A GGUF file is not read in a dry run (no torch, no conversion); the plan says so instead of guessing."""
    (tmp_path / "m.Q4_K_M.gguf").write_bytes(b"GGUF")
    assert _dry_run(tmp_path, "{name: m.Q4_K_M.gguf}") == 0
    out = capsys.readouterr().out
    assert (
        "memory: m.Q4_K_M.gguf: parameters not counted in a dry run (a GGUF file is dequantized at start); no estimate"
        in out
    )
    assert _dry_run(tmp_path, "{name: ., gguf_file: m.Q4_K_M.gguf}") == 0
    assert "parameters not counted in a dry run (a GGUF file is dequantized at start)" in capsys.readouterr().out
