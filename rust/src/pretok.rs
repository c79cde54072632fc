//! Pre-tokenization: splitting text into pieces that BPE never merges across.
//!
//! A `Pretokenizer` is built from the pattern's regex string (Python `regex` syntax, as stored in
//! tokenizer files). When that string is one of the presets (GPT-2, cl100k/GPT-4, o200k), the
//! preset's scanner is used; any other string is compiled with `fancy-regex`. `None` means "the
//! whole text is one piece".

use crate::error::{Error, Result};

/// GPT-2 / r50k_base.
pub const GPT2: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// GPT-4 / cl100k_base.
pub const GPT4: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// GPT-4o / o200k_base.
pub const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);

/// The presets, by the names the Python API uses.
pub const PRESETS: [(&str, &str); 3] = [("gpt2", GPT2), ("gpt4", GPT4), ("o200k", O200K)];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    Gpt2,
    Gpt4,
    O200k,
}

#[derive(Debug)]
enum Kind {
    Whole,
    Preset(Preset, fancy_regex::Regex),
    Custom(fancy_regex::Regex),
}

#[derive(Debug)]
pub struct Pretokenizer {
    kind: Kind,
    source: Option<String>,
}

fn compile(pattern: &str) -> Result<fancy_regex::Regex> {
    fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(10_000_000)
        .build()
        .map_err(|e| Error::Pattern(format!("cannot compile {pattern:?}: {e}")))
}

impl Pretokenizer {
    /// `None`: the whole text is one piece. Otherwise a regex in Python `regex` syntax.
    pub fn new(pattern: Option<&str>) -> Result<Self> {
        let kind = match pattern {
            None => Kind::Whole,
            Some(p) if p.is_empty() => {
                return Err(Error::Pattern("the pattern is empty (use None for no splitting)".into()))
            }
            Some(p) => {
                let preset = match p {
                    GPT2 => Some(Preset::Gpt2),
                    GPT4 => Some(Preset::Gpt4),
                    O200K => Some(Preset::O200k),
                    _ => None,
                };
                let re = compile(p)?;
                match preset {
                    Some(preset) => Kind::Preset(preset, re),
                    None => Kind::Custom(re),
                }
            }
        };
        Ok(Pretokenizer { kind, source: pattern.map(str::to_owned) })
    }

    pub fn pattern(&self) -> Option<&str> {
        self.source.as_deref()
    }

    pub fn preset(&self) -> Option<Preset> {
        match &self.kind {
            Kind::Preset(p, _) => Some(*p),
            _ => None,
        }
    }

    /// Calls `f` with each piece of `text`, in order. The pieces cover the text only where the
    /// pattern matches; text between matches (possible with custom patterns) is dropped, as
    /// `regex.findall` drops it.
    pub fn for_each_piece<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) -> Result<()> {
        match &self.kind {
            Kind::Whole => {
                if !text.is_empty() {
                    f(text)
                }
                Ok(())
            }
            Kind::Preset(_, re) | Kind::Custom(re) => {
                for m in re.find_iter(text) {
                    let m = m.map_err(|e| Error::Pattern(format!("matching failed: {e}")))?;
                    if !m.as_str().is_empty() {
                        f(m.as_str())
                    }
                }
                Ok(())
            }
        }
    }

    /// True when `cut` (a byte offset of `text`) is a place where every preset pattern ends a
    /// piece and where the pieces on each side do not depend on the other side, so that the two
    /// halves can be split independently. See `is_independent_cut`.
    pub fn can_cut(&self) -> bool {
        matches!(self.kind, Kind::Preset(..))
    }
}

/// A cut between `text[..cut]` and `text[cut..]` is independent for the preset patterns when the
/// byte before it is a `\n` preceded by a printable ASCII character and the byte after it is an
/// ASCII letter or digit. Then the newline is a piece of its own or ends a punctuation piece on
/// the left (`.\n`), nothing on the left looks past it (the `\s+$`/`\s+(?!\S)` alternatives see
/// one lone newline either way), and every preset starts a fresh piece at the letter or digit.
pub fn is_independent_cut(text: &[u8], cut: usize) -> bool {
    cut >= 2
        && cut < text.len()
        && text[cut - 1] == b'\n'
        && text[cut - 2].is_ascii_graphic()
        && text[cut].is_ascii_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(p: &Pretokenizer, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        p.for_each_piece(text, |s| out.push(s.to_owned())).unwrap();
        out
    }

    #[test]
    fn presets_split_like_tiktoken() {
        let gpt4 = Pretokenizer::new(Some(GPT4)).unwrap();
        assert_eq!(gpt4.preset(), Some(Preset::Gpt4));
        assert_eq!(
            pieces(&gpt4, "Hello world's 12345  \n\nfoo"),
            ["Hello", " world", "'s", " ", "123", "45", "  \n\n", "foo"]
        );
        let gpt2 = Pretokenizer::new(Some(GPT2)).unwrap();
        assert_eq!(pieces(&gpt2, "Hello world   x"), ["Hello", " world", "  ", " x"]);
    }

    #[test]
    fn whole_text_is_one_piece() {
        let p = Pretokenizer::new(None).unwrap();
        assert_eq!(pieces(&p, "a b  c"), ["a b  c"]);
        assert!(pieces(&p, "").is_empty());
    }

    #[test]
    fn bad_pattern_is_an_error() {
        assert!(matches!(Pretokenizer::new(Some("(")), Err(Error::Pattern(_))));
        assert!(matches!(Pretokenizer::new(Some("")), Err(Error::Pattern(_))));
    }

    #[test]
    fn independent_cuts_do_not_change_pieces() {
        let text = "Hi.\nThere  is\na cut\n\nnot here.\nX1 '\nb\nend";
        for (_, pat) in PRESETS {
            let p = Pretokenizer::new(Some(pat)).unwrap();
            let whole = pieces(&p, text);
            for cut in 0..text.len() {
                if is_independent_cut(text.as_bytes(), cut) {
                    let mut split = pieces(&p, &text[..cut]);
                    split.extend(pieces(&p, &text[cut..]));
                    assert_eq!(whole, split, "cut at {cut} in {pat}");
                }
            }
        }
    }
}
