"""The probe of pairwise preference algorithms (DPO and its loss family): the reference model's own preference
between chosen and rejected on a few rows, and the rows' token lengths against max_length.

It runs the TRL trainer's tokenization (the trainer is built on the probe's rows) and its reference pass
(`DPOTrainer.compute_ref_log_probs`), so lengths and log-probabilities are those training will see.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .findings import ProbeReport, share

if TYPE_CHECKING:
    from ..generated.view import PairwiseOptions

TRUNCATED_WARN = 0.1
"""Share of rows cut at max_length above which the probe warns."""


def probe_pairwise(trainer: Any, cfg: PairwiseOptions) -> ProbeReport:
    import torch

    trl = trainer.trl_trainer
    given, data = len(trainer.train_dataset), trl.train_dataset
    report = ProbeReport(f"{given} preference row(s), tokenized and scored by the run's reference model")
    max_length = cfg.max_length
    longest = [len(r["prompt_ids"]) + max(len(r["chosen_ids"]), len(r["rejected_ids"])) for r in data]
    cut = sum(length > max_length for length in longest) if max_length else 0
    dropped = given - len(data)
    report.lines.append(
        f"tokens per row (prompt + longer answer): min {min(longest, default=0)}, max {max(longest, default=0)}; "
        f"cut at max_length={max_length}: {share(cut, len(data))}; dropped by TRL (prompt alone fills max_length): "
        f"{share(dropped, given)}"
    )
    chosen, rejected, chosen_tokens, rejected_tokens = [], [], [], []
    reference = trl.ref_model if trl.ref_model is not None else trl.model
    with torch.no_grad():
        for batch in trl.get_train_dataloader():
            c, r = trl.compute_ref_log_probs(reference, batch)
            chosen.append(c.float().cpu())
            rejected.append(r.float().cpu())
            c_mask, r_mask = batch["completion_mask"].chunk(2, dim=0)
            chosen_tokens.append(c_mask.sum(dim=1).clamp(min=1).cpu())
            rejected_tokens.append(r_mask.sum(dim=1).clamp(min=1).cpu())
    if chosen:
        c, r = torch.cat(chosen), torch.cat(rejected)
        margins = c - r
        per_token = c / torch.cat(chosen_tokens) - r / torch.cat(rejected_tokens)
        prefers = int((margins > 0).sum())
        report.lines.append(
            f"reference log p(chosen) - log p(rejected), summed over the answer: mean {float(margins.mean()):.3f}, "
            f"min {float(margins.min()):.3f}, max {float(margins.max()):.3f}; per token: mean "
            f"{float(per_token.mean()):.3f}; the reference already prefers chosen on {share(prefers, len(margins))}"
        )
        disagree = int(((margins > 0) != (per_token > 0)).sum())
        if disagree * 2 >= len(margins):
            report.add(
                "note",
                f"on {share(disagree, len(margins))} rows the summed and the per-token preference disagree: answer "
                "length, not content, decides the reference's preference there (a sum of log-probabilities favours "
                "the shorter answer). DPO's implicit reward inherits that; loss types that normalise by length "
                "(ipo, sigmoid_norm) or ld_alpha counter it.",
            )
    if not len(data):
        report.add(
            "fatal",
            f"TRL dropped all {given} probed rows: each prompt alone fills max_length={max_length}.",
            "raise max_length, or shorten the prompts.",
        )
    elif cut / len(data) >= TRUNCATED_WARN:
        report.add(
            "warn",
            f"{share(cut, len(data))} rows are longer than max_length={max_length}: TRL cuts their answers "
            f"({cfg.truncation_mode}), so the loss compares partial answers.",
            f"raise max_length to at least {max(longest)}, or shorten the rows.",
        )
    return report
