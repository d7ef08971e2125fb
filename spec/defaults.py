"""Where TextRL's defaults differ from the installed TRL's, on purpose; a drift test keeps this list exact."""

from .model import TrlDifference

# (algorithm name or "*" for all, option name) -> TRL's default and why TextRL chose differently.
DIFFERENT_FROM_TRL: dict[tuple[str, str], TrlDifference] = {
    ("*", "bf16"): TrlDifference(
        trl_default=True,
        why='TRL defaults to bf16 and then refuses to build any config on a CPU; TextRL\'s "auto" uses bf16 only '
        "where the hardware has it.",
    ),
    ("*", "report_to"): TrlDifference(
        trl_default="none",
        why='The same meaning as TRL\'s "none", written as a list so one type covers several trackers.',
    ),
    ("robust_dpo", "label_smoothing"): TrlDifference(
        trl_default=0.0,
        why="With TRL's 0.0 the robust loss equals plain sigmoid DPO; 0.1 makes the algorithm do what its name says.",
    ),
    ("exo_pair", "label_smoothing"): TrlDifference(
        trl_default=0.0, why="TRL's 0.0 makes exo_pair fail inside the loss; 1e-3 is the EXO paper's value."
    ),
}
