#!/usr/bin/env python3
"""Build the training-benchmark corpus from real text found on this machine.

Writes, into ``--out`` (default ``bench/corpus/``, which git ignores):

- ``prose.txt``         English prose and docs: English man pages (roff converted to plain
                        text), /usr/share/doc READMEs/NEWS/changelogs (.gz decompressed),
                        info manuals, the Debian Reference (English), the Jargon File.
- ``code.txt``          source code: the Python stdlib and site-packages (.py), Rust crates in
                        ~/.cargo/registry (and rust-src if installed), C headers in /usr/include.
- ``multilingual.txt``  other languages and scripts: translated man pages under
                        /usr/share/man/<lang>/ and the translated Debian Reference.
- ``mixed.txt``         the three files above interleaved in ~64 KiB blocks (cut at newlines),
                        in proportion to their sizes: the benchmark corpus (``--mb`` MiB in all).
- ``english_130k.txt``  ~130 KiB of English prose for the small benchmark: a slice of the
                        Jargon File (public domain), or of the English prose if it is missing.

Documents are chosen in a fixed pseudo-random order (sha1 of each file's source-relative path),
so the output is the same byte for byte on machines with the same files installed. Only valid
UTF-8 is kept (files that fail to decode are skipped), control characters other than tab and
newline are removed, exact duplicate documents are dropped, and one document contributes at most
``MAX_DOC_BYTES``. The few big books (the Jargon File, the Debian Reference) are cut into
``PAGE_BYTES`` pages sampled like documents, so they are drawn about in proportion to their size.
Shares of the total: prose 40 %, code 35 %, multilingual 25 %; a category that runs short is
made up by the others. The last document of each category is cut at a newline to fit.

Most sources ship with the base image; the multilingual text and some prose come from Debian
packages, installed with the command printed by ``--help`` (``APT_COMMAND`` below).
Standard library only.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import re
import sys
import sysconfig
import unicodedata
from collections.abc import Callable, Iterator
from typing import BinaryIO
from dataclasses import dataclass
from pathlib import Path

APT_PACKAGES = [
    "jargon-text",
    "debian-reference-en",
    "debian-reference-de",
    "debian-reference-es",
    "debian-reference-fr",
    "debian-reference-id",
    "debian-reference-it",
    "debian-reference-ja",
    "debian-reference-pt",
    "debian-reference-zh-cn",
    "debian-reference-zh-tw",
    "manpages-de",
    "manpages-el",
    "manpages-es",
    "manpages-fr",
    "manpages-it",
    "manpages-ja",
    "manpages-nl",
    "manpages-pl",
    "manpages-pt-br",
    "manpages-ru",
    "manpages-uk",
    "manpages-vi",
    "manpages-zh",
]
APT_COMMAND = "apt-get update && apt-get install -y --no-install-recommends " + " ".join(APT_PACKAGES)

SHARES = {"prose": 0.40, "code": 0.35, "multilingual": 0.25}
MAX_DOC_BYTES = 256 * 1024  # per document, except for the sources taken whole
MIN_DOC_CHARS = 64
BLOCK_BYTES = 64 * 1024
PAGE_BYTES = 8 * 1024  # about the median document: paged sources are sampled by size

# --------------------------------------------------------------------------------------------
# Text clean-up and converters
# --------------------------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_BLANKS = re.compile(r"\n{3,}")


def read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped if its name ends in .gz."""
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as f:
            return f.read()
    return path.read_bytes()


def clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return _BLANKS.sub("\n\n", text).strip("\n")


def truncate(text: str, limit: int = MAX_DOC_BYTES) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    cut = data.rfind(b"\n", 0, limit)
    if cut <= 0:
        cut = limit
    return data[:cut].decode("utf-8", errors="ignore")


# roff (man pages) to plain text. Rendering with groff would justify and hyphenate the text
# (extra spaces, split words) and depends on the groff version; this keeps the words as
# written, refilled into one line per paragraph (man(7) and, roughly, mdoc(7) macros).

