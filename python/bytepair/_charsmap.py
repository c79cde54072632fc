"""SentencePiece ``precompiled_charsmap`` blobs: the normalization rules a ``.model`` file
carries in ``normalizer_spec.precompiled_charsmap``, built here from Python's
:mod:`unicodedata`.

The blob (what sentencepiece, bytepair's Rust reader and ``tokenizers``' ``Precompiled``
normalizer read) is a little-endian ``u32`` giving the size in bytes of a double-array trie,
that trie as little-endian ``u32`` units in darts-clone's layout, then the replacement
strings, each ended by a NUL byte. The trie maps the UTF-8 bytes of a rule's key to the byte
offset of its replacement in the strings area. sentencepiece normalizes by taking, at each
position of the text, the longest key that starts there and writing its replacement, or
else copying one character.

:func:`build` makes such a blob from any rules; :func:`nfkc_rules` gives the rules for the
normalizations ``nfkc`` and ``nmt_nfkc`` (sentencepiece's default), and :func:`charsmap` the
blobs of those two, built once per process.

What ``nfkc_rules`` contains
----------------------------
* every code point ``c`` (surrogates excepted) whose ``unicodedata.normalize("NFKC", c)``
  differs from ``c``, mapped to that;
* composition sequences, so that decomposed text composes as NFKC composes it: for every
  code point whose canonical decomposition (NFD) has two or more characters, the decomposed
  sequence, every reordering of its combining marks that is canonically equivalent (so
  ``a`` + dot below + circumflex and ``a`` + circumflex + dot below both give ``ậ``), the
  same with a leading part already composed (``â`` + dot below), and the one-level
  decomposition; also spelled with the characters that canonically decompose to one of
  its characters (U+0341 for U+0301, U+212B for ``Å``); each mapped to its NFKC. This covers
  base + combining mark, base + two or three marks, and Hangul: conjoining jamo L+V and
  L+V+T, and an LV syllable + T;
* pairs of such a sequence written in halfwidth or fullwidth forms, or in compatibility
  jamo, where NFKC composes them: halfwidth katakana with a halfwidth (semi-)voiced mark
  (``ﾃﾞ`` gives ``デ``), compatibility or halfwidth jamo L+V (``ㄱㅏ`` gives ``가``).

Every rule is right on its own: ``NFKC(key) == replacement``. The table is a longest-match
rewrite, not a normalizer, so the output equals ``unicodedata.normalize("NFKC", text)`` for
text whose composing sequences are among the keys, which is ordinary text in any script,
precomposed or decomposed. It differs where NFKC looks further than one key: a character
that a rule rewrites followed by a mark that then composes with it (fullwidth ``Ｅ`` or
mathematical ``𝐄`` + U+0301 gives ``E`` + U+0301, NFKC gives ``É``; hiragana + halfwidth
voiced mark; compatibility jamo mixed with conjoining ones, or followed by a final
consonant), marks left to reorder after a composed character (``é`` + dot below stays as
is, NFKC gives ``ẹ`` + acute), and longer runs of combining marks. sentencepiece's own
``nfkc`` table, compiled with ICU, spells out many more of those mixtures (about 225,000
keys in a 240 kB blob; this one has about 30,000 keys in 210 kB).

This is NFKC from Python's ``unicodedata``, of the Unicode version of the running Python
(``unicodedata.unidata_version``: 14.0 for Python 3.11, 15.0 for 3.12, 15.1 for 3.13), not
the ICU version sentencepiece's tables were compiled with (Unicode 16 or later in
sentencepiece 0.2.3), so characters assigned or changed between those versions map
differently (about a hundred characters, such as U+A7F1, have an NFKC mapping only in the
later versions); the blob is the same for the same Python version. That is fine: the table
is stored in the model, so sentencepiece, bytepair and ``tokenizers`` reading a model all
apply the same rules, whichever Python wrote it, and a model's normalization does not
change after training.

``nmt_nfkc``
------------
The rules of sentencepiece's ``nmt_nfkc`` on top of the above, as its shipped table has them:
control characters U+0001-U+0008, U+000B, U+000E-U+001F, U+007F, U+008F and U+009F are
removed; U+0009, U+000A, U+000C, U+000D, U+061C, U+1680, U+200B, U+200C, U+200E, U+200F,
U+2028, U+2029, U+2581, U+FEFF and U+FFFD become a space; FULLWIDTH TILDE U+FF5E is kept
(Japanese uses it apart from ``~``). Like sentencepiece's table, U+0000 has no rule (a NUL
ends keys for ``tokenizers``' reader) and ZERO WIDTH JOINER U+200D is kept (emoji sequences,
Indic scripts).
"""

