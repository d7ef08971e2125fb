"""textrl.data.chat_template against transformers: every template TRL ships (trl/chat_templates/, its training templates
with {% generation %} markers included), SmolLM2's ChatML template and the tiny model's own, on the same
conversations, give the same text, or both fail with the same message; and a model folder's templates and special
tokens are read as `AutoTokenizer.from_pretrained` reads them."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from textrl.data.chat_template import chat_renderer, render_chat_template, special_tokens
from textrl.errors import ConfigError, DataError
from textrl.tiny import CHAT_TEMPLATE

pytestmark = pytest.mark.slow

_TRL = importlib.util.find_spec("trl")
assert _TRL is not None and _TRL.submodule_search_locations
TRL_TEMPLATES = Path(next(iter(_TRL.submodule_search_locations))) / "chat_templates"
SMOLLM2 = (  # SmolLM2-135M-Instruct's template: ChatML with a default system prompt
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n"
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
TEMPLATES = {p.name: p.read_text(encoding="utf-8") for p in sorted(TRL_TEMPLATES.glob("*.jinja"))}
TEMPLATES |= {"smollm2": SMOLLM2, "textrl_tiny": CHAT_TEMPLATE}

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city's name"}},
            "required": ["city"],
        },
    },
}
USER = {"role": "user", "content": "What is 2 + 2? Réponds en français, s'il te plaît: <b>&</b> 日本語"}
CONVERSATIONS: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]] | None]] = {
    "user": ([USER], None),
    "system+user": ([{"role": "system", "content": "Be brief."}, USER], None),
    "multi-turn": (
        [
            USER,
            {"role": "assistant", "content": "4"},
            {"role": "user", "content": "And 3 + 3?"},
            {"role": "assistant", "content": "6, ça va."},
        ],
        None,
    ),
    "reasoning": ([USER, {"role": "assistant", "content": "4", "reasoning_content": "Two and two make four."}], None),
    "reasoning alias": ([USER, {"role": "assistant", "content": "4", "reasoning": "Deux et deux."}], None),
    "None-valued keys": ([{**USER, "name": None}, {"role": "assistant", "content": "4", "tool_calls": None}], None),
    "content blocks": (
        [
            {"role": "user", "content": [{"type": "text", "text": "Describe <this> & ça."}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
        ],
        None,
    ),
    "tool call": (
        [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
                ],
            },
            {"role": "tool", "name": "get_weather", "content": "22°C"},
            {"role": "assistant", "content": "It is 22°C in Paris."},
        ],
        [WEATHER],
    ),
}


@pytest.fixture(scope="module")
def folder(tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model's tokenizer, with a bos_token too (the Llama templates write it)."""
    path = tmp_path_factory.mktemp("chat_template_tokenizer")
    for name in ("tokenizer.json", "chat_template.jinja"):
        shutil.copy(tiny / name, path / name)
    config = json.loads((tiny / "tokenizer_config.json").read_text(encoding="utf-8"))
    (path / "tokenizer_config.json").write_text(json.dumps({**config, "bos_token": "<|endoftext|>"}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tokenizer(folder: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder)


def _outcome(errors: tuple[type[Exception], ...], render: Any, *args: Any, **kwargs: Any) -> tuple[str, str]:
    """('text', the text) or ('error', its message), for an error of one of the types `errors`."""
    try:
        return "text", render(*args, **kwargs)
    except errors as exc:
        return "error", str(exc)


def test_the_corpus_is_trls_whole_folder() -> None:
    assert len(TEMPLATES) > 40 and any("{% generation %}" in text for text in TEMPLATES.values())
    assert {"qwen2_5_training.jinja", "llama3_training.jinja", "gptoss.jinja"} <= set(TEMPLATES)


@pytest.mark.parametrize("name", list(TEMPLATES))
def test_renders_as_transformers(name: str, folder: Path, tokenizer: Any) -> None:
    text, variables = TEMPLATES[name], special_tokens(folder)
    assert variables == tokenizer.special_tokens_map
    rendered = 0
    for label, (chat, tools) in CONVERSATIONS.items():
        for generation_prompt in (True, False):
            options = {"tools": tools, "add_generation_prompt": generation_prompt}
            # transformers raises what the template raises (jinja2 errors, TypeError); TextRL only its own errors
            want = _outcome(
                (Exception,), tokenizer.apply_chat_template, chat, chat_template=text, tokenize=False, **options
            )
            got = _outcome(
                (ConfigError, DataError), render_chat_template, text, chat, source=name, **options, **variables
            )
            case = f"{name}, {label}, add_generation_prompt={generation_prompt}"
            if want[0] == "text":
                assert got == want, case
                rendered += 1
            else:  # both refuse, and TextRL's message carries transformers' (raise_exception's text, say)
                assert got[0] == "error" and want[1] in got[1] and name in got[1], (case, want, got)
    assert rendered >= 2, f"{name} rendered almost nothing: the corpus test would test nothing there"


def test_folder_templates_as_from_pretrained_reads_them(folder: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    chat = CONVERSATIONS["multi-turn"][0]
    layouts: dict[str, dict[str, Any]] = {
        "tiny's own file": {},
        "a training template": {"chat_template.jinja": TEMPLATES["qwen2_5_training.jinja"]},
        "the config's key": {"chat_template.jinja": None, "chat_template": SMOLLM2},
        "the config's list": {"chat_template.jinja": None, "chat_template": [
            {"name": "default", "template": SMOLLM2}, {"name": "tool_use", "template": CHAT_TEMPLATE}]},
    }  # fmt: skip
    for label, change in layouts.items():
        path = tmp_path / label.replace(" ", "_").replace("'", "")
        shutil.copytree(folder, path)
        config = json.loads((path / "tokenizer_config.json").read_text(encoding="utf-8"))
        for key, value in change.items():
            if key == "chat_template.jinja":
                (path / key).unlink() if value is None else (path / key).write_text(value, encoding="utf-8")
            else:
                config[key] = value
        (path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
        tokenizer, render = AutoTokenizer.from_pretrained(path), chat_renderer(path)
        assert render is not None, label
        for generation_prompt in (True, False):
            want = tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=generation_prompt)
            assert render(chat, add_generation_prompt=generation_prompt) == want, label
        tools: list[Any] = [WEATHER]
        assert render(chat, tools=tools) == tokenizer.apply_chat_template(chat, tools=tools, tokenize=False), label


def _token(content: str) -> dict[str, Any]:
    return {"__type": "AddedToken", "content": content, "lstrip": False, "normalized": False, "rstrip": False,
            "single_word": False, "special": True}  # fmt: skip


@pytest.mark.parametrize(
    ("config", "legacy_map", "padding"),
    [
        ({"bos_token": _token("<|endoftext|>"), "image_token": "<|pad|>", "audio_token": _token("<|im_start|>")},
         None, None),
        ({}, {"bos_token": {"content": "<|im_start|>", "lstrip": False, "normalized": False, "rstrip": False},
              "unk_token": "<|endoftext|>", "image_token": "<|im_end|>"}, None),
        ({"image_token": "<|pad|>"}, {"image_token": "<|im_end|>", "eos_token": "<|endoftext|>"}, None),
        ({"added_tokens_decoder": {"3": {k: v for k, v in _token("<|pad|>").items() if k != "__type"}}},
         {"bos_token": "<|im_start|>"}, None),  # a config with added_tokens_decoder: the legacy file is ignored
        ({"pad_token": "<drop>"}, None, "<|endoftext|>"),  # no pad token named: tokenizer.json's padding gives it
        ({"pad_token": None}, None, "<|endoftext|>"),
        ({"extra_special_tokens": {"image_token": "<|im_start|>", "video_token": "<|pad|>"}}, None, None),
    ],
    ids=["added tokens", "legacy map", "legacy map vs own", "added_tokens_decoder", "padding", "null pad", "extras"],
)  # fmt: skip
def test_special_tokens_as_from_pretrained_reads_them(
    folder: Path, tmp_path: Path, config: dict[str, Any], legacy_map: dict[str, Any] | None, padding: str | None
) -> None:
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    path = tmp_path / "model"
    shutil.copytree(folder, path)
    written = json.loads((path / "tokenizer_config.json").read_text(encoding="utf-8")) | config
    written = {k: v for k, v in written.items() if v != "<drop>"}
    (path / "tokenizer_config.json").write_text(json.dumps(written), encoding="utf-8")
    if legacy_map is not None:
        (path / "special_tokens_map.json").write_text(json.dumps(legacy_map), encoding="utf-8")
    if padding is not None:
        backend = Tokenizer.from_file(str(path / "tokenizer.json"))
        backend.enable_padding(pad_token=padding, pad_id=backend.token_to_id(padding))
        backend.save(str(path / "tokenizer.json"))
    assert special_tokens(path) == AutoTokenizer.from_pretrained(path).special_tokens_map
