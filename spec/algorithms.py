"""Every supported algorithm: one entry each. Adding an algorithm or DPO loss is an edit here plus regenerating."""

from . import choices
from .formats import BINARY, PAIRWISE, PROMPT_ONLY, REWARD_PAIRS, SUPERVISED
from .mirrored import complete
from .model import Algorithm, Family, Paper
from .options import online as on
from .options import preference as pref
from .options.sections import REWARD, SECTIONS
from .options.supervised import SUPERVISED as SFT_OPTIONS
from .options.training import COMMON, LEARNING_RATE
from .rules import (
    COMMON_RULES,
    composed_reward_weights,
    eval_generation_batch_divisible,
    generation_batch_divisible,
    no_lora_on_lm_head,
    packing_needs_length,
    padding_free_needs_flash_attention,
    padding_free_unavailable,
    padding_free_without_truncation,
    pairwise_rules,
    ref_sync_not_precomputed,
    reference_cache_whole_weights,
    reward_weights_count,
    tool_iterations_need_tools,
    vllm_not_8bit,
    vllm_settings_need_use_vllm,
)


def _hf(arxiv_id: str, title: str) -> Paper:
    return Paper(title=title, url=f"https://huggingface.co/papers/{arxiv_id}")


_REF_SYNC = (pref.SYNC_REF_MODEL, pref.REF_MODEL_MIXUP_ALPHA, pref.REF_MODEL_SYNC_STEPS)
_ONLINE_TAIL = (*_REF_SYNC, pref.DISABLE_DROPOUT.but(default=False), *on.VLLM, REWARD, *SECTIONS)
_ONLINE_RULES = (generation_batch_divisible, eval_generation_batch_divisible, composed_reward_weights,
                 reward_weights_count, vllm_settings_need_use_vllm, vllm_not_8bit, *COMMON_RULES)  # fmt: skip

GRPO = Algorithm(
    name="grpo", title="GRPO", family=Family.ONLINE,
    summary="Group Relative Policy Optimization: samples a group of completions per prompt and uses each "
    "completion's reward relative to its group as the advantage; no value model.",
    trl_trainer="trl.GRPOTrainer", trl_config="trl.GRPOConfig", data_format=PROMPT_ONLY,
    options=(*COMMON, *on.GENERATION, *on.GRPO_LOSS, *_ONLINE_TAIL),
    rules=(*_ONLINE_RULES, tool_iterations_need_tools),
    paper=_hf("2402.03300", "DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open Language Models"),
)  # fmt: skip

RLOO = Algorithm(
    name="rloo", title="RLOO", family=Family.ONLINE,
    summary="REINFORCE Leave-One-Out: the baseline of each completion is the mean reward of the other completions "
    "of its prompt; the KL penalty is folded into the reward.",
    trl_trainer="trl.RLOOTrainer", trl_config="trl.RLOOConfig", data_format=PROMPT_ONLY,
    options=(*COMMON, on.NUM_GENERATIONS.but(default=2), *on.GENERATION[1:], *on.RLOO_LOSS, on.NORMALIZE_ADVANTAGES,
             *_ONLINE_TAIL),
    rules=_ONLINE_RULES,
    paper=_hf("2402.14740", "Back to Basics: Revisiting REINFORCE Style Optimization for Learning from Human "
              "Feedback in LLMs"),
)  # fmt: skip

