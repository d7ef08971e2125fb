"""The typed config classes, one per algorithm, for IDEs and type checkers: `GrpoConfig(output_dir=..., ...)`.

Each is what `TextRLConfig(algo=...)` returns; they are generated from the spec (see generated/configs/).
"""

from textrl.generated.configs import *  # noqa: F403 - the generated package lists its names in __all__
from textrl.generated.configs import __all__ as __all__
