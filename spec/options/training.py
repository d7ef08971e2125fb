"""Options every algorithm shares: the transformers TrainingArguments users reach for most."""

from typing import Literal

from ..choices import Interval, LrScheduler, Optimizer, SaveInterval
from ..forms import ReportTargets, ShellPath
from ..model import REQUIRED, Option

OUTPUT_DIR = Option(
    name="output_dir", annotation=ShellPath, default=REQUIRED, trl_name="output_dir", group="Run",
    min_length=1, example="out/run",
    description="Folder for checkpoints, logs and the run manifest; ~, $VAR and ${VAR} are expanded as a shell "
    "would.",
)  # fmt: skip
SEED = Option(
    name="seed", annotation=int, default=42, trl_name="seed", group="Run", ge=0,
    description="Random seed for model init, data order and sampling; the same seed reproduces a run.",
)  # fmt: skip
RUN_NAME = Option(
    name="run_name", annotation=str | None, default=None, trl_name="run_name", group="Run",
    description="Name of the run in experiment trackers (wandb, tensorboard, ...).",
)  # fmt: skip

LEARNING_RATE = Option(
    name="learning_rate", annotation=float, default=1e-6, trl_name="learning_rate", group="Optimisation", gt=0,
    description="Peak learning rate of the optimizer (after warmup).",
)  # fmt: skip
NUM_TRAIN_EPOCHS = Option(
    name="num_train_epochs", annotation=float, default=3.0, trl_name="num_train_epochs", group="Optimisation",
    gt=0, description="Passes over the training set; ignored when max_steps is set.",
)  # fmt: skip
MAX_STEPS = Option(
    name="max_steps", annotation=int, default=-1, trl_name="max_steps", group="Optimisation", ge=-1,
    description="Total optimizer steps; -1 means run num_train_epochs instead.",
)  # fmt: skip
WARMUP_STEPS = Option(
    name="warmup_steps", annotation=float, default=0.0, trl_name="warmup_steps", group="Optimisation", ge=0,
    description="Learning-rate warmup: a value of 1 or more is a number of steps, below 1 a fraction of all steps.",
)  # fmt: skip
LR_SCHEDULER_TYPE = Option(
    name="lr_scheduler_type", annotation=LrScheduler, default="linear", trl_name="lr_scheduler_type",
    group="Optimisation", description="Learning-rate schedule after warmup.",
)  # fmt: skip
WEIGHT_DECAY = Option(
    name="weight_decay", annotation=float, default=0.0, trl_name="weight_decay", group="Optimisation", ge=0,
    description="Decoupled weight decay (AdamW) applied to all weights except biases and norms.",
)  # fmt: skip
MAX_GRAD_NORM = Option(
    name="max_grad_norm", annotation=float, default=1.0, trl_name="max_grad_norm", group="Optimisation", ge=0,
    description="Gradient clipping norm; 0 disables clipping.",
)  # fmt: skip
OPTIM = Option(
    name="optim", annotation=Optimizer, default="adamw_torch_fused", trl_name="optim", group="Optimisation",
    description="Optimizer; 8-bit and paged variants need bitsandbytes.",
)  # fmt: skip

PER_DEVICE_TRAIN_BATCH_SIZE = Option(
    name="per_device_train_batch_size", annotation=int, default=8, trl_name="per_device_train_batch_size",
    group="Batching", ge=1, description="Training rows (for online algorithms: completions) per device per step.",
)  # fmt: skip
PER_DEVICE_EVAL_BATCH_SIZE = Option(
    name="per_device_eval_batch_size", annotation=int, default=8, trl_name="per_device_eval_batch_size",
    group="Batching", ge=1, description="Evaluation rows per device per step.",
)  # fmt: skip
GRADIENT_ACCUMULATION_STEPS = Option(
    name="gradient_accumulation_steps", annotation=int, default=1, trl_name="gradient_accumulation_steps",
    group="Batching", ge=1,
    description="Micro-batches summed before each optimizer step; the effective batch is "
    "per_device_train_batch_size × gradient_accumulation_steps × number of processes.",
)  # fmt: skip

