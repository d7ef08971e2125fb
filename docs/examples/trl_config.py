"""The TRL config a TextRL config becomes (docs/migration.md, "The TRL trainer underneath")."""

import trl

from textrl import TextRLConfig
from textrl.trl_build import build_trl_config

args = build_trl_config(TextRLConfig(algo="grpo", output_dir="out/grpo", num_generations=8, beta=0.04))
assert isinstance(args, trl.GRPOConfig)
print(type(args).__name__, args.num_generations, args.beta)
