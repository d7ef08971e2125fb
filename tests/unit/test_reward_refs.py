"""Reward references, `module:function` or `path/to/file.py:function`: found beside the config (or, for textrl-eval,
in the working directory), or a clear error naming the reference, the forms that work and the fix."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from textrl import ConfigError
from textrl.rewards.refs import resolve_ref
from textrl.spec.sections import REWARD_REF_PATTERN

FILE_FORM_IN_CONFIG = re.fullmatch(REWARD_REF_PATTERN, "path/to/my_rewards.py:score") is not None


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "ref_rewards_ok.py").write_text(
        "def good(prompts, completions, **_):\n    return [1.0] * len(completions)\nVALUE = 3\n"
    )
    (tmp_path / "ref_rewards_broken.py").write_text("import package_that_is_not_installed\n")
    (tmp_path / "ref_rewards_prefix.py").write_text("import ref_rewards_pre\n")  # a missing dependency named like it
    (tmp_path / "ref_rewards_syntax.py").write_text(
        "def f(prompts, completions):\n    return [1.0 for c in completions\n"
    )
    (tmp_path / "ref_rewards_raises.py").write_text(
        "import os\n\nKEY = os.environ['TEXTRL_TEST_NO_SUCH_KEY']\n\ndef f(prompts, completions):\n    return []\n"
    )
    (tmp_path / "ref_rewards_exits.py").write_text("import sys\nsys.exit('usage: rewards.py KEY')\n")
    return tmp_path


def test_found_beside_the_config(folder: Path) -> None:
    fn = resolve_ref("ref_rewards_ok:good", folder)
    assert fn(prompts=["p"], completions=["c"]) == [1.0]
    import sys

    assert str(folder.resolve()) not in sys.path, "the config folder is removed from sys.path again"


@pytest.mark.parametrize(
    ("ref", "match"),
    [
        (
            "missing_module_xyz:f",
            r"reward: 'missing_module_xyz:f': no module 'missing_module_xyz' in .* A reward reference is "
            r"module:function, a module beside the config file or in the working directory",
        ),
        ("ref_rewards_ok:nope", r"module ref_rewards_ok has no attribute 'nope'; its callables: good\. Fix"),
        ("ref_rewards_ok:VALUE", r"'ref_rewards_ok:VALUE' is a int, not a function"),
        (
            "ref_rewards_broken:f",
            r"'ref_rewards_broken:f': importing ref_rewards_broken failed at .*ref_rewards_broken\.py, line 1 "
            r"\('import package_that_is_not_installed'\): ModuleNotFoundError: No module named "
            r"'package_that_is_not_installed'\. Fix: install what it imports",
        ),
        ("ref_rewards_ok", r"'ref_rewards_ok': is not a reward reference: A reward reference is module:function"),
    ],
)
def test_bad_references(folder: Path, ref: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        resolve_ref(ref, folder)


@pytest.mark.parametrize("form", ["module", "file"])
def test_a_module_that_does_not_import_is_a_config_error(folder: Path, form: str) -> None:
    """A syntax error, or an exception while the module runs, used to be a raw traceback from the dry run, the run
    and textrl-eval: now the reference, the file and line, the exception and the fix."""
    ref = (lambda name: f"{name}:f") if form == "module" else (lambda name: f"./{name}.py:f")
    with pytest.raises(
        ConfigError,
        match=r"reward: '.*ref_rewards_syntax.*:f': importing .*ref_rewards_syntax.* failed: SyntaxError at "
        r".*ref_rewards_syntax\.py, line 2: '\[' was never closed: 'return \[1\.0 for c in completions'\. Fix: "
        r"correct that line \(python -m py_compile .*ref_rewards_syntax\.py checks the file\)",
    ):
        resolve_ref(ref("ref_rewards_syntax"), folder)
    with pytest.raises(
        ConfigError,
        match=r"importing .*ref_rewards_raises.* failed at .*ref_rewards_raises\.py, line 3 "
        r"\(\"KEY = os\.environ\['TEXTRL_TEST_NO_SUCH_KEY'\]\"\): KeyError: 'TEXTRL_TEST_NO_SUCH_KEY'\. Fix: make "
        r"the module import without errors \(python .*ref_rewards_raises\.py shows the whole traceback\)",
    ):
        resolve_ref(ref("ref_rewards_raises"), folder)
    with pytest.raises(ConfigError, match=r"failed at .*ref_rewards_exits\.py, line 2 .*SystemExit: usage"):
        resolve_ref(ref("ref_rewards_exits"), folder)
    assert not [m for m in sys.modules if "ref_rewards_raises" in m], "a module that failed is not left half-made"
    good = ref("ref_rewards_ok").replace(":f", ":good")
    assert resolve_ref(good, folder)(prompts=["p"], completions=["c"]) == [1.0]


def test_a_file_path_reference(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """path/to/file.py:function, relative to the base folder (the config's; the working directory for eval), with
    its neighbours importable; one file imported once, whatever the number of functions taken from it."""
    nested = folder / "rewards" / "v2"
    nested.mkdir(parents=True)
    (nested / "helpers_for_ref.py").write_text("BONUS = 2.0\n")
    (nested / "json.py").write_text(  # named like a standard module: must not replace it
        "from helpers_for_ref import BONUS\nCALLS = []\nCALLS.append(1)\n"
        "def score(prompts, completions, **_):\n    return [BONUS] * len(completions)\n"
        "def other(prompts, completions, **_):\n    return [len(CALLS)] * len(completions)\n"
    )
    fn = resolve_ref("rewards/v2/json.py:score", folder)
    assert fn(prompts=["p"], completions=["c"]) == [2.0]
    assert resolve_ref("rewards/v2/json.py:other", folder)(prompts=["p"], completions=["c"]) == [1]
    assert resolve_ref(f"{nested / 'json.py'}:score", tmp_path / "elsewhere") is fn  # an absolute path
    import json

    assert json.loads("[1]") == [1] and str(nested) not in sys.path
    monkeypatch.chdir(folder)
    assert resolve_ref("rewards/v2/json.py:score", Path.cwd(), "--reward", caller="eval") is fn


@pytest.mark.parametrize(
    ("ref", "match"),
    [
        (
            "rewards/missing.py:f",
            r"--reward: 'rewards/missing\.py:f': rewards/missing\.py in [^ ]+ \(the working directory\) does not "
            r"exist\. "
            r"--reward takes MODULE:FUNCTION, a module importable from the working directory \(my_rewards:score for "
            r"\./my_rewards\.py, pkg\.rewards:score for \./pkg/rewards\.py\), or FILE\.py:FUNCTION, a file path "
            r"relative to the working directory \(path/to/my_rewards\.py:score\)\. Fix: check the path",
        ),
        (
            "missing_module_xyz:f",
            r"no module 'missing_module_xyz' in [^ ]+ or the installed packages\. --reward takes MODULE:FUNCTION, a "
            r"module importable from the working directory .*Fix: check the name, or give the file's path\.$",
        ),
        (
            "rewards/:f",
            r"'rewards/:f': rewards/ in [^ ]+ \(the working directory\) is a folder, not a \.py file",
        ),
    ],
)
def test_missing_references_say_which_forms_work_for_the_caller(
    folder: Path, monkeypatch: pytest.MonkeyPatch, ref: str, match: str
) -> None:
    """textrl-eval has no config file: its errors used to say 'put the module beside the config file'."""
    (folder / "rewards").mkdir()
    monkeypatch.chdir(folder)
    with pytest.raises(ConfigError, match=match) as info:
        resolve_ref(ref, Path.cwd(), "--reward", caller="eval")
    assert "config" not in str(info.value).removeprefix("Invalid TextRL config")


def test_config_errors_offer_the_file_form_only_where_the_config_takes_it(folder: Path) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_ref("missing_module_xyz:f", folder)
    text = str(info.value)
    assert ("path/to/file.py:function, a file path relative to the config's folder" in text) == FILE_FORM_IN_CONFIG
    assert text.endswith("put the module beside the config file.") != FILE_FORM_IN_CONFIG
