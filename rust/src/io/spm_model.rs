//! SentencePiece `.model` files, read and written without a protobuf library.
//!
//! A `.model` is one protobuf message (`ModelProto`): repeated `pieces` (field 1: piece text,
//! score, type), `trainer_spec` (2), `normalizer_spec` (3), `self_test_data` (4) and
//! `denormalizer_spec` (5). Only the wire format is decoded here: varints, 32- and 64-bit
//! words and length-delimited bytes. The pieces become `Piece`s; every other message is kept
//! as its list of fields (`Message`), whose values the typed getters read and check, so a field
//! this reader does not know is written back as it came and never read as something else.
//!
//! Memory follows the file: nothing is reserved from a length the file claims before the bytes
//! are there (a length past the end is an error naming the field), and the pieces vector grows
//! as pieces are read.

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};

/// The type of a piece (`ModelProto.SentencePiece.Type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieceType {
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
}

impl PieceType {
    fn from_u64(v: u64) -> Option<PieceType> {
        Some(match v {
            1 => PieceType::Normal,
            2 => PieceType::Unknown,
            3 => PieceType::Control,
            4 => PieceType::UserDefined,
            5 => PieceType::Unused,
            6 => PieceType::Byte,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            PieceType::Normal => "NORMAL",
            PieceType::Unknown => "UNKNOWN",
            PieceType::Control => "CONTROL",
            PieceType::UserDefined => "USER_DEFINED",
            PieceType::Unused => "UNUSED",
            PieceType::Byte => "BYTE",
        }
    }
}

/// One vocabulary entry; its id is its index in `SpmModel::pieces`.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    pub piece: String,
    pub score: f32,
    pub kind: PieceType,
    /// Fields of the piece's message that this reader does not know, as read (wire bytes).
    pub extra: Vec<u8>,
}

/// The value of one protobuf field, by wire type.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Varint(u64),
    Fixed64(u64),
    Bytes(Vec<u8>),
    Fixed32(u32),
}

/// A message kept as its fields in file order (repeated fields are several entries).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Message {
    pub fields: Vec<(u32, Value)>,
}

/// The whole file: pieces, then every other top-level field in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct SpmModel {
    pub pieces: Vec<Piece>,
    /// `trainer_spec`, `normalizer_spec`, `self_test_data`, `denormalizer_spec` and any field of
    /// `ModelProto` this reader does not know, in file order (values of messages kept as bytes).
    pub rest: Message,
    pub trainer: Message,
    pub normalizer: Option<Message>,
    pub denormalizer: Option<Message>,
    /// piece text -> id (built by the checks, which find duplicates with it)
    index: PieceIndex,
}

/// Piece text -> id as sentencepiece's `PieceToId` finds it (unknown, control and byte pieces
/// before the others), without a copy of the texts: the text's hash -> the last id with that
/// hash, then a chain of ids. A text is at most once a reserved piece and once another (the
/// checks refuse more), so the order of a chain does not matter. Maps of `Box<str>` made a
/// 256k-piece load spend a fifth of its time allocating, freeing and growing tables.
#[derive(Clone, Debug, Default, PartialEq)]
struct PieceIndex {
    heads: FxHashMap<u64, u32>,
    next: Vec<u32>,
}

const NO_ID: u32 = u32::MAX;

fn text_hash(s: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(s)
}

fn is_reserved(k: PieceType) -> bool {
    !matches!(
        k,
        PieceType::Normal | PieceType::UserDefined | PieceType::Unused
    )
}

/// The model types of `TrainerSpec.model_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelType {
    Unigram = 1,
    Bpe = 2,
    Word = 3,
    Char = 4,
}

