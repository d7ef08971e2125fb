"""How textrl-train is launched on several processes or machines: the accelerate config and the commands it prints
(--write-accelerate-config and its flags), and the command that resumes an interrupted run, under a launcher too."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, Problem
from ..validation.view import options

if TYPE_CHECKING:
    from ..run.assemble import Assembled


DEFAULT_PORT = 29500
"""accelerate's (and torchrun's) default port for machine 0."""


def launch_processes(requested: int | None) -> int:
    """--num-processes, checked; by default the GPUs visible here (at least 1)."""
    if requested is not None:
        if requested < 1:
            raise ConfigError([Problem("--num-processes", f"got {requested}; allowed: 1 or more. Fix: use >= 1.")])
        return requested
    import torch

    return max(torch.cuda.device_count(), 1)


LAUNCH_FLAGS = ("--write-accelerate-config", "--num-processes", "--num-machines", "--main-process-ip",
                "--main-process-port")  # fmt: skip
"""The flags that shape the launch, not the run: left out of the launched command."""


def launch_machines(args: dict[str, Any], processes: int) -> tuple[int, str | None, int | None]:
    """(--num-machines, --main-process-ip, --main-process-port), checked against each other and the process count."""
    machines, address, port = args.get("num_machines"), args.get("main_process_ip"), args.get("main_process_port")
    if not args.get("write_accelerate_config"):
        given = [f for f, v in (("--num-machines", machines), ("--main-process-ip", address),
                                ("--main-process-port", port)) if v is not None]  # fmt: skip
        if given:
            raise ConfigError([Problem(given[0], "only shapes a launch config. Fix: add --write-accelerate-config "
                                                 "acc.yaml, or drop it.")])  # fmt: skip
        return 1, None, None
    machines = 1 if machines is None else machines
    if machines < 1:
        raise ConfigError([Problem("--num-machines", f"got {machines}; allowed: 1 or more. Fix: e.g. 2.")])
    if processes % machines:
        raise ConfigError([Problem("--num-processes", f"got {processes} for {machines} machines; each machine runs "
                                   "the same number of processes. Fix: a multiple of --num-machines, e.g. "
                                   f"{machines * max(1, processes // machines)}.")])  # fmt: skip
    if machines > 1 and not address:
        raise ConfigError([Problem("--main-process-ip", f"missing with --num-machines {machines}: the other machines "
                                   "must know where machine 0 is. Fix: --main-process-ip 10.0.0.1 (machine 0's "
                                   "address on the network the machines share).")])  # fmt: skip
    if machines == 1 and (address or port is not None):
        raise ConfigError([Problem("--main-process-ip" if address else "--main-process-port", "is for a launch on "
                                   "several machines. Fix: add --num-machines N, or drop it.")])  # fmt: skip
    if port is not None and not 0 < port < 65536:
        raise ConfigError([Problem("--main-process-port", f"got {port}; allowed: 1 to 65535. Fix: e.g. 29500.")])
    return machines, address, port


def launch_arguments(argv: list[str]) -> list[str]:
    """This command's arguments for the launched run: all but the launch flags (flags, --set and --trl apply to the
    run as they did here)."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in LAUNCH_FLAGS:
            skip = "=" not in arg
            continue
        out.append(arg)
    return out


def write_launch_config(
    run: Assembled,
    path: Path,
    num_processes: int,
    argv: list[str] | None = None,
    machines: tuple[int, str | None, int | None] = (1, None, None),
) -> int:
    """--write-accelerate-config: the accelerate config file for this run, and the command that launches it (the
    same arguments, so a recipe keeps its --trl and flags keep applying); on several machines, the command each
    one runs (the same file, its own --machine_rank)."""
    from ..engines.distributed import write_accelerate_config

    cfg = run.config
    if options(cfg).fp16:
        precision = "fp16"
    else:
        from ..trl_support.build import resolve_bf16

        precision = "bf16" if resolve_bf16(options(cfg).bf16) else "no"
    count, address, port = machines
    written = write_accelerate_config(cfg, path, num_processes=num_processes, mixed_precision=precision,
                                      num_machines=count, main_process_ip=address, main_process_port=port)  # fmt: skip
    arguments = launch_arguments(argv) if argv is not None else (["--config", str(run.path)] if run.path else [])
    print(f"textrl-train: wrote {', '.join(str(p) for p in written)}")
    if count == 1:
        command = ["accelerate", "launch", "--config_file", str(path), "-m", "textrl.cli", "train", *arguments]
        print(f"launch with: {shlex.join(command)}")
        return 0
    each = num_processes // count
    print(f"launch on each of the {count} machines ({each} process{'es' if each > 1 else ''} each), machine 0 at "
          f"{address}:{port or DEFAULT_PORT}, the same file and data on each, from the same folder:")  # fmt: skip
    for rank in range(count):
        command = ["accelerate", "launch", "--config_file", str(path), "--machine_rank", str(rank), "-m", "textrl.cli",
                   "train", *arguments]  # fmt: skip
        print(f"  machine {rank}: {shlex.join(command)}")
    return 0


def resume_command(argv: list[str] | None = None, launcher: list[str] | None = None) -> list[str]:
    """The command that continues this run: the same arguments with --resume, without --overwrite; under a launcher
    (`accelerate launch ... -m textrl.cli train ...`, torchrun) the same launch, read from the launcher's command line.
    `argv` and `launcher` default to this process's and its parent's (Linux /proc; elsewhere the worker's form)."""
    argv = sys.argv if argv is None else argv
    program = Path(argv[0])
    if program.name.startswith("textrl-train"):
        prefix, own = ["textrl-train"], list(argv[1:])
    elif program.parts[-3:] == ("textrl", "cli", "__main__.py") and argv[1:2] == ["train"]:  # -m textrl.cli train
        launcher = _launcher() if launcher is None else launcher
        prefix, own = launcher or ["python", "-m", "textrl.cli", "train"], list(argv[2:])
    else:  # a script of the user's that calls train_main(...): its own arguments are not known to be the run's
        prefix, own = ["textrl-train"], []
    again = [*prefix, *(a for a in own if a != "--overwrite")]
    return again + ([] if {"--resume", "--resume-changed"} & set(again) else ["--resume"])


def _launcher() -> list[str]:
    """`accelerate launch OPTIONS -m textrl.cli train` (or torchrun's) when this process's parent launched it."""
    if "LOCAL_RANK" not in os.environ:
        return []
    try:
        parent = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().decode().split("\0")
    except (OSError, UnicodeDecodeError):
        return []
    if "textrl.cli" not in parent:
        return []
    start = next((i for i, a in enumerate(parent) if Path(a).name in ("accelerate", "torchrun")), None)
    if start is None:
        return []
    return [Path(parent[start]).name, *parent[start + 1 : parent.index("textrl.cli") + 1], "train"]
