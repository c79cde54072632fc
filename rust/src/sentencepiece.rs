//! A SentencePiece model as sentencepiece's processor runs it: a `.model` file
//! (`io::spm_model`) made into its normalizer (`text::normalize`), its model (Unigram from
//! `unigram::model`, BPE from `bpe::spm`), then the processor's own steps on the model's pieces:
//! runs of unknown pieces joined into one, and with `byte_fallback` each unknown piece written as
//! the `<0xNN>` pieces of its bytes. Decoding is the processor's too: control pieces are
//! invisible, an unknown piece is `unk_surface` (" ⁇ "), `▁` is a space, a leading `▁` is dropped
//! while nothing has been written yet, and runs of byte pieces are read as UTF-8 where each byte
//! of a broken sequence is one U+FFFD.
//!
//! Behaviour learned by running sentencepiece 0.2.3 and pinned by the Python tests that compare
//! ids and texts with it (tests/test_sentencepiece*.py).

use crate::bpe::spm::{self as spm_bpe, SpmBpe};
use crate::error::{Error, Result};
use crate::io::spm_model::{byte_of_piece, ModelType, PieceType, SpmModel};
use crate::text::normalize::{Charsmap, Normalizer, NormalizerSpec, PrefixMatcher, SPACE_SYMBOL};
use crate::text::word_cache::WordPieces;
use crate::unigram::model::{self as unigram, Unigram};
use crate::unigram::sample::Rng;
use crate::Rank;

/// How `encode_into` picks a segmentation: the model's best, or one drawn as sentencepiece's
/// `enable_sampling` draws it (subword regularization).
#[derive(Clone, Copy, Debug)]
pub enum Sampling {
    Best,
    /// Unigram: from the whole lattice (`nbest < 0`) or the `nbest` best (`nbest > 1`; 0 and 1
    /// are the best), with probability proportional to `exp(alpha * score)`. BPE: each merge
    /// skipped with probability `alpha` (BPE-dropout; `nbest` unused).
    Sample {
        alpha: f64,
        nbest: i64,
        seed: u64,
    },
}

#[derive(Clone, Debug)]
enum Model {
    Unigram(Unigram),
    Bpe(SpmBpe),
}

/// A loaded SentencePiece model.
#[derive(Clone, Debug)]
pub struct SentencePiece {
    /// the file as read (written back by `to_bytes`)
    pub file: SpmModel,
    normalizer: Normalizer,
    model: Model,
    kinds: Vec<PieceType>,
    /// `<0xNN>` -> id (the unknown id where the model has no such piece)
    byte_ids: [Rank; 256],
    /// id -> byte, for byte pieces
    byte_of: Vec<u8>,
    unk: Rank,
    unk_surface: String,
    byte_fallback: bool,
    /// decode drops a leading `▁` (add_dummy_prefix or remove_extra_whitespaces)
    strip_leading_space: bool,
    /// decode drops the leading `▁` of every piece until some text is written (else only the
    /// first piece's)
    remove_extra_whitespaces: bool,
    pub model_type: ModelType,
}

impl SentencePiece {
    /// Reads a `.model` file's bytes (`name` is used in errors).
    pub fn from_bytes(buf: &[u8], name: &str) -> Result<SentencePiece> {
        SentencePiece::new(SpmModel::parse(buf, name)?, name)
    }

    pub fn from_file(path: &str) -> Result<SentencePiece> {
        let buf = std::fs::read(path).map_err(Error::io(path))?;
        SentencePiece::from_bytes(&buf, path)
    }

