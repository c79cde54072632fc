//! A fast reader for the bulk of a Hugging Face `tokenizer.json`: the BPE model's `vocab`
//! (`{string: id}`) and `merges` (`["a", "b"]` pairs or `"a b"` strings), read in one pass
//! over the document without making a Python object per entry.
//!
//! The Python reader (`bytepair.formats.hf`) owns the format and names every error. Like
//! `ranks`, this reader accepts only what it can prove the Python reader accepts with the same
//! result, and answers `None` for anything else (a duplicate key, an id that is not a plain
//! integer, a lone surrogate escape, a merge naming an unknown token, a number with a
//! fraction, nesting deeper than `MAX_DEPTH`, ...): the caller then runs the Python reader,
//! which either gives the same tokenizer or raises its error. So errors are the Python
//! reader's, word for word, and only well-formed files take this path.
//!
//! `parse` checks the JSON syntax of the whole document (strictly: Python's `json` is the
//! judge of the parts outside the two spans anyway, as the caller parses the document with
//! those spans replaced by `{}` and `[]`), records where the two values are, decodes each
//! vocabulary string through GPT-2's byte table and each merge's two strings likewise.
//! `Model::resolve` then applies the rules that need the added tokens, which the caller reads
//! from the rest of the document: which vocabulary entries are added tokens rather than
//! ordinary ones, ids unique, all 256 single bytes present, every merge's parts and result
//! ordinary tokens, no merge twice, no added token on the id of a different ordinary token.
//!
//! Performance: one pass over the 7.5 MB of an o200k-sized file, strings without escapes
//! copied in runs; byte-level strings and their bytes correspond one to one, so tokens are
//! looked up by their bytes (a merge's result is the bytes of its two halves, stored side by
//! side, so no concatenation is made).

use rustc_hash::{FxHashMap, FxHashSet};

use crate::Rank;

/// Deeper nesting is left to the Python reader (which has its own limit and message).
const MAX_DEPTH: usize = 200;

/// GPT-2's byte-to-unicode table, inverted: `CHAR_TO_BYTE[c]` is the byte written as the
/// character `c` (code points below 324), or -1. Printable Latin-1 bytes stand for themselves;
/// the other 68 bytes are written as U+0100 and up, in byte order.
static CHAR_TO_BYTE: [i16; 324] = char_to_byte();

