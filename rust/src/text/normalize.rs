//! SentencePiece's normalization: the `precompiled_charsmap` rules, user-defined symbols kept
//! whole, `remove_extra_whitespaces`, `add_dummy_prefix` and `escape_whitespaces` (space to
//! `▁`, U+2581). Behaviour is sentencepiece's `Normalizer::Normalize`, learned by running it.
//!
//! The charsmap is a blob: a little-endian `u32` giving the size in bytes of a double-array trie
//! (darts-clone's layout of 32-bit units), the trie, then the replacement strings, each ended
//! by a NUL. The trie maps a key (the UTF-8 of one or more characters) to the offset of its
//! replacement. At each position the longest key wins; without one, one character is kept.
//! Every index into the trie is checked when it is followed, and every replacement offset
//! and string is checked when the blob is read, so a blob that points outside itself is an
//! error or, deep in the trie, a rule that does not match; never a read out of bounds.

use aho_corasick::{AhoCorasick, Anchored, Input, MatchKind, StartKind};

use super::{expand, narrow};

/// `▁` (U+2581), what spaces become when `escape_whitespaces` is on.
pub const SPACE_SYMBOL: &str = "\u{2581}";

/// `SPACE_SYMBOL`'s bytes.
pub(crate) const SYMBOL: [u8; 3] = {
    let b = SPACE_SYMBOL.as_bytes();
    [b[0], b[1], b[2]]
};

/// Whether `b` is `SPACE_SYMBOL`: inline, where a slice's `==` calls `memcmp` (a few per cent
/// of normalizing lines of text, three such compares a line).
#[inline(always)]
fn is_symbol(b: &[u8]) -> bool {
    b.len() == 3 && b[..3] == SYMBOL
}

/// Whether `out` ends with `space` (`SPACE_SYMBOL` or a space), as `is_symbol` does.
#[inline(always)]
fn ends_with_space(out: &[u8], space: &[u8]) -> bool {
    match space {
        [b' '] => out.last() == Some(&b' '),
        _ => out.len() >= 3 && is_symbol(&out[out.len() - 3..]),
    }
}

/// Finds each `▁` in normalized text (built once: building a finder costs about as much as
/// searching a short word).
pub static SPACE_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(SPACE_SYMBOL.as_bytes()));

/// The rules of a `precompiled_charsmap`.
#[derive(Clone, Debug)]
pub struct Charsmap {
    units: Vec<u32>,
    strings: Vec<u8>,
    /// What each ASCII byte is to the normalizer's fast path (`Normalizer::plain_run`), and
    /// where its runs stop
    ascii: [Ascii; 128],
    stop: [bool; 256],
    /// some rule's key starts with a space
    space_keyed: bool,
    /// every ASCII byte that stops a plain run is a `narrow::candidates` byte
    narrow: bool,
    /// bit c: the character U+c (of 2 or 3 bytes) is its own replacement wherever it is (no
    /// rule's key starts with it, nor with the start of its bytes), so `prefix` need not walk
    /// the trie for it (`Normalizer::plain_char`)
    plain_chars: Box<[u64; 1024]>,
}

/// What an ASCII byte is to `Normalizer::plain_run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ascii {
    /// no rule's key starts with it: it is its own replacement
    Plain,
    /// rules' keys start with it, each going on with a non-ASCII byte (a letter and a
    /// combining mark, in the NFKC maps): plain when an ASCII byte follows
    Soft,
    /// a key itself, or the start of a key that goes on with ASCII, or a space
    Hard,
}

/// The classes without a charsmap: only the space is not plain.
static PLAIN_ASCII: [Ascii; 128] = {
    let mut t = [Ascii::Plain; 128];
    t[b' ' as usize] = Ascii::Hard;
    t
};

/// Where a run of plain bytes stops for these classes: a non-ASCII or a hard byte.
const fn stops(class: &[Ascii; 128]) -> [bool; 256] {
    let mut t = [true; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = matches!(class[b], Ascii::Hard);
        b += 1;
    }
    t
}