    pub fn new(file: SpmModel, name: &str) -> Result<SentencePiece> {
        let model_type = file.model_type(name)?;
        let opts = file.normalizer_options(name)?;
        let byte_fallback = file.byte_fallback(name)?;
        let suffix = file.treat_whitespace_as_suffix(name)?;
        let charsmap = if opts.charsmap.is_empty() {
            None
        } else {
            Some(Charsmap::parse(&opts.charsmap).map_err(|e| {
                Error::Format(format!("{name}: normalizer_spec.precompiled_charsmap: {e}"))
            })?)
        };
        let user = PrefixMatcher::new(
            file.pieces
                .iter()
                .filter(|p| p.kind == PieceType::UserDefined)
                .map(|p| p.piece.as_bytes()),
        );
        let normalizer = Normalizer {
            charsmap,
            user,
            spec: NormalizerSpec {
                add_dummy_prefix: opts.add_dummy_prefix,
                remove_extra_whitespaces: opts.remove_extra_whitespaces,
                escape_whitespaces: opts.escape_whitespaces,
                treat_whitespace_as_suffix: suffix,
            },
        };
        let mut unk = None;
        let mut byte_of = vec![0u8; file.pieces.len()];
        for (i, p) in file.pieces.iter().enumerate() {
            if p.kind == PieceType::Unknown {
                unk = Some(i as Rank);
            }
            if p.kind == PieceType::Byte {
                byte_of[i] = byte_of_piece(&p.piece).unwrap_or(0);
            }
        }
        let unk = unk.ok_or_else(|| Error::Format(format!("{name}: no UNKNOWN piece")))?;
        let mut byte_ids = [unk; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            let piece = format!("<0x{b:02X}>");
            if let Some(id) = file.piece_to_id(&piece) {
                *slot = id;
            }
        }
        let model = match model_type {
            ModelType::Unigram => {
                let list: Vec<(&str, f32, unigram::Kind)> = file
                    .pieces
                    .iter()
                    .map(|p| {
                        let k = match p.kind {
                            PieceType::Normal => unigram::Kind::Normal,
                            PieceType::UserDefined => unigram::Kind::UserDefined,
                            PieceType::Unused => unigram::Kind::Unused,
                            _ => unigram::Kind::Reserved,
                        };
                        (p.piece.as_str(), p.score, k)
                    })
                    .collect();
                Model::Unigram(Unigram::new(&list, unk))
            }
            ModelType::Bpe => {
                let list: Vec<(&str, f32, spm_bpe::Kind)> = file
                    .pieces
                    .iter()
                    .map(|p| {
                        let k = match p.kind {
                            PieceType::Normal => spm_bpe::Kind::Normal,
                            PieceType::UserDefined => spm_bpe::Kind::UserDefined,
                            PieceType::Unused => spm_bpe::Kind::Unused,
                            _ => spm_bpe::Kind::Reserved,
                        };
                        (p.piece.as_str(), p.score, k)
                    })
                    .collect();
                Model::Bpe(SpmBpe::new(&list, unk))
            }
            other => {
                return Err(Error::Format(format!(
                    "{name}: trainer_spec.model_type: {other:?} models are not supported yet (UNIGRAM and BPE are)"
                )))
            }
        };
        Ok(SentencePiece {
            unk_surface: file.unk_surface(name)?,
            kinds: file.pieces.iter().map(|p| p.kind).collect(),
            strip_leading_space: opts.add_dummy_prefix || opts.remove_extra_whitespaces,
            remove_extra_whitespaces: opts.remove_extra_whitespaces,
            file,
            normalizer,
            model,
            byte_ids,
            byte_of,
            unk,
            byte_fallback,

            model_type,
        })
    }

    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    pub fn unk_id(&self) -> Rank {
        self.unk
    }

    pub fn kind(&self, id: Rank) -> Option<PieceType> {
        self.kinds.get(id as usize).copied()
    }

    pub fn piece(&self, id: Rank) -> Option<&str> {
        self.file.pieces.get(id as usize).map(|p| p.piece.as_str())
    }

    /// The id of a piece text, as sentencepiece's `piece_to_id` (None where it says unk).
    pub fn piece_to_id(&self, piece: &str) -> Option<Rank> {
        self.file.piece_to_id(piece)
    }

    /// Normalized text (what the model sees), and with `offsets` the original byte offset of
    /// each of its bytes plus one for the end.
    pub fn normalize(&self, text: &str, out: &mut Vec<u8>, offsets: Option<&mut Vec<usize>>) {
        self.normalizer.normalize(text, out, offsets);
    }

    /// The model's pieces of normalized text, unknown runs joined: (end byte, id).
    fn pieces_of(&self, norm: &[u8], sampling: Sampling, out: &mut Vec<(usize, Rank)>) {
        out.clear();
        match (&self.model, sampling) {
            (Model::Unigram(m), Sampling::Best) => m.encode(norm, out),
            (Model::Bpe(m), Sampling::Best) => m.encode(norm, out),
            (Model::Unigram(m), Sampling::Sample { alpha, nbest, seed }) => {
                let mut rng = Rng::new(seed);
                match nbest {
                    ..0 => m.sample(norm, alpha, &mut rng, out),
                    0 | 1 => m.encode(norm, out),
                    n => m.sample_nbest(norm, n as usize, alpha, &mut rng, out),
                }
            }
            (Model::Bpe(m), Sampling::Sample { alpha, seed, .. }) => {
                m.encode_dropout(norm, alpha, &mut Rng::new(seed), out)
            }
        }
        // join runs of unknown pieces
        let mut w = 0;
        for r in 0..out.len() {
            if w > 0 && out[r].1 == self.unk && out[w - 1].1 == self.unk {
                out[w - 1].0 = out[r].0;
            } else {
                out[w] = out[r];
                w += 1;
            }
        }
        out.truncate(w);
    }

