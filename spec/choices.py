"""Closed choices, each a `Literal`: TRL takes these as free strings and fails late on a typo."""

from typing import Literal

GRPO_LOSS_TYPES = ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo")
GrpoLossType = Literal[GRPO_LOSS_TYPES]  # type: ignore[valid-type]

DPO_LOSS_TYPES = (
    "sigmoid", "hinge", "ipo", "exo_pair", "nca_pair", "robust", "bco_pair", "sppo_hard",
    "aot", "aot_unpaired", "apo_zero", "apo_down", "discopop", "sft", "sigmoid_norm",
)  # fmt: skip
DpoLossType = Literal[DPO_LOSS_TYPES]  # type: ignore[valid-type]

# The DPO losses built on the chosen-minus-rejected reward difference; only these accept an
# f-divergence other than reverse KL (TRL raises inside the loss for the others).
F_DIVERGENCE_LOSSES = ("sigmoid", "sigmoid_norm", "hinge", "ipo", "exo_pair", "robust", "discopop", "sft")
F_DIVERGENCE_TYPES = ("reverse_kl", "forward_kl", "js_divergence", "alpha_divergence")
FDivergenceType = Literal[F_DIVERGENCE_TYPES]  # type: ignore[valid-type]

KTO_LOSS_TYPES = ("kto", "apo_zero_unpaired")
KtoLossType = Literal[KTO_LOSS_TYPES]  # type: ignore[valid-type]

ScaleRewards = Literal["group", "batch", "none"]
ReferenceCache = Literal["auto", "on", "off"]
ImportanceSamplingLevel = Literal["token", "sequence"]
MultiObjectiveAggregation = Literal["sum_then_normalize", "normalize_then_sum"]
VllmMode = Literal["colocate", "server"]
Interval = Literal["no", "steps", "epoch"]
SaveInterval = Literal["no", "steps", "epoch", "best"]

LR_SCHEDULERS = (
    "linear", "cosine", "cosine_with_restarts", "polynomial", "constant", "constant_with_warmup",
    "inverse_sqrt", "reduce_lr_on_plateau", "cosine_with_min_lr", "cosine_warmup_with_min_lr",
    "warmup_stable_decay", "greedy",
)  # fmt: skip
"""Every value of transformers' SchedulerType (the drift test keeps them equal)."""
LrScheduler = Literal[LR_SCHEDULERS]  # type: ignore[valid-type]

OPTIMIZERS = (
    "adamw_torch", "adamw_torch_fused", "adamw_torch_xla", "adamw_torch_npu_fused", "adafactor",
    "adamw_anyprecision", "adamw_torch_4bit", "adamw_torch_8bit", "ademamix", "sgd", "adagrad", "adamw_bnb_8bit",
    "adamw_8bit", "ademamix_8bit", "lion_8bit", "lion_32bit", "paged_adamw_32bit", "paged_adamw_8bit",
    "paged_ademamix_32bit", "paged_ademamix_8bit", "paged_lion_32bit", "paged_lion_8bit", "rmsprop", "rmsprop_bnb",
    "rmsprop_bnb_8bit", "rmsprop_bnb_32bit", "galore_adamw", "galore_adamw_8bit", "galore_adafactor",
    "galore_adamw_layerwise", "galore_adamw_8bit_layerwise", "galore_adafactor_layerwise", "lomo", "adalomo",
    "grokadamw", "schedule_free_radam", "schedule_free_adamw", "schedule_free_sgd", "apollo_adamw",
    "apollo_adamw_layerwise", "stable_adamw",
)  # fmt: skip
"""Every value of transformers' OptimizerNames (the drift test keeps them equal)."""
Optimizer = Literal[OPTIMIZERS]  # type: ignore[valid-type]

REPORT_TARGETS = (
    "none", "all", "tensorboard", "wandb", "mlflow", "comet_ml", "trackio", "clearml", "neptune",
    "dvclive", "swanlab", "azure_ml", "codecarbon", "dagshub", "flyte", "kubeflow",
)  # fmt: skip
ReportTarget = Literal[REPORT_TARGETS]  # type: ignore[valid-type]

Quantization = Literal["4bit", "8bit"]
TorchDtype = Literal["auto", "bfloat16", "float16", "float32"]
DistributedStrategy = Literal["ddp", "deepspeed", "fsdp"]
