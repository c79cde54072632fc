//! The bodies of the fuzz targets, shared by the cargo-fuzz targets in
//! `fuzz_targets/` (long runs, nightly + libFuzzer) and by `rust/tests/fuzz_bodies.rs`, which runs
//! them on stable over the seed corpora in `seeds/` and a deterministic pseudo-random generator.
//! Every body takes arbitrary bytes and panics only when a property of the core fails: a panic
//! inside the core is a bug, and so is any answer other than `Ok` or a clean `Err`.

use bytepair_core::bpe::encode::{Bpe, Encoder, Parallel};
use bytepair_core::bpe::ranks;
use bytepair_core::io::packed;
use bytepair_core::text::pretok::{Pretokenizer, GPT2, GPT4, O200K};
use bytepair_core::Rank;

/// Custom patterns tried by `pretok` besides the presets and the pattern the input carries.
const CUSTOM: [&str; 3] = [r"\w+|\s+|[^\w\s]+", r"a|(?=b)", r"\p{L}+"];

/// Pre-tokenizers: for every preset, the pieces concatenate back to the text and the hand-written
/// scanner gives the pieces of the preset's regex run by fancy-regex; custom patterns (fixed ones
/// and one taken from the input's first line) compile or fail cleanly and never lose text.
pub fn pretok(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let text = &text[..floor_char(&text, 4096)];
    for preset in [GPT2, GPT4, O200K] {
        let scanner = Pretokenizer::new(Some(preset)).expect("a preset compiles");
        let got = pieces(&scanner, text).expect("presets cannot fail");
        assert_eq!(got.concat(), text, "preset pieces lose text");
        assert!(got.iter().all(|p| !p.is_empty()), "empty piece");
        // The byte walk the encoder takes (bit-mask windows, `pretok/masks.rs`).
        let mut bytes: Vec<&[u8]> = Vec::new();
        let walked = scanner.try_for_each_piece_bytes(text, |p| {
            bytes.push(p);
            std::ops::ControlFlow::<()>::Continue(())
        });
        assert!(walked.is_ok(), "presets cannot fail");
        let same =
            bytes.len() == got.len() && bytes.iter().zip(&got).all(|(b, g)| *b == g.as_bytes());
        assert!(same, "the byte walk differs from the scanner on {text:?}");
        // The same pattern, wrapped so that it is not recognised as a preset: the regex path.
        let regex = Pretokenizer::new(Some(&format!("(?:{preset})"))).expect("compiles");
        if let Ok(want) = pieces(&regex, text) {
            assert_eq!(got, want, "scanner differs from the regex on {text:?}");
        }
    }
    let first = text.split('\n').next().unwrap_or("");
    let own = &first[..floor_char(first, 48)];
    for pattern in CUSTOM.iter().copied().chain([own]) {
        let Ok(p) = Pretokenizer::new(Some(pattern)) else {
            continue; // a pattern that does not compile is a clean error
        };
        if let Ok(got) = pieces(&p, text) {
            assert_eq!(got.concat(), text, "pattern {pattern:?} loses text");
        }
    }
}

fn pieces<'t>(p: &Pretokenizer, text: &'t str) -> bytepair_core::error::Result<Vec<&'t str>> {
    let mut out = Vec::new();
    p.for_each_piece(text, |piece| out.push(piece))?;
    Ok(out)
}