_ROFF_CHARS = {
    "em": "\u2014", "en": "\u2013", "hy": "-", "mi": "-", "lq": "\u201c", "rq": "\u201d",
    "oq": "\u2018", "cq": "\u2019", "aq": "'", "dq": '"', "bu": "\u2022", "co": "\u00a9",
    "rg": "\u00ae", "tm": "\u2122", "de": "\u00b0", "ti": "~", "ha": "^", "rs": "\\",
    "sl": "/", "pl": "+", "mu": "\u00d7", "di": "\u00f7", "<=": "\u2264", ">=": "\u2265",
    "!=": "\u2260", "->": "\u2192", "<-": "\u2190", "bv": "|", "ba": "|", "or": "|",
    "fm": "\u2032", "ga": "`", "aa": "\u00b4", "Fo": "\u00ab", "Fc": "\u00bb", "fo": "\u2039",
    "fc": "\u203a", "lB": "[", "rB": "]", "lC": "{", "rC": "}", "at": "@", "sh": "#",
    "Do": "$", "eu": "\u20ac", "Eu": "\u20ac", "ss": "\u00df", "ct": "\u00a2",
    "Po": "\u00a3", "Ye": "\u00a5", "ua": "\u2191", "da": "\u2193", "pc": "\u00b7",
    "+-": "\u00b1", "12": "\u00bd", "14": "\u00bc", "34": "\u00be", "sc": "\u00a7",
    "ps": "\u00b6", "bq": "\u201e", "Bq": "\u201e", "dg": "\u2020", "OK": "\u2713",
    "AE": "\u00c6", "ae": "\u00e6", "o/": "\u00f8", "O/": "\u00d8", "oe": "\u0153",
    "r!": "\u00a1", "r?": "\u00bf", "tno": "~", "sq": "\u25a1", "ci": "\u25cb",
}
_ROFF_ACCENTS = {":": "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303",
                 ",": "\u0327", "o": "\u030a", "v": "\u030c"}
_ROFF_ONE = {"e": "\\", "E": "\\", "\\": "\\", "-": "-", " ": " ", "~": " ", "0": " ",
             "t": " ", "'": "\u00b4", "`": "`", ".": ".", "_": "_", "[": "[", "]": "]"}
_ROFF_ESCAPE = re.compile(
    r"""\\(?:
      \((?P<two>..)
    | \[(?P<name>[^\]]*)\]
    | [fFgmM](?:\(..|\[[^\]]*\]|.)
    | \*(?:\(..|\[[^\]]*\]|.)
    | n[+-]?(?:\(..|\[[^\]]*\]|.)
    | s[+-]?(?:\(..|\[[^\]]*\]|\d\d?|'[^']*')
    | [hvwoXDlLbxSRZNCAYB]'[^']*'
    | [kz$]\S?
    | (?P<one>.)
    | $
    )""",
    re.X,
)
# man(7) macros that only format (dropped) and that end a paragraph
_MAN_SKIP = {"TH", "RS", "RE", "PD", "DT", "AT", "UC", "UE", "ME", "YS", "Dd", "Dt", "Os",
             "Sm", "Ek", "Bk", "Rs", "Re", "Ns", "Pf", "Xc", "Xo", "El", "Ed"}
