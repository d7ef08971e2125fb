"""Where TextRL's defaults differ from the installed TRL's, on purpose; a drift test keeps this list exact."""

# (algorithm name or "*" for all, option name) -> why TextRL chose differently.
DIFFERENT_FROM_TRL: dict[tuple[str, str], str] = {
    ("*", "bf16"): 'TRL defaults to bf16 and then refuses to build any config on a CPU; TextRL\'s "auto" uses '
    "bf16 only where the hardware has it.",
    ("*", "report_to"): 'The same meaning as TRL\'s "none", written as a list so one type covers several trackers.',
    ("robust_dpo", "label_smoothing"): "With TRL's 0.0 the robust loss equals plain sigmoid DPO; 0.1 makes the "
    "algorithm do what its name says.",
    ("exo_pair", "label_smoothing"): "TRL's 0.0 makes exo_pair fail inside the loss; 1e-3 is the EXO paper's value.",
}
