"""`textrl-train`: train from a YAML config, with generated flags, `--set`, `--dry-run`, `--resume`, `--overwrite`."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..checkpoints.files import REPORT_SVG
from ..checkpoints.run_folder import clear, contents, last_checkpoint, note_replaced
from ..errors import ConfigError, DataError, Problem, RewardError
from ..probe import DEFAULT_GROUPS
from ..validation.view import online, options, preference
from .launch import launch_machines, launch_processes, resume_command, write_launch_config
from .output_dir import check_output_target, prepare_output_dir

if TYPE_CHECKING:
    from ..run.assemble import Assembled
    from ..validation.config import TextRLConfig


_OPTION_GROUPS = (
    "Run",
    "Optimisation",
    "Batching",
    "Generation",
    "Rewards",
    "Loss",
    "Reference model",
    "Data",
    "Precision and memory",
    "Logging and saving",
    "vLLM",
)
"""The order of the spec's option groups in --help; TRL's mirrored options ("More TRL options (...)") follow."""


def train_parser() -> argparse.ArgumentParser:
    """--config, the run controls, and one flag per spec option (generated/cli_flags.py), grouped as the spec groups
    them. The usage line is short and written by hand: argparse's own lists all ~200 flags (170 lines) before it
    says what the command does."""
    from ..generated.cli_flags import FLAGS
    from .convert import TRL_COMMANDS

    parser = argparse.ArgumentParser(
        prog="textrl-train",
        usage="textrl-train --config FILE [--dry-run | --probe [N] | --resume | --overwrite] [--OPTION VALUE ...] "
        "[--set KEY=VALUE ...]",
        description="Train a text generator with TRL from a TextRL YAML config (algo, options, model, dataset, "
        "reward). Flags override the YAML file, which overrides TextRL's defaults. Start with --dry-run: it checks "
        "the config, data, reward, model files and output folder in about a second, without loading a model.",
        epilog="Each option's flag applies to the algorithms listed in generated/docs/cli.md; any option can also be "
        "set with --set name=value.",
        argument_default=argparse.SUPPRESS,
        add_help=False,
    )
    common = parser.add_argument_group("common")
    common.add_argument("-h", "--help", action="help", help="Show this help and exit.")
    common.add_argument("--config", metavar="FILE", help="The YAML config (algo, options, model, dataset, reward).")
    common.add_argument("--dry-run", action="store_true", help="Check everything a run would touch, load no model.")
    common.add_argument(
        "--probe",
        nargs="?",
        type=int,
        const=DEFAULT_GROUPS,
        metavar="N",
        help=f"Load the model and rewards, sample N prompt groups (default {DEFAULT_GROUPS}) with the run's settings "
        "and report what threatens the run (no reward variance, truncation, overridden sampling settings, reward "
        "scales, speed); pairwise algorithms: the reference's margins and lengths on N rows. Trains nothing; exit "
        "status 3 when the run would learn nothing.",
    )
    common.add_argument("--resume", action="store_true", help="Continue from the last checkpoint in output_dir.")
    common.add_argument(
        "--resume-changed",
        action="store_true",
        help="Resume even though the config, data, rewards or process count differ from the checkpoint's in a way "
        "that changes training, or the checkpoint lacks its optimizer, scheduler or random state (--resume refuses "
        "and lists each difference and loss). Implies --resume.",
    )
    common.add_argument("--overwrite", action="store_true", help="Replace an earlier run in output_dir and start over.")
    common.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        dest="set",
        help="Set any option (log_unique_prompts=true), a section key (model.name=...), or a TRL field for extra.",
    )
    more = parser.add_argument_group("more run controls")
    more.add_argument("--algo", metavar="NAME", help="The algorithm, if the YAML file does not say it.")
    more.add_argument(
        "--trl",
        choices=TRL_COMMANDS,
        help="The --config file is a recipe written for TRL's CLI (trl CMD --config FILE): run it as that command "
        "would, through TextRL's checks. textrl-convert writes the TextRL YAML it amounts to.",
    )
    more.add_argument(
        "--device-memory",
        type=float,
        metavar="GIB",
        help="With --dry-run: plan for a device of this many GiB instead of the one visible here.",
    )
    more.add_argument(
        "--write-accelerate-config",
        metavar="FILE.yaml",
        help="Write an accelerate config for the config's distributed: section (DeepSpeed JSON beside it), print "
        "the launch command, and exit.",
    )
    more.add_argument(
        "--num-processes",
        type=int,
        metavar="N",
        help="With --write-accelerate-config: processes to launch, on all machines together (default: the GPUs "
        "visible here, at least 1).",
    )
    more.add_argument(
        "--num-machines",
        type=int,
        metavar="M",
        help="With --write-accelerate-config: machines the processes are spread over (default 1; needs "
        "--main-process-ip). One file serves every machine: each launches it with its own --machine_rank.",
    )
    more.add_argument(
        "--main-process-ip",
        metavar="ADDR",
        help="With --num-machines > 1: the address of machine 0, which the others reach.",
    )
    more.add_argument(
        "--main-process-port",
        type=int,
        metavar="PORT",
        help="With --num-machines > 1: the port machine 0 listens on (default 29500).",
    )
    more.add_argument(
        "--env", action="store_true", help="Print the version set (TextRL, TRL, torch, CUDA, ...) for a bug report."
    )
    more.add_argument(
        "--print-schema",
        action="store_true",
        help="Print the JSON Schema of the YAML config (for editor autocompletion; see docs/editor.md).",
    )
    more.add_argument(
        "--version", action="version", version=f"textrl {__version__}", help="Print the version and exit."
    )
    order = {name: i for i, name in enumerate(_OPTION_GROUPS)}
    groups: dict[str, argparse._ArgumentGroup] = {}
    for flag in sorted(FLAGS, key=lambda f: order.get(f.group, len(order))):
        title = f"{flag.group} options" if flag.group in order else flag.group or "options"
        if title not in groups:
            groups[title] = parser.add_argument_group(title)
        group = groups[title]
        text = flag.help.replace("%", "%%")  # argparse formats help with %: a Jinja tag ({% generation %}) is text
        if flag.is_bool:
            group.add_argument(flag.flag, dest=flag.dest, action=argparse.BooleanOptionalAction, help=text)
        else:
            group.add_argument(flag.flag, dest=flag.dest, metavar=flag.metavar, help=text)
    return parser


def run_training(run: Assembled, *, resume: bool, overwrite: bool, resume_changed: bool = False) -> int:
    from ..checkpoints.lock import OutputDirLock
    from ..run.assemble import require_section
    from ..run.build import build_trainer

    cfg = run.config
    output_dir = Path(options(cfg).output_dir)
    for section in ("model", "dataset"):  # a missing section is said before the output folder is looked at
        require_section(run, section)
    main = os.environ.get("RANK", "0") == "0"  # process 0 of a launch judges the folder and clears it, for all
    if main:
        check_output_target(run, overwrite=overwrite)
    with OutputDirLock(output_dir):  # held from the first look at the folder to the last file written
        if main:
            checkpoint = prepare_output_dir(run, resume=resume, overwrite=overwrite, resume_changed=resume_changed)
            if not checkpoint and contents(output_dir):
                if not overwrite:
                    note_replaced(output_dir)
                clear(output_dir)
        else:  # looking while process 0 clears would race; these processes only need the checkpoint it resumes
            checkpoint = last_checkpoint(output_dir) if resume else None
        trainer = build_trainer(run, cfg)
        tokenizer = trainer.tokenizer
        if checkpoint:
            print(f"textrl-train: resuming from {checkpoint}", file=sys.stderr)
        from ..trainers.interrupt import TrainingInterrupted

        try:
            trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None, resume_changed=resume_changed)
        except TrainingInterrupted as stop:
            if main:  # every process stopped at the same step (trainers/interrupt.py); one says so
                print(
                    f"textrl-train: stopped by {stop.signal_name} at step {stop.step}; checkpoint saved to "
                    f"{stop.checkpoint}. Resume with: {shlex.join(resume_command())}",
                    file=sys.stderr,
                )
            return 130 if stop.signal_name == "SIGINT" else 143
        trainer.save_model(str(output_dir))
        if trainer.trl_trainer.accelerator.is_main_process:
            tokenizer.save_pretrained(output_dir)
            _summary(trainer.log_history, output_dir, trainer.trl_trainer.state.global_step, cfg)
    return 0


def _summary(history: list[dict[str, Any]], output_dir: Path, global_step: int, cfg: TextRLConfig) -> None:
    from ..report.learning_signs import summary_lines

    steps = [h for h in history if "loss" in h]
    lines = [f"textrl-train: done at global step {global_step}, {len(steps)} logged steps; model saved to {output_dir}"]
    with_beta = online(cfg) or preference(cfg)
    lines += summary_lines(history, cfg.algo, with_beta.beta if with_beta is not None else None)
    lines += held_out_lines(history)
    if (output_dir / REPORT_SVG).is_file():
        lines.append(f"report: {output_dir / REPORT_SVG}")
    print("\n".join(lines))


def held_out_lines(history: list[dict[str, Any]]) -> list[str]:
    """The evaluation set's first and last scores (eval_on_start, then the last evaluation): the reward and each
    reward component for GRPO/RLOO, the loss, accuracy and margin for pairwise and reward-model runs."""
    evals = [h for h in history if "eval_loss" in h or "eval_reward" in h]
    if len(evals) < 2:
        return []
    first, last = evals[0], evals[-1]
    if "eval_reward" in first:  # an online run: its eval loss is a policy-gradient surrogate, not a score
        parts = sorted(k for k in first if k.startswith("eval_rewards/") and k.endswith("/mean"))
        named = {"eval_reward": "reward", **{k: k[len("eval_rewards/") : -len("/mean")] for k in parts}}
    else:
        keys = ("eval_loss", "eval_rewards/accuracies", "eval_rewards/margins", "eval_accuracy")
        named = {k: k[len("eval_") :] for k in keys}
    shown = {
        k: v for k, v in named.items() if isinstance(first.get(k), float | int) and isinstance(last.get(k), float | int)
    }
    if not shown:
        return []
    width = max(map(len, shown.values()))
    lines = [f"held-out evaluation (eval_dataset), step {first.get('step', 0)} -> step {last.get('step', '?')}:"]
    return lines + [f"  {name:<{width}}  {first[k]:.4f} -> {last[k]:.4f}" for k, name in shown.items()]


def train_main(argv: list[str] | None = None) -> int:
    from ..generated.cli_flags import FLAGS

    args = vars(train_parser().parse_args(argv))
    if args.get("print_schema"):
        from importlib import resources

        print(resources.files("textrl.generated").joinpath("schema/textrl.schema.json").read_text(encoding="utf-8"))
        return 0
    if args.get("env"):
        from .env_report import env_report

        print(env_report())
        return 0
    from ..run.assemble import assemble  # pydantic and the spec: not needed for --help

    names = {f.dest: f.flag for f in FLAGS} | {"algo": "--algo"}
    flags = {k: v for k, v in args.items() if k in names}
    try:
        launch_file = args.get("write_accelerate_config")
        processes = launch_processes(args.get("num_processes")) if launch_file else None
        run = assemble(
            args.get("config"), flags, names, args.get("set") or [], trl=args.get("trl"), processes=processes
        )
        machines = launch_machines(args, processes or 1)
        if launch_file:
            return write_launch_config(
                run, Path(launch_file), processes or 1, list(sys.argv[1:] if argv is None else argv), machines
            )
        if args.get("dry_run"):
            from .dry_run import dry_run

            return dry_run(
                run,
                resume=bool(args.get("resume") or args.get("resume_changed")),
                overwrite=bool(args.get("overwrite")),
                resume_changed=bool(args.get("resume_changed")),
                device_memory=args.get("device_memory"),
            )
        for key, value in options(run.config).env.items():  # as TRL's CLI: before the run imports anything
            os.environ[key] = str(value)
        if "probe" in args:
            if args["probe"] < 1:
                raise ConfigError([Problem("--probe", f"got {args['probe']}; allowed: 1 or more. Fix: use --probe 4.")])
            from ..probe import run_probe

            return run_probe(run, args["probe"])
        if run.translation is not None:
            print(
                f"textrl-train: {run.path} read as a recipe for trl {args['trl']}: {len(run.translation.notes)} "
                "translations (--dry-run lists them)",
                file=sys.stderr,
            )
        resume = bool(args.get("resume") or args.get("resume_changed"))
        return run_training(
            run, resume=resume, overwrite=bool(args.get("overwrite")), resume_changed=bool(args.get("resume_changed"))
        )
    except (ConfigError, DataError, RewardError) as exc:
        print(f"textrl-train: {exc}", file=sys.stderr)
        return 2