_PARA = {"PP", "LP", "P", "HP", "Pp", "Lp", "sp", "Bl", "Bd", "SY"}
_LINE = {"br", "TP", "TQ", "IP", "It", "D1", "Dl", "Nd", "in", "ti"}
_ROFF_JOIN = {"BR", "RB", "IR", "RI", "BI", "IB"}
_MDOC_CALLABLE = {
    "Ac", "Ao", "Ap", "Aq", "Ar", "Bc", "Bo", "Bq", "Brc", "Bro", "Brq", "Cm", "Dc", "Do", "Dq",
    "Dv", "Ec", "Em", "Eo", "Er", "Ev", "Fa", "Fl", "Fn", "Ft", "Ic", "Li", "Nm", "No", "Ns",
    "Oc", "Oo", "Op", "Pa", "Pc", "Pf", "Po", "Pq", "Qc", "Ql", "Qo", "Qq", "Sc", "So", "Sq",
    "Sx", "Sy", "Tn", "Va", "Xr", "Xc", "Xo", "Lk", "Mt", "St", "Ux", "Bx", "At", "Dx", "Fx",
    "Nx", "Ox", "Bsx",
}
_MDOC_OPEN = {"Op": ("[", "]"), "Oo": ("[", ""), "Oc": ("", "]"), "Dq": ("\u201c", "\u201d"),
              "Do": ("\u201c", ""), "Dc": ("", "\u201d"), "Sq": ("\u2018", "\u2019"),
              "So": ("\u2018", ""), "Sc": ("", "\u2019"), "Qq": ('"', '"'), "Ql": ("\u2018", "\u2019"),
              "Pq": ("(", ")"), "Po": ("(", ""), "Pc": ("", ")"), "Aq": ("<", ">"),
              "Ao": ("<", ""), "Ac": ("", ">"), "Bq": ("[", "]"), "Bo": ("[", ""), "Bc": ("", "]"),
              "Brq": ("{", "}"), "Bro": ("{", ""), "Brc": ("", "}")}
_ROFF_ARGS = re.compile(r'"((?:[^"]|"")*)"?|(\S+)')
_PUNCT = set(".,:;)]?!")


def _roff_glyph(name: str) -> str:
    if name in _ROFF_CHARS:
        return _ROFF_CHARS[name]
    if name.startswith("u") and len(name) >= 5:
        try:
            return "".join(chr(int(part, 16)) for part in name[1:].split("_"))
        except ValueError:
            return ""
    if len(name) == 2 and name[0] in _ROFF_ACCENTS and name[1].isalpha():
        return unicodedata.normalize("NFC", name[1] + _ROFF_ACCENTS[name[0]])
    return ""


def _roff_escape(m: re.Match[str]) -> str:
    if m.group("two") is not None:
        return _roff_glyph(m.group("two"))
    if m.group("name") is not None:
        return _roff_glyph(m.group("name"))
    one = m.group("one")
    if one is None:
        return ""
    if one in _ROFF_ONE:
        return _ROFF_ONE[one]
    return "" if one.isalnum() or one in "&|^%:{}\",/)c" else one


def _roff_inline(text: str) -> str:
    return _ROFF_ESCAPE.sub(_roff_escape, text)


def _roff_args(rest: str) -> list[str]:
    args = [a if a else b for a, b in _ROFF_ARGS.findall(rest)]
    return [a.replace('""', '"') for a in args if a]


def _mdoc_render(tokens: list[str], name: str) -> str:
    """Renders a line of mdoc macros and words: ``Op Fl v`` -> ``[-v]``."""
    out: list[str] = []
    closers: list[str] = []
    flag = False
    nm_pending = False
    i = 0
    while i < len(tokens):
        t = tokens[i]
        i += 1
        if t in _MDOC_CALLABLE:
            if nm_pending:
                out.append(name)
            nm_pending = False
            flag = t == "Fl"
            if t in _MDOC_OPEN:
                opener, closer = _MDOC_OPEN[t]
                if opener:
                    out.append(opener + "\x00")
                if closer:
                    if t in ("Oc", "Dc", "Sc", "Pc", "Ac", "Bc", "Brc"):
                        out.append("\x00" + closer)
                    else:
                        closers.append(closer)
            elif t == "Nm":
                nm_pending = True
            elif t == "Ux":
                out.append("UNIX")
            elif t == "Xr" and i + 1 < len(tokens) and tokens[i + 1].isalnum():
                out.append(f"{tokens[i]}({tokens[i + 1]})")
                i += 2
            elif t == "Fl" and (i >= len(tokens) or tokens[i] in _MDOC_CALLABLE):
                out.append("-")
            continue
        nm_pending = False
        if t in _PUNCT:
            out.append("\x00" + t)
            continue
        out.append(("-" if flag else "") + t)
    if nm_pending:
        out.append(name)
    out += ["\x00" + c for c in reversed(closers)]
    return " ".join(out).replace(" \x00", "").replace("\x00 ", "").replace("\x00", "")


