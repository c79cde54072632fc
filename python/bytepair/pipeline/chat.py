"""Chat templates: a conversation rendered with the model directory's Jinja template, as
transformers' ``apply_chat_template`` renders it (the tests compare texts and ids).

The environment is the one transformers gives templates: Jinja's immutable sandbox with
``trim_blocks`` and ``lstrip_blocks`` and the ``loopcontrols`` extension; ``raise_exception(msg)``,
``strftime_now(fmt)``, ``namespace`` and ``dict`` as globals; ``tojson`` that does not escape HTML
(``json.dumps`` with ``ensure_ascii=False``, ``indent``, ``separators`` and ``sort_keys``). The
template sees ``messages``, ``tools``, ``documents``, ``add_generation_prompt``, the role tokens
(``bos_token``, ``eos_token``, ...) and any other keyword given.

jinja2 is optional (``pip install jinja2``, or the ``chat`` extra) and imported on first use.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bytepair.errors import BytepairError, FormatError, MissingExtraError

if TYPE_CHECKING:
    from bytepair._api import ModelInputs

__all__ = ["ChatTemplateError", "apply", "render"]

_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
#: transformers' options bytepair does not have: refused rather than passed to the template.
_NOT_SUPPORTED = ("return_assistant_tokens_mask", "sanitize_control_tokens")


class ChatTemplateError(BytepairError):
    """A chat template that does not compile, or that raised while rendering (``raise_exception``)."""


def _jinja() -> Any:
    try:
        import jinja2
        import jinja2.ext
        import jinja2.sandbox
    except ImportError:
        raise MissingExtraError("apply_chat_template renders Jinja templates and needs jinja2", "chat") from None
    return jinja2


@functools.lru_cache(maxsize=16)
def _compile(template: str) -> Any:
    j2 = _jinja()

    def raise_exception(message: str) -> None:
        raise j2.exceptions.TemplateError(message)

    def tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None,
               separators: Any = None, sort_keys: bool = False) -> str:
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt: str) -> str:
        return datetime.now().strftime(fmt)

    base: Any = j2.utils.Namespace

    class Namespace(base):  # type: ignore[misc]
        """``namespace(...)`` without underscore names (no way to CPython's internals)."""

        def __init__(*args: Any, **kwargs: Any) -> None:
            self, rest = args[0], args[1:]
            attrs = dict(*rest, **kwargs)
            for name in attrs:
                Namespace._check(name)
            j2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name: str, value: Any) -> None:
            Namespace._check(name)
            j2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check(name: Any) -> None:
            if isinstance(name, str) and name.startswith("_"):
                raise j2.exceptions.SecurityError(f"a chat template cannot set the attribute {name!r} on a namespace")

    class Dicts:
        """``dict(...)`` and ``dict.fromkeys(...)``, and nothing else of the type."""

        def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
            return dict(*args, **kwargs)

        def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
            return dict.fromkeys(*args, **kwargs)

    env = j2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals.update(raise_exception=raise_exception, strftime_now=strftime_now, namespace=Namespace, dict=Dicts())
    try:
        return env.from_string(template)
    except j2.exceptions.TemplateSyntaxError as e:
        raise ChatTemplateError(f"the chat template does not compile: {e.message} (line {e.lineno})") from None