from __future__ import annotations

import functools
import itertools
import struct
import unicodedata

from bytepair.errors import BytepairError

__all__ = ["build", "charsmap", "nfkc_rules"]

# ---------------------------------------------------------------------------------- the trie

_LEAF = 1 << 31
_HAS_LEAF = 1 << 8
_EXTENDED = 1 << 9
# An unused unit: a leaf unit (bit 31: its label never equals a byte) whose value, 0, is a
# valid offset into the strings (the strings area is never empty). A lookup can only reach it
# through a label check, which it fails.
_UNUSED = _LEAF
# sentencepiece keeps the matches of one position in an array of 32 (kMaxTrieResultsSize) and
# reads past it when there are more: at most 31 keys may be prefixes of one another.
_MAX_PREFIX_KEYS = 31
# How far back from the end of the array free units are looked for (in 256-unit blocks):
# placing a node scans from there, so a nearly full head is not scanned again and again.
_WINDOW_BLOCKS = 16


def _encode_offset(offset: int) -> int:
    """The offset bits of a unit (bits 9-30) for the XOR distance ``offset``."""
    if offset < 1 << 21:
        return offset << 10
    if offset & 0xFF == 0 and offset < 1 << 29:
        return ((offset >> 8) << 10) | _EXTENDED
    raise BytepairError(f"charsmap: trie offset {offset} cannot be encoded (the trie is too large)")


def _representable(offset: int) -> bool:
    return offset < 1 << 21 or (offset & 0xFF == 0 and offset < 1 << 29)


def build(rules: dict[str, str]) -> bytes:
    """A sentencepiece ``precompiled_charsmap`` blob for ``rules`` (key: a non-empty string,
    replacement: a string, possibly empty, without NUL). Identical replacements, and a
    replacement that ends another, share storage; identical subtries share units. The output
    depends only on the rules."""
    items: list[tuple[bytes, bytes]] = []
    for key, rep in rules.items():
        if not isinstance(key, str) or not isinstance(rep, str):
            raise BytepairError("charsmap: rules map strings to strings")
        if not key:
            raise BytepairError("charsmap: a rule's key must not be empty")
        if "\0" in rep:
            raise BytepairError(f"charsmap: the replacement of {key!r} contains NUL, which ends it")
        try:
            items.append((key.encode("utf-8"), rep.encode("utf-8")))
        except UnicodeEncodeError:
            raise BytepairError(f"charsmap: rule {key!r} -> {rep!r} is not valid Unicode (a surrogate)") from None
    items.sort()

    # the strings: longest first, each one that ends an already placed one points into it
    offsets: dict[bytes, int] = {}
    strings = bytearray()
    for data in sorted({data for _, data in items}, key=lambda r: (-len(r), r)):
        if data in offsets:
            continue
        at = len(strings)
        strings += data + b"\0"
        for i in range(len(data)):
            offsets.setdefault(data[i:], at + i)
        offsets.setdefault(b"", at + len(data))
    if not strings:
        strings += b"\0"  # sentencepiece refuses a blob that ends with the trie

    units = _double_array([(k, offsets[r]) for k, r in items])
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie)) + trie + bytes(strings)


