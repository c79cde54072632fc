"""Rewriting split patterns between bytepair's regex dialect and Oniguruma's.

bytepair runs patterns with tiktoken's semantics (``fancy-regex``: Perl/Python-like syntax).
Hugging Face ``tokenizers`` runs ``Split`` patterns with Oniguruma (Ruby syntax), where the
same text means something else in three places that the common patterns use:

- ``X{1,3}+`` is possessive for bytepair; in Oniguruma it is ``(?:X{1,3})+``, one or more
  runs of 1-3 (cl100k's ``\\p{N}{1,3}+`` then takes a whole number, not three digits).
  Written for Oniguruma as the atomic group ``(?>X{1,3})``, which means the same.
- ``$`` is the end of the text for bytepair; in Oniguruma the end of any line. ``\\z``.
- ``^`` is the start of the text for bytepair; in Oniguruma the start of any line. ``\\A``.
  Oniguruma's line anchors ``$`` and ``^`` are bytepair's ``(?m:$)`` and ``(?m:^)``, and those
  are written back as ``$`` and ``^``.

Possessive ``*+``, ``++``, ``?+``, atomic groups, look-around, ``(?i:...)`` and ``\\p{..}``
classes mean the same in both. tests/test_hf.py proves the rewritten presets split real text
in many scripts exactly as bytepair does, by running ``tokenizers``.
"""

from __future__ import annotations

from bytepair.errors import FormatError

__all__ = ["from_oniguruma", "to_oniguruma"]


def to_oniguruma(pattern: str) -> str:
    """bytepair's pattern rewritten for Oniguruma (Hugging Face ``Split``)."""
    return _rewrite(pattern, onig_target=True)


def from_oniguruma(pattern: str) -> str:
    """An Oniguruma pattern (Hugging Face ``Split``) rewritten for bytepair."""
    return _rewrite(pattern, onig_target=False)


def _class_end(p: str, i: int) -> int:
    """The index after the character class starting at ``p[i] == '['`` (classes nest)."""
    depth = 0
    j = i
    while j < len(p):
        c = p[j]
        if c == "[":
            depth += 1
            j += 1
            if j < len(p) and p[j] == "^":
                j += 1
            if j < len(p) and p[j] == "]":  # a "]" first in a class is a literal
                j += 1
        elif c == "\\":
            j += 2
        elif c == "]":
            depth -= 1
            j += 1
            if depth == 0:
                return j
        else:
            j += 1
    raise FormatError(f"pattern {p!r:.200}: unterminated character class at {i}")


def _escape_end(p: str, i: int) -> int:
    """The index after the escape starting at ``p[i] == '\\\\'``."""
    if i + 1 >= len(p):
        raise FormatError(f"pattern {p!r:.200}: ends with a lone backslash")
    c = p[i + 1]
    if c in "pPxuk" and i + 2 < len(p) and p[i + 2] == "{":
        end = p.find("}", i + 2)
        if end < 0:
            raise FormatError(f"pattern {p!r:.200}: unterminated \\{c}{{...}} at {i}")
        return end + 1
    return i + 2


def _group_ends(p: str) -> dict[int, int]:
    """For each ``(`` of ``p`` that opens a group, the index after its ``)``: one pass, so that
    nesting costs neither stack nor a rescan per level. A ``)`` that closes nothing is text."""
    ends: dict[int, int] = {}
    open_at: list[int] = []
    j = 0
    while j < len(p):
        c = p[j]
        if c == "\\":
            j = _escape_end(p, j)
            continue
        if c == "[":
            j = _class_end(p, j)
            continue
        if c == "(":
            open_at.append(j)
        elif c == ")" and open_at:
            ends[open_at.pop()] = j + 1
        j += 1
    if open_at:
        raise FormatError(f"pattern {p!r:.200}: unbalanced parenthesis at {open_at[0]}")
    return ends


def _head_end(p: str, start: int, end: int) -> int:
    """The index after the head of the group whose text is ``p[start:end]`` (after its ``(``):
    ``?:``, ``?i:``, ``?=``, ``?!``, ``?<=``, ``?<!``, ``?>``, ``?<n>``, ``?P<n>``, ``?'n'``;
    ``start`` if none. The body after it is rewritten like the rest of the pattern."""
    if start >= end or p[start] != "?":
        return start
    k = start + 1
    while k < end and p[k] not in ":)=!>":
        if p[k] == "<" and k + 1 < end and p[k + 1] in "=!":
            return k + 2
        if p[k] in "<'":
            close = p.find(">" if p[k] == "<" else "'", k + 1, end)
            if close >= 0:
                return close + 1
        k += 1
    return min(k + 1, end)