// Field numbers of TrainerSpec used here.
pub const TRAINER_MODEL_TYPE: u32 = 3;
pub const TRAINER_VOCAB_SIZE: u32 = 4;
pub const TRAINER_TREAT_WS_AS_SUFFIX: u32 = 24;
pub const TRAINER_SPLIT_DIGITS: u32 = 25;
pub const TRAINER_BYTE_FALLBACK: u32 = 35;
pub const TRAINER_UNK_ID: u32 = 40;
pub const TRAINER_BOS_ID: u32 = 41;
pub const TRAINER_EOS_ID: u32 = 42;
pub const TRAINER_PAD_ID: u32 = 43;
pub const TRAINER_UNK_SURFACE: u32 = 44;
pub const TRAINER_UNK_PIECE: u32 = 45;
pub const TRAINER_BOS_PIECE: u32 = 46;
pub const TRAINER_EOS_PIECE: u32 = 47;
pub const TRAINER_PAD_PIECE: u32 = 48;
// Field numbers of NormalizerSpec.
pub const NORM_NAME: u32 = 1;
pub const NORM_CHARSMAP: u32 = 2;
pub const NORM_ADD_DUMMY_PREFIX: u32 = 3;
pub const NORM_REMOVE_EXTRA_WS: u32 = 4;
pub const NORM_ESCAPE_WS: u32 = 5;

const WIRE_VARINT: u8 = 0;
const WIRE_FIXED64: u8 = 1;
const WIRE_LEN: u8 = 2;
const WIRE_FIXED32: u8 = 5;

/// A cursor over one message's bytes; errors name the file and the field being read.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    file: &'a str,
    /// the index of the piece being read (errors say `pieces[i]`)
    index: Option<usize>,
}

/// A field's value as it lies in the buffer.
enum Raw<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

impl Raw<'_> {
    fn owned(self) -> Value {
        match self {
            Raw::Varint(v) => Value::Varint(v),
            Raw::Fixed64(v) => Value::Fixed64(v),
            Raw::Bytes(b) => Value::Bytes(b.to_vec()),
            Raw::Fixed32(v) => Value::Fixed32(v),
        }
    }
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], file: &'a str, index: Option<usize>) -> Reader<'a> {
        Reader {
            buf,
            pos: 0,
            file,
            index,
        }
    }

    fn err(&self, field: &str, what: &str) -> Error {
        match self.index {
            Some(i) => Error::Format(format!("{}: {field}[{i}]: {what}", self.file)),
            None => Error::Format(format!("{}: {field}: {what}", self.file)),
        }
    }

    fn varint(&mut self, field: &str) -> Result<u64> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(self.err(field, "the file ends inside a varint (truncated)"));
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(self.err(field, "a varint longer than 64 bits"));
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(self.err(field, "a varint longer than 10 bytes"))
    }

    fn take(&mut self, n: u64, field: &str, num: Option<u32>) -> Result<&'a [u8]> {
        let left = (self.buf.len() - self.pos) as u64;
        if n > left {
            let what = format!("claims {n} bytes but only {left} are left (truncated or corrupt)");
            return Err(match num {
                Some(num) => self.err(field, &format!("field {num} {what}")),
                None => self.err(field, &what),
            });
        }
        let s = &self.buf[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }

    /// The next field: (number, value), or None at the end.
    fn field(&mut self, msg: &str) -> Result<Option<(u32, Raw<'a>)>> {
        if self.pos == self.buf.len() {
            return Ok(None);
        }
        let key = self.varint(msg)?;
        let num = key >> 3;
        let wire = (key & 7) as u8;
        if num == 0 || num > (1 << 29) - 1 {
            return Err(self.err(msg, &format!("field number {num} is not valid")));
        }
        let num = num as u32;
        let value = match wire {
            WIRE_VARINT => Raw::Varint(self.varint(msg)?),
            WIRE_FIXED64 => {
                let b = self.take(8, msg, Some(num))?;
                Raw::Fixed64(u64::from_le_bytes(b.try_into().unwrap()))
            }
            WIRE_LEN => {
                let n = self.varint(msg)?;
                Raw::Bytes(self.take(n, msg, Some(num))?)
            }
            WIRE_FIXED32 => {
                let b = self.take(4, msg, Some(num))?;
                Raw::Fixed32(u32::from_le_bytes(b.try_into().unwrap()))
            }
            _ => {
                return Err(self.err(
                    msg,
                    &format!("field {num} has wire type {wire}, which protobuf files do not use"),
                ))
            }
        };
        Ok(Some((num, value)))
    }
}