static PLAIN_STOP: [bool; 256] = stops(&PLAIN_ASCII);

impl Charsmap {
    /// Reads a blob; the error says what is wrong (the caller names the file and field).
    pub fn parse(blob: &[u8]) -> Result<Charsmap, String> {
        let Some(head) = blob.get(..4) else {
            return Err(format!(
                "{} bytes, shorter than its 4-byte header",
                blob.len()
            ));
        };
        let size = u32::from_le_bytes(head.try_into().unwrap()) as usize;
        let rest = &blob[4..];
        if size > rest.len() || size % 4 != 0 {
            return Err(format!(
                "the trie claims {size} bytes but {} follow the header{}",
                rest.len(),
                if size % 4 != 0 {
                    " (and is not a whole number of 4-byte units)"
                } else {
                    ""
                }
            ));
        }
        let units: Vec<u32> = rest[..size]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let strings = rest[size..].to_vec();
        // Every leaf unit (bit 31) holds an offset into `strings`: check them all now.
        for (i, &u) in units.iter().enumerate() {
            if u & (1 << 31) == 0 {
                continue;
            }
            let at = (u & 0x7fff_ffff) as usize;
            let Some(tail) = strings.get(at..) else {
                return Err(format!(
                    "trie unit {i} points at replacement offset {at}, past the {} bytes of replacements",
                    strings.len()
                ));
            };
            let Some(end) = memchr::memchr(0, tail) else {
                return Err(format!(
                    "the replacement at offset {at} has no terminating NUL"
                ));
            };
            if std::str::from_utf8(&tail[..end]).is_err() {
                return Err(format!("the replacement at offset {at} is not valid UTF-8"));
            }
        }
        let mut map = Charsmap {
            units,
            strings,
            ascii: PLAIN_ASCII,
            stop: PLAIN_STOP,
            space_keyed: false,
            narrow: true,
            plain_chars: Box::new([0; 1024]),
        };
        map.space_keyed = map.child(map.root(), b' ').is_some();
        for b in 0..128u8 {
            let Some((node, key)) = map.child(map.root(), b) else {
                continue;
            };
            map.ascii[b as usize] = if key || (0..128u8).any(|c| map.child(Some(node), c).is_some())
            {
                Ascii::Hard
            } else {
                match map.ascii[b as usize] {
                    Ascii::Hard => Ascii::Hard, // the space
                    _ => Ascii::Soft,
                }
            };
        }
        map.stop = stops(&map.ascii);
        map.narrow = (0..128u8).all(|b| !map.stop[b as usize] || narrow::is_candidate(b));
        let root = map.root();
        for c in 0x80u32..0x10000 {
            let Some(ch) = char::from_u32(c) else {
                continue; // a surrogate
            };
            let mut buf = [0u8; 4];
            let bytes = ch.encode_utf8(&mut buf).as_bytes();
            // plain: the walk of its bytes leaves the trie before their end, no key ending on
            // the way (a key ending inside or at the character, or going on past it, is a rule
            // that may apply)
            let mut node = root;
            let mut plain = false;
            for &b in bytes {
                match map.child(node, b) {
                    None => {
                        plain = true;
                        break;
                    }
                    Some((_, true)) => break,
                    Some((next, false)) => node = Some(next),
                }
            }
            if plain {
                map.plain_chars[c as usize / 64] |= 1 << (c % 64);
            }
        }
        Ok(map)
    }

    fn offset(u: u32) -> usize {
        ((u >> 10) << ((u & (1 << 9)) >> 6)) as usize
    }

    /// Where the root's edges are found.
    fn root(&self) -> Option<usize> {
        self.units.first().map(|&u| Self::offset(u))
    }