# (?>X{n,m}) is what to_oniguruma makes of the possessive X{n,m}+, and from_oniguruma writes it
# back that way when the round trip gives the same text. The two spellings mean the same; the
# check rewrites the group's body again, so it is skipped for long groups, which nested atomic
# groups would otherwise make quadratic.
_ATOMIC_CHECK_LIMIT = 256


def _rewrite(p: str, *, onig_target: bool) -> str:
    ends = _group_ends(p)
    # One output list for the whole pattern: a group's text is never joined and copied into its
    # parent's, which would make deep nesting quadratic.
    out: list[str] = []
    # The groups being rewritten, innermost last: (the enclosing text's end, the group's start
    # in p, its end in p, the index of its opening piece in `out`).
    stack: list[tuple[int, int, int, int]] = []
    atom_at = -1  # index in `out` of the last atom, -1 when there is none to quantify
    end = len(p)  # where the text being rewritten (the whole pattern or a group's body) ends
    i = 0
    while True:
        if i >= end:
            if not stack:
                return "".join(out)
            end, start, i, opened = stack.pop()
            atom_at = opened
            head = out[opened][1:]
            if not onig_target and head == "?>" and i - start <= _ATOMIC_CHECK_LIMIT:
                body = "".join(out[opened + 1 :])
                if body.endswith("}") and to_oniguruma(body + "+") == p[start:i]:
                    out[opened:] = [body + "+"]
                    continue
            out.append(")")
            continue
        c = p[i]
        if c == "\\":
            j = _escape_end(p, i)
            atom_at = len(out)
            esc = p[i:j]
            # Oniguruma's \z and \A are bytepair's $ and ^ (written back as they were).
            out.append({"\\z": "$", "\\A": "^"}.get(esc, esc) if not onig_target else esc)
            i = j
        elif c == "[":
            j = _class_end(p, i)
            atom_at = len(out)
            out.append(p[i:j])
            i = j
        elif onig_target and p.startswith(("(?m:$)", "(?m:^)"), i):
            # A line anchor (what from_oniguruma makes of Oniguruma's $ and ^): Oniguruma's own
            # $ and ^, not \z and \A inside a group, which would end or start the text.
            out.append(p[i + 4])
            atom_at = -1
            i += 6
        elif c == "(" and i in ends:
            j = ends[i]
            body_at = _head_end(p, i + 1, j - 1)
            stack.append((end, i, j, len(out)))
            out.append("(" + p[i + 1 : body_at])
            atom_at, end, i = -1, j - 1, body_at
        elif c in "*+?" or c == "{" and _interval_end(p, i, end) > 0:
            j = _interval_end(p, i, end) if c == "{" else i + 1
            quant = p[i:j]
            mode = p[j] if j < end and p[j] in "+?" else ""
            if c == "{" and mode == "+" and atom_at >= 0:
                # Possessive interval (bytepair) <-> Oniguruma: atomic group; an Oniguruma
                # "{n,m}+" is a repeated interval. The atom is out[atom_at:], wrapped in place.
                out[atom_at] = ("(?>" if onig_target else "(?:") + out[atom_at]
                out.append(quant + (")" if onig_target else ")+"))
                i = j + 1
            else:
                out.append(quant + mode)
                i = j + len(mode)
            atom_at = -1
        elif c == "$":
            out.append("\\z" if onig_target else "(?m:$)")
            atom_at = -1
            i += 1
        elif c == "^":
            out.append("\\A" if onig_target else "(?m:^)")
            atom_at = -1
            i += 1
        else:
            atom_at = len(out) if c != "|" else -1
            out.append(c)
            i += 1


def _interval_end(p: str, i: int, stop: int) -> int:
    """The index after an interval quantifier ``{n}``, ``{n,}``, ``{n,m}`` at ``i`` (before
    ``stop``), or 0."""
    end = p.find("}", i, stop)
    if end < 0:
        return 0
    body = p[i + 1 : end]
    parts = body.split(",")
    if len(parts) > 2 or not parts[0].isdigit() or (len(parts) == 2 and parts[1] and not parts[1].isdigit()):
        return 0
    return end + 1