fn floor_char(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The encoder on a small vocabulary the input builds: the 256 bytes, then up to 40 tokens each
/// made of two earlier ones (what training makes). decode(encode(x)) == x; the ids are those of
/// the naive merge loop (tiktoken's rule: merge the adjacent pair whose bytes make the
/// lowest-ranked token, leftmost first); cutting into chunks changes nothing; an allowed special
/// token becomes its id.
pub fn encode(data: &[u8]) {
    let (&head, rest) = data.split_first().unwrap_or((&0, &[]));
    let merges = (head as usize % 41).min(rest.len() / 2);
    let (picks, text) = rest.split_at(merges * 2);
    let mut vocab: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for pick in picks.chunks(2) {
        // Prefer recent tokens so that long tokens appear.
        let n = vocab.len();
        let a = n - 1 - (pick[0] as usize % n);
        let b = n - 1 - (pick[1] as usize % n);
        let token = [vocab[a].as_slice(), vocab[b].as_slice()].concat();
        if token.len() <= 24 && !vocab.contains(&token) {
            vocab.push(token);
        }
    }
    let text = String::from_utf8_lossy(text);
    let text = &text[..floor_char(&text, 2048)];
    let ranked: Vec<(Rank, Vec<u8>)> = vocab
        .iter()
        .cloned()
        .zip(0..)
        .map(|(t, r)| (r, t))
        .collect();
    let bpe = Bpe::from_ranks(ranked).expect("a merge-built vocabulary loads");
    let pattern = [None, Some(GPT2), Some(GPT4), Some(O200K)][head as usize % 4];
    let special = vocab.len() as Rank;
    let encoder = Encoder::new(
        bpe,
        Pretokenizer::new(pattern).expect("compiles"),
        vec![("<|x|>".to_string(), special)],
    )
    .expect("encoder");
    let mut ids = Vec::new();
    encoder
        .encode_ordinary_into(text, &mut ids)
        .expect("encode");
    let mut back = Vec::new();
    encoder.decode_into(&ids, &mut back).expect("decode");
    assert_eq!(back, text.as_bytes(), "decode(encode(x)) != x");

    let mut want = Vec::new();
    Pretokenizer::new(pattern)
        .expect("compiles")
        .for_each_piece(text, |piece| want.extend(naive(&vocab, piece.as_bytes())))
        .expect("presets cannot fail");
    assert_eq!(
        ids, want,
        "ids differ from the naive merge loop on {text:?}"
    );

    let chunked = Parallel {
        threads: 1,
        chunk_bytes: Some(1 + (head as usize % 7)),
        segments: head % 2 == 0,
    };
    let parts = encoder
        .encode_texts(&[text], &[], chunked)
        .expect("encode in chunks");
    assert_eq!(parts, vec![ids.clone()], "chunks change the ids");

    // The second time, a text of 64 bytes or more comes from the segment cache.
    let mut again = Vec::new();
    encoder
        .encode_ordinary_into(text, &mut again)
        .expect("encode again");
    assert_eq!(again, ids, "the segment cache changes the ids");

    let with = format!("{text}<|x|>{text}");
    let mut ids = Vec::new();
    encoder
        .encode_into(&with, &[special], &mut ids)
        .expect("encode with special");
    assert_eq!(
        ids.iter().filter(|&&i| i == special).count(),
        1 + 2 * text.matches("<|x|>").count()
    );
    let mut back = Vec::new();
    encoder
        .decode_into(&ids, &mut back)
        .expect("decode special");
    assert_eq!(back, with.as_bytes());
}

/// tiktoken's merge rule, the slow way.
fn naive(vocab: &[Vec<u8>], piece: &[u8]) -> Vec<Rank> {
    let rank = |t: &[u8]| vocab.iter().position(|v| v == t).map(|r| r as Rank);
    let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
    loop {
        let best = (0..parts.len().saturating_sub(1))
            .filter_map(|i| {
                rank(&[parts[i].as_slice(), parts[i + 1].as_slice()].concat()).map(|r| (r, i))
            })
            .min();
        let Some((_, i)) = best else { break };
        let right = parts.remove(i + 1);
        parts[i].extend_from_slice(&right);
    }
    parts
        .iter()
        .map(|p| rank(p).expect("a part is a token"))
        .collect()
}

/// The rank-file reader: any bytes give `None` or ranks that load (or fail) cleanly; a loaded
/// vocabulary gives back each token's bytes and finds each token by its bytes.
pub fn ranks(data: &[u8]) {
    let Some(parsed) = ranks::parse(data) else {
        return;
    };
    let Ok(bpe) = Bpe::from_ranks(parsed.clone()) else {
        return;
    };
    for (rank, token) in parsed.iter().take(256) {
        assert_eq!(
            bpe.token_bytes(*rank).expect("a loaded rank"),
            token.as_slice()
        );
        assert_eq!(bpe.lookup(token), Some(*rank));
    }
}

/// The packed-counts reader: any bytes give a clean `Err` or counts that pack back to the same
/// counts.
pub fn packed(data: &[u8]) {
    let Ok((stats, counts)) = packed::unpack(data) else {
        return;
    };
    let blob = packed::pack(counts.iter().copied(), stats);
    let (stats2, counts2) = packed::unpack(&blob).expect("what pack writes unpacks");
    assert_eq!(counts, counts2);
    assert_eq!(
        (stats.bytes, stats.documents, stats.replaced, stats.words),
        (
            stats2.bytes,
            stats2.documents,
            stats2.replaced,
            stats2.words
        )
    );
}

/// JSON lines for corpus encoding (the string parser reads runs as text unchecked):
/// `texts` and `block` take the same whole lines, `block` holds the same texts less the empty
/// ones, every text is valid UTF-8, and each line taken reads alone (`field_of`) as it did in
/// the run.
pub fn jsonl(data: &[u8]) {
    use bytepair_core::io::jsonl::{block, field_of, texts};
    for field in ["text", "t\u{e9}xt"] {
        let t = texts(data, 0, field);
        let b = block(data, 0, field);
        assert_eq!((t.used, t.lines), (b.used, b.lines));
        assert!(t.used <= data.len());
        assert!(t.used == 0 || t.used == data.len() || data[t.used - 1] == b'\n');
        for s in &t.texts {
            assert!(std::str::from_utf8(s.as_bytes()).is_ok());
        }
        assert!(std::str::from_utf8(b.text.as_bytes()).is_ok());
        let mut start = 0;
        let docs: Vec<&str> = b
            .ends
            .iter()
            .map(|&e| {
                let d = &b.text[start..e];
                start = e;
                d
            })
            .collect();
        assert_eq!(start, b.text.len());
        let nonempty: Vec<&str> = t
            .texts
            .iter()
            .map(|s| s.as_str())
            .filter(|s| !s.is_empty())
            .collect();
        assert_eq!(docs, nonempty);
        let blank = |l: &[u8]| {
            l.iter()
                .all(|&c| matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c | 0x1c..=0x1f))
        };
        let lines: Vec<&[u8]> = data[..t.used]
            .split_inclusive(|&c| c == b'\n')
            .filter(|l| !blank(l))
            .collect();
        assert_eq!(lines.len(), t.texts.len());
        for (line, text) in lines.iter().zip(&t.texts) {
            assert_eq!(field_of(line, field).as_deref(), Some(text.as_str()));
        }
        // The line it stopped at, if any, is one it does not take alone either.
        if t.used < data.len() {
            let rest = &data[t.used..];
            let end = rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(rest.len(), |i| i + 1);
            assert_eq!(field_of(&rest[..end], field), None);
        }
    }
}
