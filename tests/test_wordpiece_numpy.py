"""WordPieceTokenizer.encode_batch_numpy: the flat arrays hold exactly encode_batch's ids (which
the other tests check against `tokenizers`), with the BPE array layout."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.errors import BytepairError
from bytepair.wordpiece_training import train_wordpiece_from_iterator

with open(bytepair.__file__.replace("__init__.py", "data/tinyshakespeare.txt"), encoding="utf-8") as f:
    _TEXT = f.read(20_000)
TOK = train_wordpiece_from_iterator([_TEXT], vocab_size=300, progress=False)

texts = st.lists(
    st.text(st.sampled_from(list("the cat sat on a mat. Über straße café Привет 中文 😀!? \n\ud800")), max_size=40),
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(texts=texts, dtype=st.sampled_from([None, np.uint16, np.uint32]), threads=st.sampled_from([None, 1, 2]))
def test_arrays_are_encode_batch(texts: list[str], dtype: object, threads: int | None) -> None:
    ids, offsets = TOK.encode_batch_numpy(texts, dtype=dtype, num_threads=threads)
    want = TOK.encode_batch(texts)
    assert ids.dtype == np.dtype(np.uint16 if dtype is None else dtype)
    assert offsets.dtype == np.int64
    assert offsets.tolist() == np.cumsum([0] + [len(w) for w in want]).tolist()
    assert [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))] == want


def test_bad_arguments() -> None:
    with pytest.raises(TypeError):
        TOK.encode_batch_numpy("one text")
    with pytest.raises(BytepairError, match="dtype"):
        TOK.encode_batch_numpy(["a"], dtype=np.int8)
    with pytest.raises(BytepairError, match="dtype"):
        TOK.encode_batch_numpy(["a"], dtype="not a dtype")
