"""Hypothesis strategies shared by the tests."""

from __future__ import annotations

from hypothesis import strategies as st

# Characters assigned in this Python's Unicode database: the Python `regex` module (the
# oracle's engine) may know a newer Unicode than the Rust tables, and differ on characters
# assigned since; those differences are not bugs of bytepair's algorithms.
any_char = st.characters(blacklist_categories=("Cs", "Cn", "Co"))
# Few distinct characters make repeated pairs, so merges have something to learn.
busy_char = st.sampled_from(list("aaabbbcab  \n\r\t'sSlLtT1234567890.,!?-_/") + ["é", "ß", "中", "文", "👍"])
text = st.text(alphabet=st.one_of(busy_char, busy_char, any_char), max_size=60)

SPECIAL_POOL = ["<s>", "<s><s>", "</s>", "<|endoftext|>", "ab", "\nb"]

CUSTOM_PATTERN = r"\p{L}+|\p{N}|[^\s\p{L}\p{N}]+|\s+"
PATTERNS = ["gpt2", "gpt4", "o200k", None, CUSTOM_PATTERN]


@st.composite
def corpus_with_specials(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Documents in which some special tokens appear, and the special tokens."""
    specials = draw(st.lists(st.sampled_from(SPECIAL_POOL), unique=True, max_size=3))
    part = st.one_of(text, st.sampled_from(specials)) if specials else text
    docs = draw(st.lists(st.lists(part, max_size=6).map("".join), max_size=6))
    return docs, specials
