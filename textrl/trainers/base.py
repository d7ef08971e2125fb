"""What the trainers share: config and data checks, the TRL config, the manifest and train()."""

from __future__ import annotations

import importlib
import os
import shutil
import sys
from pathlib import Path
from typing import Any, ClassVar

from ..checkpoints.atomic import STAGING, AtomicCheckpoints, discard_partial, write_json
from ..checkpoints.manifest import check_same_algorithm, parent_run, trl_changes, write_manifest
from ..data.checks import check_rows
from ..data.lengths import context_of, limits_for, tokenizer_counter, warn
from ..data.notes import row_notes
from ..engines.distributed import describe_engine
from ..engines.quantization import of_model
from ..errors import ConfigError, Problem
from ..spec import Family
from ..trl_support.build import build_trl_config
from ..trl_support.compat import absorb_installed_trl
from ..validation.batch_plan import batch_lines
from ..validation.config import TextRLConfig
from ..validation.view import online, options


class TextRLTrainer:
    """Base of the TextRL trainers. `trl_trainer` is the underlying TRL trainer, for anything TextRL does not wrap."""

    families: ClassVar[tuple[Family, ...]] = ()
    """The algorithm families this trainer trains: those whose spec entry (`Family.trainer`) names the class."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = tuple(f for f in Family if f.trainer == cls.__name__)
        if own:  # a user's subclass of OnlineTrainer keeps its parent's families
            cls.families = own

    def __init__(
        self,
        *,
        model: Any,
        config: TextRLConfig | dict[str, Any],
        train_dataset: Any,
        tokenizer: Any = None,
        processing_class: Any = None,
        eval_dataset: Any = None,
        callbacks: list[Any] | None = None,
        trl_config: Any = None,
    ) -> None:
        """`trl_config`: the TRL config already built from this same `config` by `build_trl_config` (the CLI builds
        it before loading the model, which DeepSpeed ZeRO-3 needs); by default the trainer builds it."""
        self.config = self._config(config)
        self._loaded_from: str | None = getattr(model, "textrl_loaded_from", None)  # load_model's source: the parent
        if tokenizer is not None and processing_class is not None and tokenizer is not processing_class:
            raise ConfigError(
                [Problem("tokenizer", "both tokenizer= and processing_class= were given. Fix: pass only tokenizer=.")]
            )
        self.tokenizer = tokenizer if tokenizer is not None else processing_class
        self.train_dataset = self._check_data(train_dataset, "train_dataset")
        self.eval_dataset = None if eval_dataset is None else self._check_data(eval_dataset, "eval_dataset")
        if self.tokenizer is not None:  # chat rows without a chat template; prompts longer than the model or max_length
            from ..data.chat_rows import check_chat_template

            check_chat_template(
                {"the training set": self.train_dataset, "the evaluation set": self.eval_dataset},
                getattr(self.tokenizer, "chat_template", None) is not None,
                str(getattr(self.tokenizer, "name_or_path", "") or "the tokenizer"),
            )
            limits = limits_for(self.config, context_of(model))
            count = tokenizer_counter(self.tokenizer)
            for label, data in (("train_dataset", self.train_dataset), ("eval_dataset", self.eval_dataset)):
                if data is not None:
                    warn(row_notes(self.config, data, limits, count, name=label))
        self.trl_config = trl_config if trl_config is not None else build_trl_config(self.config)
        # vLLM's refusals here, before TRL starts vLLM (minutes on a CPU), which would refuse it
        if (rollout := online(self.config)) is not None and rollout.use_vllm:
            from ..rollout.vllm import check_here

            check_here(self.config, getattr(model, "config", None))
        from ..checkpoints.run_folder import contents
        from .interrupt import GracefulStop  # imports transformers: only once a trainer is being built
        from .watchdog import StallWatchdog

        # what output_dir held before TRL's trainer was built: TRL makes some folders there itself (completions/)
        self._found_in_output_dir = frozenset(contents(Path(self.trl_config.output_dir)))
        self._stop = GracefulStop(*self._generation_round())
        timeout = options(self.config).stall_timeout
        self._watchdogs = [] if timeout == "off" else [StallWatchdog(float(timeout), self.trl_config.output_dir)]
        self.trl_trainer = self._build(model, [*(callbacks or []), self._stop, *self._watchdogs])
        self._trl_changes = trl_changes(self.trl_config)  # after _build, which may set reward weights

    def _check_data(self, dataset: Any, name: str) -> Any:
        """The dataset checked against the algorithm's data format (`name`: the argument it came in)."""
        return check_rows(self.config, dataset, name)

    def _config(self, config: TextRLConfig | dict[str, Any]) -> TextRLConfig:
        cfg = config if isinstance(config, TextRLConfig) else TextRLConfig.model_validate(config)
        family = cfg.algorithm().family
        if family not in self.families:
            right = family.trainer
            raise ConfigError(
                [
                    Problem(
                        "algo",
                        f"algo={cfg.algo!r} is a {family.value} algorithm, but {type(self).__name__} trains "
                        f"{' and '.join(f.value for f in self.families)} algorithms. Fix: use {right} for it.",
                    )
                ],
                algo=cfg.algo,
            )
        return cfg

    @staticmethod
    def trl_class(config: TextRLConfig) -> type:
        """The TRL trainer class behind an algorithm (trl.GRPOTrainer, trl.DPOTrainer, ...). Imports TRL."""
        module, _, name = config.algorithm().trl_trainer.rpartition(".")
        trainer: type = getattr(importlib.import_module(module), name)
        absorb_installed_trl()  # an older TRL release's run-time gaps (textrl/trl_support/compat.py)
        return trainer

    def _build(self, model: Any, callbacks: list[Any] | None) -> Any:
        """Construct the TRL trainer; subclasses add their own arguments through `_trl_arguments`."""
        trainer_class = self._trainer_class()
        return trainer_class(
            model=model,
            args=self.trl_config,
            train_dataset=self.train_dataset,
            eval_dataset=self.eval_dataset,
            processing_class=self.tokenizer,
            callbacks=callbacks,
            **self._trl_arguments(),
        )

    def _trainer_class(self) -> type:
        """The TRL trainer class this trainer builds: TRL's, with atomic checkpoints mixed in."""
        from .eval_progress import EvalProgress

        # AtomicCheckpoints (saves) and EvalProgress (the evaluation bar) in front; same name, still a subclass of
        # the TRL trainer
        trl_class = self.trl_class(self.config)
        return type(trl_class.__name__, (AtomicCheckpoints, EvalProgress, trl_class), {"__module__": __name__})

    def _trl_arguments(self) -> dict[str, Any]:
        """Arguments of the TRL trainer beyond those every trainer takes."""
        return {}

    def _generation_round(self) -> tuple[int, int]:
        """(micro-batches one generation round feeds, gradient accumulation steps): a stop on a signal waits for the
        end of a round (online algorithms override this; others have no rounds)."""
        return 1, 1

    def train(
        self,
        resume_from_checkpoint: str | bool | None = None,
        *,
        resume_changed: bool = False,
        overwrite: bool = False,
    ) -> Any:
        """Write the run manifest to output_dir, then train with TRL; returns TRL's TrainOutput.

        output_dir is this run's while it trains: a second run into it is refused, naming this one. A non-empty
        output_dir needs `resume_from_checkpoint` (True: its last checkpoint) or `overwrite=True`, which replaces
        an earlier run (a folder with textrl_manifest.json) and nothing else; nothing is replaced silently.

        Resuming compares the checkpoint's fingerprint (options, dataset rows, rewards, processes, versions) with
        this run's: a change that alters what is trained, or a checkpoint without its optimizer, scheduler or random
        state, is refused with every difference listed, unless `resume_changed=True`; harmless ones (logging,
        saving, evaluation cadence) are reported.

        A run that finishes also gets `log_history.json` and its training curves (`report.svg`, `report.md`).
        SIGINT or SIGTERM saves a checkpoint at the end of the current step and raises TrainingInterrupted
        (a KeyboardInterrupt) naming it; a second signal stops at once.
        """
        from ..checkpoints.lock import OutputDirLock, held

        output_dir = options(self.config).output_dir
        checked = held(output_dir)  # textrl-train took the folder and checked it before loading the model
        with OutputDirLock(output_dir):
            if not checked:
                resume_from_checkpoint = self._check_output_dir(resume_from_checkpoint, resume_changed, overwrite)
            return self._train(resume_from_checkpoint, resume_changed)

    def _check_output_dir(self, resume: str | bool | None, resume_changed: bool, overwrite: bool) -> str | bool | None:
        """The Python API's start: the same rule as textrl-train's (textrl.checkpoints.run_folder), spelled as
        arguments."""
        from ..checkpoints.run_folder import PYTHON, check_checkpoint, check_output_dir, clear, contents, note_replaced

        output_dir = Path(options(self.config).output_dir)
        if isinstance(resume, str):
            check_checkpoint(Path(resume), resume_changed=resume_changed, wording=PYTHON)
            return resume
        made = frozenset(contents(output_dir)) - self._found_in_output_dir  # by this trainer's TRL, at its build
        checkpoint = check_output_dir(
            output_dir,
            resume=bool(resume),
            overwrite=overwrite,
            algo=self.config.algo,
            resume_changed=resume_changed,
            wording=PYTHON,
            ignore=made,
        )
        replace = checkpoint is None and bool(contents(output_dir, made))
        accelerator = self.trl_trainer.accelerator
        accelerator.wait_for_everyone()  # every process has looked at the folder before process 0 clears it
        if replace:
            if overwrite:
                from ..checkpoints.overwrite import check_replaceable, inputs

                source = getattr(getattr(self.trl_trainer.model, "config", None), "_name_or_path", None)
                read = inputs([("the model", source)])
                check_replaceable(output_dir, read, kind="run", field="output_dir", flag="train(overwrite=True)")
            elif accelerator.is_main_process:
                note_replaced(output_dir)
            clear(output_dir, keep=made)  # process 0 only
        accelerator.wait_for_everyone()
        return str(checkpoint) if checkpoint else None

    def _train(self, resume_from_checkpoint: str | bool | None, resume_changed: bool) -> Any:
        if hasattr(self.train_dataset, "__len__"):  # too few rows for one batch: 0 steps (an iterable one has no len)
            batch_lines(self.config, len(self.train_dataset), self.trl_trainer.accelerator.num_processes)
        accelerator = self.trl_trainer.accelerator
        output_dir = options(self.config).output_dir
        local = int(os.environ.get("LOCAL_WORLD_SIZE", accelerator.num_processes) or 1)  # set by torchrun/accelerate
        engine = describe_engine(self.config, accelerator.distributed_type.value, accelerator.num_processes,
                                 max(1, accelerator.num_processes // local))  # fmt: skip
        if accelerator.is_main_process and engine != "one process":
            print(f"textrl: training with {engine}", file=sys.stderr)
        if engine.startswith("DeepSpeed"):  # DeepSpeed 0.19 calls torch 2.13's renamed collectives: one warning a call
            import warnings

            warnings.filterwarnings("ignore", r"`torch\.distributed\.\w+` is deprecated", FutureWarning)
        from ..checkpoints.fingerprint import FingerprintCheckpoints, check_resume, fingerprint

        record = fingerprint(
            self.config,
            {"train": self.train_dataset, "eval": self.eval_dataset},
            getattr(self, "rewards", None),
            accelerator.num_processes,
        )
        if resume_from_checkpoint:  # the manifest beside the checkpoint says which algorithm wrote it
            run_dir = output_dir if resume_from_checkpoint is True else Path(resume_from_checkpoint).parent
            check_same_algorithm(run_dir, self.config.algo)
            if resume_from_checkpoint is True:
                from transformers.trainer_utils import get_last_checkpoint

                found = get_last_checkpoint(output_dir)
            else:
                found = str(resume_from_checkpoint)
            if found:
                check_resume(Path(found), record, allow_changes=resume_changed)
        self.trl_trainer.add_callback(FingerprintCheckpoints(record))
        if accelerator.is_main_process:
            discard_partial(options(self.config).output_dir)
            write_manifest(
                options(self.config).output_dir,
                config=self.config,
                trl_config=self.trl_config,
                trl_changes=self._trl_changes,
                datasets={"train": self.train_dataset, "eval": self.eval_dataset},
                processes=accelerator.num_processes,
                fingerprint=record,
                base_quantization=of_model(self.trl_trainer.model),
                engine=engine,
                parent=parent_run(self._loaded_from),
            )
        self._stop.install()
        try:
            result = self.trl_trainer.train(resume_from_checkpoint=resume_from_checkpoint)
        finally:
            self._stop.uninstall()
            for watchdog in self._watchdogs:  # TRL calls on_train_end only when training ends well
                watchdog.stop()
        if self._stop.received is not None:
            from .interrupt import TrainingInterrupted

            step = self.trl_trainer.state.global_step
            checkpoint = Path(options(self.config).output_dir) / f"checkpoint-{step}"
            raise TrainingInterrupted(self._stop.signal_name, step, str(checkpoint) if checkpoint.is_dir() else None)
        if accelerator.is_main_process:
            self._write_report()
        return result

    def _write_report(self) -> None:
        """Save the log history and draw it; a failure here is a warning, never the loss of a finished run."""
        output_dir = Path(options(self.config).output_dir)
        try:
            from ..checkpoints.files import LOG_HISTORY
            from ..report import write_report

            write_json(output_dir / LOG_HISTORY, self.trl_trainer.state.log_history, indent=1)
            write_report(output_dir)
        except Exception as exc:
            message = str(exc).replace("\n", " ")
            print(f"textrl: could not write the report: {type(exc).__name__}: {message}", file=sys.stderr)

    @property
    def log_history(self) -> list[dict[str, Any]]:
        """The metrics TRL logged, one dict per logging step."""
        return list(self.trl_trainer.state.log_history)

    def save_model(self, output_dir: str | None = None) -> None:
        """Save the model (safetensors) to output_dir (default: the config's), each file complete or absent.

        TRL writes into `output_dir/.textrl-partial/model`; the main process then moves every file into place.
        """
        target = Path(output_dir or options(self.config).output_dir)
        staging = target / STAGING / "model"
        self.trl_trainer.save_model(str(staging), _internal_call=True)  # no hub push of the staging folder
        accelerator = self.trl_trainer.accelerator
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:
            for item in sorted(staging.iterdir()):
                if (target / item.name).is_dir():
                    shutil.rmtree(target / item.name)
                os.replace(item, target / item.name)
            shutil.rmtree(target / STAGING)
        accelerator.wait_for_everyone()
        if self.trl_trainer.args.push_to_hub:
            self.trl_trainer.push_to_hub(commit_message="Model save", revision=self.trl_trainer.args.hub_revision)
