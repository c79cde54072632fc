"""Reading analysis inputs: named sources of documents, through :mod:`bytepair.sources`."""

from __future__ import annotations

import codecs
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bytepair._files import open_regular
from bytepair.errors import CorpusError
from bytepair.sources import (
    DECOMPRESS_ERRORS,
    PathLike,
    Source,
    SourceFile,
    decompress_error,
    documents,
    open_stream,
    resolve,
    utf8_error,
)

#: Text is read and measured in blocks of about this many bytes (analysis in bounded memory).
BLOCK_BYTES = 256 << 10

__all__ = ["Corpus", "as_corpora"]


@dataclass
class Corpus:
    """A named set of files (paths, globs, directories; .txt, .jsonl, .gz, .zst) read as documents."""

    name: str
    paths: list[str]
    text_field: str = "text"

    def source(self) -> Source:
        return Source(self.paths, name=self.name, text_field=self.text_field)

    def documents(self) -> Iterator[str]:
        for f in resolve(self.source(), True):
            yield from documents(f, text_field=self.text_field)

    def blocks(self, block_bytes: int | None = None) -> Iterator[str]:
        """The corpus's text in blocks of about ``block_bytes``: each JSON-lines or Parquet document
        whole, a text file cut after a newline between a character that is not whitespace and a letter. No word and no
        piece of any of the shipped pre-tokenizers (nor BERT's) crosses such a cut, so what is
        counted block by block adds up to what the whole text gives, in memory that does not
        grow with the file."""
        for f in resolve(self.source(), True):
            if f.jsonl or f.parquet:
                yield from documents(f, text_field=self.text_field)
            else:
                yield from text_blocks(f, BLOCK_BYTES if block_bytes is None else block_bytes)

    def size(self) -> int:
        """Bytes of the files on disk (compressed where they are)."""
        return sum(f.size for f in resolve(self.source(), True))

    def text_bytes(self) -> int:
        return sum(len(d.encode("utf-8", "surrogatepass")) for d in self.documents())


def _cut(text: str, start: int) -> int:
    """The last place in ``text[start:]`` right after a newline that follows a character that is
    not whitespace and is followed by a letter, or 0."""
    end = len(text)
    while (i := text.rfind("\n", start, end)) >= 0:
        # A run of whitespace ending in the newline would split otherwise (GPT-2 keeps its last
        # character apart): the newline must follow a character that is not whitespace.
        if i + 1 < len(text) and text[i + 1].isalpha() and i > 0 and not text[i - 1].isspace():
            return i + 1
        end = i
    return 0


def text_blocks(f: SourceFile, block_bytes: int = BLOCK_BYTES) -> Iterator[str]:
    """A text file (plain, .gz or .zst) in blocks cut as :meth:`Corpus.blocks` says; bytes that
    are not UTF-8 raise :class:`CorpusError` naming the file and the offset. Text with no such
    place stays one block (each character is looked at once)."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    with open_regular(f.path, CorpusError) as raw:
        stream = open_stream(f, raw)
        offset = 0
        held = ""
        searched = 0  # held[:searched] has no cut
        try:
            while True:
                block = stream.read(block_bytes)
                pending = len(decoder.getstate()[0])
                try:
                    text = decoder.decode(block, final=not block)
                except UnicodeDecodeError as e:
                    raise utf8_error(f, offset - pending + e.start) from None
                offset += len(block)
                held += text
                if not block:
                    break
                if len(held) < block_bytes // 4:
                    continue
                cut = _cut(held, max(searched - 1, 0))
                if cut:
                    yield held[:cut]
                    held = held[cut:]
                    searched = 0
                else:
                    searched = len(held)
        except DECOMPRESS_ERRORS as e:
            raise decompress_error(f, e) from None
    if held:
        yield held


def as_corpora(corpora: PathLike | Corpus | Sequence[PathLike | Corpus | tuple[str, PathLike]]) -> list[Corpus]:
    """Corpus objects from a path, a list of paths (one corpus each), ``(name, path)`` pairs or Corpus objects."""
    items = [corpora] if isinstance(corpora, (str, Corpus)) or not isinstance(corpora, Sequence) else list(corpora)
    out: list[Corpus] = []
    for item in items:
        if isinstance(item, Corpus):
            out.append(item)
        elif isinstance(item, tuple):
            out.append(Corpus(str(item[0]), [str(item[1])]))
        else:
            out.append(Corpus(str(item), [str(item)]))
    if not out:
        raise CorpusError("no corpus given")
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise CorpusError(f"corpus names must differ: {', '.join(names)}")
    return out
