"""Closed choices, each a `Literal`: TRL takes these as free strings and fails late on a typo."""

from dataclasses import dataclass
from typing import Literal

GRPO_LOSS_TYPES = ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo")
GrpoLossType = Literal[GRPO_LOSS_TYPES]  # type: ignore[valid-type]


@dataclass(frozen=True)
class DpoLoss:
    """What one DPO loss takes beside beta: the one record that the loss list, the loss rules and the fixed-loss
    algorithms (spec/algorithms.py) read."""

    f_divergence: bool = False
    """Built on the chosen-minus-rejected reward difference, so it takes an f_divergence_type other than reverse_kl
    (TRL raises inside the loss for the others)."""
    use_weighting: bool = True
    """TRL implements use_weighting for it (it raises at trainer start for the others)."""
    label_smoothing: bool = False
    """It reads label_smoothing."""
    label_smoothing_default: float | None = None
    """label_smoothing's default where the loss needs another than the option's."""
    discopop_tau: bool = False
    """It reads discopop_tau."""


DPO_LOSSES = {
    "sigmoid": DpoLoss(f_divergence=True),
    "hinge": DpoLoss(f_divergence=True),
    "ipo": DpoLoss(f_divergence=True),
    "exo_pair": DpoLoss(f_divergence=True, label_smoothing=True, label_smoothing_default=1e-3),
    "nca_pair": DpoLoss(),
    "robust": DpoLoss(f_divergence=True, label_smoothing=True, label_smoothing_default=0.1),
    "bco_pair": DpoLoss(),
    "sppo_hard": DpoLoss(),
    "aot": DpoLoss(use_weighting=False, label_smoothing=True),
    "aot_unpaired": DpoLoss(use_weighting=False, label_smoothing=True),
    "apo_zero": DpoLoss(),
    "apo_down": DpoLoss(),
    "discopop": DpoLoss(f_divergence=True, discopop_tau=True),
    "sft": DpoLoss(f_divergence=True),
    "sigmoid_norm": DpoLoss(f_divergence=True),
}
DPO_LOSS_TYPES = tuple(DPO_LOSSES)
DpoLossType = Literal[DPO_LOSS_TYPES]  # type: ignore[valid-type]
F_DIVERGENCE_LOSSES = tuple(name for name, loss in DPO_LOSSES.items() if loss.f_divergence)
NO_WEIGHTING_LOSSES = tuple(name for name, loss in DPO_LOSSES.items() if not loss.use_weighting)

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