fn parse_message(buf: &[u8], file: &str, name: &str) -> Result<Message> {
    let mut r = Reader::new(buf, file, None);
    let mut fields = Vec::new();
    while let Some((num, raw)) = r.field(name)? {
        fields.push((num, raw.owned()));
    }
    Ok(Message { fields })
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_field(out: &mut Vec<u8>, num: u32, value: &Value) {
    let wire = match value {
        Value::Varint(_) => WIRE_VARINT,
        Value::Fixed64(_) => WIRE_FIXED64,
        Value::Bytes(_) => WIRE_LEN,
        Value::Fixed32(_) => WIRE_FIXED32,
    };
    put_varint(out, (u64::from(num) << 3) | u64::from(wire));
    match value {
        Value::Varint(v) => put_varint(out, *v),
        Value::Fixed64(v) => out.extend_from_slice(&v.to_le_bytes()),
        Value::Fixed32(v) => out.extend_from_slice(&v.to_le_bytes()),
        Value::Bytes(b) => {
            put_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        }
    }
}

impl Message {
    fn last(&self, num: u32) -> Option<&Value> {
        self.fields
            .iter()
            .rev()
            .find(|(n, _)| *n == num)
            .map(|(_, v)| v)
    }

    fn wrong(file: &str, msg: &str, field: &str, want: &str) -> Error {
        Error::Format(format!(
            "{file}: {msg}.{field}: expected {want} (wrong wire type)"
        ))
    }

    /// An `int32`/`int64`/`enum`/`bool` field (the last one, as protobuf reads repeats).
    pub fn varint(&self, num: u32, file: &str, msg: &str, field: &str) -> Result<Option<u64>> {
        match self.last(num) {
            None => Ok(None),
            Some(Value::Varint(v)) => Ok(Some(*v)),
            Some(_) => Err(Self::wrong(file, msg, field, "a varint")),
        }
    }

    pub fn bool(
        &self,
        num: u32,
        default: bool,
        file: &str,
        msg: &str,
        field: &str,
    ) -> Result<bool> {
        Ok(self
            .varint(num, file, msg, field)?
            .map_or(default, |v| v != 0))
    }

    /// An `int32` field: negative values are ten-byte varints, read back as i32 here.
    pub fn int32(&self, num: u32, default: i32, file: &str, msg: &str, field: &str) -> Result<i32> {
        Ok(self
            .varint(num, file, msg, field)?
            .map_or(default, |v| v as i64 as i32))
    }

    pub fn bytes(&self, num: u32, file: &str, msg: &str, field: &str) -> Result<Option<&[u8]>> {
        match self.last(num) {
            None => Ok(None),
            Some(Value::Bytes(b)) => Ok(Some(b)),
            Some(_) => Err(Self::wrong(file, msg, field, "bytes")),
        }
    }

    pub fn string(&self, num: u32, file: &str, msg: &str, field: &str) -> Result<Option<String>> {
        match self.bytes(num, file, msg, field)? {
            None => Ok(None),
            Some(b) => match std::str::from_utf8(b) {
                Ok(s) => Ok(Some(s.to_string())),
                Err(_) => Err(Error::Format(format!(
                    "{file}: {msg}.{field}: not valid UTF-8"
                ))),
            },
        }
    }

    /// Replaces every occurrence of field `num` by one `value` (appended at the end if absent).
    pub fn set(&mut self, num: u32, value: Value) {
        match self.fields.iter().position(|(n, _)| *n == num) {
            Some(i) => {
                self.fields[i].1 = value;
                let mut k = 0;
                self.fields.retain(|(n, _)| {
                    k += 1;
                    *n != num || k - 1 == i
                });
            }
            None => self.fields.push((num, value)),
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (num, value) in &self.fields {
            put_field(&mut out, *num, value);
        }
        out
    }
}

/// Reads a `<0xNN>` byte piece.
pub fn byte_of_piece(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    // spm writes upper-case digits; it reads either case
    u8::from_str_radix(hex, 16).ok()
}

fn parse_piece(buf: &[u8], file: &str, id: usize) -> Result<Piece> {
    let name = || format!("pieces[{id}]");
    let mut r = Reader::new(buf, file, Some(id));
    let mut piece = None;
    let mut score = 0.0f32;
    let mut kind = PieceType::Normal;
    let mut extra = Vec::new();
    while let Some((num, value)) = r.field("pieces")? {
        match (num, value) {
            (1, Raw::Bytes(b)) => match std::str::from_utf8(b) {
                Ok(s) => piece = Some(s),
                Err(_) => {
                    return Err(Error::Format(format!(
                        "{file}: {}.piece: not valid UTF-8",
                        name()
                    )))
                }
            },
            (2, Raw::Fixed32(bits)) => score = f32::from_bits(bits),
            (3, Raw::Varint(v)) => {
                kind = PieceType::from_u64(v).ok_or_else(|| {
                    Error::Format(format!(
                        "{file}: {}.type: {v} is not a piece type (1-6)",
                        name()
                    ))
                })?
            }
            (1..=3, _) => {
                let f = ["piece", "score", "type"][num as usize - 1];
                return Err(Error::Format(format!(
                    "{file}: {}.{f}: wrong wire type",
                    name()
                )));
            }
            (num, value) => put_field(&mut extra, num, &value.owned()),
        }
    }
    let piece = piece.unwrap_or_default();
    if piece.is_empty() {
        return Err(Error::Format(format!(
            "{file}: {}.piece: empty (pieces must not be empty)",
            name()
        )));
    }
    if score.is_nan() {
        return Err(Error::Format(format!(
            "{file}: {}.score: NaN ({piece:?})",
            name()
        )));
    }
    if score.is_infinite() && matches!(kind, PieceType::Normal | PieceType::UserDefined) {
        return Err(Error::Format(format!(
            "{file}: {}.score: {score} for a {} piece ({piece:?})",
            name(),
            kind.name()
        )));
    }
    Ok(Piece {
        piece: piece.to_string(),
        score,
        kind,
        extra,
    })
}

impl SpmModel {
    /// Reads a `.model` file's bytes; `file` names it in errors.
    pub fn parse(buf: &[u8], file: &str) -> Result<SpmModel> {
        let mut r = Reader::new(buf, file, None);
        let mut pieces = Vec::new();
        let mut rest = Message::default();
        while let Some((num, value)) = r.field("ModelProto")? {
            match (num, value) {
                (1, Raw::Bytes(b)) => pieces.push(parse_piece(b, file, pieces.len())?),
                (1..=5, Raw::Bytes(b)) => rest.fields.push((num, Value::Bytes(b.to_vec()))),
                (1..=5, _) => {
                    let f = [
                        "pieces",
                        "trainer_spec",
                        "normalizer_spec",
                        "self_test_data",
                        "denormalizer_spec",
                    ][num as usize - 1];
                    return Err(Error::Format(format!(
                        "{file}: ModelProto.{f}: wrong wire type (expected a message)"
                    )));
                }
                (num, value) => rest.fields.push((num, value.owned())),
            }
        }
        let sub = |num: u32, name: &str| -> Result<Option<Message>> {
            match rest.last(num) {
                Some(Value::Bytes(b)) => Ok(Some(parse_message(b, file, name)?)),
                _ => Ok(None),
            }
        };
        let trainer = sub(2, "trainer_spec")?.unwrap_or_default();
        let normalizer = sub(3, "normalizer_spec")?;
        let denormalizer = sub(5, "denormalizer_spec")?;
        let mut model = SpmModel {
            pieces,
            rest,
            trainer,
            normalizer,
            denormalizer,
            index: PieceIndex::default(),
        };
        model.check(file)?;
        Ok(model)
    }

    /// The checks sentencepiece makes when it loads a model, and those of the typed fields;
    /// builds the index of piece texts on the way.
    fn check(&mut self, file: &str) -> Result<()> {
        if self.pieces.is_empty() {
            return Err(Error::Format(format!(
                "{file}: ModelProto.pieces: no pieces (is this a SentencePiece model?)"
            )));
        }
        let byte_fallback = self.byte_fallback(file)?;
        self.model_type(file)?;
        self.treat_whitespace_as_suffix(file)?;
        self.split_digits(file)?;
        if let Some(n) = &self.normalizer {
            normalizer_options(n, file, "normalizer_spec")?;
        }
        if let Some(n) = &self.denormalizer {
            normalizer_options(n, file, "denormalizer_spec")?;
        }
        let n = self.pieces.len();
        let mut heads: FxHashMap<u64, u32> =
            FxHashMap::with_capacity_and_hasher(n, Default::default());
        let mut next = vec![NO_ID; n];
        let mut unk = None;
        for (i, p) in self.pieces.iter().enumerate() {
            let h = text_hash(&p.piece);
            let mut j = heads.get(&h).copied().unwrap_or(NO_ID);
            while j != NO_ID {
                let q = &self.pieces[j as usize];
                if q.piece == p.piece && is_reserved(q.kind) == is_reserved(p.kind) {
                    return Err(Error::Format(format!(
                        "{file}: pieces[{i}].piece: {:?} is already pieces[{j}]",
                        p.piece
                    )));
                }
                j = next[j as usize];
            }
            if let Some(old) = heads.insert(h, i as u32) {
                next[i] = old;
            }
            match p.kind {
                PieceType::Unknown => {
                    if let Some(j) = unk {
                        return Err(Error::Format(format!(
                            "{file}: pieces[{i}].type: a second UNKNOWN piece (the first is pieces[{j}])"
                        )));
                    }
                    unk = Some(i);
                }
                PieceType::Byte => {
                    if !byte_fallback {
                        return Err(Error::Format(format!(
                            "{file}: pieces[{i}].type: BYTE piece {:?} but trainer_spec.byte_fallback is false",
                            p.piece
                        )));
                    }
                    if byte_of_piece(&p.piece).is_none() {
                        return Err(Error::Format(format!(
                            "{file}: pieces[{i}].piece: {:?} is a BYTE piece but not <0xNN>",
                            p.piece
                        )));
                    }
                }
                _ => {}
            }
        }
        if unk.is_none() {
            return Err(Error::Format(format!(
                "{file}: ModelProto.pieces: no UNKNOWN piece (<unk>)"
            )));
        }
        self.index = PieceIndex { heads, next };
        Ok(())
    }

    /// The id of a piece text, as sentencepiece's `PieceToId` (None where it gives unk).
    pub fn piece_to_id(&self, text: &str) -> Option<u32> {
        let mut found = None;
        let mut id = self
            .index
            .heads
            .get(&text_hash(text))
            .copied()
            .unwrap_or(NO_ID);
        while id != NO_ID {
            let p = &self.pieces[id as usize];
            if p.piece == text {
                if is_reserved(p.kind) {
                    return Some(id);
                }
                found = Some(id);
            }
            id = self.index.next[id as usize];
        }
        found
    }

    pub fn model_type(&self, file: &str) -> Result<ModelType> {
        let v = self
            .trainer
            .varint(TRAINER_MODEL_TYPE, file, "trainer_spec", "model_type")?
            .unwrap_or(1);
        Ok(match v {
            1 => ModelType::Unigram,
            2 => ModelType::Bpe,
            3 => ModelType::Word,
            4 => ModelType::Char,
            _ => {
                return Err(Error::Format(format!(
                    "{file}: trainer_spec.model_type: {v} is not UNIGRAM (1), BPE (2), WORD (3) or CHAR (4)"
                )))
            }
        })
    }

    pub fn byte_fallback(&self, file: &str) -> Result<bool> {
        self.trainer.bool(
            TRAINER_BYTE_FALLBACK,
            false,
            file,
            "trainer_spec",
            "byte_fallback",
        )
    }

    pub fn split_digits(&self, file: &str) -> Result<bool> {
        self.trainer.bool(
            TRAINER_SPLIT_DIGITS,
            false,
            file,
            "trainer_spec",
            "split_digits",
        )
    }

    pub fn treat_whitespace_as_suffix(&self, file: &str) -> Result<bool> {
        self.trainer.bool(
            TRAINER_TREAT_WS_AS_SUFFIX,
            false,
            file,
            "trainer_spec",
            "treat_whitespace_as_suffix",
        )
    }

    /// The text decode writes for an unknown piece (`trainer_spec.unk_surface`, default " ⁇ ").
    pub fn unk_surface(&self, file: &str) -> Result<String> {
        Ok(self
            .trainer
            .string(TRAINER_UNK_SURFACE, file, "trainer_spec", "unk_surface")?
            .unwrap_or_else(|| " \u{2047} ".to_string()))
    }

    /// The normalizer's options (defaults when the file has no `normalizer_spec`).
    pub fn normalizer_options(&self, file: &str) -> Result<NormalizerOptions> {
        match &self.normalizer {
            Some(n) => normalizer_options(n, file, "normalizer_spec"),
            None => Ok(NormalizerOptions::default()),
        }
    }

    /// Writes the model back: the pieces, then the other top-level fields in the order read
    /// (`trainer`, `normalizer` and `denormalizer` as they are now).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        for p in &self.pieces {
            scratch.clear();
            put_field(&mut scratch, 1, &Value::Bytes(p.piece.as_bytes().to_vec()));
            put_field(&mut scratch, 2, &Value::Fixed32(p.score.to_bits()));
            if p.kind != PieceType::Normal {
                put_field(&mut scratch, 3, &Value::Varint(p.kind as u64));
            }
            scratch.extend_from_slice(&p.extra);
            put_varint(&mut out, (1 << 3) | u64::from(WIRE_LEN));
            put_varint(&mut out, scratch.len() as u64);
            out.extend_from_slice(&scratch);
        }
        let mut wrote = [false; 6];
        for (num, value) in &self.rest.fields {
            let current = match num {
                2 => Some(&self.trainer),
                3 => self.normalizer.as_ref(),
                5 => self.denormalizer.as_ref(),
                _ => None,
            };
            match current {
                Some(m) if !wrote[*num as usize] => {
                    wrote[*num as usize] = true;
                    put_field(&mut out, *num, &Value::Bytes(m.to_bytes()));
                }
                Some(_) => {} // a repeated message field: written once, merged
                None => put_field(&mut out, *num, value),
            }
        }
        for (num, m) in [
            (2usize, Some(&self.trainer)),
            (3, self.normalizer.as_ref()),
            (5, self.denormalizer.as_ref()),
        ] {
            if let Some(m) = m {
                if !(wrote[num] || (num == 2 && m.fields.is_empty())) {
                    put_field(&mut out, num as u32, &Value::Bytes(m.to_bytes()));
                }
            }
        }
        out
    }
}