REINFORCE_PP = Algorithm(
    name="reinforce_pp", aliases=("reinforce++",), title="REINFORCE++", family=Family.ONLINE,
    summary="REINFORCE with PPO's tricks and no critic: KL penalty in the reward and advantages normalised over "
    "the whole batch.",
    trl_trainer="trl.RLOOTrainer", trl_config="trl.RLOOConfig", data_format=PROMPT_ONLY,
    fixed={"normalize_advantages": True},
    options=(*COMMON, on.NUM_GENERATIONS.but(default=2), *on.GENERATION[1:], *on.RLOO_LOSS, *_ONLINE_TAIL),
    rules=_ONLINE_RULES,
    paper=_hf("2501.03262", "REINFORCE++: An Efficient RLHF Algorithm with Robustness to Both Prompt and Reward "
              "Models"),
    notes="TRL has no REINFORCE++ trainer. TRL's paper index realises it with RLOOTrainer and "
    "normalize_advantages=True: RLOOTrainer already puts a sequence-level KL penalty (beta) into the reward, as "
    "REINFORCE++ does, and global normalisation replaces per-prompt scaling with batch-level advantage "
    "normalisation. The leave-one-out baseline of RLOO stays (REINFORCE++-baseline). GRPO with "
    "scale_rewards='batch' is the other near match, but keeps the KL in the loss instead of the reward.",
)  # fmt: skip

_PAIR_BASE = (*COMMON, pref.BETA_DPO, pref.MAX_LENGTH, pref.PADDING_FREE, pref.LD_ALPHA,
              *pref.REFERENCE)  # fmt: skip
_F_DIV = (pref.F_DIVERGENCE_TYPE, pref.F_ALPHA_DIVERGENCE_COEF)
_PAIR_RULES = (*COMMON_RULES, no_lora_on_lm_head, ref_sync_not_precomputed, reference_cache_whole_weights,
               padding_free_unavailable)  # fmt: skip
_DPO_TRAINER = {"trl_trainer": "trl.DPOTrainer", "trl_config": "trl.DPOConfig", "family": Family.PAIRWISE,
                "data_format": PAIRWISE}  # fmt: skip

DPO = Algorithm(
    name="dpo", title="DPO", **_DPO_TRAINER,
    summary="Direct Preference Optimization: a classification loss on chosen-vs-rejected log-ratios against a "
    "frozen reference. loss_type takes one loss or a weighted list: [sigmoid, sft] is RPO, [sigmoid, bco_pair, sft] "
    "with loss_weights [0.8, 0.2, 1.0] is MPO.",
    options=(*_PAIR_BASE, pref.DPO_LOSS_TYPE, pref.LOSS_WEIGHTS, pref.LABEL_SMOOTHING, pref.DISCOPOP_TAU, *_F_DIV,
             pref.USE_WEIGHTING, *SECTIONS),
    rules=(*pairwise_rules(), *_PAIR_RULES),
    paper=_hf("2305.18290", "Direct Preference Optimization: Your Language Model is Secretly a Reward Model"),
)  # fmt: skip


def _fixed_loss(name: str, *, title: str, summary: str, paper: Paper, loss: str | None = None) -> Algorithm:
    """A DPO-family algorithm that is DPOTrainer with one fixed loss_type (`loss`, by default `name`); the options
    beside the pairwise ones follow from what the loss takes (spec/choices.py, DPO_LOSSES)."""
    loss = loss or name
    traits = choices.DPO_LOSSES[loss]
    smoothing = pref.LABEL_SMOOTHING
    if traits.label_smoothing_default is not None:
        smoothing = smoothing.but(default=traits.label_smoothing_default)
    extra = (
        *((smoothing,) if traits.label_smoothing else ()),
        *((pref.DISCOPOP_TAU,) if traits.discopop_tau else ()),
        *(_F_DIV if traits.f_divergence else ()),
        *((pref.USE_WEIGHTING,) if traits.use_weighting else ()),
    )
    one_loss = (f"algo={name!r} trains one loss ({loss}), and loss_weights weigh several. Fix: use algo='dpo' with "
                f"loss_type=[{loss!r}, ...] and loss_weights=[...]")  # fmt: skip
    return Algorithm(
        name=name, title=title, summary=summary, paper=paper, **_DPO_TRAINER, fixed={"loss_type": [loss]},
        not_offered={"loss_weights": one_loss},
        options=(*_PAIR_BASE, *extra, *SECTIONS), rules=(*pairwise_rules((loss,)), *_PAIR_RULES),
    )  # fmt: skip