BF16 = Option(
    name="bf16", annotation=bool | Literal["auto"], default="auto", trl_name="bf16", trl_convert="resolve_bf16",
    group="Precision and memory",
    description="bfloat16 mixed precision. \"auto\" turns it on where the hardware supports it and off elsewhere "
    "(TRL's default of true refuses to build on a CPU); true on hardware without bf16 is an error.",
)  # fmt: skip
FP16 = Option(
    name="fp16", annotation=bool, default=False, trl_name="fp16", group="Precision and memory",
    description="float16 mixed precision, for GPUs without bf16; not together with bf16.",
)  # fmt: skip
GRADIENT_CHECKPOINTING = Option(
    name="gradient_checkpointing", annotation=bool, default=True, trl_name="activation_checkpointing",
    group="Precision and memory",
    description="Recompute activations in the backward pass to save memory at some speed cost "
    "(transformers 5 calls this activation_checkpointing).",
)  # fmt: skip

LOGGING_STEPS = Option(
    name="logging_steps", annotation=float, default=10.0, trl_name="logging_steps", group="Logging and saving", gt=0,
    description="Log metrics every this many steps (below 1: a fraction of all steps).",
)  # fmt: skip
REPORT_TO = Option(
    name="report_to", annotation=ReportTargets, default=["none"], trl_name="report_to",
    group="Logging and saving", min_length=1,
    description="Experiment trackers to log to, e.g. [tensorboard] or [wandb]; [none] logs to the console only.",
)  # fmt: skip
SAVE_STRATEGY = Option(
    name="save_strategy", annotation=SaveInterval, default="steps", trl_name="save_strategy",
    group="Logging and saving", description="When to save checkpoints: no, steps, epoch or best.",
)  # fmt: skip
SAVE_STEPS = Option(
    name="save_steps", annotation=float, default=500.0, trl_name="save_steps", group="Logging and saving", gt=0,
    description="Save a checkpoint every this many steps when save_strategy is steps (below 1: a fraction).",
)  # fmt: skip
SAVE_TOTAL_LIMIT = Option(
    name="save_total_limit", annotation=int | None, default=None, trl_name="save_total_limit",
    group="Logging and saving", ge=1, description="Keep at most this many checkpoints, deleting the oldest.",
)  # fmt: skip
METRIC_FOR_BEST_MODEL = Option(
    name="metric_for_best_model", annotation=str | None, default=None, trl_name="metric_for_best_model",
    group="Logging and saving", example="eval_loss",
    description="The logged metric that decides the best checkpoint, e.g. eval_loss; needed by save_strategy best.",
)  # fmt: skip
EVAL_STRATEGY = Option(
    name="eval_strategy", annotation=Interval, default="no", trl_name="eval_strategy", group="Logging and saving",
    description="When to evaluate on eval_dataset: no, steps or epoch.",
)  # fmt: skip
EVAL_STEPS = Option(
    name="eval_steps", annotation=float | None, default=None, trl_name="eval_steps", group="Logging and saving",
    gt=0, description="Evaluate every this many steps when eval_strategy is steps; None means logging_steps.",
)  # fmt: skip
STALL_TIMEOUT = Option(
    name="stall_timeout", annotation=float | Literal["off"], default=1800.0, trl_name=None, group="Logging and saving",
    description="Seconds without progress (an optimizer step, an evaluation batch, a save, a log) after which TextRL "
    "writes every thread's stack of each process to output_dir/stall-rank<N>.txt and exits with status 124; a hung "
    "reward, collective or data loader then says where it hangs. \"off\" disables the watchdog. Counted from the "
    "start of training (model loading excluded).",
)  # fmt: skip

COMMON = (
    OUTPUT_DIR, SEED, RUN_NAME,
    LEARNING_RATE, NUM_TRAIN_EPOCHS, MAX_STEPS, WARMUP_STEPS, LR_SCHEDULER_TYPE, WEIGHT_DECAY, MAX_GRAD_NORM, OPTIM,
    PER_DEVICE_TRAIN_BATCH_SIZE, PER_DEVICE_EVAL_BATCH_SIZE, GRADIENT_ACCUMULATION_STEPS,
    BF16, FP16, GRADIENT_CHECKPOINTING,
    LOGGING_STEPS, REPORT_TO, SAVE_STRATEGY, SAVE_STEPS, SAVE_TOTAL_LIMIT, METRIC_FOR_BEST_MODEL, EVAL_STRATEGY,
    EVAL_STEPS, STALL_TIMEOUT,
)  # fmt: skip