    /// The child of the node whose edges are at `node`, by byte `b`, if it has one: where its
    /// edges are, and whether a key ends there (as `longest` walks the trie).
    fn child(&self, node: Option<usize>, b: u8) -> Option<(usize, bool)> {
        let pos = node? ^ b as usize;
        let &u = self.units.get(pos)?;
        (u & ((1 << 31) | 0xff) == u32::from(b)).then(|| (pos ^ Self::offset(u), (u >> 8) & 1 == 1))
    }

    /// The longest rule whose key starts `s`: (key length, replacement).
    #[inline]
    pub fn longest(&self, s: &[u8]) -> Option<(usize, &[u8])> {
        let units = &self.units;
        let offset = |u: u32| ((u >> 10) << ((u & (1 << 9)) >> 6)) as usize;
        let mut pos = offset(*units.first()?);
        let mut best = None;
        for (i, &b) in s.iter().enumerate() {
            pos ^= b as usize;
            let Some(&u) = units.get(pos) else { break };
            // label: the byte, with bit 31 set on leaves so that they never match
            if u & ((1 << 31) | 0xff) != b as u32 {
                break;
            }
            pos ^= offset(u);
            if (u >> 8) & 1 == 1 {
                let Some(&leaf) = units.get(pos) else { break };
                let at = (leaf & 0x7fff_ffff) as usize;
                // checked in `parse` for every leaf unit
                if let Some(tail) = self.strings.get(at..) {
                    let end = memchr::memchr(0, tail).unwrap_or(tail.len());
                    best = Some((i + 1, &tail[..end]));
                }
            }
        }
        best
    }
}

/// The options of a model's `normalizer_spec` (and `treat_whitespace_as_suffix`).
#[derive(Clone, Debug)]
pub struct NormalizerSpec {
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    pub treat_whitespace_as_suffix: bool,
}

/// Longest-match of a fixed set of strings at a position (user-defined symbols).
#[derive(Clone, Debug)]
pub struct PrefixMatcher {
    ac: Option<AhoCorasick>,
    /// bit b: some symbol starts with the ASCII byte b
    ascii_starts: u128,
    /// some symbol starts with a non-ASCII byte
    other_starts: bool,
}

impl PrefixMatcher {
    pub fn new<I: IntoIterator<Item = S>, S: AsRef<[u8]>>(symbols: I) -> PrefixMatcher {
        let symbols: Vec<Vec<u8>> = symbols.into_iter().map(|s| s.as_ref().to_vec()).collect();
        if symbols.is_empty() {
            return PrefixMatcher {
                ac: None,
                ascii_starts: 0,
                other_starts: false,
            };
        }
        let ascii_starts = symbols
            .iter()
            .filter_map(|s| s.first().copied().filter(|b| b.is_ascii()))
            .fold(0, |m, b| m | 1u128 << b);
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .start_kind(StartKind::Anchored)
            .build(&symbols)
            .ok();
        let other_starts = symbols
            .iter()
            .any(|s| s.first().is_some_and(|&b| b >= 0x80));
        PrefixMatcher {
            ac,
            ascii_starts,
            other_starts,
        }
    }

    /// The length of the longest symbol that starts `s`.
    #[inline]
    pub fn longest(&self, s: &[u8]) -> Option<usize> {
        let ac = self.ac.as_ref()?;
        ac.find(Input::new(s).anchored(Anchored::Yes))
            .map(|m| m.end())
    }

    pub fn is_empty(&self) -> bool {
        self.ac.is_none()
    }
}

