"""The sampling settings a rollout really uses, and where each comes from.

TRL's online trainers build a GenerationConfig from the run's options (temperature, top_p, top_k, min_p,
repetition_penalty, max_completion_length, generation_kwargs) and pass it to `model.generate`. transformers then fills
every field TRL left unset (None) from the model's own `generation_config.json`: a checkpoint that ships `min_p`,
`no_repeat_ngram_size` or `typical_p` changes every rollout without a word. This module resolves the config the way
`generate` does (transformers' `_prepare_generation_config`, guarded by tests/drift/test_probe_internals.py) and
names the source of each value.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# GenerationConfig field -> the TextRL option that sets it (None: only generation_kwargs can)
SAMPLING: dict[str, str | None] = {
    "max_new_tokens": "max_completion_length",
    "do_sample": None,
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "min_p": "min_p",
    "repetition_penalty": "repetition_penalty",
    "typical_p": None,
    "epsilon_cutoff": None,
    "eta_cutoff": None,
    "no_repeat_ngram_size": None,
    "encoder_no_repeat_ngram_size": None,
    "num_beams": None,
    "length_penalty": None,
    "min_new_tokens": None,
    "bad_words_ids": None,
    "suppress_tokens": None,
    "begin_suppress_tokens": None,
    "sequence_bias": None,
    "forced_bos_token_id": None,
    "forced_eos_token_id": None,
}
ALWAYS_SHOWN = ("max_new_tokens", "temperature", "top_p", "top_k", "min_p", "repetition_penalty")
"""Shown even when nothing overrides them; the other fields only when something sets them."""


@dataclass(frozen=True)
class Setting:
    name: str
    value: Any
    source: str
    from_model: bool
    """True when the model's generation_config supplies the value (TRL left it unset): the probe warns."""


def resolve(
    generation_config: Any, model: Any, sources: Mapping[str, str], generation_kwargs: Mapping[str, Any]
) -> list[Setting]:
    """Each sampling field's value in the config `generate` will really use, with its source.

    `generation_config`: the one the TRL trainer built; `sources`: the assembled run's option -> "YAML"/"flag"/...;
    `generation_kwargs`: the run's generation_kwargs option (they win over everything)."""
    from transformers import GenerationConfig

    unwrapped = getattr(model, "module", model)
    effective, _ = unwrapped._prepare_generation_config(copy.deepcopy(generation_config))
    neutral = GenerationConfig()._get_default_generation_params()  # what generate falls back to: no effect
    settings = []
    for name, option in SAMPLING.items():
        passed, value = getattr(generation_config, name, None), getattr(effective, name, None)
        from_model = passed is None and value is not None and value != neutral.get(name)
        if name in generation_kwargs:
            source = "generation_kwargs"
        elif from_model:
            source = "the model's generation_config.json"
        elif passed is not None and option is not None:
            given = sources.get(option, "TextRL default")
            source = given if option == name else f"{option}, {given}"
        elif passed is not None:
            source = "set by TRL"
        else:
            source = "transformers default"
        if name in ALWAYS_SHOWN or from_model or name in generation_kwargs:
            settings.append(Setting(name, value, source, from_model))
    return settings