def roff_to_text(src: str) -> str:
    out: list[str] = []
    para: list[str] = []
    fill = True
    tag_line = False
    mdoc_name = ""

    def flush(blank: bool) -> None:
        if para:
            out.append(" ".join(p.strip() for p in para if p.strip()))
            para.clear()
        if blank and out and out[-1] != "":
            out.append("")

    def emit(text: str) -> None:
        nonlocal tag_line
        if not fill:
            out.append(text)
            return
        para.append(text)
        if tag_line:
            tag_line = False
            flush(False)

    lines = src.split("\n")
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        i += 1
        if line.startswith(('.\\"', "'\\\"", '\\"')):
            continue
        cut = line.find('\\"')
        if cut >= 0 and not line[:cut].endswith("\\"):
            line = line[:cut]
        if not line.startswith((".", "'")):
            if not line.strip() and fill:
                flush(True)
            else:
                emit(_roff_inline(line))
            continue
        body = line[1:].lstrip()
        if not body:
            continue
        name, _, rest = body.partition(" ")
        name, _, rest2 = name.partition("\t")
        rest = rest2 + rest
        if name in ("de", "de1", "am", "ig"):
            end = ".." if name != "ig" or not rest.strip() else "." + rest.split()[0]
            while i < n and lines[i].strip() != end:
                i += 1
            i += 1
            continue
        if name == "TS":
            flush(True)
            while i < n and not lines[i].rstrip().endswith("."):
                i += 1
            i += 1
            while i < n and not lines[i].startswith(".TE"):
                row = lines[i]
                i += 1
                if row.strip() in ("_", "=", "") or row.startswith((".", "'")):
                    continue
                row = row.replace("T{", "").replace("T}", "")
                out.append(_roff_inline(re.sub(r"\t+", " ", row)).strip())
            i += 1
            flush(True)
            continue
        if name in ("nf", "EX") or (name == "Bd" and "-literal" in rest or name == "Bd" and "-unfilled" in rest):
            flush(True)
            fill = False
            continue
        if name in ("fi", "EE") or (name == "Ed" and not fill):
            fill = True
            flush(True)
            continue
        if name in ("SH", "SS", "Sh", "Ss"):
            flush(True)
            args = _roff_args(rest)
            out.append(_roff_inline(" ".join(args)))
            continue
        if name in _PARA:
            flush(True)
        elif name in _LINE or name in _MAN_SKIP:
            flush(False)
        if name == "TP" or name == "TQ":
            tag_line = True
            continue
        if name == "Nm" and not mdoc_name:
            args = _roff_args(rest)
            mdoc_name = args[0] if args else ""
        if name in _MAN_SKIP or name in _PARA or name[:1].islower() or name.startswith("\\"):
            continue
        args = _roff_args(rest)
        if name in _ROFF_JOIN:
            emit(_roff_inline("".join(args)))
        elif name == "IP":
            if args and _roff_inline(args[0]).strip() not in ("\u2022", "*", "-", "\u00b7", ""):
                para.append(_roff_inline(args[0]))
                flush(False)
        elif name in ("B", "I", "SM", "SB", "OP", "UR", "MT", "SY", "Nd"):
            emit(_roff_inline(("\u2014 " if name == "Nd" else "") + " ".join(args)))
        else:
            text = _roff_inline(_mdoc_render(([name] if name in _MDOC_CALLABLE else []) + args, mdoc_name))
            if name == "It":
                para.append(text)
                flush(False)
            else:
                emit(text)
    flush(False)
    return "\n".join(out)




# --------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------


@dataclass
class Source:
    name: str
    category: str
    root: Path
    files: list[Path]
    convert: Callable[[str], str] = clean
    pages: bool = False  # cut into PAGE_BYTES pages, each sampled on its own (no size cap)
    used: int = 0
    used_bytes: int = 0
    skipped_utf8: int = 0
    skipped_dup: int = 0
    skipped_small: int = 0


@dataclass
class Candidate:
    key: str
    source: Source
    path: Path
    text: str | None = None  # a page of a paged source


def walk(root: Path, keep: Callable[[Path], bool]) -> list[Path]:
    """Regular files (not symlinks) under root for which keep(path) holds, sorted."""
    found: list[Path] = []
    if not root.is_dir():
        return found
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            p = Path(dirpath, fn)
            if p.is_symlink() or not p.is_file():
                continue
            if keep(p):
                found.append(p)
    return found


