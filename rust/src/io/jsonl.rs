//! The text field of JSON lines, read in Rust for corpus encoding: Python's `json`, on the one
//! thread that reads, capped `encode-corpus` on `.jsonl` (figures: NOTES.md beside this file).
//!
//! The contract is narrow on purpose: `texts` takes the lines this parser is sure of -- valid
//! UTF-8, blank, or one strict-JSON object with the field as a string -- and stops at the first
//! line it is not sure of, which the caller hands to Python's `json` (so every error, and every
//! extension Python accepts such as `NaN`, keeps Python's exact behaviour and message). What it
//! takes, it reads as `json.loads` does: `\uXXXX` escapes joined into surrogate pairs when a
//! high one is followed by a low one, duplicate keys the last one wins, and a lone surrogate
//! (which Python keeps, and the encoder then replaces) made U+FFFD here.
//!
//! Corpus encoding takes the documents as one buffer (`block`), not a `String` each, and hands
//! it to the encoder as it is (`py/`, `TextBlock`). Strings are read a run at a time: the
//! next quote or backslash found with `memchr2`, the run checked for control characters by a
//! loop the compiler vectorizes; values other than the field are checked, not copied.

/// Nesting deeper than this is left to Python (whose limit is its recursion limit).
const MAX_DEPTH: usize = 128;
/// Numbers longer than this are left to Python (which refuses ints of over 4,300 digits).
const MAX_NUMBER: usize = 1000;

/// What `texts` read: the documents, the bytes and the lines it took from `data[start..]`.
/// When `used` stops short of the end, the line at `start + used` is the caller's to read.
#[derive(Debug, Default)]
pub struct Taken {
    pub texts: Vec<String>,
    pub used: usize,
    pub lines: usize,
}

/// What `block` read: the documents one after another in `text`, document `i` ending at
/// `ends[i]` (and starting where the one before ends), and the bytes and lines taken as in
/// `Taken`.
#[derive(Debug, Default)]
pub struct Block {
    pub text: String,
    pub ends: Vec<usize>,
    pub used: usize,
    pub lines: usize,
}

/// Reads the lines of `data[start..]` (each ending with `\n`, the last one maybe not) and the
/// string `field` of each JSON object, up to the first line it leaves to Python. Blank lines
/// (only whitespace that `str.strip` removes, of the ASCII kind) are taken without a text.
pub fn texts(data: &[u8], start: usize, field: &str) -> Taken {
    let mut texts = Vec::new();
    let (used, lines) = each_line(data, start, |line, key| {
        let mut text = String::new();
        field_into(line, field, &mut text, key).then(|| texts.push(text))
    });
    Taken { texts, used, lines }
}

/// `texts`, with the documents in one buffer (corpus encoding: no allocation per document,
/// and no Python `str` made of it), leaving out empty ones (which corpus encoding skips).
pub fn block(data: &[u8], start: usize, field: &str) -> Block {
    let mut text = String::with_capacity(data.len().saturating_sub(start));
    let mut ends = Vec::new();
    let (used, lines) = each_line(data, start, |line, key| {
        let before = text.len();
        field_into(line, field, &mut text, key).then(|| {
            if text.len() > before {
                ends.push(text.len())
            }
        })
    });
    Block {
        text,
        ends,
        used,
        lines,
    }
}

/// Calls `take` on each line of `data[start..]` that is not blank, with a scratch string,
/// until it returns None (or the line is not UTF-8); returns the bytes and lines taken.
fn each_line(
    data: &[u8],
    start: usize,
    mut take: impl FnMut(&[u8], &mut String) -> Option<()>,
) -> (usize, usize) {
    let mut key = String::new();
    let mut lines = 0;
    let mut pos = start.min(data.len());
    while pos < data.len() {
        let end = memchr::memchr(b'\n', &data[pos..]).map_or(data.len(), |i| pos + i + 1);
        let line = &data[pos..end];
        let blank = line
            .iter()
            .all(|&b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c | 0x1c..=0x1f));
        if !blank && (std::str::from_utf8(line).is_err() || take(line, &mut key).is_none()) {
            break;
        }
        lines += 1;
        pos = end;
    }
    (pos - start.min(data.len()), lines)
}