/// The byte length of the UTF-8 character that `lead` starts (1 for a stray byte), as
/// sentencepiece counts it.
#[inline]
pub fn char_len(lead: u8) -> usize {
    match lead {
        0x00..=0xbf => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// Normalizes as sentencepiece does.
#[derive(Clone, Debug)]
pub struct Normalizer {
    pub charsmap: Option<Charsmap>,
    pub user: PrefixMatcher,
    pub spec: NormalizerSpec,
}

const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

impl Normalizer {
    /// How many bytes at the start of `s` are ASCII that no rule and no user symbol starts
    /// and that is not a space: each is its own replacement, so a run of them is copied as is.
    /// On English and code most of the text is such runs; looking each byte up in the trie was
    /// the most of normalizing's time.
    #[inline]
    fn plain_run(&self, s: &[u8]) -> usize {
        let (class, stop) = self
            .charsmap
            .as_ref()
            .map_or((&PLAIN_ASCII, &PLAIN_STOP), |m| (&m.ascii, &m.stop));
        let user = self.user.ascii_starts;
        if user != 0 {
            for (i, &b) in s.iter().enumerate() {
                let soft_ok = || s.get(i + 1).is_none_or(|&n| n < 0x80);
                if b >= 0x80
                    || user >> b & 1 == 1
                    || class[b as usize] == Ascii::Hard
                    || (class[b as usize] == Ascii::Soft && !soft_ok())
                {
                    return i;
                }
            }
            return s.len();
        }
        // up to the first non-ASCII or hard byte; then a soft byte right before a non-ASCII
        // one is not plain (only the last byte of the run can be followed by one)
        let mut i = s.iter().position(|&b| stop[b as usize]).unwrap_or(s.len());
        if i > 0 && s.get(i).is_some_and(|&b| b >= 0x80) && class[s[i - 1] as usize] == Ascii::Soft
        {
            i -= 1;
        }
        i
    }

    /// The replacement of the text at the start of `s` and how many bytes it takes.
    #[inline]
    fn prefix<'a>(&'a self, s: &'a [u8]) -> (&'a [u8], usize) {
        if let Some(n) = self.user.longest(s) {
            return (&s[..n], n);
        }
        if let Some(map) = &self.charsmap {
            if let Some((n, rep)) = map.longest(s) {
                return (rep, n);
            }
        }
        // one character (valid text always; a key ending inside a character leaves stray bytes,
        // each of which becomes U+FFFD)
        // `s` is the tail of valid UTF-8: a lead byte starts a whole character
        if s[0] & 0xc0 == 0x80 {
            return (REPLACEMENT, 1);
        }
        let n = char_len(s[0]).min(s.len());
        (&s[..n], n)
    }

    /// Normalizes `text` into `out` (cleared first; valid UTF-8). With `offsets`, also the
    /// original byte offset of each output byte, plus one entry for the end.
    pub fn normalize(&self, text: &str, out: &mut Vec<u8>, offsets: Option<&mut Vec<usize>>) {
        self.normalize_marking(text, out, offsets, None)
    }

    /// `normalize`, and with `marks`, where each `▁` starts in `out`, in order (what
    /// `SPACE_FINDER` would find there): the encoders cut words there, and finding them again
    /// in the output cost a search call a word.
    pub fn normalize_marking(
        &self,
        text: &str,
        out: &mut Vec<u8>,
        mut offsets: Option<&mut Vec<usize>>,
        mut marks: Option<&mut Vec<u32>>,
    ) {
        out.clear();
        if let Some(o) = offsets.as_deref_mut() {
            o.clear();
        }
        if let Some(m) = marks.as_deref_mut() {
            m.clear();
        }
        let spec = &self.spec;
        let mut input = text.as_bytes();
        let mut consumed = 0usize;
        let plain_space = self.plain_space();
        if spec.remove_extra_whitespaces {
            // a text's first byte is most often plain (its own replacement, not a space)
            while !input.is_empty() && self.plain_run(&input[..input.len().min(2)]) == 0 {
                if plain_space && input[0] == b' ' {
                    // a line's indentation
                    input = &input[1..];
                    consumed += 1;
                    continue;
                }
                let (rep, n) = self.prefix(input);
                if rep.len() != 1 || rep[0] != b' ' {
                    break;
                }
                input = &input[n..];
                consumed += n;
            }
        }
        if input.is_empty() {
            if let Some(o) = offsets {
                o.push(consumed);
            }
            return;
        }
        let space: &[u8] = if spec.escape_whitespaces {
            SPACE_SYMBOL.as_bytes()
        } else {
            b" "
        };
        let push = |out: &mut Vec<u8>,
                    offsets: &mut Option<&mut Vec<usize>>,
                    marks: &mut Option<&mut Vec<u32>>,
                    bytes: &[u8],
                    at: usize| {
            if let Some(m) = marks.as_deref_mut() {
                // a `▁` written: the space symbol, or one in a character or replacement
                if is_symbol(bytes) {
                    m.push(out.len() as u32);
                } else if bytes.contains(&0xe2) {
                    let base = out.len() as u32;
                    m.extend(SPACE_FINDER.find_iter(bytes).map(|p| base + p as u32));
                }
            }
            out.extend_from_slice(bytes);
            if let Some(o) = offsets.as_deref_mut() {
                o.extend(std::iter::repeat_n(at, bytes.len()));
            }
        };
        if !spec.treat_whitespace_as_suffix && spec.add_dummy_prefix {
            push(out, &mut offsets, &mut marks, space, consumed);
        }
        // a space no rule or user symbol starts is its own replacement: handled here, not by
        // `prefix` (a space is about one byte in six of prose)
        let mut prev_space = spec.remove_extra_whitespaces;
        // The encoders' call (marks, no offsets) with the usual maps: runs and spaces a block
        // of 16 at a time (`plain_words`), the loop below for the rest.
        let words = plain_space && offsets.is_none() && self.narrow();
        while !input.is_empty() {
            if words {
                if let Some(m) = marks.as_deref_mut() {
                    let n = self.plain_words(input, out, m, space, &mut prev_space);
                    consumed += n;
                    input = &input[n..];
                    if input.is_empty() {
                        break;
                    }
                }
            }
            let run = self.plain_run(input);
            if run > 0 {
                out.extend_from_slice(&input[..run]);
                if let Some(o) = offsets.as_deref_mut() {
                    o.extend(consumed..consumed + run);
                }
                consumed += run;
                input = &input[run..];
                prev_space = false;
                continue;
            }
            if plain_space && input[0] == b' ' {
                // as below for a replacement " "
                if !prev_space {
                    push(out, &mut offsets, &mut marks, space, consumed);
                }
                prev_space = spec.remove_extra_whitespaces;
                consumed += 1;
                input = &input[1..];
                continue;
            }
            if let Some(n) = self.plain_char(input) {
                // as below for a replacement that is the character itself
                push(out, &mut offsets, &mut marks, &input[..n], consumed);
                prev_space = false;
                consumed += n;
                input = &input[n..];
                continue;
            }
            let (rep, n) = self.prefix(input);
            let mut rep = rep;
            if prev_space {
                while let [b' ', tail @ ..] = rep {
                    rep = tail;
                }
            }
            if !rep.is_empty() {
                if !rep.contains(&b' ') {
                    push(out, &mut offsets, &mut marks, rep, consumed);
                } else {
                    for &b in rep {
                        let one = [b];
                        let bytes = if b == b' ' { space } else { &one[..] };
                        push(out, &mut offsets, &mut marks, bytes, consumed);
                    }
                }
                prev_space = rep.last() == Some(&b' ');
            }
            consumed += n;
            input = &input[n..];
            if !spec.remove_extra_whitespaces {
                prev_space = false;
            }
        }
        if spec.remove_extra_whitespaces {
            while ends_with_space(out, space) {
                let len = out.len() - space.len();
                out.truncate(len);
                if let Some(o) = offsets.as_deref_mut() {
                    consumed = o[len];
                    o.truncate(len);
                }
                if let Some(m) = marks.as_deref_mut() {
                    while m.last().is_some_and(|&p| p as usize >= len) {
                        m.pop();
                    }
                }
            }
        }
        if spec.treat_whitespace_as_suffix && spec.add_dummy_prefix {
            push(out, &mut offsets, &mut marks, space, consumed);
        }
        if let Some(o) = offsets {
            o.push(consumed);
        }
    }

    /// The length of the character of 2 or 3 bytes that starts `s` when it is its own
    /// replacement there (what `prefix` would find without looking: no user symbol and no rule
    /// starts with it). Most characters of most scripts are; walking the maps for each was most
    /// of normalizing text in those scripts.
    #[inline]
    fn plain_char(&self, s: &[u8]) -> Option<usize> {
        let n = match s[0] {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => return None,
        };
        if s.len() < n || self.user.other_starts {
            return None;
        }
        let c = match n {
            2 => (u32::from(s[0]) & 0x1F) << 6 | (u32::from(s[1]) & 0x3F),
            _ => {
                (u32::from(s[0]) & 0x0F) << 12
                    | (u32::from(s[1]) & 0x3F) << 6
                    | (u32::from(s[2]) & 0x3F)
            }
        };
        let plain = self
            .charsmap
            .as_ref()
            .is_none_or(|m| m.plain_chars[c as usize / 64] >> (c % 64) & 1 == 1);
        plain.then_some(n)
    }

    /// Whether every byte that can stop a plain run (`plain_run`) is a `narrow` candidate, and
    /// no user symbol starts with an ASCII byte.
    #[inline]
    fn narrow(&self) -> bool {
        self.user.ascii_starts == 0 && self.charsmap.as_ref().is_none_or(|m| m.narrow)
    }

    /// What the general loop of `normalize_marking` does with the plain runs and the spaces
    /// (when a space is its own replacement) at the start of `input`, a block of 16 bytes at a
    /// time: copies the runs, writes each space kept as `space` and marks it; returns the bytes
    /// consumed, stopping before the first byte that is neither. For `narrow` normalizers. A
    /// word's run went byte by byte through the stop table and then to a `memcpy` call, and each
    /// space through a closure: a sixth of an encoding call on a line of cached words.
    #[inline]
    fn plain_words(
        &self,
        input: &[u8],
        out: &mut Vec<u8>,
        marks: &mut Vec<u32>,
        space: &[u8],
        prev_space: &mut bool,
    ) -> usize {
        let (class, stop) = self
            .charsmap
            .as_ref()
            .map_or((&PLAIN_ASCII, &PLAIN_STOP), |m| (&m.ascii, &m.stop));
        let remove = self.spec.remove_extra_whitespaces;
        let marked = is_symbol(space);
        let prev_at_start = *prev_space;
        let mut i = 0;
        // the block, then 16 more bytes so that a copy of 16 from any place in it stays inside
        let mut buf = [0u8; 32];
        'blocks: while i < input.len() {
            if marked && input[i] < 0x80 {
                // words and the spaces between them, a block at a time without a branch a word
                i += expand::words(&input[i..], out, marks, remove, prev_space);
                if i == input.len() {
                    break;
                }
            }
            // past the end of `input`, 0x80: a candidate that stops
            let left = input.len() - i;
            if left >= 16 {
                buf[..16].copy_from_slice(&input[i..i + 16]);
            } else {
                buf[..16].fill(0x80);
                buf[..left].copy_from_slice(&input[i..]);
            }
            let block: &[u8; 16] = buf[..16].try_into().unwrap();
            let mut m = narrow::candidates(block);
            // each candidate's byte and a run of plain bytes before it: at most 16 spaces
            out.reserve(16 * space.len() + 16);
            let mut o = out.len();
            let mut pos = 0;
            loop {
                let k = if m == 0 {
                    16
                } else {
                    m.trailing_zeros() as usize
                };
                if k > pos {
                    // SAFETY: `buf` has 16 bytes from `pos` (<= 16); `out` has room for 16 more
                    // bytes than it holds (reserved for the block: a run and the spaces after it
                    // write at most what the block's bytes expand to, plus this copy's excess).
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            buf.as_ptr().add(pos),
                            out.as_mut_ptr().add(o),
                            16,
                        );
                    }
                    o += k - pos;
                    *prev_space = false;
                }
                if k == 16 {
                    break;
                }
                let b = block[k];
                if b == b' ' {
                    if !*prev_space {
                        if marked {
                            marks.push(o as u32);
                        }
                        // SAFETY: as above; a space writes at most `space.len()` bytes.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                space.as_ptr(),
                                out.as_mut_ptr().add(o),
                                space.len(),
                            );
                        }
                        o += space.len();
                    }
                    *prev_space = remove;
                } else if stop[b as usize] {
                    // SAFETY: `o` bytes of `out` are written.
                    unsafe { out.set_len(o) };
                    let mut done = i + k;
                    let soft = done > 0
                        && input[done - 1] < 0x80
                        && class[input[done - 1] as usize] == Ascii::Soft;
                    if b >= 0x80 && done < input.len() && !soft {
                        if let Some(n) = self.plain_char(&input[done..]) {
                            // the character as it is, and the plain characters right after it
                            // (a block a character in text of other scripts); the next block
                            // starts after them
                            let (mut at, mut n) = (done, n);
                            // they are written as they are: at most the rest of the input
                            out.reserve(input.len() - at);
                            let mut o = o;
                            loop {
                                let c = &input[at..at + n];
                                if is_symbol(c) {
                                    marks.push(o as u32);
                                }
                                // SAFETY: reserved above; `o + n` stays within the input's
                                // length past where this run began.
                                unsafe {
                                    std::ptr::copy_nonoverlapping(
                                        c.as_ptr(),
                                        out.as_mut_ptr().add(o),
                                        n,
                                    );
                                }
                                o += n;
                                at += n;
                                match input.get(at) {
                                    Some(&next) if next >= 0xC2 => {}
                                    _ => break,
                                }
                                match self.plain_char(&input[at..]) {
                                    Some(m) => n = m,
                                    None => break,
                                }
                            }
                            // SAFETY: `o` bytes of `out` are written.
                            unsafe { out.set_len(o) };
                            *prev_space = false;
                            i = at;
                            continue 'blocks;
                        }
                    }
                    // a soft byte right before a non-ASCII one is not plain (see `plain_run`)
                    if done > 0 && done < input.len() && b >= 0x80 && soft {
                        out.pop();
                        done -= 1;
                        // as it was before that byte
                        *prev_space = match done {
                            0 => prev_at_start,
                            _ => remove && input[done - 1] == b' ',
                        };
                    }
                    return done;
                } else {
                    // a candidate the map leaves as it is (a control no rule names)
                    // SAFETY: as above.
                    unsafe { *out.as_mut_ptr().add(o) = b };
                    o += 1;
                    *prev_space = false;
                }
                pos = k + 1;
                m &= m - 1;
            }
            // SAFETY: `o` bytes of `out` are written.
            unsafe { out.set_len(o) };
            i += 16;
        }
        input.len()
    }

    /// Whether a space is its own replacement (no rule's key and no user symbol starts with
    /// it), so that `normalize` need not look it up.
    fn plain_space(&self) -> bool {
        self.user.ascii_starts >> b' ' & 1 == 0
            && self.charsmap.as_ref().is_none_or(|m| !m.space_keyed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(add: bool, remove: bool, escape: bool) -> Normalizer {
        Normalizer {
            charsmap: None,
            user: PrefixMatcher::new(Vec::<String>::new()),
            spec: NormalizerSpec {
                add_dummy_prefix: add,
                remove_extra_whitespaces: remove,
                escape_whitespaces: escape,
                treat_whitespace_as_suffix: false,
            },
        }
    }

    fn norm(n: &Normalizer, s: &str) -> String {
        let mut out = Vec::new();
        let mut offsets = Vec::new();
        n.normalize(s, &mut out, Some(&mut offsets));
        assert_eq!(offsets.len(), out.len() + 1);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn whitespace() {
        let n = plain(true, true, true);
        assert_eq!(norm(&n, "  hello   world "), "\u{2581}hello\u{2581}world");
        assert_eq!(norm(&n, "   "), "");
        assert_eq!(norm(&n, ""), "");
        let n = plain(false, false, true);
        assert_eq!(norm(&n, " a  b "), "\u{2581}a\u{2581}\u{2581}b\u{2581}");
        let n = plain(true, true, false);
        assert_eq!(norm(&n, " a  b "), " a b");
    }

    /// `normalize_marking`'s marks are where `▁` is in the output, for every whitespace
    /// option, with `▁` written in the text and inside user symbols.
    #[test]
    fn marks_are_where_the_space_symbols_are() {
        let mut rng = crate::unigram::sample::Rng::new(5);
        let parts = [
            "a",
            "bc",
            " ",
            "  ",
            "\u{2581}",
            "\u{e9}",
            "x\u{2581}y",
            "u s",
            "\t",
            "\u{3000}",
            "\u{1}",
            "\u{7f}",
            "wxyz0123456789",
            "\u{444}\u{9999}",
        ];
        for round in 0..2000 {
            let bits = round % 16;
            let mut n = plain(bits & 1 != 0, bits & 2 != 0, bits & 4 != 0);
            n.spec.treat_whitespace_as_suffix = bits & 8 != 0;
            if round % 3 == 0 {
                n.user = PrefixMatcher::new(["u s", "x\u{2581}y"]);
            }
            let mut text = String::new();
            // past a few of `plain_words`' blocks of 16
            for _ in 0..(rng.next_u64() % 40) {
                text.push_str(parts[(rng.next_u64() % parts.len() as u64) as usize]);
            }
            let (mut out, mut marks, mut again) = (Vec::new(), Vec::new(), Vec::new());
            n.normalize_marking(&text, &mut out, None, Some(&mut marks));
            n.normalize(&text, &mut again, None);
            assert_eq!(out, again, "{text:?}");
            let want: Vec<u32> = SPACE_FINDER.find_iter(&out).map(|p| p as u32).collect();
            assert_eq!(
                marks,
                want,
                "{text:?} -> {:?}",
                String::from_utf8_lossy(&out)
            );
        }
    }

    #[test]
    fn user_symbols_are_kept_whole() {
        let mut n = plain(true, true, true);
        n.user = PrefixMatcher::new(["a b", "a"]);
        assert_eq!(norm(&n, "xa b"), "\u{2581}xa\u{2581}b");
        assert_eq!(n.user.longest(b"a bc"), Some(3));
        assert_eq!(n.user.longest(b"ba"), None);
    }

    #[test]
    fn charsmap_refuses_bad_blobs() {
        assert!(Charsmap::parse(&[1, 0]).is_err());
        assert!(Charsmap::parse(&[8, 0, 0, 0, 0, 0, 0, 0]).is_err());
        // one leaf unit pointing past the strings
        let mut blob = vec![4, 0, 0, 0];
        blob.extend_from_slice(&(0x8000_0005u32).to_le_bytes());
        blob.extend_from_slice(b"ab\0");
        assert!(Charsmap::parse(&blob).unwrap_err().contains("offset 5"));
        // garbage units: lookups stay in bounds
        let mut blob = vec![12, 0, 0, 0];
        for u in [0x7fff_fc00u32, 0x0000_ff61, 0xffff_ffff] {
            blob.extend_from_slice(&u.to_le_bytes());
        }
        if let Ok(m) = Charsmap::parse(&blob) {
            for b in 0..=255u8 {
                let _ = m.longest(&[b, b, 0xff]);
            }
        }
    }
}