_DOC_NAME = re.compile(
    r"^(readme|news|changes|changelog|history|todo|faq|bugs|thanks|hacking|install|usage|notes"
    r"|release[-_]?notes)([._-].*)?$|\.(txt|md|rst|text|markdown)$",
    re.I,
)


def _is_doc(p: Path) -> bool:
    name = p.name[:-3] if p.name.endswith(".gz") else p.name
    if name in ("copyright", "jargon.txt") or name.startswith("changelog.Debian"):
        return False
    if p.name.endswith((".html.gz", ".json.gz", ".xml.gz", ".csv.gz")):
        return False
    return bool(_DOC_NAME.search(name))


def _roff_page(p: Path) -> bool:
    name = p.name[:-3] if p.name.endswith(".gz") else p.name
    return re.search(r"\.\d\w*$", name) is not None


def _mdoc_or_man(text: str) -> str:
    return clean(roff_to_text(text))


def find_sources(home: Path) -> list[Source]:
    man = Path("/usr/share/man")
    doc = Path("/usr/share/doc")
    info = Path("/usr/share/info")
    debref = Path("/usr/share/debian-reference")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    purelib = Path(sysconfig.get_paths()["purelib"])
    repo = Path(__file__).resolve().parent.parent

    en_man: list[Path] = []
    other_man: list[Path] = []
    if man.is_dir():
        for d in sorted(man.iterdir()):
            if not d.is_dir() or d.is_symlink():
                continue
            if re.fullmatch(r"man\w+", d.name):
                en_man += walk(d, _roff_page)
            else:
                other_man += walk(d, _roff_page)

    debref_files = walk(debref, lambda p: p.name.startswith("debian-reference.") and p.name.endswith(".txt.gz"))
    jargon = [p for p in [doc / "jargon-text" / "jargon.txt.gz"] if p.is_file()]

    def not_in_repo(p: Path) -> bool:
        try:
            p.resolve().relative_to(repo)
            return False
        except ValueError:
            return True

    py_std = walk(stdlib, lambda p: p.suffix == ".py" and "site-packages" not in p.parts)
    py_site = walk(purelib, lambda p: p.suffix == ".py" and not_in_repo(p)) if purelib != stdlib else []
    rust_reg = walk(home / ".cargo" / "registry" / "src", lambda p: p.suffix == ".rs")
    rust_src: list[Path] = []
    toolchains = home / ".rustup" / "toolchains"
    if toolchains.is_dir():
        for tc in sorted(toolchains.iterdir()):
            rust_src += walk(tc / "lib" / "rustlib" / "src", lambda p: p.suffix == ".rs")
    c_headers = walk(Path("/usr/include"), lambda p: p.suffix in (".h", ".hpp", ".hh"))

    return [
        Source("man pages, English (/usr/share/man/man*)", "prose", man, en_man, _mdoc_or_man),
        Source("docs (/usr/share/doc: README, NEWS, changelogs, *.txt/md/rst)", "prose", doc,
               walk(doc, _is_doc)),
        Source("info manuals (/usr/share/info)", "prose", info, walk(info, lambda p: ".info" in p.name)),
        Source("Debian Reference, English", "prose", debref,
               [p for p in debref_files if ".en." in p.name], pages=True),
        Source("Jargon File (jargon-text)", "prose", doc, jargon, pages=True),
        Source("licenses (/usr/share/common-licenses)", "prose", Path("/usr/share/common-licenses"),
               walk(Path("/usr/share/common-licenses"), lambda p: True)),
        Source("Python stdlib (.py)", "code", stdlib, py_std),
        Source("Python site-packages (.py)", "code", purelib, py_site),
        Source("Rust crates (~/.cargo/registry/src, .rs)", "code", home / ".cargo" / "registry" / "src", rust_reg),
        Source("Rust std sources (rust-src, .rs)", "code", toolchains, rust_src),
        Source("C/C++ headers (/usr/include)", "code", Path("/usr/include"), c_headers),
        Source("man pages, translated (/usr/share/man/<lang>)", "multilingual", man, other_man, _mdoc_or_man),
        Source("Debian Reference, translations", "multilingual", debref,
               [p for p in debref_files if ".en." not in p.name], pages=True),
    ]