const fn char_to_byte() -> [i16; 324] {
    let mut table = [-1i16; 324];
    let mut extra = 0;
    let mut b = 0;
    while b < 256 {
        let printable =
            (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
        if printable {
            table[b] = b as i16;
        } else {
            table[256 + extra] = b as i16;
            extra += 1;
        }
        b += 1;
    }
    table
}

/// Appends the bytes a GPT-2 string stands for; false if a character is outside the table.
fn push_bytes(text: &str, out: &mut Vec<u8>) -> bool {
    for c in text.chars() {
        match CHAR_TO_BYTE.get(c as usize) {
            Some(&b) if b >= 0 => out.push(b as u8),
            _ => return false,
        }
    }
    true
}

/// The vocabulary and merges of a `tokenizer.json`, before the added tokens are known.
#[derive(Debug, Default)]
pub struct Model {
    /// Byte offsets of the `model.vocab` object and the `model.merges` array in the document.
    pub vocab_span: (usize, usize),
    pub merges_span: (usize, usize),
    /// The bytes of the byte-level vocabulary strings, one after another.
    arena: Vec<u8>,
    /// Byte-level entries, in file order: (id, start, end) into `arena`.
    entries: Vec<(Rank, u32, u32)>,
    /// Entries whose string is not byte-level (empty, or a character outside the table).
    others: Vec<(String, Rank)>,
    /// The merges' strings as bytes, left then right, one merge after another.
    merge_arena: Vec<u8>,
    /// (start, middle, end) into `merge_arena` per merge: left is start..middle, right
    /// middle..end, and the merged token start..end.
    merges: Vec<(u32, u32, u32)>,
}

/// What `Model::resolve` proved: the ordinary tokens and the merges as ids.
#[derive(Debug)]
pub struct Resolved {
    /// (id, bytes) of the ordinary tokens, in file order.
    pub vocab: Vec<(Rank, Vec<u8>)>,
    /// (left id, right id) per merge, in file order.
    pub merges: Vec<(Rank, Rank)>,
}

impl Resolved {
    /// Number of ordinary tokens of two or more bytes.
    pub fn multi_byte(&self) -> usize {
        self.vocab.iter().filter(|(_, b)| b.len() > 1).count()
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        self.eat(c).then_some(())
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.s.get(self.i..self.i + 4)?;
        let mut v = 0;
        for &d in digits {
            v = v << 4 | (d as char).to_digit(16)?;
        }
        self.i += 4;
        Some(v)
    }

    /// A string (at its opening quote), decoded into `out`. Lone surrogates, raw control
    /// characters and bad escapes are `None`.
    fn string(&mut self, out: &mut String) -> Option<()> {
        self.expect(b'"')?;
        out.clear();
        loop {
            let start = self.i;
            while let Some(&c) = self.s.get(self.i) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            // The run ends at an ASCII byte, so it is whole characters if it is UTF-8 at all.
            out.push_str(std::str::from_utf8(&self.s[start..self.i]).ok()?);
            match *self.s.get(self.i)? {
                b'"' => {
                    self.i += 1;
                    return Some(());
                }
                b'\\' => {
                    self.i += 1;
                    let c = *self.s.get(self.i)?;
                    self.i += 1;
                    out.push(match c {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&hi) {
                                if !(self.eat(b'\\') && self.eat(b'u')) {
                                    return None;
                                }
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return None;
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            char::from_u32(code)? // None for a lone low surrogate
                        }
                        _ => return None,
                    });
                }
                _ => return None, // a raw control character
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if self.s.get(self.i..self.i + word.len()) == Some(word) {
            self.i += word.len();
            Some(())
        } else {
            None
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        self.i - start
    }

    /// A number in JSON's grammar (Python's `NaN`/`Infinity` extensions are `None`).
    fn number(&mut self) -> Option<()> {
        self.eat(b'-');
        if self.eat(b'0') {
            if self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
                return None;
            }
        } else if self.digits() == 0 {
            return None;
        }
        if self.eat(b'.') && self.digits() == 0 {
            return None;
        }
        if self.eat(b'e') || self.eat(b'E') {
            if !self.eat(b'+') {
                self.eat(b'-');
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(())
    }

    /// A vocabulary id: a plain non-negative integer below 2^32 (no sign, fraction, exponent).
    fn id(&mut self) -> Option<Rank> {
        let start = self.i;
        if self.digits() == 0 || (self.s[start] == b'0' && self.i - start > 1) {
            return None;
        }
        if matches!(self.s.get(self.i), Some(b'.' | b'e' | b'E')) || self.i - start > 10 {
            return None;
        }
        let v = self.s[start..self.i]
            .iter()
            .fold(0u64, |v, &d| v * 10 + (d - b'0') as u64);
        Rank::try_from(v).ok()
    }

    /// Checks and skips any value.
    fn skip(&mut self, depth: usize, key: &mut String) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match *self.s.get(self.i)? {
            b'{' => {
                self.i += 1;
                self.ws();
                if self.eat(b'}') {
                    return Some(());
                }
                loop {
                    self.ws();
                    self.string(key)?;
                    self.ws();
                    self.expect(b':')?;
                    self.ws();
                    self.skip(depth + 1, key)?;
                    self.ws();
                    if !self.eat(b',') {
                        return self.expect(b'}');
                    }
                }
            }
            b'[' => {
                self.i += 1;
                self.ws();
                if self.eat(b']') {
                    return Some(());
                }
                loop {
                    self.ws();
                    self.skip(depth + 1, key)?;
                    self.ws();
                    if !self.eat(b',') {
                        return self.expect(b']');
                    }
                }
            }
            b'"' => self.string(key),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number(),
        }
    }

    /// The members of an object (at its `{`): `member` gets each decoded key, starts at the
    /// value and must consume it.
    fn object(&mut self, mut member: impl FnMut(&mut Self, &str) -> Option<()>) -> Option<()> {
        self.expect(b'{')?;
        self.ws();
        if self.eat(b'}') {
            return Some(());
        }
        let mut name = String::new();
        loop {
            self.ws();
            self.string(&mut name)?;
            self.ws();
            self.expect(b':')?;
            self.ws();
            member(self, &name)?;
            self.ws();
            if !self.eat(b',') {
                return self.expect(b'}');
            }
        }
    }

    fn vocab(&mut self, model: &mut Model) -> Option<()> {
        self.object(|p, text| {
            let id = p.id()?;
            let start = model.arena.len();
            if !text.is_empty() && push_bytes(text, &mut model.arena) {
                model
                    .entries
                    .push((id, start as u32, model.arena.len() as u32));
            } else {
                model.arena.truncate(start);
                model.others.push((text.to_owned(), id));
            }
            Some(())
        })
    }

    /// One merge: `"a b"` (exactly one space, both sides non-empty) or `["a", "b"]`.
    fn merge(&mut self, model: &mut Model, text: &mut String) -> Option<()> {
        let start = model.merge_arena.len();
        let middle;
        if self.s.get(self.i) == Some(&b'[') {
            self.i += 1;
            self.ws();
            self.string(text)?;
            if text.is_empty() || !push_bytes(text, &mut model.merge_arena) {
                return None;
            }
            middle = model.merge_arena.len();
            self.ws();
            self.expect(b',')?;
            self.ws();
            self.string(text)?;
            if text.is_empty() || !push_bytes(text, &mut model.merge_arena) {
                return None;
            }
            self.ws();
            self.expect(b']')?;
        } else {
            self.string(text)?;
            let mut parts = text.split(' ');
            let (left, right) = (parts.next()?, parts.next()?);
            if parts.next().is_some() || left.is_empty() || right.is_empty() {
                return None;
            }
            if !push_bytes(left, &mut model.merge_arena) {
                return None;
            }
            middle = model.merge_arena.len();
            if !push_bytes(right, &mut model.merge_arena) {
                return None;
            }
        }
        let end = model.merge_arena.len();
        model.merges.push((start as u32, middle as u32, end as u32));
        Some(())
    }

    fn merges(&mut self, model: &mut Model) -> Option<()> {
        self.expect(b'[')?;
        self.ws();
        if self.eat(b']') {
            return Some(());
        }
        let mut text = String::new();
        loop {
            self.ws();
            self.merge(model, &mut text)?;
            self.ws();
            if !self.eat(b',') {
                return self.expect(b']');
            }
        }
    }
}

/// Reads `model.vocab` and `model.merges` of a `tokenizer.json` and checks the JSON syntax of
/// the rest; `None` for anything the Python reader should look at (see the module doc).
pub fn parse(data: &[u8]) -> Option<Model> {
    // Offsets are u32 in the arenas; a file of 4 GiB is not a tokenizer anyone ships.
    if data.len() >= u32::MAX as usize {
        return None;
    }
    let mut p = Parser { s: data, i: 0 };
    let mut model = Model::default();
    let (mut seen_model, mut seen_vocab, mut seen_merges) = (false, false, false);
    let mut key = String::new();
    p.ws();
    p.object(|p, name| {
        if name != "model" {
            return p.skip(1, &mut key);
        }
        if seen_model || p.s.get(p.i) != Some(&b'{') {
            return None;
        }
        seen_model = true;
        let mut inner_key = String::new();
        p.object(|p, name| match name {
            "vocab" if !seen_vocab => {
                seen_vocab = true;
                let start = p.i;
                p.vocab(&mut model)?;
                model.vocab_span = (start, p.i);
                Some(())
            }
            "merges" if !seen_merges => {
                seen_merges = true;
                let start = p.i;
                p.merges(&mut model)?;
                model.merges_span = (start, p.i);
                Some(())
            }
            "vocab" | "merges" => None, // twice: the Python reader names it
            _ => p.skip(2, &mut inner_key),
        })
    })?;
    p.ws();
    (p.i == data.len() && seen_vocab && seen_merges).then_some(model)
}

impl Model {
    fn bytes(&self, &(_, start, end): &(Rank, u32, u32)) -> &[u8] {
        &self.arena[start as usize..end as usize]
    }

    /// The ordinary tokens and merges, given the added tokens `(text, id)`; `None` if the
    /// Python reader would refuse the file or read it otherwise (see the module doc).
    ///
    /// As the Python reader does, a vocabulary entry is an added token, not an ordinary one,
    /// when its id is an added token's id and its string an added token's text.
    pub fn resolve(&self, added: &[(String, Rank)]) -> Option<Resolved> {
        let mut by_bytes: FxHashMap<&[u8], u32> = FxHashMap::default();
        by_bytes.reserve(self.entries.len());
        for (k, entry) in self.entries.iter().enumerate() {
            if by_bytes.insert(self.bytes(entry), k as u32).is_some() {
                return None; // the same string twice
            }
        }
        let added_ids: FxHashSet<Rank> = added.iter().map(|&(_, id)| id).collect();
        let mut excluded = vec![false; self.entries.len()];
        let mut other_excluded = vec![false; self.others.len()];
        let mut text_bytes = Vec::new();
        for (text, _) in added {
            text_bytes.clear();
            if !text.is_empty() && push_bytes(text, &mut text_bytes) {
                if let Some(&k) = by_bytes.get(text_bytes.as_slice()) {
                    excluded[k as usize] |= added_ids.contains(&self.entries[k as usize].0);
                }
            } else {
                for (k, (other, id)) in self.others.iter().enumerate() {
                    if other == text && added_ids.contains(id) {
                        other_excluded[k] = true;
                    }
                }
            }
        }
        // An entry that is neither byte-level nor an added token, or a string twice.
        let distinct: FxHashSet<&str> = self.others.iter().map(|(t, _)| t.as_str()).collect();
        if other_excluded.contains(&false) || distinct.len() != self.others.len() {
            return None;
        }
        let mut by_id: FxHashMap<Rank, u32> = FxHashMap::default();
        by_id.reserve(self.entries.len());
        let mut single = [false; 256];
        for (k, entry) in self.entries.iter().enumerate() {
            if excluded[k] {
                continue;
            }
            if by_id.insert(entry.0, k as u32).is_some() {
                return None; // two tokens with one id
            }
            if let [b] = self.bytes(entry) {
                single[*b as usize] = true;
            }
        }
        if single.contains(&false) {
            return None;
        }
        let ordinary = |bytes: &[u8]| -> Option<Rank> {
            let k = *by_bytes.get(bytes)? as usize;
            (!excluded[k]).then_some(self.entries[k].0)
        };
        let mut merges = Vec::with_capacity(self.merges.len());
        let mut seen: FxHashSet<(Rank, Rank)> = FxHashSet::default();
        seen.reserve(self.merges.len());
        for &(start, middle, end) in &self.merges {
            let (start, middle, end) = (start as usize, middle as usize, end as usize);
            let left = ordinary(&self.merge_arena[start..middle])?;
            let right = ordinary(&self.merge_arena[middle..end])?;
            ordinary(&self.merge_arena[start..end])?;
            if !seen.insert((left, right)) {
                return None;
            }
            merges.push((left, right));
        }
        for (text, id) in added {
            if let Some(&k) = by_id.get(id) {
                if self.bytes(&self.entries[k as usize]) != text.as_bytes() {
                    return None; // an added token on a different ordinary token's id
                }
            }
        }
        let vocab = self
            .entries
            .iter()
            .zip(&excluded)
            .filter(|(_, &x)| !x)
            .map(|(entry, _)| (entry.0, self.bytes(entry).to_vec()))
            .collect();
        Some(Resolved { vocab, merges })
    }
}

// ---------------------------------------------------------------------------------------------
// Writing: the same two values as text, for `save_hf` (Python's json spends most of an export
// on 400,000 strings; here they go straight into one buffer).

/// GPT-2's byte-to-unicode table: the character that stands for each byte.
fn byte_to_char(b: u8) -> char {
    let c = CHAR_TO_BYTE
        .iter()
        .position(|&x| x == b as i16)
        .unwrap_or(0);
    char::from_u32(c as u32).unwrap_or('\0')
}

/// Appends `bytes` as a JSON string of GPT-2 characters, escaped as Python's
/// `json.dumps(..., ensure_ascii=False)` escapes them: of these characters only `"` and `\`
/// need it (the control bytes stand for U+0100 and up).
fn push_json_string(bytes: &[u8], table: &[char; 256], out: &mut String) {
    out.push('"');
    for &b in bytes {
        let c = table[b as usize];
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// The members of the `model.vocab` object (`"string":id` joined by commas, no braces) for
/// `(id, bytes)` in the order given, and the `model.merges` array (`[["a","b"],...]`) for
/// merges as `(left bytes, right bytes)`.
pub fn write_model<'a>(
    vocab: impl Iterator<Item = (Rank, &'a [u8])>,
    merges: impl Iterator<Item = (&'a [u8], &'a [u8])>,
) -> (String, String) {
    let table: [char; 256] = std::array::from_fn(|b| byte_to_char(b as u8));
    let mut v = String::new();
    for (id, bytes) in vocab {
        if !v.is_empty() {
            v.push(',');
        }
        push_json_string(bytes, &table, &mut v);
        v.push(':');
        v.push_str(&id.to_string());
    }
    let mut m = String::from("[");
    for (left, right) in merges {
        if m.len() > 1 {
            m.push(',');
        }
        m.push('[');
        push_json_string(left, &table, &mut m);
        m.push(',');
        push_json_string(right, &table, &mut m);
        m.push(']');
    }
    m.push(']');
    (v, m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GPT-2's string for a byte string.
    fn gpt2(bytes: &[u8]) -> String {
        bytes
            .iter()
            .map(|&b| {
                let c = CHAR_TO_BYTE.iter().position(|&x| x == b as i16).unwrap();
                char::from_u32(c as u32).unwrap()
            })
            .collect()
    }

    /// A document with all 256 bytes (ids 0..256 in byte order), `extra` entries and `merges`.
    fn doc(extra: &str, merges: &str, added: &str) -> String {
        let bytes: Vec<String> = (0..=255u8)
            .map(|b| format!("{:?}:{b}", gpt2(&[b])))
            .collect();
        let sep = if extra.is_empty() { "" } else { "," };
        format!(
            r#"{{"version":"1.0","added_tokens":[{added}],"model":{{"type":"BPE","vocab":{{{}{sep}{extra}}},"merges":[{merges}]}}}}"#,
            bytes.join(",")
        )
    }

    fn resolve(data: &str, added: &[(&str, Rank)]) -> Option<Resolved> {
        let added: Vec<(String, Rank)> = added.iter().map(|&(t, i)| (t.to_owned(), i)).collect();
        parse(data.as_bytes())?.resolve(&added)
    }

    #[test]
    fn table_is_gpt2s() {
        assert_eq!(gpt2(b" the"), "\u{120}the");
        assert_eq!(gpt2(b"\n"), "\u{10a}");
        assert_eq!(CHAR_TO_BYTE.iter().filter(|&&b| b >= 0).count(), 256);
    }

    #[test]
    fn reads_both_merge_forms_and_the_spans() {
        let data = doc(r#""ab":256,"abc":257"#, r#"["a","b"],"ab c""#, "");
        let model = parse(data.as_bytes()).unwrap();
        let (vs, ve) = model.vocab_span;
        assert!(data[vs..ve].starts_with('{') && data[vs..ve].ends_with('}'));
        let (ms, me) = model.merges_span;
        assert_eq!(&data[ms..me], r#"[["a","b"],"ab c"]"#);
        let r = model.resolve(&[]).unwrap();
        assert_eq!(r.merges, vec![(97, 98), (256, 99)]);
        assert_eq!(r.vocab.len(), 258);
        assert_eq!(r.vocab[257], (257, b"abc".to_vec()));
        assert_eq!(r.multi_byte(), 2);
    }

    #[test]
    fn escapes_are_decoded() {
        // "\u0061b" is "ab"; an escaped GPT-2 space character.
        let data = doc(
            r#""\u0061b":256,"\u0120a":257"#,
            r#""a b",["\u0120","a"]"#,
            "",
        );
        let r = resolve(&data, &[]).unwrap();
        assert_eq!(r.vocab[256], (256, b"ab".to_vec()));
        assert_eq!(r.vocab[257], (257, b" a".to_vec()));
        assert_eq!(r.merges, vec![(97, 98), (32, 97)]);
    }

    #[test]
    fn added_tokens_in_the_vocabulary_are_not_ordinary() {
        let data = doc(r#""<|end|>":256,"<s>":257"#, "", "");
        // Without added tokens they are ordinary byte-level tokens; "<s>" in the table too.
        assert_eq!(resolve(&data, &[]).unwrap().vocab.len(), 258);
        let r = resolve(&data, &[("<|end|>", 256), ("<s>", 257)]).unwrap();
        assert_eq!(r.vocab.len(), 256);
        // Not byte-level (a character outside the table): only as an added token.
        let data = doc(r#""<é>":256,"x y":257"#, "", "");
        assert!(resolve(&data, &[]).is_none());
        assert!(resolve(&data, &[("<é>", 256)]).is_none()); // "x y" is neither
        assert_eq!(
            resolve(&data, &[("<é>", 256), ("x y", 257)])
                .unwrap()
                .vocab
                .len(),
            256
        );
        // An added token on the id of a different ordinary token.
        let data = doc(r#""ab":256"#, r#""a b""#, "");
        assert!(resolve(&data, &[("<x>", 256)]).is_none());
        assert!(resolve(&data, &[("ab", 256)]).is_none()); // then no merge makes "ab"
    }

    #[test]
    fn leaves_anything_else_to_the_python_reader() {
        let good = doc(r#""ab":256"#, r#""a b""#, "");
        assert!(resolve(&good, &[]).is_some());
        for (extra, merges) in [
            (r#""ab":256,"ab":257"#, r#""a b""#), // duplicate key
            (r#""ab":256,"cd":256"#, r#""a b""#), // duplicate id
            (r#""ab":-1"#, r#""a b""#),           // negative
            (r#""ab":-0"#, r#""a b""#),           // Python reads 0
            (r#""ab":256.0"#, r#""a b""#),        // float
            (r#""ab":2e2"#, r#""a b""#),          // exponent
            (r#""ab":0256"#, r#""a b""#),         // leading zero
            (r#""ab":4294967296"#, r#""a b""#),   // 2^32
            (r#""ab":"256""#, r#""a b""#),        // string id
            (r#""ab":256"#, r#""a b","a b""#),    // merge twice
            (r#""ab":256"#, r#""a  b""#),         // two spaces
            (r#""ab":256"#, r#""a b c""#),        // three parts
            (r#""ab":256"#, r#"["a","b","c"]"#),  // a triple
            (r#""ab":256"#, r#"["a",1]"#),        // not a string
            (r#""ab":256"#, r#""a c""#),          // makes an unknown token
            (r#""ab":256"#, r#""a é""#),          // not byte-level
            (r#""ab":256"#, r#""a b","#),         // trailing comma
            (r#""\ud800b":256"#, r#""a b""#),     // lone surrogate
            (r#""\udc00b":256"#, r#""a b""#),     // lone low surrogate
            (r#""a\qb":256"#, r#""a b""#),        // bad escape
            ("\"a\tb\":256", r#""a b""#),         // raw control character
        ] {
            let data = doc(extra, merges, "");
            assert!(resolve(&data, &[]).is_none(), "{extra} {merges}");
        }
        let mut missing = good.replacen(r#""!":33,"#, "", 1);
        assert_ne!(missing, good);
        assert!(resolve(&missing, &[]).is_none()); // no token for the byte '!'
        missing = good.replace(r#","model""#, r#","model":{},"model""#);
        assert!(parse(missing.as_bytes()).is_none()); // model twice
        for bad in [
            good.replace(r#""version":"1.0""#, r#""version":NaN"#),
            good.replace(r#""version":"1.0""#, r#""version":01"#),
            good.replace(r#""version":"1.0""#, r#""version":[1,]"#),
            good.replace(r#""version":"1.0""#, r#""version":tru"#),
            format!("{good} x"),
            format!("\u{feff}{good}"),
            good[..good.len() - 1].to_owned(),
            good.replace(r#""merges":["a b"]"#, ""),
            good.replace(r#""merges":["a b"]"#, r#""merges":["a b"],"merges":[]"#),
            good.replace(r#""model":{"#, r#""model":{"vocab":{},"#),
            format!(
                r#"{{"x":{}0{}, {}"#,
                "[".repeat(300),
                "]".repeat(300),
                &good[1..]
            ),
        ] {
            assert!(
                parse(bad.as_bytes()).is_none(),
                "{}",
                &bad[..bad.len().min(60)]
            );
        }
        // Deep but not too deep, other keys of the model, whitespace: fine.
        let fine =
            good.replace(
                r#""version":"1.0""#,
                &format!(r#""version" : {}"1.0"{} "#, "[".repeat(50), "]".repeat(50)),
            )
            .replace(
                r#""type":"BPE""#,
                "\"type\":\"BPE\",\"dropout\":null,\"x\":[-1.5e+3,true,false,{}]",
            ) + "\n";
        assert!(resolve(&fine, &[]).is_some());
    }

    #[test]
    fn writes_what_it_reads() {
        let mut vocab: Vec<(Rank, Vec<u8>)> = (0..=255u8).map(|b| (b as Rank, vec![b])).collect();
        vocab.push((256, b"\"\\".to_vec()));
        vocab.push((257, b" \n".to_vec()));
        let merges = [(&b"\""[..], &b"\\"[..]), (&b" "[..], &b"\n"[..])];
        let (v, m) = write_model(
            vocab.iter().map(|(id, b)| (*id, b.as_slice())),
            merges.iter().copied(),
        );
        assert!(v.ends_with("\"\\\"\\\\\":256,\"\u{120}\u{10a}\":257"));
        assert_eq!(m, "[[\"\\\"\",\"\\\\\"],[\"\u{120}\",\"\u{10a}\"]]");
        let data = format!(r#"{{"model":{{"vocab":{{{v}}},"merges":{m}}}}}"#);
        let r = parse(data.as_bytes()).unwrap().resolve(&[]).unwrap();
        assert_eq!(r.vocab, vocab);
        assert_eq!(r.merges, vec![(34, 92), (32, 10)]);
    }
}
