"""apply_chat_template against transformers: the same text and ids from the directory's chat
template (tokenizer_config.json or chat_template.jinja), and errors that name the template."""

from __future__ import annotations

import json
import shutil
import sys
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import BytepairError
from bytepair.pipeline import chat
from tests import model_zoo

transformers = pytest.importorskip("transformers")
pytest.importorskip("jinja2")

MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Hello!  How are you?"},
    {"role": "assistant", "content": "  Fine, thanks. <|eot_id|> is not special here? "},
    {"role": "user", "content": "naïve café 東京 🙂"},
]

# Exercises what transformers' environment gives templates: tojson (no HTML escaping, options),
# namespace, loop controls, trim_blocks / lstrip_blocks, the role tokens, extra variables.
RICH_TEMPLATE = """{% set ns = namespace(n=0) %}
{% for m in messages %}
    {% if m['role'] == 'system' %}{% continue %}{% endif %}
    {% set ns.n = ns.n + 1 %}
<{{ m['role'] }} n={{ ns.n }}>{{ m['content'] | tojson }}</{{ m['role'] }}>
    {% if loop.index > 10 %}{% break %}{% endif %}
{% endfor %}
{% if tools %}TOOLS {{ tools | tojson(indent=2, sort_keys=True) }}{% endif %}
{% if documents %}{% for d in documents %}[{{ d['title'] }}]{% endfor %}{% endif %}
{{ bos_token }}|{{ eos_token }}|{{ extra | default('none') }}|{{ {'a': '<&>'} | tojson }}
{% if add_generation_prompt %}<assistant>{% endif %}"""


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Any, Any]:
    d = model_zoo.llama3(str(tmp_path_factory.mktemp("chat") / "llama3"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = transformers.AutoTokenizer.from_pretrained(d)
    return d, bytepair.load(d), hf


def same(ours: Any, theirs: Any, conversation: Any, **kw: Any) -> None:
    for tokenize in (False, True):
        want = theirs.apply_chat_template(conversation, tokenize=tokenize, return_dict=False, **kw)
        got = ours.apply_chat_template(conversation, tokenize=tokenize, return_dict=False, **kw)
        assert got == want, (tokenize, kw)
    want_d = theirs.apply_chat_template(conversation, tokenize=True, return_dict=True, **kw)
    got_d = ours.apply_chat_template(conversation, tokenize=True, return_dict=True, **kw)
    assert dict(got_d) == dict(want_d)


@pytest.mark.parametrize("prompt", [False, True])
def test_directory_template(llama: tuple[str, Any, Any], prompt: bool) -> None:
    _, ours, theirs = llama
    same(ours, theirs, MESSAGES, add_generation_prompt=prompt)
    same(ours, theirs, MESSAGES[:1], add_generation_prompt=prompt)
    same(ours, theirs, [MESSAGES, MESSAGES[1:3]], add_generation_prompt=prompt)  # a batch


def test_continue_final_message(llama: tuple[str, Any, Any]) -> None:
    _, ours, theirs = llama
    convo = [*MESSAGES[:2], {"role": "assistant", "content": "Partial answer"}]
    same(ours, theirs, convo, continue_final_message=True)
    with pytest.raises(BytepairError, match="add_generation_prompt"):
        ours.apply_chat_template(convo, continue_final_message=True, add_generation_prompt=True)


def test_padding_and_numpy(llama: tuple[str, Any, Any]) -> None:
    _, ours, theirs = llama
    batch = [MESSAGES, MESSAGES[1:2]]
    kw: dict[str, Any] = {"padding": True, "return_tensors": "np", "return_dict": True}
    want = theirs.apply_chat_template(batch, **kw)
    got = ours.apply_chat_template(batch, **kw)
    assert {k: v.tolist() for k, v in got.items()} == {k: v.tolist() for k, v in want.items()}
    kw = {"truncation": True, "max_length": 12, "return_dict": False}
    assert ours.apply_chat_template(MESSAGES, **kw) == theirs.apply_chat_template(MESSAGES, **kw)


@pytest.mark.parametrize("prompt", [False, True])
def test_environment_like_transformers(llama: tuple[str, Any, Any], prompt: bool) -> None:
    _, ours, theirs = llama
    tools = [{"type": "function", "function": {"name": "f", "description": "é <b>", "parameters": {"z": 1, "a": [1, 2]}}}]
    docs = [{"title": "T1", "text": "x"}, {"title": "T2", "text": "y"}]
    for kw in ({}, {"tools": tools}, {"documents": docs}, {"extra": "given"}):
        same(ours, theirs, MESSAGES, chat_template=RICH_TEMPLATE, add_generation_prompt=prompt, **kw)


@settings(max_examples=max(5, settings().max_examples // 5))
@given(
    contents=st.lists(st.text(st.characters(codec="utf-8"), max_size=20), min_size=1, max_size=4),
    prompt=st.booleans(),
)
def test_property_random_messages(llama: tuple[str, Any, Any], contents: list[str], prompt: bool) -> None:
    _, ours, theirs = llama
    roles = ["user", "assistant"]
    convo = [{"role": roles[k % 2], "content": c} for k, c in enumerate(contents)]
    for template in (None, RICH_TEMPLATE):
        kw: dict[str, Any] = {"add_generation_prompt": prompt, "chat_template": template}
        assert ours.apply_chat_template(convo, tokenize=False, **kw) == theirs.apply_chat_template(convo, tokenize=False, **kw)
        assert ours.apply_chat_template(convo, return_dict=False, **kw) == theirs.apply_chat_template(
            convo, return_dict=False, **kw
        )


def test_raise_exception_names_the_file(llama: tuple[str, Any, Any]) -> None:
    d, ours, theirs = llama
    bad = [{"role": "wizard", "content": "hi"}]
    with pytest.raises(Exception, match="unknown role wizard"):
        theirs.apply_chat_template(bad, tokenize=False)
    with pytest.raises(chat.ChatTemplateError, match=r"tokenizer_config\.json raised: unknown role wizard"):
        ours.apply_chat_template(bad)
    assert issubclass(chat.ChatTemplateError, BytepairError)
    with pytest.raises(chat.ChatTemplateError, match="does not compile"):
        ours.apply_chat_template(MESSAGES, chat_template="{% for m in messages %}")


def test_template_file_and_named_templates(llama: tuple[str, Any, Any], tmp_path: Any) -> None:
    d, ours, theirs = llama
    jinja_dir = tmp_path / "jinja"
    shutil.copytree(d, jinja_dir)
    (jinja_dir / "chat_template.jinja").write_text(RICH_TEMPLATE, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = transformers.AutoTokenizer.from_pretrained(str(jinja_dir))
    tok = bytepair.load(jinja_dir)
    assert tok.chat_template == RICH_TEMPLATE
    same(tok, hf, MESSAGES)

    named = tmp_path / "named"
    shutil.copytree(d, named)
    config = json.loads((named / "tokenizer_config.json").read_text())
    config["chat_template"] = [{"name": "default", "template": model_zoo.CHAT_TEMPLATE}, {"name": "rich", "template": RICH_TEMPLATE}]
    (named / "tokenizer_config.json").write_text(json.dumps(config))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = transformers.AutoTokenizer.from_pretrained(str(named))
    tok = bytepair.load(named)
    same(tok, hf, MESSAGES)
    same(tok, hf, MESSAGES, chat_template="rich")


def test_chat_template_through_save_pretrained(llama: tuple[str, Any, Any], tmp_path: Any) -> None:
    _, ours, theirs = llama
    ours.save_pretrained(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    same(bytepair.load(tmp_path), theirs, MESSAGES, add_generation_prompt=True)
    same(ours, hf, MESSAGES, add_generation_prompt=True)


def test_no_template() -> None:
    tok = bytepair.train_from_iterator(model_zoo.CORPUS, vocab_size=280)
    with pytest.raises(BytepairError, match="no chat template"):
        tok.apply_chat_template(MESSAGES)
    assert tok.apply_chat_template(MESSAGES[:1], chat_template="{{ messages[0]['content'] }}", tokenize=False) == MESSAGES[0]["content"]


def test_without_jinja2(monkeypatch: pytest.MonkeyPatch) -> None:
    chat._compile.cache_clear()
    for name in [m for m in sys.modules if m == "jinja2" or m.startswith("jinja2.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "jinja2", None)
    tok = bytepair.train_from_iterator(model_zoo.CORPUS, vocab_size=280)
    with pytest.raises(ImportError, match="pip install jinja2"):
        tok.apply_chat_template(MESSAGES, chat_template="{{ 1 }}")
    chat._compile.cache_clear()


def test_unsupported_options_are_refused(llama: tuple[str, Any, Any]) -> None:
    _, ours, _ = llama
    for name in ("return_assistant_tokens_mask", "sanitize_control_tokens"):
        with pytest.raises(BytepairError, match=name):
            ours.apply_chat_template(MESSAGES, **{name: True})