def candidates(sources: list[Source], category: str) -> list[Candidate]:
    out: list[Candidate] = []
    for s in sources:
        if s.category != category:
            continue
        for p in s.files:
            try:
                rel = p.relative_to(s.root).as_posix()
            except ValueError:
                rel = p.as_posix()
            if not s.pages:
                key = hashlib.sha1(f"{s.name}\0{rel}".encode()).hexdigest()
                out.append(Candidate(key, s, p))
                continue
            try:
                text = s.convert(read_bytes(p).decode("utf-8"))
            except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError):
                s.skipped_utf8 += 1
                continue
            for i, page in enumerate(paginate(text)):
                key = hashlib.sha1(f"{s.name}\0{rel}\0{i}".encode()).hexdigest()
                out.append(Candidate(key, s, p, page))
    out.sort(key=lambda c: c.key)
    return out


def paginate(text: str, size: int = PAGE_BYTES) -> list[str]:
    pages: list[str] = []
    lines: list[str] = []
    n = 0
    for line in text.split("\n"):
        lines.append(line)
        n += len(line.encode("utf-8")) + 1
        if n >= size:
            pages.append("\n".join(lines))
            lines, n = [], 0
    if lines:
        pages.append("\n".join(lines))
    return pages


def documents(cands: list[Candidate], seen: set[bytes]) -> Iterator[tuple[Source, bytes]]:
    """Each candidate's cleaned text as UTF-8, ending in a blank line; skips what is not UTF-8,
    too short, or a duplicate."""
    for c in cands:
        s = c.source
        if c.text is not None:
            text = c.text.strip("\n")
        else:
            try:
                raw = read_bytes(c.path)
            except (OSError, EOFError, gzip.BadGzipFile):
                continue
            if b"\x00" in raw:
                s.skipped_utf8 += 1
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                s.skipped_utf8 += 1
                continue
            text = truncate(s.convert(text))
        if len(text) < MIN_DOC_CHARS:
            s.skipped_small += 1
            continue
        data = (text + "\n\n").encode("utf-8")
        digest = hashlib.sha1(data).digest()
        if digest in seen:
            s.skipped_dup += 1
            continue
        seen.add(digest)
        yield s, data


# --------------------------------------------------------------------------------------------
# Assembly
# --------------------------------------------------------------------------------------------


@dataclass
class Stream:
    docs: Iterator[tuple[Source, bytes]]
    out: BinaryIO
    written: int = 0
    exhausted: bool = False

    def fill(self, until: int) -> None:
        """Writes documents until `until` bytes are written; the last one is cut after a
        newline so as not to go past it."""
        while self.written < until and not self.exhausted:
            item = next(self.docs, None)
            if item is None:
                self.exhausted = True
                break
            source, data = item
            room = until - self.written
            cut = len(data) > room
            if cut:
                data = data[: data.rfind(b"\n", 0, room) + 1]
            if data:
                self.out.write(data)
                self.written += len(data)
                source.used += 1
                source.used_bytes += len(data)
            if cut:
                break


def interleave(paths: list[Path], dest: Path) -> int:
    """Writes the files' ~BLOCK_BYTES blocks (cut after a newline) into dest, each file's
    blocks in order, always taking next from the file that is furthest behind in proportion."""
    sizes = [p.stat().st_size for p in paths]
    files = [p.open("rb") for p in paths]
    done = [0] * len(paths)
    total = 0
    with dest.open("wb") as out:
        while True:
            live = [i for i in range(len(paths)) if done[i] < sizes[i]]
            if not live:
                break
            i = min(live, key=lambda j: (done[j] / sizes[j], j))
            block = files[i].read(BLOCK_BYTES)
            if not block.endswith(b"\n"):
                block += files[i].readline()
            done[i] += len(block)
            out.write(block)
            total += len(block)
    for f in files:
        f.close()
    return total