    /// Appends the ids of `text`; with `spans`, the (start, end) byte offsets in `text` of each.
    pub fn encode_into(
        &self,
        text: &str,
        scratch: &mut Scratch,
        ids: &mut Vec<Rank>,
        spans: Option<&mut Vec<(usize, usize)>>,
    ) {
        self.encode_sampled_into(text, Sampling::Best, scratch, ids, spans)
    }

    /// `encode_into` with the segmentation picked by `sampling`.
    pub fn encode_sampled_into(
        &self,
        text: &str,
        sampling: Sampling,
        scratch: &mut Scratch,
        ids: &mut Vec<Rank>,
        mut spans: Option<&mut Vec<(usize, usize)>>,
    ) {
        let want = spans.is_some();
        // the word path (no offsets, the best segmentation) cuts words at the marks
        let by_words = !want && matches!(sampling, Sampling::Best);
        self.normalizer.normalize_marking(
            text,
            &mut scratch.norm,
            want.then_some(&mut scratch.offsets),
            by_words.then_some(&mut scratch.marks),
        );
        if by_words {
            // word by word straight to ids, without the (end, id) list the spans need
            let mut w = IdWriter {
                unk: self.unk,
                bytes: self.byte_fallback.then_some(&self.byte_ids),
                last_unk: false,
                text: &scratch.norm,
                ids,
            };
            let marks = scratch.marks.iter().map(|&p| p as usize);
            let by_words = match &self.model {
                Model::Unigram(m) => m.each_word(&scratch.norm, marks, |at, p| w.word(at, p)),
                Model::Bpe(m) => m.each_word(&scratch.norm, marks, |at, p| w.word(at, p)),
            };
            if by_words {
                return;
            }
        }
        let mut pieces = std::mem::take(&mut scratch.pieces);
        self.pieces_of(&scratch.norm, sampling, &mut pieces);
        let mut start = 0;
        for &(end, id) in &pieces {
            let span = if want {
                (scratch.offsets[start], scratch.offsets[end])
            } else {
                (0, 0)
            };
            if id == self.unk && self.byte_fallback {
                for &b in &scratch.norm[start..end] {
                    ids.push(self.byte_ids[b as usize]);
                    if let Some(s) = spans.as_deref_mut() {
                        s.push(span);
                    }
                }
            } else {
                ids.push(id);
                if let Some(s) = spans.as_deref_mut() {
                    s.push(span);
                }
            }
            start = end;
        }
        scratch.pieces = pieces;
    }

    pub fn encode(&self, text: &str) -> Vec<Rank> {
        let mut ids = Vec::new();
        self.encode_into(text, &mut Scratch::default(), &mut ids, None);
        ids
    }

    /// The pieces of `text` as sentencepiece's `encode(out_type=str)` gives them: byte pieces
    /// as `<0xNN>`, an unknown piece (without byte fallback) as the normalized text it covers.
    pub fn encode_pieces(&self, text: &str) -> Vec<String> {
        let mut norm = Vec::new();
        self.normalizer.normalize(text, &mut norm, None);
        let mut pieces = Vec::new();
        self.pieces_of(&norm, Sampling::Best, &mut pieces);
        let mut out = Vec::with_capacity(pieces.len());
        let mut start = 0;
        for (end, id) in pieces {
            let surface = &norm[start..end];
            if id == self.unk && self.byte_fallback {
                out.extend(surface.iter().map(|b| format!("<0x{b:02X}>")));
            } else if id == self.unk {
                out.push(String::from_utf8_lossy(surface).into_owned());
            } else {
                out.push(self.piece(id).unwrap_or("").to_string());
            }
            start = end;
        }
        out
    }

    /// Decodes ids to text as sentencepiece's `decode` does.
    pub fn decode(&self, ids: &[Rank]) -> Result<String> {
        let mut out = String::new();
        let mut bytes: Vec<u8> = Vec::new();
        // whether the next piece's leading `▁` is the text's first (dropped)
        let mut bos = self.strip_leading_space;
        for &id in ids {
            let Some(&kind) = self.kinds.get(id as usize) else {
                return Err(Error::UnknownId(u64::from(id)));
            };
            if kind == PieceType::Byte {
                bytes.push(self.byte_of[id as usize]);
                continue;
            }
            flush_bytes(&mut bytes, &mut out);
            if !out.is_empty() {
                bos = false;
            }
            match kind {
                PieceType::Control => continue,
                PieceType::Unknown => out.push_str(&self.unk_surface),
                _ => {
                    let mut piece = self.file.pieces[id as usize].piece.as_str();
                    // also with treat_whitespace_as_suffix (sentencepiece 0.2.3 decodes so)
                    if bos {
                        piece = piece.strip_prefix(SPACE_SYMBOL).unwrap_or(piece);
                    }
                    push_unescaped(&mut out, piece);
                }
            }
            // with remove_extra_whitespaces, pieces that wrote nothing keep the text's start
            bos = bos && self.remove_extra_whitespaces && out.is_empty();
        }
        flush_bytes(&mut bytes, &mut out);
        Ok(out)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.file.to_bytes()
    }
}

