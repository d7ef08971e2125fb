"""What a resumed run may change without changing what is trained.

A checkpoint records a fingerprint of its run (the resolved options, the datasets' contents, the rewards, the number
of processes, the versions). `--resume` compares it with the run about to continue: a difference in an option named
here is reported and allowed (it changes how the run is watched, logged or saved, not what it learns); any other
option, a dataset, a reward or the process count is refused unless `--resume-changed` is given. Versions are
reported, never refused.
"""

RESUME_SAFE_OPTIONS = frozenset({
    "output_dir", "run_name", "report_to", "logging_steps", "save_strategy", "save_steps", "save_total_limit",
    "metric_for_best_model", "eval_strategy", "eval_steps", "per_device_eval_batch_size", "num_generations_eval",
    "eval_dataset", "stall_timeout", "env", "distributed", "reference_cache", "reference_cache_dir",
})  # fmt: skip
"""TextRL options a resume may change. (`distributed` changes how the same computation is laid out; the process
count, which changes the global batch and the data order, is compared on its own.)"""

RESUME_SAFE_TRL_PREFIXES = (
    "log_", "logging_", "save_", "push_to_hub", "hub_", "eval_", "report_", "run_name", "disable_tqdm", "project",
    "trackio_", "wandb_", "dataloader_", "include_", "torch_empty_cache_steps", "ddp_timeout",
)  # fmt: skip
"""Prefixes of TRL fields (given in `extra`) a resume may change: logging, saving, evaluation, hub and tracker
settings, data-loader workers."""

RESCHEDULES = frozenset({"max_steps", "num_train_epochs"})
"""Options a resume may change (to extend a run), reported with a note of their own: the learning-rate schedule
(warmup, decay) is computed from the run's length, so a longer run continues on a different schedule than a run
planned that long from the start."""


def resume_safe(name: str) -> bool:
    """Whether changing option `name` (or the TRL field `extra.<field>`) between a checkpoint and its resume keeps
    what is trained."""
    if name.startswith("extra."):
        return name[len("extra.") :].startswith(RESUME_SAFE_TRL_PREFIXES)
    return name.split(".")[0] in RESUME_SAFE_OPTIONS