def _double_array(items: list[tuple[bytes, int]]) -> list[int]:
    """The units of a double-array trie of ``items`` (sorted keys, distinct, with values)."""
    # A node is (value or -1, ((label, child id), ...)); equal nodes are the same id, so that
    # equal subtries are placed once (a DAWG). Children get smaller ids than their parents.
    ids: dict[tuple[int, tuple[tuple[int, int], ...]], int] = {}
    nodes: list[tuple[int, tuple[tuple[int, int], ...]]] = []

    def intern(node: tuple[int, tuple[tuple[int, int], ...]]) -> int:
        got = ids.get(node)
        if got is None:
            got = ids[node] = len(nodes)
            nodes.append(node)
        return got

    # Keys are sorted: a stack of open nodes along the current key, each (value, children).
    stack: list[tuple[list[int], list[tuple[int, int]]]] = [([-1], [])]
    path: bytes = b""
    depth_keys = [0]  # keys among the prefixes of each open node, itself included

    def close(to: int) -> None:
        nonlocal path
        while len(stack) - 1 > to:
            value, children = stack.pop()
            child = intern((value[0], tuple(children)))
            stack[-1][1].append((path[len(stack) - 1], child))
            depth_keys.pop()
        path = path[:to]

    for key, value in items:
        common = 0
        for a, b in zip(path, key):
            if a != b:
                break
            common += 1
        close(common)
        for i in range(common, len(key)):
            stack.append(([-1], []))
            depth_keys.append(depth_keys[-1])
        path = key
        stack[-1][0][0] = value
        depth_keys[-1] += 1
        if depth_keys[-1] > _MAX_PREFIX_KEYS:
            raise BytepairError(
                f"charsmap: {depth_keys[-1]} keys are prefixes of {key.decode('utf-8', 'replace')!r}; "
                f"sentencepiece allows at most {_MAX_PREFIX_KEYS}"
            )
    close(0)
    root = intern((-1, tuple(stack[0][1])))

    # where each node's unit is, once its parents are placed (for the offsets' encoding)
    parents: dict[int, list[tuple[int, int]]] = {}
    for node_id, (value, children) in enumerate(nodes):
        if value >= 0 and children and children[0][0] == 0:
            raise BytepairError("charsmap: a key that continues with a NUL byte after another key cannot be stored")
        for label, child in children:
            parents.setdefault(child, []).append((node_id, label))

    def incoming(node_id: int) -> list[int]:
        """The positions of the units that lead to a node (its parents are placed)."""
        if node_id == root:
            return [0]
        return [bases[p] ^ label for p, label in parents[node_id]]

    # Place each node's block: base ^ label for its children, base ^ 0 for its value (leaf).
    # Bases are distinct and never 0 (position 0 is the root unit, whose label is 0). A base
    # and its labels lie in one 256-unit block; blocks with too few free units are skipped.
    used = bytearray(256)
    used[0] = 1  # the root's unit; 0 is no base either
    free = [255]  # free units of each block
    free_bases = [255]  # bases of each block not taken
    bases: dict[int, int] = {}
    base_taken: set[int] = set()
    first_block = 0
    for node_id in range(root, -1, -1):  # parents before children
        value, children = nodes[node_id]
        labels = [label for label, _ in children]
        if value >= 0:
            labels.insert(0, 0)
        if not labels:  # the root, when there are no rules: lookups fail at the first byte
            bases[node_id] = 1
            continue
        first, rest, need = labels[0], labels[1:], len(labels)
        while first_block < len(free) and not free[first_block]:
            first_block += 1
        block = max(first_block, len(free) - _WINDOW_BLOCKS)
        base = -1
        while base < 0:
            if block == len(free):
                used.extend(bytes(256))
                free.append(256)
                free_bases.append(256)
            if free[block] >= need and free_bases[block]:
                start = block << 8
                f = used.find(0, start, start + 256)
                while f >= 0:
                    b = f ^ first
                    if (
                        b
                        and b not in base_taken
                        and all(not used[b ^ label] for label in rest)
                        and (len(used) <= 1 << 21 or all(_representable(at ^ b) for at in incoming(node_id)))
                    ):
                        base = b
                        break
                    f = used.find(0, f + 1, start + 256)
            block += 1
        base_taken.add(base)
        bases[node_id] = base
        for label in labels:
            used[base ^ label] = 1
        free[base >> 8] -= need
        free_bases[base >> 8] -= 1

    units = [_UNUSED] * len(used)
    units[0] = _encode_offset(bases[root])
    for node_id in range(root, -1, -1):
        value, children = nodes[node_id]
        base = bases[node_id]
        if value >= 0:
            units[base] = _LEAF | value
        for label, child in children:
            at = base ^ label
            child_value, _ = nodes[child]
            units[at] = _encode_offset(at ^ bases[child]) | (_HAS_LEAF if child_value >= 0 else 0) | label
    return units


