"""Options of the online algorithms (GRPO, RLOO, REINFORCE++): generation, policy loss and vLLM rollout."""

from typing import Literal

from ..choices import GrpoLossType, ImportanceSamplingLevel, MultiObjectiveAggregation, VllmMode
from ..forms import ScaleRewardsForm
from ..model import Option

NUM_GENERATIONS = Option(
    name="num_generations", annotation=int, default=8, trl_name="num_generations", group="Generation", ge=2,
    description="Completions sampled per prompt (the group). At least 2: advantages compare completions of a prompt.",
)  # fmt: skip
MAX_COMPLETION_LENGTH = Option(
    name="max_completion_length", annotation=int, default=512, trl_name="max_completion_length", group="Generation",
    ge=1, description="Maximum tokens generated per completion.",
)  # fmt: skip
TEMPERATURE = Option(
    name="temperature", annotation=float, default=1.0, trl_name="temperature", group="Generation", gt=0,
    description="Sampling temperature; higher gives more diverse completions.",
)  # fmt: skip
TOP_P = Option(
    name="top_p", annotation=float, default=1.0, trl_name="top_p", group="Generation", gt=0, le=1,
    description="Nucleus sampling: keep the smallest token set whose probability reaches top_p.",
)  # fmt: skip
TOP_K = Option(
    name="top_k", annotation=int, default=0, trl_name="top_k", group="Generation", ge=0,
    description="Keep only the k most likely tokens when sampling; 0 disables the filter.",
)  # fmt: skip
MIN_P = Option(
    name="min_p", annotation=float | None, default=None, trl_name="min_p", group="Generation", ge=0, le=1,
    description="Drop tokens whose probability is below min_p times the most likely token's.",
)  # fmt: skip
REPETITION_PENALTY = Option(
    name="repetition_penalty", annotation=float, default=1.0, trl_name="repetition_penalty", group="Generation",
    gt=0, description="Penalty on tokens already in the prompt or completion; 1.0 means none.",
)  # fmt: skip
GENERATION_BATCH_SIZE = Option(
    name="generation_batch_size", annotation=int | None, default=None, trl_name="generation_batch_size",
    group="Generation", ge=1,
    description="Completions generated per generation round; must be a multiple of num_generations. None means "
    "per_device_train_batch_size × gradient_accumulation_steps × processes.",
)  # fmt: skip
STEPS_PER_GENERATION = Option(
    name="steps_per_generation", annotation=int | None, default=None, trl_name="steps_per_generation",
    group="Generation", ge=1,
    description="Optimizer micro-steps per generation round; the alternative to generation_batch_size (not both).",
)  # fmt: skip

