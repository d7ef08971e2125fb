"""Chat templates rendered as transformers 5.x renders them, without importing transformers.

The dry run counts chat rows through the model's template but imports neither torch nor transformers (transformers'
chat_template_utils alone takes 1.6 s to import). So a template must give here exactly the text that
`tokenizer.apply_chat_template(..., tokenize=False)` gives in training, and fail here whenever it fails there, with
a message a user can act on. Copied from transformers, because each changes the text: the jinja2 environment of
`_cached_compile_jinja_template` (sandbox, trim_blocks/lstrip_blocks, loopcontrols, the `{% generation %}` tag of
TRL's training templates, `tojson` without HTML escaping, `raise_exception`, `strftime_now`, its `dict` and
`namespace`); what `apply_chat_template` passes (None-valued keys dropped, plain JSON data, reasoning aliases,
`tools`/`documents`, the special tokens as `from_pretrained` reads them); which template a folder has and which of
several applies. Not copied: a tokenizer class's own defaults for special tokens the folder leaves out (they live in
per-model code), tools given as functions (pass JSON schemas), `continue_final_message`. The corpus test
tests/integration/test_chat_template_render.py compares both renderers on every template TRL ships.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..errors import ConfigError, DataError, Problem

SPECIAL_TOKENS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")
"""The named special tokens a tokenizer passes to its template (transformers' SPECIAL_TOKENS_ATTRIBUTES)."""

REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
"""Names a message's reasoning is given under; the first is the one most templates read."""

MIN_JINJA2 = (3, 1, 6)
"""transformers refuses older jinja2 releases, which have known sandbox escapes."""


class _Refused(jinja2.TemplateError):
    """`raise_exception(...)` called by a template: it refuses the messages (kept apart from template bugs)."""


class _GenerationTag(Extension):
    """transformers' AssistantTracker without the tracking: `{% generation %}...{% endgeneration %}` marks the
    assistant's text for `return_assistant_tokens_mask`, and renders exactly its body."""

    tags = {"generation"}  # noqa: RUF012 - jinja2 declares it as a plain instance-level set

    def parse(self, parser: Any) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    def _body(self, caller: Any) -> str:
        return str(caller())


def _raise_exception(message: str) -> None:
    raise _Refused(message)


def _tojson(
    x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
) -> str:
    # transformers replaces jinja2's filter, which escapes <, >, & and ' as HTML and takes no json.dumps options
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(format: str) -> str:
    return datetime.now().strftime(format)


class _TemplateDict:
    """`dict` as templates see it: callable and `fromkeys`, with no way to reach the real type's attributes."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


class _TemplateNamespace(jinja2.utils.Namespace):
    """`namespace(...)` refusing underscore-prefixed attributes, which could reach CPython internals."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # jinja2's own signature trick, so namespace(self=...) works
        self, rest = args[0], args[1:]
        attrs = dict(*rest, **kwargs)
        for name in attrs:
            _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(
                f"Chat templates cannot store underscore-prefixed attributes on a namespace, but got {name!r}. "
                "Please rename the attribute."
            )


@lru_cache(maxsize=32)
def _compiled(text: str) -> jinja2.Template:
    """One environment per template text, as transformers builds it (cached: a dataset renders one text often)."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[_GenerationTag, loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    return env.from_string(text)


def _where(source: str, line: int | None) -> str:
    if line is None:
        return source
    return f"{source}:{line}" if source.endswith(".jinja") else f"{source}, line {line} of the template"


def compile_template(text: str, source: str = "chat template") -> jinja2.Template:
    """The compiled template, or a ConfigError naming `source` (a file, or a file and key) and the line that does not
    compile: transformers would stop the run with a raw TemplateSyntaxError when it first applies the template."""
    found = tuple(int(part) for part in re.findall(r"\d+", jinja2.__version__)[:3])
    if found < MIN_JINJA2:
        raise ConfigError([Problem("jinja2", f"version {jinja2.__version__} is installed; transformers renders chat "
                                   "templates only with jinja2 3.1.6 or newer (older releases have sandbox escapes). "
                                   "Fix: pip install -U 'jinja2>=3.1.6'.")])  # fmt: skip
    try:
        return _compiled(text)
    except jinja2.TemplateSyntaxError as exc:
        lines = text.splitlines()
        seen = f" (the line reads {lines[exc.lineno - 1].strip()[:120]!r})" if 0 < exc.lineno <= len(lines) else ""
        said = (exc.message or "").rstrip(".")
        message = (
            f"the chat template does not compile: {said}{seen}. transformers compiles it with jinja2 "
            "(trim_blocks, lstrip_blocks, loopcontrols and its {% generation %} tag) and the run would stop when it "
            "first applies it. Fix: correct the template, or "
            + ("drop model.chat_template to keep the model's own." if source == "model.chat_template" else "remove it.")
        )
        raise ConfigError([Problem("chat_template", message, where=_where(source, exc.lineno))]) from None


def plain_template_data(value: Any) -> Any:
    """`value` rebuilt from plain JSON types, as transformers gives it to a template: the sandbox does not know which
    methods of rich objects (arrays, images, enums) are dangerous, so anything else becomes a placeholder string."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {plain_template_data(key): plain_template_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain_template_data(item) for item in value]
    if isinstance(value, tuple):
        return tuple(plain_template_data(item) for item in value)
    numpy = sys.modules.get("numpy")  # a numpy scalar exists only once numpy is imported: never import it here
    if numpy is not None and isinstance(value, numpy.generic):
        return plain_template_data(value.item())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: plain_template_data(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if callable(getattr(value, "model_dump", None)):
        return plain_template_data(value.model_dump())
    return f"<{type(value).__name__}>"


def alias_reasoning(chat: list[Any]) -> list[Any]:
    """Messages with their reasoning also under `reasoning_content` and `thinking` (gpt-oss templates read that),
    whichever of the names it was given under, as transformers passes them."""
    aliased = []
    for message in chat:
        if isinstance(message, dict):
            reasoning = next((message[key] for key in REASONING_FIELDS if message.get(key) is not None), None)
            if reasoning is not None:
                message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        aliased.append(message)
    return aliased


def _as_dict(message: Any) -> Any:
    """A message object (dataclass, pydantic model) as a dict, so its None-valued keys can be dropped."""
    if isinstance(message, Mapping):
        return dict(message)
    if dataclasses.is_dataclass(message) and not isinstance(message, type):
        return {field.name: getattr(message, field.name) for field in dataclasses.fields(message)}
    return message.model_dump() if callable(getattr(message, "model_dump", None)) else message


def _excerpt(messages: Any) -> str:
    text = json.dumps(messages, ensure_ascii=False, default=str)
    return text if len(text) <= 200 else text[:200] + "..."


def _messages(messages: Any, source: str) -> list[dict[str, Any]]:
    """The conversation as the template sees it (apply_chat_template's normalisation, then render_jinja_template's)."""
    chat = [_as_dict(message) for message in getattr(messages, "messages", messages)]
    if not chat:
        raise DataError(f"{source}: an empty conversation (no messages); transformers refuses to render it. Fix: "
                        "drop the rows whose conversation is empty.")  # fmt: skip
    for message in chat:
        if not isinstance(message, dict):
            raise DataError(f"{source}: a message is {_excerpt(message)}, not a dict with 'role' and 'content'. "
                            "Fix: write each message as {'role': ..., 'content': ...}.")  # fmt: skip
    # APIs return content=None or tool_calls=None; templates handle a missing key but may print "None"
    dropped = [{key: value for key, value in message.items() if value is not None} for message in chat]
    return alias_reasoning(plain_template_data(dropped))


def render_chat_template(
    template: str,
    messages: Any,
    *,
    add_generation_prompt: bool = False,
    tools: Sequence[Mapping[str, Any]] | None = None,
    documents: Sequence[Mapping[str, Any]] | None = None,
    source: str = "chat template",
    **variables: Any,
) -> str:
    """The text `tokenizer.apply_chat_template(messages, tokenize=False, ...)` gives for `template`, where
    `variables` are the tokenizer's special tokens (see `chat_renderer`) and any extra template arguments.

    A template that calls `raise_exception`, or fails on these messages, raises DataError naming `source`, the
    template's message and the conversation; one that does not compile raises ConfigError (see compile_template).
    """
    compiled = compile_template(template, source)
    if any(not isinstance(tool, Mapping) for tool in tools or ()):
        raise TypeError("tools are given to a chat template as JSON schemas (dicts); turn functions into schemas "
                        "first (transformers.utils.get_json_schema)")  # fmt: skip
    if any(not isinstance(document, Mapping) for document in documents or ()):
        raise TypeError("documents are given to a chat template as dicts with 'title' and 'text' keys")
    chat = _messages(messages, source)
    try:
        return compiled.render(
            messages=chat,
            tools=plain_template_data(None if tools is None else list(tools)),
            documents=plain_template_data(None if documents is None else list(documents)),
            add_generation_prompt=add_generation_prompt,
            **plain_template_data(variables),
        )
    except _Refused as exc:
        raise DataError(f"{source}: the chat template refuses these messages: {exc.message} (messages: "
                        f"{_excerpt(messages)}). Fix: change the rows to what the template accepts, or give the "
                        "model a chat template that accepts them.") from None  # fmt: skip
    except Exception as exc:  # a template is code: whatever it raises stops the run the same way
        raise DataError(f"{source}: rendering the chat template failed with {type(exc).__name__}: {exc} (messages: "
                        f"{_excerpt(messages)}). Fix: change the rows to what the template expects, or correct the "
                        "template.") from None  # fmt: skip


# --- a model folder's templates and special tokens, read as `from_pretrained` reads them ---------------------------


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigError([Problem("model.name", f"{path} is not valid JSON ({exc}), so transformers cannot load the "
                                   "tokenizer. Fix: repair the file or save the tokenizer again "
                                   "(tokenizer.save_pretrained(folder)).")]) from None  # fmt: skip
    return found if isinstance(found, dict) else {}


def _templates(folder: Path, config: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """Template name -> (text, where it came from); a lone template is named 'default'. Template files win over the
    `chat_template` key of tokenizer_config.json, as in transformers."""
    found = {}
    files = [folder / "chat_template.jinja"]
    if (folder / "additional_chat_templates").is_dir():
        files += sorted((folder / "additional_chat_templates").glob("*.jinja"))
    for path in files:
        if path.is_file():
            name = "default" if path == files[0] else path.name.removesuffix(".jinja")
            found[name] = (path.read_text(encoding="utf-8"), str(path))
    if found:
        return found
    value = config.get("chat_template")
    source = f"{folder / 'tokenizer_config.json'} (key chat_template"
    if isinstance(value, str):
        return {"default": (value, source + ")")}
    if isinstance(value, list):  # saved as [{"name": ..., "template": ...}, ...]
        value = {t.get("name"): t.get("template") for t in value if isinstance(t, Mapping)}
    if isinstance(value, Mapping):
        return {str(k): (v, f"{source}, template {k!r})") for k, v in value.items() if isinstance(v, str)}
    return {}


def _token(value: Any) -> str | None:
    """A special token as the tokenizer keeps it: a string, or the content of a serialised AddedToken."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and value.get("__type") == "AddedToken" and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def special_tokens(
    folder: Path, config: Mapping[str, Any] | None = None, *, read_padding: bool = True
) -> dict[str, str]:
    """The tokenizer's `special_tokens_map`, which apply_chat_template passes to every template (`bos_token`,
    `eos_token`, ..., and a model's own `*_token` entries), read from the folder as `from_pretrained` reads it:
    tokenizer_config.json (`config` when already read), special_tokens_map.json when the config predates
    `added_tokens_decoder`, and a pad token the configs leave out from tokenizer.json's padding (`read_padding`)."""
    kwargs = dict(_read_json(folder / "tokenizer_config.json") if config is None else config)
    if "additional_special_tokens" in kwargs and not kwargs.get("extra_special_tokens"):
        kwargs["extra_special_tokens"] = kwargs.pop("additional_special_tokens")
    # from_pretrained sets the model's own string-valued *_token entries aside before it merges the legacy file, so
    # those win over the file; the named tokens do not
    own = {k: kwargs.pop(k) for k in list(kwargs) if k not in SPECIAL_TOKENS and k.endswith("_token")
           and isinstance(kwargs[k], str)}  # fmt: skip
    if isinstance(kwargs.get("extra_special_tokens"), Mapping):
        own.update(kwargs.pop("extra_special_tokens"))
    if "added_tokens_decoder" not in kwargs:
        for key, value in _read_json(folder / "special_tokens_map.json").items():
            is_token = isinstance(value, Mapping) and key != "extra_special_tokens"
            kwargs[key] = {**value, "__type": "AddedToken"} if is_token else value
        if isinstance(kwargs.get("extra_special_tokens"), Mapping):
            own.update(kwargs.pop("extra_special_tokens"))
    if "pad_token" not in kwargs and read_padding:  # TokenizersBackend takes the pad token of tokenizer.json's padding
        padding = _read_json(folder / "tokenizer.json").get("padding")
        kwargs["pad_token"] = padding.get("pad_token") if isinstance(padding, Mapping) else None
    found = {key: _token(kwargs.get(key)) for key in SPECIAL_TOKENS}
    found |= {k: _token(v) for k, v in kwargs.items() if k not in SPECIAL_TOKENS and k.endswith("_token")}
    found |= {k: _token(v) for k, v in own.items()}
    return {key: token for key, token in found.items() if token is not None}


@dataclasses.dataclass(frozen=True)
class ChatRenderer:
    """A model folder's chat templates and special tokens; called like `tokenizer.apply_chat_template(messages,
    tokenize=False, ...)`, it returns the same text."""

    templates: Mapping[str, tuple[str, str]]
    """Template name -> (text, where it came from); a folder with one template names it 'default'."""
    variables: Mapping[str, str]
    """The special tokens every render sees (see `special_tokens`)."""

    def template(self, tools: Any = None) -> tuple[str, str]:
        """(text, source) of the template transformers picks: 'tool_use' when tools are given, else 'default'."""
        if tools is not None and "tool_use" in self.templates:
            return self.templates["tool_use"]
        if "default" in self.templates:
            return self.templates["default"]
        names = ", ".join(f"{name!r} ({source})" for name, (_, source) in self.templates.items())
        raise ConfigError([Problem("chat_template", f"the model has the chat templates {names} and none named "
                                   "'default', so transformers does not know which one to apply. Fix: save the one "
                                   "to use as chat_template.jinja in the model folder.")])  # fmt: skip

    def __call__(
        self,
        messages: Any,
        *,
        add_generation_prompt: bool = False,
        tools: Sequence[Mapping[str, Any]] | None = None,
        documents: Sequence[Mapping[str, Any]] | None = None,
        **variables: Any,
    ) -> str:
        text, source = self.template(tools)
        return render_chat_template(
            text,
            messages,
            add_generation_prompt=add_generation_prompt,
            tools=tools,
            documents=documents,
            source=source,
            **{**self.variables, **variables},  # the caller's arguments win, as in apply_chat_template
        )


def chat_renderer(folder: str | Path, template: str | None = None) -> ChatRenderer | None:
    """The chat template of a model folder (or `template`, the text that replaces it: model.chat_template) as a
    render function, or None when there is none. The default template is compiled here, so one that does not
    compile fails at once (ConfigError naming the file and line) rather than at the first row that renders."""
    folder = Path(folder)
    config = _read_json(folder / "tokenizer_config.json")
    templates = {"default": (template, "model.chat_template")} if template else _templates(folder, config)
    if not templates:
        return None
    uses_pad = any("pad_token" in text for text, _ in templates.values())  # spares reading tokenizer.json otherwise
    renderer = ChatRenderer(templates, special_tokens(folder, config, read_padding=uses_pad))
    if "default" in templates:
        compile_template(*templates["default"])
    return renderer
