"""Reading analysis inputs: named sources of documents, through :mod:`bytepair.sources`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bytepair.errors import CorpusError
from bytepair.sources import PathLike, Source, documents, resolve

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

    def text_bytes(self) -> int:
        return sum(len(d.encode("utf-8", "surrogatepass")) for d in self.documents())


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