BETA_ONLINE = Option(
    name="beta", annotation=float, default=0.0, trl_name="beta", group="Loss", ge=0,
    description="KL coefficient against the reference model; 0 skips the reference model entirely.",
)  # fmt: skip
EPSILON = Option(
    name="epsilon", annotation=float, default=0.2, trl_name="epsilon", group="Loss", ge=0,
    description="Lower clipping range of the importance ratio (PPO-style clip).",
)  # fmt: skip
EPSILON_HIGH = Option(
    name="epsilon_high", annotation=float | None, default=None, trl_name="epsilon_high", group="Loss", ge=0,
    description="Upper clipping range (DAPO's clip-higher); None means the same as epsilon.",
)  # fmt: skip
DELTA = Option(
    name="delta", annotation=float | None, default=None, trl_name="delta", group="Loss", gt=0,
    description="Two-sided clipping bound on the importance ratio for negative advantages; None disables it.",
)  # fmt: skip
NUM_ITERATIONS = Option(
    name="num_iterations", annotation=int, default=1, trl_name="num_iterations", group="Loss", ge=1,
    description="Optimisation passes over each generated batch (μ in the GRPO paper).",
)  # fmt: skip
GRPO_LOSS_TYPE = Option(
    name="loss_type", annotation=GrpoLossType, default="dapo", trl_name="loss_type", group="Loss",
    description="How token losses are aggregated: grpo (per-sequence mean; length-biased), dapo (per active token "
    "in the global batch), dr_grpo (by a constant), bnpo (per active token in the local batch), cispo, sapo, "
    "luspo (pair with importance_sampling_level sequence) or vespo.",
)  # fmt: skip
SCALE_REWARDS = Option(
    name="scale_rewards", annotation=ScaleRewardsForm, default="group", trl_name="scale_rewards", group="Loss",
    description="Divide advantages by the reward std of the group, of the whole batch, or not at all (none, as "
    "Dr. GRPO recommends); true and false, TRL's older spelling, mean group and none.",
)  # fmt: skip
IMPORTANCE_SAMPLING_LEVEL = Option(
    name="importance_sampling_level", annotation=ImportanceSamplingLevel, default="token",
    trl_name="importance_sampling_level", group="Loss",
    description="Importance ratio per token (GRPO) or per sequence (GSPO).",
)  # fmt: skip
REWARD_WEIGHTS = Option(
    name="reward_weights", annotation=list[float] | None, default=None, trl_name="reward_weights", group="Loss",
    description="One weight per reward function; None weighs all rewards 1.0.",
)  # fmt: skip
MULTI_OBJECTIVE_AGGREGATION = Option(
    name="multi_objective_aggregation", annotation=MultiObjectiveAggregation, default="sum_then_normalize",
    trl_name="multi_objective_aggregation", group="Loss",
    description="With several rewards: sum then normalise, or normalise each reward within its group then sum.",
)  # fmt: skip
MASK_TRUNCATED_COMPLETIONS = Option(
    name="mask_truncated_completions", annotation=bool, default=False, trl_name="mask_truncated_completions",
    group="Loss", description="Leave completions cut at max_completion_length out of the loss.",
)  # fmt: skip
NORMALIZE_ADVANTAGES = Option(
    name="normalize_advantages", annotation=bool, default=False, trl_name="normalize_advantages", group="Loss",
    description="Normalise advantages over the whole batch (mean 0, std 1).",
)  # fmt: skip
REWARD_CLIP_RANGE = Option(
    name="reward_clip_range", annotation=list[float] | None, default=None, trl_name="reward_clip_range",
    trl_convert="as_tuple",
    group="Loss", min_length=2, max_length=2, example=[-10.0, 10.0],
    description="Clip rewards to [low, high] before computing advantages; None disables clipping.",
)  # fmt: skip
TOP_ENTROPY_QUANTILE = Option(
    name="top_entropy_quantile", annotation=float, default=1.0, trl_name="top_entropy_quantile", group="Loss",
    ge=0, le=1, description="Train only on the tokens whose entropy is in this top quantile; 1.0 uses all tokens.",
)  # fmt: skip
LOG_COMPLETIONS = Option(
    name="log_completions", annotation=bool, default=False, trl_name="log_completions", group="Logging and saving",
    description="Log a sample of prompts, completions and rewards at every logging step.",
)  # fmt: skip
SHUFFLE_DATASET = Option(
    name="shuffle_dataset", annotation=bool, default=True, trl_name="shuffle_dataset", group="Data",
    description="Shuffle the prompts each epoch.",
)  # fmt: skip