def english_slice(sources: list[Source], prose_path: Path, size: int) -> tuple[str, bytes]:
    jargon = Path("/usr/share/doc/jargon-text/jargon.txt.gz")
    text = ""
    origin = ""
    if jargon.is_file():
        text = clean(read_bytes(jargon).decode("utf-8"))
        start = text.find("\nGlossary\n")
        text = text[start + 1 :] if start >= 0 else text
        origin = f"{jargon} (Jargon File 4.4.7, public domain), from its Glossary on"
    else:
        en = Path("/usr/share/debian-reference/debian-reference.en.txt.gz")
        if en.is_file():
            text = clean(read_bytes(en).decode("utf-8"))
            origin = f"{en} (Debian Reference, English), from the start"
        else:
            with prose_path.open("rb") as f:
                text = f.read(size * 2).decode("utf-8", errors="ignore")
            origin = f"{prose_path} (English prose of this corpus), from the start"
    data = text.encode("utf-8")
    cut = data.rfind(b"\n", 0, size)
    return origin, data[: cut + 1]


def human(n: float) -> str:
    return f"{n / 2**20:8.2f} MiB"


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(
        description="Build the bytepair training-benchmark corpus from real text on this machine.",
        epilog="Extra sources come from Debian's packages; to install them run (as root):\n  " + APT_COMMAND,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--mb", type=float, default=100.0, help="size of mixed.txt in MiB (default 100)")
    ap.add_argument("--out", type=Path, default=here / "corpus", help="output directory (default bench/corpus)")
    ap.add_argument("--small-kb", type=int, default=130, help="size of english_130k.txt in KiB (default 130)")
    args = ap.parse_args(argv)

    target = int(args.mb * 2**20)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    sources = find_sources(Path.home())
    missing = [p for p in APT_PACKAGES if not Path("/usr/share/doc", p).exists()]
    if missing:
        print("note: these Debian packages are not installed, their text is missing from the corpus:")
        print("  " + " ".join(missing))
        print("  to rebuild the reference corpus, first run:  " + APT_COMMAND)

    seen: set[bytes] = set()
    streams: dict[str, Stream] = {}
    handles = []
    for cat in SHARES:
        f = (out / f"{cat}.txt").open("wb")
        handles.append(f)
        streams[cat] = Stream(documents(candidates(sources, cat), seen), f)
    for cat, share in SHARES.items():
        streams[cat].fill(int(target * share))
    # a category that ran short is made up by the others, in turn
    while sum(s.written for s in streams.values()) < target:
        live = [s for s in streams.values() if not s.exhausted]
        if not live:
            break
        for s in live:
            s.fill(s.written + min(BLOCK_BYTES * 16, target - sum(x.written for x in streams.values())))
    for f in handles:
        f.close()

    cat_paths = [out / f"{cat}.txt" for cat in SHARES if streams[cat].written > 0]
    mixed_size = interleave(cat_paths, out / "mixed.txt")
    origin, small = english_slice(sources, out / "prose.txt", args.small_kb * 1024)
    (out / "english_130k.txt").write_bytes(small)

    print("\nsources used (documents, bytes written; skipped: not UTF-8 / duplicate / too short):")
    for s in sources:
        unit = "pages" if s.pages else "docs"
        print(f"  [{s.category:12}] {s.name}: {s.used} {unit} from {len(s.files)} files, {human(s.used_bytes)}"
              f"  (skipped {s.skipped_utf8}/{s.skipped_dup}/{s.skipped_small})")
    print(f"\nfiles in {out}:")
    for cat in SHARES:
        print(f"  {cat + '.txt':18} {human(streams[cat].written)}  ({streams[cat].written:,} bytes)")
    print(f"  {'mixed.txt':18} {human(mixed_size)}  ({mixed_size:,} bytes)")
    print(f"  {'english_130k.txt':18} {len(small) / 1024:8.2f} KiB  ({len(small):,} bytes) from {origin}")
    if mixed_size < target:
        print(f"warning: only {mixed_size:,} bytes of text found, less than the {target:,} asked for;"
              f" install the packages above", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