IPO = _fixed_loss("ipo", title="IPO", summary="Identity Preference Optimization: a squared loss on the log-ratio gap "
                  "that does not saturate, against over-fitting deterministic preferences; beta is the τ of the paper.",
                  paper=_hf("2310.12036", "A General Theoretical Paradigm to Understand Learning from Human "
                            "Preferences"))  # fmt: skip
HINGE = _fixed_loss("hinge", title="SLiC (hinge)", summary="Hinge loss on the log-ratio gap (SLiC-HF); beta is the "
                    "inverse margin.", paper=_hf("2305.10425", "SLiC-HF: Sequence Likelihood Calibration with Human "
                    "Feedback"))  # fmt: skip
APO_ZERO = _fixed_loss("apo_zero", title="APO-zero", summary="Anchored Preference Optimization pushing chosen up "
                       "and rejected down; for when chosen completions are better than the model's own.",
                       paper=_hf("2408.06266", "Anchored Preference Optimization and Contrastive "
                                 "Revisions"))  # fmt: skip
APO_DOWN = _fixed_loss("apo_down", title="APO-down", summary="Anchored Preference Optimization pushing both down, "
                       "rejected more; for when the model is already better than the chosen completions.",
                       paper=_hf("2408.06266", "Anchored Preference Optimization and Contrastive "
                                 "Revisions"))  # fmt: skip
BCO_PAIR = _fixed_loss("bco_pair", title="BCO (paired)", summary="Binary Classifier Optimization on pairs: chosen "
                       "and rejected are classified separately with a running reward shift.",
                       paper=_hf("2404.04656", "Binary Classifier Optimization for Large Language Model "
                                 "Alignment"))  # fmt: skip
NCA_PAIR = _fixed_loss("nca_pair", title="NCA", summary="Noise Contrastive Alignment: optimises absolute "
                       "likelihoods of chosen and rejected, not only their gap.",
                       paper=_hf("2402.05369", "Noise Contrastive Alignment of Language Models with Explicit "
                                 "Rewards"))  # fmt: skip
ROBUST_DPO = _fixed_loss("robust_dpo", loss="robust", title="Robust DPO", summary="DPO made unbiased under "
                         "preference-label noise of rate label_smoothing (which must lie in [0, 0.5)).",
                         paper=_hf("2403.00409", "Provably Robust DPO: Aligning Language Models with Noisy "
                                   "Feedback"))  # fmt: skip
AOT = _fixed_loss("aot", title="AOT", summary="Alignment via Optimal Transport: first-order stochastic dominance of "
                  "chosen over rejected, on sorted log-ratios within the batch (paired).",
                  paper=_hf("2406.05882", "Distributional Preference Alignment of LLMs via Optimal "
                            "Transport"))  # fmt: skip
AOT_UNPAIRED = _fixed_loss("aot_unpaired", title="AOT (unpaired)", summary="Alignment via Optimal Transport "
                           "with chosen and rejected sorted independently.",
                           paper=_hf("2406.05882", "Distributional Preference Alignment of LLMs via Optimal "
                                     "Transport"))  # fmt: skip
DISCOPOP = _fixed_loss("discopop", title="DiscoPOP", summary="The log-ratio modulated loss discovered by LLM-driven "
                       "objective search; discopop_tau sets its temperature.",
                       paper=_hf("2406.08414", "Discovering Preference Optimization Algorithms with and for Large "
                                 "Language Models"))  # fmt: skip
SPPO_HARD = _fixed_loss("sppo_hard", title="SPPO (hard labels)", summary="Self-Play Preference Optimization with "
                        "hard win/lose labels: pushes chosen towards 1/2β and rejected towards -1/2β.",
                        paper=_hf("2405.00675", "Self-Play Preference Optimization for Language Model "
                                  "Alignment"))  # fmt: skip