def _plain(value: Any) -> Any:
    """What the template may see: JSON values only (a subclass of str or int loses its methods)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item) and getattr(value, "shape", None) == ():
        return _plain(item())
    return f"<{type(value).__name__}>"


def render(
    template: str,
    conversation: Sequence[Mapping[str, Any]],
    *,
    add_generation_prompt: bool = False,
    continue_final_message: bool | str = False,
    tools: Sequence[Any] | None = None,
    documents: Sequence[Mapping[str, Any]] | None = None,
    where: str = "chat_template",
    **variables: Any,
) -> str:
    """One conversation rendered with ``template`` (see the module doc)."""
    j2 = _jinja()
    compiled = _compile(template)
    messages = []
    for k, m in enumerate(conversation):
        if not isinstance(m, Mapping):
            raise TypeError(f"messages[{k}] must be a dict with 'role' and 'content', not {type(m).__name__}")
        messages.append({key: v for key, v in m.items() if v is not None})
    messages = _plain(messages)
    final = None
    if continue_final_message:
        field = continue_final_message if isinstance(continue_final_message, str) else "content"
        if not messages:
            raise BytepairError("continue_final_message needs a conversation with a last message to continue")
        final = messages[-1].get(field)
        if not isinstance(final, str):
            raise BytepairError(f"continue_final_message: the last message has no text {field!r} to continue")
        if field not in template:
            raise BytepairError(f"continue_final_message: the chat template does not use the field {field!r}")
        messages[-1][field] = final + _CONTINUE_TAG
    if tools is not None:
        for t in tools:
            if not isinstance(t, Mapping):
                raise TypeError("tools must be JSON schemas (dicts); bytepair does not convert Python functions")
    if documents is not None:
        for d in documents:
            if not isinstance(d, Mapping):
                raise TypeError("documents must be dicts (with 'title' and 'text')")
    try:
        text: str = compiled.render(
            messages=messages,
            tools=_plain(tools),
            documents=_plain(documents),
            add_generation_prompt=add_generation_prompt,
            **_plain(variables),
        )
    except j2.exceptions.TemplateError as e:
        raise ChatTemplateError(f"{where} raised: {e}") from None
    if final is not None:
        tag = _CONTINUE_TAG.strip()
        if final.strip() not in text or tag not in text:
            raise BytepairError(
                "continue_final_message: the rendered chat does not hold the last message as given "
                "(the chat template changed it), so it cannot be left open"
            )
        at = text.rindex(tag)
        text = text[:at] if text[at : at + len(_CONTINUE_TAG)] == _CONTINUE_TAG else text[:at].rstrip()
    return text


def _pick(tok: ModelInputs, chat_template: str | None, tools: Any) -> tuple[str, str]:
    """The template to use, and how errors name it."""
    own = tok.chat_template
    if isinstance(own, dict):
        if chat_template is not None and chat_template in own:
            return own[chat_template], f"chat_template {chat_template!r}"
        if chat_template is None:
            name = "tool_use" if tools is not None and "tool_use" in own else "default"
            if name not in own:
                raise BytepairError(
                    f"this tokenizer has several chat templates ({', '.join(sorted(own))}) and none is 'default': "
                    "pass chat_template=<name>"
                )
            return own[name], f"chat_template {name!r}"
    if chat_template is not None:
        return chat_template, "the chat_template given"
    if not isinstance(own, str):
        raise BytepairError(
            "this tokenizer has no chat template (none in tokenizer_config.json or chat_template.jinja): "
            "pass chat_template=..."
        )
    where = getattr(tok, "_chat_template_source", None) or "chat_template"
    return own, str(where)


def apply(
    tok: ModelInputs,
    conversation: Any,
    *,
    add_generation_prompt: bool,
    tokenize: bool,
    return_dict: bool,
    continue_final_message: bool | str,
    tools: Sequence[Any] | None,
    documents: Sequence[Mapping[str, Any]] | None,
    chat_template: str | None,
    padding: Any = False,
    truncation: Any = False,
    max_length: int | None = None,
    return_tensors: str | None = None,
    tokenizer_kwargs: Mapping[str, Any] | None = None,
    **variables: Any,
) -> Any:
    """``ModelInputs.apply_chat_template`` (see its doc)."""
    for name in _NOT_SUPPORTED:
        if variables.get(name):
            raise BytepairError(f"apply_chat_template: {name} is not supported by bytepair")
    if continue_final_message and add_generation_prompt:
        raise BytepairError(
            "continue_final_message and add_generation_prompt cannot be used together: the first leaves the last "
            "message open, the second starts a new assistant message"
        )
    template, where = _pick(tok, chat_template, tools)
    if isinstance(conversation, (list, tuple)) and not conversation:
        raise BytepairError("the conversation is empty")
    batched = isinstance(conversation, (list, tuple)) and isinstance(conversation[0], (list, tuple))
    conversations = list(conversation) if batched else [conversation]
    roles = {f"{r}_token": t for r, t in tok.special_tokens_map.items()}
    texts = [
        render(
            template,
            c,
            add_generation_prompt=add_generation_prompt,
            continue_final_message=continue_final_message,
            tools=tools,
            documents=documents,
            where=where,
            **{**roles, **variables},
        )
        for c in conversations
    ]
    rendered: str | list[str] = texts if batched else texts[0]
    if not tokenize:
        return rendered
    out = tok(
        rendered,
        add_special_tokens=False,
        padding=padding,
        truncation=truncation,
        max_length=max_length,
        return_tensors=return_tensors,
        **dict(tokenizer_kwargs or {}),
    )
    return out if return_dict else out["input_ids"]


def load_template(directory: str, config: Mapping[str, Any]) -> tuple[str | dict[str, str] | None, str | None]:
    """The chat template of a model directory: ``chat_template.jinja`` (transformers' newer
    layout) or ``chat_template`` in ``tokenizer_config.json`` (a string, or a list of
    ``{"name", "template"}``); and the file it came from."""
    import os

    path = os.path.join(directory, "chat_template.jinja")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    value = config.get("chat_template")
    where = os.path.join(directory, "tokenizer_config.json")
    if value is None:
        return None, None
    if isinstance(value, str):
        return value, where
    if isinstance(value, list):
        out: dict[str, str] = {}
        for k, item in enumerate(value):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not isinstance(item.get("template"), str):
                raise FormatError(f"{where}: chat_template[{k}] must be {{'name': str, 'template': str}}")
            out[item["name"]] = item["template"]
        return out, where
    raise FormatError(f"{where}: chat_template must be a string or a list of named templates, got {type(value).__name__}")
