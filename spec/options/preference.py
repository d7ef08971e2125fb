"""Options of the offline preference algorithms (the DPO loss family, KTO) and of reward modelling."""

from ..choices import FDivergenceType, KtoLossType
from ..forms import DpoLossTypes, ReferenceCacheForm, ShellPath
from ..model import Option

BETA_DPO = Option(
    name="beta", annotation=float, default=0.1, trl_name="beta", group="Loss", gt=0,
    description="Strength of the pull towards the reference model (for ipo: the regularisation τ); higher stays "
    "closer to the reference.",
)  # fmt: skip
DPO_LOSS_TYPE = Option(
    name="loss_type", annotation=DpoLossTypes, default=["sigmoid"], trl_name="loss_type", group="Loss",
    min_length=1, example=["sigmoid", "sft"],
    description="One DPO loss or several summed with loss_weights, e.g. [sigmoid, sft] (RPO) or "
    "[sigmoid, bco_pair, sft] (MPO).",
)  # fmt: skip
LOSS_WEIGHTS = Option(
    name="loss_weights", annotation=list[float] | None, default=None, trl_name="loss_weights", group="Loss",
    example=[1.0, 1.0], description="One weight per entry of loss_type; None weighs every loss 1.0.",
)  # fmt: skip
LABEL_SMOOTHING = Option(
    name="label_smoothing", annotation=float, default=0.0, trl_name="label_smoothing", group="Loss", ge=0, le=0.5,
    description="Assumed probability that a preference label is flipped (cDPO, robust DPO; exo_pair needs > 0, the "
    "paper uses 1e-3).",
)  # fmt: skip
DISCOPOP_TAU = Option(
    name="discopop_tau", annotation=float, default=0.05, trl_name="discopop_tau", group="Loss", gt=0,
    description="Temperature of the DiscoPOP log-ratio modulation; the paper recommends 0.05.",
)  # fmt: skip
LD_ALPHA = Option(
    name="ld_alpha", annotation=float | None, default=None, trl_name="ld_alpha", group="Loss", ge=0, le=1,
    description="LD-DPO: weight of the tokens past the shared length of chosen and rejected (0 masks them, 1 is "
    "plain DPO); None disables it.",
)  # fmt: skip
F_DIVERGENCE_TYPE = Option(
    name="f_divergence_type", annotation=FDivergenceType, default="reverse_kl", trl_name="f_divergence_type",
    group="Loss", description="Divergence regularising the policy towards the reference (f-DPO).",
)  # fmt: skip
F_ALPHA_DIVERGENCE_COEF = Option(
    name="f_alpha_divergence_coef", annotation=float, default=0.5, trl_name="f_alpha_divergence_coef", group="Loss",
    gt=0, description="α of the alpha divergence, used when f_divergence_type is alpha_divergence.",
)  # fmt: skip
USE_WEIGHTING = Option(
    name="use_weighting", annotation=bool, default=False, trl_name="use_weighting", group="Loss",
    description="Weight each pair by its policy probability (WPO).",
)  # fmt: skip

MAX_LENGTH = Option(
    name="max_length", annotation=int | None, default=1024, trl_name="max_length", group="Data", ge=1,
    description="Maximum tokens of prompt plus completion; longer rows are truncated. None disables truncation.",
)  # fmt: skip
PADDING_FREE = Option(
    name="padding_free", annotation=bool, default=False, trl_name="padding_free", group="Data",
    description="Forward passes without padding (flattened batch, flash attention only). Every TRL release in the "
    "window turns it off in the DPO trainer, so true is refused (rule padding_free_unavailable).",
)  # fmt: skip

PRECOMPUTE_REF_LOG_PROBS = Option(
    name="precompute_ref_log_probs", annotation=bool, default=False, trl_name="precompute_ref_log_probs",
    group="Reference model",
    description="Compute the reference model's log-probabilities once before training, then free it.",
)  # fmt: skip
SYNC_REF_MODEL = Option(
    name="sync_ref_model", annotation=bool, default=False, trl_name="sync_ref_model", group="Reference model",
    description="Move the reference model towards the policy every ref_model_sync_steps steps (TR-DPO); not with "
    "PEFT.",
)  # fmt: skip
REF_MODEL_MIXUP_ALPHA = Option(
    name="ref_model_mixup_alpha", annotation=float, default=0.6, trl_name="ref_model_mixup_alpha",
    group="Reference model", ge=0, le=1, description="Mix-up weight of the policy when syncing the reference.",
)  # fmt: skip
REF_MODEL_SYNC_STEPS = Option(
    name="ref_model_sync_steps", annotation=int, default=512, trl_name="ref_model_sync_steps",
    group="Reference model", ge=1, description="Steps between reference syncs.",
)  # fmt: skip
DISABLE_DROPOUT = Option(
    name="disable_dropout", annotation=bool, default=True, trl_name="disable_dropout", group="Reference model",
    description="Turn dropout off in the policy (and reference) so log-probabilities are deterministic.",
)  # fmt: skip

KTO_LOSS_TYPE = Option(
    name="loss_type", annotation=KtoLossType, default="kto", trl_name="loss_type", group="Loss",
    description="kto (the KTO paper's loss) or apo_zero_unpaired (anchored preference optimisation, unpaired).",
)  # fmt: skip
DESIRABLE_WEIGHT = Option(
    name="desirable_weight", annotation=float, default=1.0, trl_name="desirable_weight", group="Loss", gt=0,
    description="Weight of desirable (label true) rows; raise it when they are rarer than undesirable ones.",
)  # fmt: skip
UNDESIRABLE_WEIGHT = Option(
    name="undesirable_weight", annotation=float, default=1.0, trl_name="undesirable_weight", group="Loss", gt=0,
    description="Weight of undesirable (label false) rows.",
)  # fmt: skip

CENTER_REWARDS_COEFFICIENT = Option(
    name="center_rewards_coefficient", annotation=float | None, default=None, trl_name="center_rewards_coefficient",
    group="Loss", ge=0, description="Penalty pushing the reward model's mean output towards 0; None disables it.",
)  # fmt: skip

REFERENCE_CACHE = Option(
    name="reference_cache", annotation=ReferenceCacheForm, default="auto", trl_name=None, group="Reference model",
    description="Keep the reference model's log-probabilities of each dataset on disk and reuse them in every later "
    "run whose reference weights, rows and tokenisation match (a beta or loss sweep computes them once). While it is "
    "used, TRL precomputes them (precompute_ref_log_probs) and no reference copy is loaded. auto: used when the "
    "cache already holds this run's, or when the run sees every training row at least once (so filling it costs "
    "no more reference forwards than the run would make); on: always (fills the cache on a miss); off: never. The "
    "dry run says whether it will hit.",
)  # fmt: skip
REFERENCE_CACHE_DIR = Option(
    name="reference_cache_dir", annotation=ShellPath | None, default=None, trl_name=None, group="Reference model",
    description="Folder of the reference cache; None means $TEXTRL_REFERENCE_CACHE when set, else "
    "$TEXTRL_HOME/reference-logps (default ~/.cache/textrl/reference-logps). Share it between the runs of a sweep; "
    "entries can be deleted at any time (the next run recomputes them).",
)  # fmt: skip

REFERENCE = (
    REFERENCE_CACHE,
    REFERENCE_CACHE_DIR,
    PRECOMPUTE_REF_LOG_PROBS,
    SYNC_REF_MODEL,
    REF_MODEL_MIXUP_ALPHA,
    REF_MODEL_SYNC_STEPS,
    DISABLE_DROPOUT,
)