EXO_PAIR = _fixed_loss("exo_pair", title="EXO", summary="Efficient Exact Optimization: minimises the reverse KL to "
                       "the preference distribution; needs label_smoothing > 0.",
                       paper=_hf("2402.00856", "Towards Efficient Exact Optimization of Language Model "
                                 "Alignment"))  # fmt: skip
SIGMOID_NORM = _fixed_loss("sigmoid_norm", title="DPO (length-normalised)", summary="The sigmoid DPO loss on "
                           "log-ratios averaged per token, removing DPO's bias towards long completions (SimPO's "
                           "length normalisation, keeping the reference model).",
                           paper=_hf("2405.14734", "SimPO: Simple Preference Optimization with a Reference-Free "
                                     "Reward"))  # fmt: skip

KTO = Algorithm(
    name="kto", title="KTO", family=Family.BINARY,
    summary="Kahneman-Tversky Optimization: learns from single completions labelled desirable or undesirable, "
    "no pairs needed. loss_type apo_zero_unpaired switches to anchored preference optimisation on the same data.",
    trl_trainer="trl.KTOTrainer", trl_config="trl.KTOConfig", data_format=BINARY,
    options=(*COMMON, pref.BETA_DPO, pref.KTO_LOSS_TYPE, pref.DESIRABLE_WEIGHT, pref.UNDESIRABLE_WEIGHT,
             pref.MAX_LENGTH, *pref.REFERENCE, *SECTIONS),
    rules=(*COMMON_RULES, no_lora_on_lm_head, ref_sync_not_precomputed, reference_cache_whole_weights),
    paper=_hf("2402.01306", "KTO: Model Alignment as Prospect Theoretic Optimization"),
)  # fmt: skip

REWARD_MODEL = Algorithm(
    name="reward_model", title="Reward model", family=Family.REWARD_MODEL,
    summary="Trains a sequence-classification model to score chosen above rejected (Bradley-Terry); the result "
    "can be the reward of an online run.",
    trl_trainer="trl.RewardTrainer", trl_config="trl.RewardConfig", data_format=REWARD_PAIRS,
    options=(*COMMON[:3], LEARNING_RATE.but(default=1e-4), *COMMON[4:], pref.MAX_LENGTH,
             pref.CENTER_REWARDS_COEFFICIENT, pref.DISABLE_DROPOUT, *SECTIONS),
    rules=COMMON_RULES,
    paper=_hf("2203.02155", "Training language models to follow instructions with human feedback"),
)  # fmt: skip

SFT = Algorithm(
    name="sft", title="SFT", family=Family.SUPERVISED,
    summary="Supervised fine-tuning: next-token prediction on demonstrations (text, chat messages, or prompt and "
    "completion); the warm start before RL, whose output is a model: for GRPO or DPO.",
    trl_trainer="trl.SFTTrainer", trl_config="trl.SFTConfig", data_format=SUPERVISED,
    options=(*COMMON[:3], LEARNING_RATE.but(default=2e-5), *COMMON[4:], *SFT_OPTIONS, *SECTIONS),
    rules=(*COMMON_RULES, no_lora_on_lm_head, packing_needs_length, padding_free_without_truncation,
           padding_free_needs_flash_attention),
    paper=_hf("2203.02155", "Training language models to follow instructions with human feedback"),
)  # fmt: skip

ALGORITHMS = tuple(complete(a) for a in (
    GRPO, RLOO, REINFORCE_PP,
    DPO, IPO, HINGE, APO_ZERO, APO_DOWN, BCO_PAIR, NCA_PAIR, ROBUST_DPO, AOT, AOT_UNPAIRED, DISCOPOP, SPPO_HARD,
    EXO_PAIR, SIGMOID_NORM,
    KTO,
    REWARD_MODEL,
    SFT,
))  # fmt: skip
"""Every algorithm with TRL's whole config surface: the options above, then the rest mirrored from TRL."""