/// Buffers reused across the texts of one thread.
#[derive(Default)]
pub struct Scratch {
    norm: Vec<u8>,
    /// where each `▁` starts in `norm`
    marks: Vec<u32>,
    offsets: Vec<usize>,
    pieces: Vec<(usize, Rank)>,
}

/// Writes a text's pieces as sentencepiece's processor writes their ids, word by word: each
/// unknown piece as the ids of its bytes (`bytes`: byte fallback), else each run of unknown
/// pieces as one unknown id (`pieces_of` and `encode_sampled_into` on the (end, id) list).
struct IdWriter<'a> {
    unk: Rank,
    bytes: Option<&'a [Rank; 256]>,
    /// the last piece written was unknown
    last_unk: bool,
    /// the normalized text
    text: &'a [u8],
    ids: &'a mut Vec<Rank>,
}

impl IdWriter<'_> {
    #[inline(always)]
    fn word(&mut self, start: usize, pieces: WordPieces<'_>) {
        match pieces {
            WordPieces::Cached { ids, ends, four } => {
                let k = ids.len();
                if k <= 4 {
                    // Most words: the first `k` of `four` hold no unknown id, and are stored
                    // whole, without a branch on `k` (the test for the unknown id as a loop
                    // and `extend_from_slice`'s `memcpy` call went either way word after word).
                    let unk = four.map(|id| u32::from(id == self.unk));
                    let hit = (unk[0] | unk[1] << 1 | unk[2] << 2 | unk[3] << 3) & ((1 << k) - 1);
                    if hit == 0 {
                        self.ids.reserve(4);
                        // SAFETY: room for four more ids was reserved; `k` of them are kept.
                        unsafe {
                            let n = self.ids.len();
                            self.ids
                                .as_mut_ptr()
                                .add(n)
                                .cast::<[u32; 4]>()
                                .write_unaligned(four);
                            self.ids.set_len(n + k);
                        }
                        self.last_unk &= k == 0;
                        return;
                    }
                } else if !ids.contains(&self.unk) {
                    self.ids.extend_from_slice(ids);
                    self.last_unk = false;
                    return;
                }
                let mut at = start;
                for (&end, &id) in ends.iter().zip(ids) {
                    self.piece(at, start + end as usize, id);
                    at = start + end as usize;
                }
            }
            WordPieces::Searched(ps) => {
                let mut at = start;
                for &(end, id) in ps {
                    self.piece(at, start + end, id);
                    at = start + end;
                }
            }
        }
    }

    fn piece(&mut self, start: usize, end: usize, id: Rank) {
        if id != self.unk {
            self.ids.push(id);
            self.last_unk = false;
            return;
        }
        match self.bytes {
            Some(b) => self
                .ids
                .extend(self.text[start..end].iter().map(|&x| b[x as usize])),
            None if !self.last_unk => self.ids.push(self.unk),
            None => {}
        }
        self.last_unk = true;
    }
}

fn push_unescaped(out: &mut String, piece: &str) {
    let mut rest = piece;
    while let Some(k) = rest.find(SPACE_SYMBOL) {
        out.push_str(&rest[..k]);
        out.push(' ');
        rest = &rest[k + SPACE_SYMBOL.len()..];
    }
    out.push_str(rest);
}

/// Byte pieces as text: each whole UTF-8 character as itself, each other byte as U+FFFD.
fn flush_bytes(bytes: &mut Vec<u8>, out: &mut String) {
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let good = e.valid_up_to();
                out.push_str(std::str::from_utf8(&rest[..good]).unwrap());
                out.push('\u{FFFD}');
                rest = &rest[good + 1..];
            }
        }
    }
    bytes.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_bytes_become_one_replacement_each() {
        let mut out = String::new();
        flush_bytes(&mut vec![0xe6, 0x97, b'a', 0xe6, 0x97, 0xa5], &mut out);
        assert_eq!(out, "\u{FFFD}\u{FFFD}a\u{65e5}");
        out.clear();
        flush_bytes(&mut vec![0xed, 0xa0, 0x80], &mut out);
        assert_eq!(out, "\u{FFFD}\u{FFFD}\u{FFFD}");
    }
}
