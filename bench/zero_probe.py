"""One process of the ZeRO-3 against DDP comparison in bench/engines.py, which launches it with accelerate:

    accelerate launch --config_file acc.yaml bench/zero_probe.py RUN_YAML OUT_DIR

`acc.yaml` is what `textrl-train --write-accelerate-config` wrote for RUN_YAML; the run is built as textrl-train
builds it (the TRL config first, so that ZeRO-3 partitions the weights as they load; then the policy and the
reference; then TextRL's PreferenceTrainer), through TextRL's Python API, with one callback added that writes, for
this process, OUT_DIR/rank<R>.json:

- the bytes of parameters this process holds (policy and reference; under ZeRO-3 a parameter's own partition,
  `ds_tensor`, since the parameter itself is then empty) and of optimizer state (the torch optimizer's moments);
- the resident memory (RSS) before the model loads, after it loads, when training begins and at each step's end,
  and the process's peak (max RSS).
"""

from __future__ import annotations

import json
import os
import resource
import sys
from pathlib import Path
from typing import Any


def rss_mb() -> float:
    """This process's resident memory now, in MB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tensor_bytes(t: Any) -> int:
    return int(t.numel() * t.element_size())


def parameter_bytes(module: Any) -> int:
    """The bytes of `module`'s parameters held by this process (ZeRO-3: each parameter's partition)."""
    total = 0
    for p in module.parameters():
        shard = getattr(p, "ds_tensor", None)
        total += tensor_bytes(shard if shard is not None else p)
    return total


def optimizer_bytes(optimizer: Any) -> int:
    """The state of the innermost torch optimizer (under accelerate's and DeepSpeed's wrappers): AdamW's moments. For
    a float32 model DeepSpeed keeps no second float32 copy: the partition it steps is the parameters' own."""
    while hasattr(optimizer, "optimizer"):
        optimizer = optimizer.optimizer
    return sum(tensor_bytes(v) for state in optimizer.state.values() for v in state.values() if hasattr(v, "numel"))


def main() -> None:
    run_yaml, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    before_load = rss_mb()
    from transformers import TrainerCallback

    from textrl import PreferenceTrainer, TextRLConfig, load_model
    from textrl.data import from_section
    from textrl.trl_build import build_trl_config

    cfg = TextRLConfig.from_yaml(run_yaml)
    trl_config = build_trl_config(cfg)  # before the model loads: ZeRO-3's zero.Init comes from it
    model, tokenizer, ref = load_model(cfg.model.name, load_ref=True, seed=cfg.seed)  # type: ignore[attr-defined]
    after_load = rss_mb()
    rows = from_section(cfg.dataset, run_yaml.parent, where="dataset")  # type: ignore[attr-defined]
    record: dict[str, Any] = {"before_load_mb": before_load, "after_load_mb": after_load, "steps": []}

    class Probe(TrainerCallback):  # type: ignore[misc]
        trl: Any = None

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            record["train_begin_mb"] = rss_mb()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            policy = kwargs["model"]
            record["steps"].append({
                "rss_mb": rss_mb(),
                "policy_bytes": parameter_bytes(policy),
                "reference_bytes": parameter_bytes(self.trl.ref_model),
                "optimizer_bytes": optimizer_bytes(kwargs["optimizer"]),
            })  # fmt: skip

    probe = Probe()
    trainer = PreferenceTrainer(model=model, ref_model=ref, tokenizer=tokenizer, config=cfg, train_dataset=rows,
                                trl_config=trl_config, callbacks=[probe])  # fmt: skip
    probe.trl = trainer.trl_trainer
    trainer.train()
    record["peak_mb"] = peak_mb()
    record["distributed_type"] = str(trainer.trl_trainer.accelerator.state.distributed_type)
    rank = int(os.environ.get("RANK", "0"))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"rank{rank}.json").write_text(json.dumps(record, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
