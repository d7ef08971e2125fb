"""textrl.data.chat_template without transformers: what transformers' environment adds to jinja2 (tojson without HTML
escaping, raise_exception, the {% generation %} tag, strftime_now, dict, namespace, loopcontrols), the data a
template sees (special tokens from the folder, None-valued keys dropped, reasoning aliases), which template a folder
has, and the errors: each refusal beside a passing twin. Agreement with transformers itself is
tests/integration/test_chat_template_render.py."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from textrl.data.chat_template import chat_renderer, render_chat_template, special_tokens
from textrl.data.lengths import folder_counter
from textrl.errors import ConfigError, DataError

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
USER = [{"role": "user", "content": "Hi"}]


def _folder(path: Path, template: str | None = None, **config: object) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    if template is not None:
        (path / "chat_template.jinja").write_text(template, encoding="utf-8")
    return path


def test_tojson_does_not_escape_html_and_keeps_non_ascii() -> None:
    text = "<b>Tom & Jerry's</b> 日本"
    out = render_chat_template("{{ messages[0]['content'] | tojson }}", [{"role": "user", "content": text}])
    assert out == json.dumps(text, ensure_ascii=False)  # jinja2's own filter gives "\u003cb\u003eTom \u0026 ..."
    options = "{{ messages[0] | tojson(indent=2, sort_keys=True) }}|{{ messages[0] | tojson(separators=(',', ':')) }}"
    message = {"role": "user", "content": text}
    assert render_chat_template(options, [message]) == (
        json.dumps(message, ensure_ascii=False, indent=2, sort_keys=True)
        + "|"
        + json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    )


def test_raise_exception_is_a_data_error_naming_the_source_and_the_message(tmp_path: Path) -> None:
    refuses = "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    folder = _folder(tmp_path / "model", refuses + CHATML)
    render = chat_renderer(folder)
    assert render is not None
    assert render(USER, add_generation_prompt=True) == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    system = [{"role": "system", "content": "Be brief."}, *USER]
    where = str(folder / "chat_template.jinja")
    with pytest.raises(DataError, match=rf"^{where}: the chat template refuses these messages: System role not "
                                        r"supported \(messages: \[\{\"role\": \"system\".*\]\)\. Fix: "):  # fmt: skip
        render(system)


def test_generation_tag_renders_its_body() -> None:
    marked = (
        "{% for m in messages %}{% if m['role'] == 'assistant' %}<a>{% generation %}{{ m['content'] }}<end>"
        "{% endgeneration %}\n{% else %}<u>{{ m['content'] }}\n{% endif %}{% endfor %}"
        "{%- generation -%} tail {%- endgeneration %}"
    )
    chat = [*USER, {"role": "assistant", "content": "Hello"}]
    # trim_blocks drops the newline after a block tag, {%- the whitespace before one: as in transformers
    assert render_chat_template(marked, chat) == "<u>Hi\n<a>Hello<end>tail"


def test_globals_and_loopcontrols_as_transformers_defines_them() -> None:
    template = (
        "{% set ns = namespace(n=0) %}{% for m in messages %}{% if m['role'] == 'skip' %}{% continue %}{% endif %}"
        "{% set ns.n = ns.n + 1 %}{% if loop.index > 2 %}{% break %}{% endif %}{% endfor %}{{ ns.n }}"
        "|{{ dict(a=1) | tojson }}|{{ dict.fromkeys(['x'], 0) | tojson }}|{{ strftime_now('%Y') }}"
    )
    chat = [{"role": "skip", "content": ""}, *USER * 4]
    assert render_chat_template(template, chat) == f'2|{{"a": 1}}|{{"x": 0}}|{datetime.now().strftime("%Y")}'
    with pytest.raises(DataError, match=r"SecurityError: Chat templates cannot store underscore-prefixed attributes"):
        render_chat_template("{% set ns = namespace(_x=1) %}", USER)


def test_messages_as_transformers_passes_them() -> None:
    """None-valued keys are dropped (datasets fills keys missing from a row with None); reasoning under any of its
    names is also given as reasoning_content and thinking."""
    keys = "{% for m in messages %}{{ m.keys() | list | tojson }};{% endfor %}"
    chat: list[dict[str, str | None]] = [
        {"role": "user", "content": "Hi", "tool_calls": None},
        {"role": "assistant", "content": "", "reasoning": "r"},
    ]
    assert render_chat_template(keys, chat) == (
        '["role", "content"];["thinking", "role", "content", "reasoning", "reasoning_content"];'
    )
    assert chat[0]["tool_calls"] is None  # the caller's messages are not changed


def test_special_tokens_are_template_variables(tmp_path: Path) -> None:
    added = {"__type": "AddedToken", "content": "</s>", "lstrip": False, "normalized": False, "rstrip": False}
    folder = _folder(
        tmp_path / "model",
        "{{ bos_token }}{{ messages[0]['content'] }}{{ eos_token }}{{ image_token }}",
        bos_token="<s>",
        eos_token=added,
        unk_token=None,
        image_token="<img>",
    )
    assert special_tokens(folder) == {"bos_token": "<s>", "eos_token": "</s>", "image_token": "<img>"}
    render = chat_renderer(folder)
    assert render is not None and render(USER) == "<s>Hi</s><img>"
    assert render(USER, bos_token="") == "Hi</s><img>"  # the caller's arguments win, as in apply_chat_template
    # a config written before added_tokens_decoder: special_tokens_map.json overrides its named tokens
    (folder / "special_tokens_map.json").write_text(json.dumps({"bos_token": {"content": "<B>"}}), encoding="utf-8")
    assert special_tokens(folder)["bos_token"] == "<B>"


def test_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "model", "{% for m in messages %}\n{% foo %}\n{% endfor %}")
    with pytest.raises(ConfigError, match=rf"{folder / 'chat_template.jinja'}:2: chat_template: the chat template "
                                          r"does not compile: Encountered unknown tag 'foo'.*the line reads "
                                          r"'\{% foo %\}'.*Fix: correct the template"):  # fmt: skip
        chat_renderer(folder)
    config = _folder(tmp_path / "in_config", chat_template="{{ messages[0]['content'] }\n")
    with pytest.raises(ConfigError, match=r"tokenizer_config\.json \(key chat_template\), line 1 of the template"):
        chat_renderer(config)
    assert chat_renderer(_folder(tmp_path / "fine", CHATML)) is not None


def test_which_template_a_folder_has(tmp_path: Path) -> None:
    assert chat_renderer(_folder(tmp_path / "none")) is None
    listed = _folder(
        tmp_path / "listed",
        chat_template=[{"name": "default", "template": "plain"}, {"name": "tool_use", "template": "{{ tools[0].n }}"}],
    )
    render = chat_renderer(listed)
    assert render is not None and render(USER) == "plain" and render(USER, tools=[{"n": "tool"}]) == "tool"
    # a template file wins over the config's key
    assert chat_renderer(_folder(tmp_path / "file", "file", chat_template="key"))(USER) == "file"  # type: ignore[misc]
    extra = _folder(tmp_path / "extra")
    (extra / "additional_chat_templates").mkdir()
    (extra / "additional_chat_templates" / "tool_use.jinja").write_text("tools", encoding="utf-8")
    only_tools = chat_renderer(extra)
    assert only_tools is not None and only_tools(USER, tools=[{"n": "t"}]) == "tools"
    with pytest.raises(ConfigError, match=r"chat templates 'tool_use' \(.*tool_use\.jinja\) and none named 'default'"):
        only_tools(USER)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "tokenizer_config.json").write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"model\.name: .*tokenizer_config\.json is not valid JSON"):
        chat_renderer(tmp_path / "broken")


def _tokenizer_folder(path: Path, template: str) -> Path:
    """A model folder with a word-level tokenizer.json (the `tokenizers` library; no transformers)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = ["<unk>", "<|im_start|>", "<|im_end|>", "user", "assistant", "system", "Hi", "word"]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    _folder(path, template)
    tokenizer.save(str(path / "tokenizer.json"))
    (path / "config.json").write_text(json.dumps({"max_position_embeddings": 64}), encoding="utf-8")
    return path


def test_lengths_count_through_the_template_and_surface_its_errors(tmp_path: Path) -> None:
    found = folder_counter(_tokenizer_folder(tmp_path / "ok", "{% generation %}" + CHATML + "{% endgeneration %}"))
    assert found is not None and found[1] == 64
    assert found[0]([USER], True) == found[0](["<|im_start|> user Hi <|im_end|> <|im_start|> assistant"], True)
    with pytest.raises(ConfigError, match=r"bad/chat_template\.jinja:2: chat_template: .*unknown tag 'bad'"):
        folder_counter(_tokenizer_folder(tmp_path / "bad", "{% generation %}{{ 1 }}{% endgeneration %}\n{% bad %}"))
    refuses = _tokenizer_folder(tmp_path / "refuses", "{{ raise_exception('no ' + messages[0]['role']) }}")
    found = folder_counter(refuses)
    assert found is not None and found[0](["Hi"], True) == [1]  # text rows never meet the template
    with pytest.raises(DataError, match=r"refuses\S*chat_template\.jinja: the chat template refuses these messages: "
                                        r"no user"):  # fmt: skip
        found[0]([USER], True)


def test_importing_the_renderer_imports_no_transformers() -> None:
    code = (
        "import sys, textrl.data.chat_template\nprint(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
