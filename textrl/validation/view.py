"""How the runtime reads a config's options: typed, through the protocols generated from the spec
(generated/view.py), never by `getattr(cfg, "option", default)`. A default lives in the spec only.

Every TextRLConfig is an instance of its algorithm's generated class, which the type checker proves satisfies
`CommonOptions` and the protocol of its family; these functions hand it over as one of them, or None when the
config's family has not the options asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # imported by the functions: a module that imports this one stays light (--help, pydantic unloaded)
    from ..generated.view import (
        CommonOptions,
        OnlineOptions,
        PairwiseOptions,
        PreferenceOptions,
        RewardModelOptions,
        SupervisedOptions,
    )


def options(cfg: object) -> CommonOptions:
    """`cfg` as the options every algorithm has."""
    if not callable(getattr(cfg, "algorithm", None)):  # a TextRLConfig (not imported here: config.py reads the view)
        raise TypeError(f"expected a TextRLConfig, got {type(cfg).__name__}")
    return cast("CommonOptions", cfg)


def online(cfg: object) -> OnlineOptions | None:
    """`cfg` with the online algorithms' options (GRPO, RLOO, REINFORCE++), or None for another family."""
    from ..spec import Family

    common = options(cfg)
    return cast("OnlineOptions", common) if common.algorithm().family is Family.ONLINE else None


def preference(cfg: object) -> PreferenceOptions | None:
    """`cfg` with the offline preference algorithms' options (a reference model, the reference cache), or None."""
    from ..spec import Family

    common = options(cfg)
    family = common.algorithm().family
    return cast("PreferenceOptions", common) if family in (Family.PAIRWISE, Family.BINARY) else None


def reward_model(cfg: object) -> RewardModelOptions | None:
    """`cfg` with reward model training's options, or None for another family."""
    from ..spec import Family

    common = options(cfg)
    return cast("RewardModelOptions", common) if common.algorithm().family is Family.REWARD_MODEL else None


def pairwise(cfg: object) -> PairwiseOptions | None:
    """`cfg` with the pairwise preference algorithms' options (DPO's losses), or None for another family."""
    from ..spec import Family

    common = options(cfg)
    return cast("PairwiseOptions", common) if common.algorithm().family is Family.PAIRWISE else None


def supervised(cfg: object) -> SupervisedOptions | None:
    """`cfg` with supervised fine-tuning's options (packing, what the loss trains on), or None for another family."""
    from ..spec import Family

    common = options(cfg)
    return cast("SupervisedOptions", common) if common.algorithm().family is Family.SUPERVISED else None