# ---------------------------------------------------------------------------------- the rules

_NMT_REMOVED = [*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F]
_NMT_SPACE = [
    *(0x09, 0x0A, 0x0C, 0x0D, 0x061C, 0x1680, 0x200B, 0x200C, 0x200E, 0x200F),
    *(0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD),
]
_NMT_KEPT = [0xFF5E]


def _compositions(c: str) -> set[str]:
    """Spellings of ``c`` in two or more characters that NFKC composes back: its
    decomposition, canonically equivalent orders of its marks, partly composed forms."""
    nfd = unicodedata.normalize("NFD", c)
    out: set[str] = set()
    if len(nfd) < 2:
        return out
    decomposition = unicodedata.decomposition(c)
    if decomposition and not decomposition.startswith("<"):
        out.add("".join(chr(int(h, 16)) for h in decomposition.split()))
    base, marks = nfd[0], nfd[1:]
    orders = {marks} if len(marks) > 4 else {"".join(p) for p in itertools.permutations(marks)}
    for order in orders:
        s = base + order
        if unicodedata.normalize("NFD", s) != nfd:
            continue  # not canonically equivalent: marks of one combining class swapped
        for k in range(1, len(s)):
            out.add(unicodedata.normalize("NFC", s[:k]) + s[k:])
    return {s for s in out if len(s) >= 2}


def nfkc_rules(*, nmt: bool) -> dict[str, str]:
    """The rules of ``nfkc`` (``nmt=False``) or ``nmt_nfkc`` (``nmt=True``): see the module's
    documentation for what they hold and where they differ from NFKC."""
    normalize = unicodedata.normalize
    rules: dict[str, str] = {}
    composed: list[str] = []
    for cp in itertools.chain(range(0xD800), range(0xE000, 0x110000)):
        c = chr(cp)
        if unicodedata.is_normalized("NFKD", c):
            # then NFKC leaves it too (it composes what NFKD gives), and it is not composed
            continue
        n = normalize("NFKC", c)
        if n != c:
            rules[c] = n
        if not unicodedata.is_normalized("NFD", c):
            composed.append(c)
    # the same spelled with halfwidth or fullwidth forms, or with compatibility jamo: pairs
    # whose both characters have such a form (ﾃﾞ gives デ, ㄱㅏ gives 가, as NFKC)
    families: list[dict[str, list[str]]] = [{}, {}]
    for family, span in zip(families, (range(0xFF00, 0xFFF0), range(0x3130, 0x3190))):
        for c in map(chr, span):
            n = normalize("NFKD", c)
            if len(n) == 1 and n != c:
                family.setdefault(n, []).append(c)

    # characters whose canonical decomposition is one other character (U+0341 is U+0301)
    singletons: dict[str, list[str]] = {}
    for c in composed:
        n = normalize("NFD", c)
        if len(n) == 1:
            singletons.setdefault(n, []).append(c)

    def add(key: str) -> None:
        if key not in rules:
            n = normalize("NFKC", key)
            if n != key:
                rules[key] = n

    for c in composed:
        for key in sorted(_compositions(c)):
            for spelled in itertools.product(*([k, *singletons.get(k, ())] for k in key)):
                add("".join(spelled))
            for family in families if len(key) == 2 else ():
                forms = [family.get(k) for k in key]
                if all(forms):
                    for spelled in itertools.product(*(f for f in forms if f)):
                        add("".join(spelled))
    if nmt:
        for cp in _NMT_REMOVED:
            rules[chr(cp)] = ""
        for cp in _NMT_SPACE:
            rules[chr(cp)] = " "
        for cp in _NMT_KEPT:
            rules.pop(chr(cp), None)
    return rules


_NAMES = ("nfkc", "nmt_nfkc")


@functools.lru_cache(maxsize=None)
def charsmap(name: str) -> bytes:
    """The ``precompiled_charsmap`` of the normalization ``name``: ``"nfkc"`` or
    ``"nmt_nfkc"`` (sentencepiece's default), built on first use."""
    if name not in _NAMES:
        raise BytepairError(f"no precompiled charsmap for normalization {name!r}: known are {', '.join(_NAMES)}")
    return build(nfkc_rules(nmt=name == "nmt_nfkc"))
