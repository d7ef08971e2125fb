"""`distributed:` becomes the engines' own settings (DeepSpeed dict, FSDP options, accelerate config file), and
vllm_config() the TextRL options for vLLM rollout. No torch, no TRL: the produced values are checked as data
(TRL builds the FSDP ones in tests/integration/test_trl_build.py; DeepSpeed and vLLM are not installed here)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from textrl import ConfigError, TextRLConfig
from textrl.engines.distributed import (
    accelerate_config,
    deepspeed_config,
    describe_engine,
    fsdp_refusal,
    trl_arguments,
    write_accelerate_config,
)
from textrl.rollout.vllm import vllm_config


def cfg(**distributed: object) -> TextRLConfig:
    return TextRLConfig(algo="dpo", output_dir="o", distributed=distributed or None)


@pytest.mark.parametrize(
    ("section", "stage", "offload_optimizer", "offload_param"),
    [
        ({"strategy": "deepspeed"}, 2, False, False),
        ({"strategy": "deepspeed", "zero_stage": 1}, 1, False, False),
        ({"strategy": "deepspeed", "zero_stage": 2, "offload": "optimizer"}, 2, True, False),
        ({"strategy": "deepspeed", "zero_stage": 3, "offload": "optimizer_and_parameters"}, 3, True, True),
    ],
)
def test_deepspeed_dict(section: dict[str, object], stage: int, offload_optimizer: bool, offload_param: bool) -> None:
    ds = trl_arguments(cfg(**section))["deepspeed"]
    zero = ds["zero_optimization"]
    assert zero["stage"] == stage
    assert ("offload_optimizer" in zero) is offload_optimizer and ("offload_param" in zero) is offload_param
    auto = dict.fromkeys(("lr", "betas", "eps", "weight_decay"), "auto")
    if offload_optimizer:  # this machine has no GPU: torch's AdamW on the CPU, nothing compiled, nothing pinned
        assert zero["offload_optimizer"] == {"device": "cpu", "pin_memory": False}
        assert ds["optimizer"] == {"type": "AdamW", "params": auto | {"torch_adam": True}}
        assert ds["zero_force_ds_cpu_optimizer"] is False
        # on a GPU machine ZeRO-Offload refuses a torch optimizer: DeepSpeed's own CPU AdamW, pinned host memory
        gpu = deepspeed_config(cfg(**section).distributed)
        assert gpu["zero_optimization"]["offload_optimizer"] == {"device": "cpu", "pin_memory": True}
        assert gpu["optimizer"] == {"type": "AdamW", "params": auto} and "zero_force_ds_cpu_optimizer" not in gpu
    assert ("optimizer" in ds) is offload_optimizer
    assert zero.get("stage3_gather_16bit_weights_on_model_save") is (True if stage == 3 else None)
    # batch sizes, accumulation, clipping and precision are left to transformers, which fills "auto" from TRL's args
    assert ds["train_micro_batch_size_per_gpu"] == ds["gradient_accumulation_steps"] == "auto"
    assert "train_batch_size" not in ds  # DeepSpeed derives it from the world size it sees (deepspeed_config's doc)
    assert ds["bf16"] == ds["fp16"] == {"enabled": "auto"}
    json.dumps(ds)  # a DeepSpeed JSON config


def test_ddp_needs_no_trl_arguments() -> None:
    assert trl_arguments(cfg(strategy="ddp")) == {} == trl_arguments(cfg())


def test_fsdp_arguments_move_checkpointing_into_fsdp() -> None:
    args = trl_arguments(TextRLConfig(algo="grpo", output_dir="o", gradient_checkpointing=True,
                                      distributed={"strategy": "fsdp", "fsdp_version": 2}))  # fmt: skip
    assert args["fsdp"] is True and args["activation_checkpointing"] is False
    assert args["fsdp_config"]["activation_checkpointing"] is True and args["fsdp_config"]["cpu_offload"] is False


def test_accelerate_config_per_strategy(tmp_path: Path) -> None:
    ddp = accelerate_config(cfg(), num_processes=8, mixed_precision="bf16")
    assert ddp["distributed_type"] == "MULTI_GPU" and ddp["num_processes"] == 8 and ddp["mixed_precision"] == "bf16"
    assert accelerate_config(cfg(), num_processes=1, mixed_precision="no")["distributed_type"] == "NO"
    # one machine: accelerate picks a free port, so two runs on one machine do not collide on 29500
    assert (ddp["num_machines"], ddp["main_process_port"]) == (1, 0) and "main_process_ip" not in ddp
    two = accelerate_config(cfg(), num_processes=16, mixed_precision="bf16", num_machines=2, main_process_ip="10.0.0.1")
    assert (two["num_machines"], two["num_processes"], two["machine_rank"]) == (2, 16, 0)
    assert (two["main_process_ip"], two["main_process_port"]) == ("10.0.0.1", 29500)
    fsdp = accelerate_config(cfg(strategy="fsdp", offload="optimizer_and_parameters"), num_processes=4,
                             mixed_precision="bf16")  # fmt: skip
    assert fsdp["distributed_type"] == "FSDP"
    assert fsdp["fsdp_config"]["fsdp_offload_params"] is True and fsdp["fsdp_config"]["fsdp_version"] == 2
    assert fsdp["fsdp_config"]["fsdp_auto_wrap_policy"] == "TRANSFORMER_BASED_WRAP"

    written = write_accelerate_config(cfg(strategy="deepspeed", zero_stage=3), tmp_path / "acc.yaml",
                                      num_processes=2, mixed_precision="bf16")  # fmt: skip
    assert [p.name for p in written] == ["acc.yaml", "acc.deepspeed.json"]
    body = yaml.safe_load((tmp_path / "acc.yaml").read_text())
    assert body["distributed_type"] == "DEEPSPEED"
    assert body["mixed_precision"] is None  # set in the DeepSpeed JSON; accelerate refuses it in both places
    assert body["deepspeed_config"] == {"deepspeed_config_file": str((tmp_path / "acc.deepspeed.json").resolve()),
                                        "zero3_init_flag": True}  # fmt: skip
    assert json.loads((tmp_path / "acc.deepspeed.json").read_text())["zero_optimization"]["stage"] == 3


def test_vllm_config_gives_typed_textrl_options() -> None:
    colocate = vllm_config(gpu_memory_utilization=0.4, tensor_parallel_size=2, enable_sleep_mode=True,
                           check_installed=False)  # fmt: skip
    assert colocate == {"use_vllm": True, "vllm_mode": "colocate", "vllm_gpu_memory_utilization": 0.4,
                        "vllm_tensor_parallel_size": 2, "vllm_enable_sleep_mode": True}  # fmt: skip
    server = vllm_config("server", server_url="http://gen:8000", server_timeout=60, check_installed=False)
    assert server == {"use_vllm": True, "vllm_mode": "server", "vllm_server_base_url": "http://gen:8000",
                      "vllm_server_timeout": 60}  # fmt: skip
    for algo in ("grpo", "rloo", "reinforce_pp"):
        built = TextRLConfig(algo=algo, output_dir="o", **server)
        assert built.vllm_mode == "server" and built.vllm_server_base_url == "http://gen:8000"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"vllm_gpu_memory_utilization: got 1\.5 .*"):
        TextRLConfig(algo="grpo", output_dir="o", **vllm_config(gpu_memory_utilization=1.5, check_installed=False))
    with pytest.raises(ConfigError, match=r"use_vllm: does not apply to algo='dpo'"):
        TextRLConfig(algo="dpo", output_dir="o", **colocate)


def test_vllm_config_mistakes_are_named() -> None:
    with pytest.raises(ConfigError, match=r"mode: got 'remote'; allowed: 'colocate', 'server'"):
        vllm_config("remote", check_installed=False)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"tensor_parallel_size: does not apply to mode='server': the server sets "
                                          r"it: `vllm serve MODEL --tensor-parallel-size \.\.\.`"):  # fmt: skip
        vllm_config("server", tensor_parallel_size=2, check_installed=False)
    with pytest.raises(ConfigError, match=r"server_url: does not apply to mode='colocate': it only applies to "
                                          r"mode='server'\. Fix: remove server_url, or use mode='server'"):  # fmt: skip
        vllm_config(server_url="http://x:8000", check_installed=False)
    with pytest.raises(ConfigError, match=r"server_url: server_url and server_host/server_port both given"):
        vllm_config("server", server_url="http://x:8000", server_port=8001, check_installed=False)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed here")
def test_vllm_config_without_vllm_names_the_extra() -> None:
    with pytest.raises(ConfigError, match=r"use_vllm: vLLM rollout needs the vllm package, which is not installed "
                                          r"here\. Fix: pip install 'textrl\[vllm\]'"):  # fmt: skip
        vllm_config()


@pytest.mark.parametrize(
    ("section", "distributed_type", "processes", "machines", "said"),
    [
        ({}, "NO", 1, 1, "one process"),
        ({}, "MULTI_CPU", 2, 1, "DDP, 2 processes"),
        ({"strategy": "ddp"}, "MULTI_GPU", 4, 2, "DDP, 4 processes on 2 machines"),
        ({"strategy": "deepspeed"}, "DEEPSPEED", 2, 1, "DeepSpeed ZeRO-2, 2 processes"),
        ({"strategy": "deepspeed", "zero_stage": 3, "offload": "optimizer"}, "DEEPSPEED", 2, 1,
         "DeepSpeed ZeRO-3 (optimizer offloaded), 2 processes"),
        ({"strategy": "fsdp"}, "FSDP", 8, 1, "FSDP2, 8 processes"),
    ],
)  # fmt: skip
def test_describe_engine_names_what_runs(
    section: dict[str, object], distributed_type: str, processes: int, machines: int, said: str
) -> None:
    assert describe_engine(cfg(**section), distributed_type, processes, machines) == said


@pytest.mark.parametrize(("strategy", "runs_as"), [("deepspeed", "MULTI_CPU"), ("fsdp", "MULTI_CPU"), ("fsdp", "NO")])
def test_a_strategy_running_as_something_else_is_refused(strategy: str, runs_as: str) -> None:
    with pytest.raises(ConfigError) as caught:
        describe_engine(cfg(strategy=strategy), runs_as, 2)
    want = {"deepspeed": "DEEPSPEED", "fsdp": "FSDP"}[strategy]
    assert f"distributed.strategy: got {strategy!r}, but this process runs as accelerate's {runs_as} with 2 " in str(
        caught.value
    )
    assert f"not {want}: the run would not be what it names. Fix: start it with the config" in str(caught.value)


def test_fsdp_is_refused_without_a_gpu_class_device() -> None:
    problem = fsdp_refusal(cfg(strategy="fsdp"), accelerator=False)
    assert problem is not None and "accelerate shards with FSDP only on GPU-class devices" in str(problem)
    assert fsdp_refusal(cfg(strategy="fsdp"), accelerator=True) is None
    assert fsdp_refusal(cfg(strategy="deepspeed", zero_stage=3), accelerator=False) is None