/// What the normalizer does besides the charsmap.
#[derive(Clone, Debug, PartialEq)]
pub struct NormalizerOptions {
    pub name: String,
    pub charsmap: Vec<u8>,
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
}

impl Default for NormalizerOptions {
    fn default() -> Self {
        NormalizerOptions {
            name: String::new(),
            charsmap: Vec::new(),
            add_dummy_prefix: true,
            remove_extra_whitespaces: true,
            escape_whitespaces: true,
        }
    }
}

fn normalizer_options(m: &Message, file: &str, msg: &str) -> Result<NormalizerOptions> {
    Ok(NormalizerOptions {
        name: m.string(NORM_NAME, file, msg, "name")?.unwrap_or_default(),
        charsmap: m
            .bytes(NORM_CHARSMAP, file, msg, "precompiled_charsmap")?
            .map(|b| b.to_vec())
            .unwrap_or_default(),
        add_dummy_prefix: m.bool(NORM_ADD_DUMMY_PREFIX, true, file, msg, "add_dummy_prefix")?,
        remove_extra_whitespaces: m.bool(
            NORM_REMOVE_EXTRA_WS,
            true,
            file,
            msg,
            "remove_extra_whitespaces",
        )?,
        escape_whitespaces: m.bool(NORM_ESCAPE_WS, true, file, msg, "escape_whitespaces")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(out: &mut Vec<u8>, text: &str, score: f32, kind: u64) {
        let mut p = Vec::new();
        put_field(&mut p, 1, &Value::Bytes(text.as_bytes().to_vec()));
        put_field(&mut p, 2, &Value::Fixed32(score.to_bits()));
        if kind != 1 {
            put_field(&mut p, 3, &Value::Varint(kind));
        }
        put_field(out, 1, &Value::Bytes(p));
    }

    fn small() -> Vec<u8> {
        let mut out = Vec::new();
        piece(&mut out, "<unk>", 0.0, 2);
        piece(&mut out, "<s>", 0.0, 3);
        piece(&mut out, "\u{2581}a", -1.5, 1);
        piece(&mut out, "b", -2.0, 1);
        let mut t = Message::default();
        t.fields.push((TRAINER_MODEL_TYPE, Value::Varint(2)));
        t.fields.push((TRAINER_UNK_ID, Value::Varint(0)));
        t.fields.push((TRAINER_PAD_ID, Value::Varint(u64::MAX))); // -1 as int32
        t.fields.push((999, Value::Bytes(b"kept".to_vec())));
        put_field(&mut out, 2, &Value::Bytes(t.to_bytes()));
        let mut n = Message::default();
        n.fields
            .push((NORM_NAME, Value::Bytes(b"identity".to_vec())));
        n.fields.push((NORM_ADD_DUMMY_PREFIX, Value::Varint(0)));
        put_field(&mut out, 3, &Value::Bytes(n.to_bytes()));
        out
    }

    #[test]
    fn reads_and_writes_back() {
        let bytes = small();
        let m = SpmModel::parse(&bytes, "x.model").unwrap();
        assert_eq!(m.pieces.len(), 4);
        assert_eq!(m.pieces[2].piece, "\u{2581}a");
        assert_eq!(m.pieces[2].score, -1.5);
        assert_eq!(m.pieces[1].kind, PieceType::Control);
        assert_eq!(m.model_type("x").unwrap(), ModelType::Bpe);
        assert_eq!(
            m.trainer
                .int32(TRAINER_PAD_ID, 0, "x", "t", "pad_id")
                .unwrap(),
            -1
        );
        let opts = m.normalizer_options("x").unwrap();
        assert!(!opts.add_dummy_prefix && opts.remove_extra_whitespaces);
        assert_eq!(m.to_bytes(), bytes);
    }

    #[test]
    fn every_truncation_is_an_error_or_a_prefix_model() {
        let bytes = small();
        for cut in 0..bytes.len() {
            // never a panic; a cut at a field boundary may still be a model
            let _ = SpmModel::parse(&bytes[..cut], "x.model");
        }
        // a length that claims more than the file holds
        let mut bad = bytes.clone();
        bad.extend_from_slice(&[0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);
        let e = SpmModel::parse(&bad, "x.model").unwrap_err().to_string();
        assert!(e.contains("x.model") && e.contains("claims"), "{e}");
    }

    #[test]
    fn refuses_bad_pieces() {
        let mut out = Vec::new();
        piece(&mut out, "<unk>", 0.0, 2);
        piece(&mut out, "a", f32::NAN, 1);
        let e = SpmModel::parse(&out, "m").unwrap_err().to_string();
        assert!(e.contains("pieces[1].score") && e.contains("NaN"), "{e}");
        let mut out = Vec::new();
        piece(&mut out, "<unk>", 0.0, 2);
        piece(&mut out, "a", -1.0, 1);
        piece(&mut out, "a", -2.0, 1);
        let e = SpmModel::parse(&out, "m").unwrap_err().to_string();
        assert!(e.contains("pieces[2]") && e.contains("already"), "{e}");
        let mut out = Vec::new();
        piece(&mut out, "a", -1.0, 1);
        assert!(SpmModel::parse(&out, "m")
            .unwrap_err()
            .to_string()
            .contains("UNKNOWN"));
        let mut out = Vec::new();
        piece(&mut out, "<unk>", 0.0, 2);
        piece(&mut out, "<0x41>", 0.0, 6);
        assert!(SpmModel::parse(&out, "m")
            .unwrap_err()
            .to_string()
            .contains("byte_fallback"));
        // a score sent as a varint
        let mut out = Vec::new();
        piece(&mut out, "<unk>", 0.0, 2);
        let mut p = Vec::new();
        put_field(&mut p, 1, &Value::Bytes(b"a".to_vec()));
        put_field(&mut p, 2, &Value::Varint(3));
        put_field(&mut out, 1, &Value::Bytes(p));
        assert!(SpmModel::parse(&out, "m")
            .unwrap_err()
            .to_string()
            .contains("pieces[1].score"));
    }

    #[test]
    fn byte_pieces() {
        assert_eq!(byte_of_piece("<0x0A>"), Some(10));
        assert_eq!(byte_of_piece("<0xff>"), Some(255));
        assert_eq!(byte_of_piece("<0x1>"), None);
        assert_eq!(byte_of_piece("<0x+1>"), None);
    }
}