REWARD_ERRORS = Option(
    name="reward_errors", annotation=Literal["raise", "skip"], default="raise", trl_name=None, group="Rewards",
    description="What a reward failure mid-run does: raise stops the run with the reward's name, the step and a "
    "prompt; skip scores that batch None for that reward (no learning signal from it), logs "
    "rewards/<name>/skipped and keeps training.",
)  # fmt: skip
USE_VLLM = Option(
    name="use_vllm", annotation=bool, default=False, trl_name="use_vllm", group="vLLM",
    description="Generate completions with vLLM instead of transformers' generate (needs the vllm extra and a GPU).",
)  # fmt: skip
VLLM_MODE = Option(
    name="vllm_mode", annotation=VllmMode, default="colocate", trl_name="vllm_mode", group="vLLM",
    description="colocate runs vLLM inside the training processes; server talks to a separate vLLM server, started "
    """with `VLLM_SERVER_DEV_MODE=1 vllm serve MODEL --weight-transfer-config '{"backend": "nccl"}' """
    "--logprobs-mode processed_logprobs --max-logprobs -1`.",
)  # fmt: skip
VLLM_GPU_MEMORY_UTILIZATION = Option(
    name="vllm_gpu_memory_utilization", annotation=float, default=0.3, trl_name="vllm_gpu_memory_utilization",
    group="vLLM", gt=0, le=1, description="Share of GPU memory vLLM may take in colocate mode.",
)  # fmt: skip
VLLM_TENSOR_PARALLEL_SIZE = Option(
    name="vllm_tensor_parallel_size", annotation=int, default=1, trl_name="vllm_tensor_parallel_size", group="vLLM",
    ge=1, description="GPUs each vLLM engine spans in colocate mode.",
)  # fmt: skip
VLLM_MAX_MODEL_LENGTH = Option(
    name="vllm_max_model_length", annotation=int | None, default=None, trl_name="vllm_max_model_length",
    group="vLLM", ge=1, description="Context length vLLM reserves; None uses the model's.",
)  # fmt: skip
VLLM_ENABLE_SLEEP_MODE = Option(
    name="vllm_enable_sleep_mode", annotation=bool, default=False, trl_name="vllm_enable_sleep_mode", group="vLLM",
    description="Free vLLM's GPU memory during the optimizer step in colocate mode.",
)  # fmt: skip
VLLM_SERVER_BASE_URL = Option(
    name="vllm_server_base_url", annotation=str | None, default=None, trl_name="vllm_server_base_url",
    group="vLLM", description="URL of the vLLM server in server mode; overrides host and port.",
)  # fmt: skip
VLLM_SERVER_HOST = Option(
    name="vllm_server_host", annotation=str, default="0.0.0.0", trl_name="vllm_server_host", group="vLLM",
    description="Host of the vLLM server in server mode.",
)  # fmt: skip
VLLM_SERVER_PORT = Option(
    name="vllm_server_port", annotation=int, default=8000, trl_name="vllm_server_port", group="vLLM", ge=1,
    le=65535, description="Port of the vLLM server in server mode.",
)  # fmt: skip
VLLM_SERVER_TIMEOUT = Option(
    name="vllm_server_timeout", annotation=float, default=240.0, trl_name="vllm_server_timeout", group="vLLM",
    gt=0, description="Seconds to wait for the vLLM server to come up.",
)  # fmt: skip
VLLM_STRUCTURED_OUTPUTS_REGEX = Option(
    name="vllm_structured_outputs_regex", annotation=str | None, default=None,
    trl_name="vllm_structured_outputs_regex", group="vLLM",
    description="Constrain vLLM's completions to this regular expression.",
)  # fmt: skip

GENERATION = (
    NUM_GENERATIONS, MAX_COMPLETION_LENGTH, TEMPERATURE, TOP_P, TOP_K, MIN_P, REPETITION_PENALTY,
    GENERATION_BATCH_SIZE, STEPS_PER_GENERATION, SHUFFLE_DATASET, LOG_COMPLETIONS, REWARD_ERRORS,
)  # fmt: skip
VLLM = (
    USE_VLLM, VLLM_MODE, VLLM_GPU_MEMORY_UTILIZATION, VLLM_TENSOR_PARALLEL_SIZE, VLLM_MAX_MODEL_LENGTH,
    VLLM_ENABLE_SLEEP_MODE, VLLM_SERVER_BASE_URL, VLLM_SERVER_HOST, VLLM_SERVER_PORT, VLLM_SERVER_TIMEOUT,
    VLLM_STRUCTURED_OUTPUTS_REGEX,
)  # fmt: skip
GRPO_LOSS = (
    BETA_ONLINE, EPSILON, EPSILON_HIGH, DELTA, NUM_ITERATIONS, GRPO_LOSS_TYPE, SCALE_REWARDS,
    IMPORTANCE_SAMPLING_LEVEL, REWARD_WEIGHTS, MULTI_OBJECTIVE_AGGREGATION, MASK_TRUNCATED_COMPLETIONS,
    TOP_ENTROPY_QUANTILE,
)  # fmt: skip
RLOO_LOSS = (
    BETA_ONLINE.but(default=0.05), EPSILON, EPSILON_HIGH, NUM_ITERATIONS, REWARD_WEIGHTS, REWARD_CLIP_RANGE,
    MASK_TRUNCATED_COMPLETIONS,
)  # fmt: skip
