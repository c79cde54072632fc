"""Rewriting split patterns between bytepair's regex dialect and Oniguruma's.

bytepair runs patterns with tiktoken's semantics (``fancy-regex``: Perl/Python-like syntax).
Hugging Face ``tokenizers`` runs ``Split`` patterns with Oniguruma (Ruby syntax), where the
same text means something else in three places that the common patterns use:

- ``X{1,3}+`` is possessive for bytepair; in Oniguruma it is ``(?:X{1,3})+``, one or more
  runs of 1-3 (cl100k's ``\\p{N}{1,3}+`` then takes a whole number, not three digits).
  Written for Oniguruma as the atomic group ``(?>X{1,3})``, which means the same.
- ``$`` is the end of the text for bytepair; in Oniguruma the end of any line. ``\\z``.
- ``^`` is the start of the text for bytepair; in Oniguruma the start of any line. ``\\A``.

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
    """The index after the character class starting at ``p[i] == '['``."""
    j = i + 1
    if j < len(p) and p[j] == "^":
        j += 1
    if j < len(p) and p[j] == "]":
        j += 1
    while j < len(p):
        c = p[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            j = _class_end(p, j)
            continue
        if c == "]":
            return j + 1
        j += 1
    raise FormatError(f"pattern {p!r}: unterminated character class at {i}")


def _escape_end(p: str, i: int) -> int:
    """The index after the escape starting at ``p[i] == '\\\\'``."""
    if i + 1 >= len(p):
        raise FormatError(f"pattern {p!r}: ends with a lone backslash")
    c = p[i + 1]
    if c in "pPxuk" and i + 2 < len(p) and p[i + 2] == "{":
        end = p.find("}", i + 2)
        if end < 0:
            raise FormatError(f"pattern {p!r}: unterminated \\{c}{{...}} at {i}")
        return end + 1
    return i + 2


def _group_end(p: str, i: int) -> int:
    """The index after the group starting at ``p[i] == '('``."""
    depth = 0
    j = i
    while j < len(p):
        c = p[j]
        if c == "\\":
            j = _escape_end(p, j)
            continue
        if c == "[":
            j = _class_end(p, j)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise FormatError(f"pattern {p!r}: unbalanced parenthesis at {i}")


def _rewrite(p: str, *, onig_target: bool) -> str:
    out: list[str] = []
    atom_at = -1  # index in `out` of the last atom, -1 when there is none to quantify
    i = 0
    while i < len(p):
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
        elif c == "(":
            j = _group_end(p, i)
            inner = p[i + 1 : j - 1]
            head = ""
            if inner.startswith("?"):
                # (?:...), (?i:...), (?=...), (?!...), (?<=...), (?<!...), (?>...), (?P<n>...)
                k = 1
                while k < len(inner) and inner[k] not in ":)=!>" and not (inner[k] == "<" and inner[k + 1 : k + 2] in ("=", "!")):
                    if inner[k] == "<" or inner[k] == "'":
                        close = inner.find(">" if inner[k] == "<" else "'", k + 1)
                        k = close if close > 0 else k
                    k += 1
                if k < len(inner) and inner[k] == "<":
                    k += 2
                elif k < len(inner):
                    k += 1
                head, inner = inner[:k], inner[k:]
            atom_at = len(out)
            body = _rewrite(inner, onig_target=onig_target)
            if not onig_target and head == "?>" and body.endswith("}") and to_oniguruma(body + "+") == p[i:j]:
                out.append(body + "+")  # (?>X{n,m}) is what to_oniguruma makes of X{n,m}+
            else:
                out.append("(" + head + body + ")")
            i = j
        elif c in "*+?" or c == "{" and _interval_end(p, i) > 0:
            j = _interval_end(p, i) if c == "{" else i + 1
            quant = p[i:j]
            mode = p[j] if j < len(p) and p[j] in "+?" else ""
            if c == "{" and mode == "+" and atom_at >= 0:
                atom = "".join(out[atom_at:])
                del out[atom_at:]
                # Possessive interval (bytepair) <-> Oniguruma: atomic group; an Oniguruma
                # "{n,m}+" is a repeated interval.
                out.append(f"(?>{atom}{quant})" if onig_target else f"(?:{atom}{quant})+")
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
    return "".join(out)


def _interval_end(p: str, i: int) -> int:
    """The index after an interval quantifier ``{n}``, ``{n,}``, ``{n,m}`` at ``i``, or 0."""
    end = p.find("}", i)
    if end < 0:
        return 0
    body = p[i + 1 : end]
    parts = body.split(",")
    if len(parts) > 2 or not parts[0].isdigit() or (len(parts) == 2 and parts[1] and not parts[1].isdigit()):
        return 0
    return end + 1
