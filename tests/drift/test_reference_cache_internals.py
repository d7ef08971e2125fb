"""The TRL internals the reference cache (textrl/reference_cache/store.py, reference_key.py) builds on: a TRL
release that renames or reshapes one fails here, by name, rather than in a user's run."""

from __future__ import annotations

import inspect

import pytest
from trl import DPOTrainer, KTOTrainer


@pytest.mark.parametrize("trainer", [DPOTrainer, KTOTrainer])
def test_precompute_is_the_method_the_cache_wraps(trainer: type) -> None:
    assert list(inspect.signature(trainer._precompute_ref_logps).parameters) == [
        "self",
        "dataset",
        "name",
        "batch_size",
    ]
    body = inspect.getsource(trainer._precompute_ref_logps)
    # where TRL puts its result: the file the cache redirects into its shared folder, then reads back on every process
    assert "dataset._get_cache_file_path(" in body and "Dataset.from_file(cache_file)" in body
    assert "concatenate_datasets([dataset, " in body
    init = inspect.getsource(trainer.__init__)
    # the weights in the key: TRL >= 1.15 hashes the reference once in __init__, before it precomputes (exact_key reads
    # that hash); 1.13 and 1.14 hash it inside the method, as exact_key then does itself
    if "self._precompute_model_hash" in init:
        assert "hash_module(self.ref_model or self.model)" in init
        assert init.index("self._precompute_model_hash") < init.index("self._precompute_ref_logps(")
    else:
        assert "model_hash = hash_module(self.ref_model or self.model)" in body
    # without a ref_model, precomputing needs no reference copy (the policy's initial weights are the reference);
    # 1.15 stopped doing so under FSDP
    assert "args.precompute_ref_log_probs and not self.is_fsdp_enabled" in init or (
        "is_peft_model(self.model) or args.precompute_ref_log_probs:" in init
    )


def test_kto_pairs_its_kl_term_within_the_batch() -> None:
    """Why the KTO key holds the precompute batch size: its KL completions are other rows of the same batch."""
    assert "calculate_KL" in inspect.getsource(KTOTrainer._precompute_ref_logps)