/// The string `field` of the JSON object that is the whole `line`, or None when the line is
/// anything else (not strict JSON, not an object, no such field, not a string).
pub fn field_of(line: &[u8], field: &str) -> Option<String> {
    std::str::from_utf8(line).ok()?; // `field_into` reads runs of it as text unchecked
    let mut text = String::new();
    field_into(line, field, &mut text, &mut String::new()).then_some(text)
}

/// `field_of` appended to `out` (which is left as it was when the answer is None, i.e.
/// false); `key` is scratch space. `line` must be valid UTF-8.
fn field_into(line: &[u8], field: &str, out: &mut String, key: &mut String) -> bool {
    let mark = out.len();
    let found = field_at(line, field, out, key, mark);
    if !found {
        out.truncate(mark);
    }
    found
}

fn field_at(line: &[u8], field: &str, out: &mut String, key: &mut String, mark: usize) -> bool {
    let mut p = Parser { s: line, i: 0 };
    // Some(true): the field, a string (in `out[mark..]`); Some(false): the field, not a string.
    let mut found: Option<bool> = None;
    let mut object = || -> Option<()> {
        p.ws();
        if p.peek()? != b'{' {
            return None;
        }
        p.i += 1;
        p.ws();
        if p.peek()? == b'}' {
            p.i += 1;
        } else {
            loop {
                p.ws();
                key.clear();
                let exact = p.string_into(key)?;
                p.ws();
                if p.peek()? != b':' {
                    return None;
                }
                p.i += 1;
                p.ws();
                if exact && key == field {
                    // Duplicate keys: the last one wins, as in Python.
                    out.truncate(mark);
                    found = Some(if p.peek()? == b'"' {
                        p.string_into(out)?;
                        true
                    } else {
                        p.value(1)?;
                        false
                    });
                } else {
                    p.value(1)?;
                }
                p.ws();
                match p.peek()? {
                    b',' => p.i += 1,
                    b'}' => {
                        p.i += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        p.ws();
        (p.i == line.len()).then_some(())
    };
    object().is_some() && found == Some(true)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    /// JSON whitespace (what Python's `json` skips).
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// Skips one value (anything but NaN / Infinity, which are Python's to read).
    fn value(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' => {
                self.i += 1;
                self.ws();
                if self.peek()? == b'}' {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    self.ws();
                    self.skip_string()?;
                    self.ws();
                    if self.peek()? != b':' {
                        return None;
                    }
                    self.i += 1;
                    self.ws();
                    self.value(depth + 1)?;
                    self.ws();
                    match self.peek()? {
                        b',' => self.i += 1,
                        b'}' => {
                            self.i += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.i += 1;
                self.ws();
                if self.peek()? == b']' {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    self.ws();
                    self.value(depth + 1)?;
                    self.ws();
                    match self.peek()? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            _ => self.number(),
        }
    }

    fn word(&mut self, w: &[u8]) -> Option<()> {
        if self.s[self.i..].starts_with(w) {
            self.i += w.len();
            Some(())
        } else {
            None
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`, the grammar Python's `json` reads.
    fn number(&mut self) -> Option<()> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !self.peek()?.is_ascii_digit() {
                return None;
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !self.peek()?.is_ascii_digit() {
                return None;
            }
            self.digits();
        }
        (self.i - start <= MAX_NUMBER).then_some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.s.get(self.i..self.i + 4)?;
        let mut v = 0u32;
        for &b in h {
            v = v * 16 + (b as char).to_digit(16)?;
        }
        self.i += 4;
        Some(v)
    }

    /// The run of a string from `self.i` up to its next quote or backslash (found with SIMD),
    /// which it leaves `self.i` at; None if there is none, or if the run holds a control
    /// character (which strict JSON refuses).
    #[inline(always)]
    fn run(&mut self) -> Option<&[u8]> {
        let rest = &self.s[self.i..];
        let n = memchr::memchr2(b'"', b'\\', rest)?;
        let bytes = &rest[..n];
        if bytes.iter().fold(false, |c, &b| c | (b < 0x20)) {
            return None;
        }
        self.i += n;
        Some(bytes)
    }

    /// Skips a string at `self.i` (which must be `"`), checking it as `string_into` does.
    fn skip_string(&mut self) -> Option<()> {
        if self.peek()? != b'"' {
            return None;
        }
        self.i += 1;
        loop {
            self.run()?;
            self.i += 1;
            if self.s[self.i - 1] == b'"' {
                return Some(());
            }
            match self.peek()? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 1,
                b'u' => {
                    self.i += 1;
                    self.hex4()?;
                }
                _ => return None,
            }
        }
    }

    /// A string at `self.i` (which must be `"`), unescaped, appended to `out`; whether it is
    /// exact: false when it held a lone surrogate (made U+FFFD, so the text is not the one
    /// Python sees, though it encodes the same). The line must be valid UTF-8.
    fn string_into(&mut self, out: &mut String) -> Option<bool> {
        if self.peek()? != b'"' {
            return None;
        }
        self.i += 1;
        let mut exact = true;
        loop {
            let bytes = self.run()?;
            // SAFETY: the line is valid UTF-8 (checked by the caller) and the run starts after
            // and ends before ASCII bytes (a quote, a backslash or an escape's last byte).
            out.push_str(unsafe { std::str::from_utf8_unchecked(bytes) });
            match self.s[self.i] {
                b'"' => {
                    self.i += 1;
                    return Some(exact);
                }
                _ => {
                    self.i += 1;
                    let c = self.peek()?;
                    self.i += 1;
                    match c {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let u = self.hex4()?;
                            if (0xD800..0xDC00).contains(&u) && self.s[self.i..].starts_with(b"\\u")
                            {
                                let back = self.i;
                                self.i += 2;
                                match self.hex4() {
                                    Some(l) if (0xDC00..0xE000).contains(&l) => {
                                        let c = 0x10000 + ((u - 0xD800) << 10) + (l - 0xDC00);
                                        out.push(char::from_u32(c)?);
                                        continue;
                                    }
                                    // Not a low surrogate (or not hex, an error Python names):
                                    // the high one is lone; read what follows on its own.
                                    _ => self.i = back,
                                }
                            }
                            match char::from_u32(u) {
                                Some(c) => out.push(c),
                                None => {
                                    out.push('\u{FFFD}');
                                    exact = false;
                                }
                            }
                        }
                        _ => return None,
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_field_as_json_does() {
        let f = |l: &str| field_of(l.as_bytes(), "text");
        assert_eq!(f(r#"{"text": "a\nb"}"#).as_deref(), Some("a\nb"));
        assert_eq!(
            f(r#" {"id": [1, {"x": null}], "text": "\u00e9\ud83d\ude00", "n": -1.5e3}  "#)
                .as_deref(),
            Some("é😀")
        );
        assert_eq!(
            f(r#"{"text": "first", "text": "last"}"#).as_deref(),
            Some("last")
        );
        assert_eq!(
            f(r#"{"text": "\ud800x\udc00"}"#).as_deref(),
            Some("\u{FFFD}x\u{FFFD}")
        );
        assert_eq!(f(r#"{"te\u0078t": "esc key"}"#).as_deref(), Some("esc key"));
        for bad in [
            r#"{"text": 1}"#,
            r#"{"other": "x"}"#,
            r#"["text"]"#,
            r#"{"text": "a\qb"}"#,
            r#"{"text": "\u12G4"}"#,
            "{\"text\": \"tab\there\"}",
            r#"{"text": "x", "n": NaN}"#,
            r#"{"text": "x"} extra"#,
            r#"{"text": "x",}"#,
            r#"{"text": "x", "n": 01}"#,
            r#"{"text": "unterminated}"#,
        ] {
            assert_eq!(f(bad), None, "{bad}");
        }
    }

    #[test]
    fn stops_at_the_first_line_left_to_python() {
        let data =
            b"{\"text\": \"a\"}\n\n  \r\n{\"text\": \"b\"}\n{\"text\": NaN}\n{\"text\": \"c\"}";
        let t = texts(data, 0, "text");
        assert_eq!(t.texts, vec!["a", "b"]);
        assert_eq!(t.lines, 4);
        let rest = data.iter().position(|&b| b == b'N').unwrap();
        assert!(t.used < rest && data[t.used..].starts_with(b"{\"text\": NaN"));
        let after = t.used + b"{\"text\": NaN}\n".len();
        let t = texts(data, after, "text");
        assert_eq!(
            (t.texts, t.lines, after + t.used),
            (vec!["c".to_string()], 1, data.len())
        );
        let t = texts(b"{\"text\": \"\xff\"}\n", 0, "text");
        assert_eq!((t.used, t.lines), (0, 0));
    }
}
