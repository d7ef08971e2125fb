"""A small, frozen spec used only to test the templates: its rendering is compared with tests/golden/expected/.

It uses only the spec's meta-model and section models, not its catalogue of options, so editing the real
spec's options never changes these golden files; a template or codegen change does.
"""

from __future__ import annotations

from typing import Literal

from textrl.codegen.render import SpecView
from textrl.spec import REQUIRED, Algorithm, DataFormat, Family, Option, Paper, Removed, Renamed, Rule, TrlDifference
from textrl.spec.sections import ComposedReward, ModelSection, RewardRef

PROMPT_ONLY = DataFormat(name="prompts", columns=("prompt",), description="A prompt.", example={"prompt": "Hi"})
PAIRWISE = DataFormat(name="pairs", columns=("prompt", "chosen", "rejected"), description="Pairs.",
                      example={"prompt": "1+1=", "chosen": "2", "rejected": "3"})  # fmt: skip
MODEL = Option(name="model", annotation=ModelSection | None, default=None, trl_name=None, group="Sections",
               cli=False, description="The model.")  # fmt: skip
REWARD = Option(name="reward", annotation=RewardRef | ComposedReward | None, default=None, trl_name=None,
                group="Sections", cli=False, description="The reward.")  # fmt: skip

OUT = Option(name="output_dir", annotation=str, default=REQUIRED, trl_name="output_dir", group="Run",
             min_length=1, example="out/run", description="Where checkpoints go.")  # fmt: skip
LR = Option(name="learning_rate", annotation=float, default=1e-6, trl_name="learning_rate", group="Optimisation",
            gt=0, description="Peak learning rate.")  # fmt: skip
BF16 = Option(name="bf16", annotation=bool | Literal["auto"], default="auto", trl_name="bf16",
              trl_convert="resolve_bf16", group="Precision", description='bf16, or "auto".')  # fmt: skip
GENS = Option(name="num_generations", annotation=int, default=8, trl_name="num_generations", group="Generation",
              ge=2, description="Completions per prompt.")  # fmt: skip
LOSSES = Option(name="loss_type", annotation=list[Literal["sigmoid", "sft"]], default=["sigmoid"],
                trl_name="loss_type", group="Loss", min_length=1, description="One loss or several.")  # fmt: skip
WEIGHTS = Option(name="loss_weights", annotation=list[float] | None, default=None, trl_name="loss_weights",
                 group="Loss", description="One weight per loss.")  # fmt: skip

FIXTURE = SpecView(
    algorithms=(
        Algorithm(
            name="toy_online", aliases=("toy+",), title="Toy online", family=Family.ONLINE, summary="An online toy.",
            trl_trainer="trl.GRPOTrainer", trl_config="trl.GRPOConfig", data_format=PROMPT_ONLY,
            fixed={"scale_rewards": "batch"}, options=(OUT, LR, BF16, GENS, REWARD, MODEL),
            rules=(Rule(name="toy_rule", fields=("num_generations",), description="A toy rule.",
                        check=lambda cfg: None),),
            paper=Paper(title="A toy paper", url="https://example.org/toy"), notes="Realised with GRPO.",
        ),
        Algorithm(
            name="toy_pairs", title="Toy pairs", family=Family.PAIRWISE, summary="A pairwise toy.",
            trl_trainer="trl.DPOTrainer", trl_config="trl.DPOConfig", data_format=PAIRWISE,
            options=(OUT, LR.but(default=1e-4), LOSSES, WEIGHTS, MODEL),
            paper=Paper(title="Another toy paper", url="https://example.org/pairs"),
        ),
    ),
    removed=(Removed(name="old_toy", what_happened="removed in TRL 0.1", replacement="algo='toy_pairs'"),),
    renamed=(Renamed(old="toy_rate", what_happened="renamed in TRL 0.2", replacement="learning_rate"),),
    different_from_trl={("*", "bf16"): TrlDifference(trl_default=True, why="auto is safer")},
)  # fmt: skip
