//! Profiling harness (not a test): the steady state of a long run. Encodes text A to warm the
//! piece cache, then times text B (text neither cached nor seen), in documents of about 8 KiB
//! cut after a newline, one `encode_ordinary_into` each, then B again (repeated text).
//! `cargo run --release --example unseen -- RANKS.tiktoken A.txt B.txt [preset] [repeats]`
//! (`repeats`: how many times B is encoded again, 1 by default; more, to profile that pass.)
use bytepair_core::bpe::encode::{Bpe, Encoder};
use bytepair_core::text::pretok::Pretokenizer;

mod common;
use common::cpu_seconds;

fn documents(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let j = match text.as_bytes()[(i + 8192).min(text.len())..]
            .iter()
            .position(|&b| b == b'\n')
        {
            Some(k) => (i + 8192).min(text.len()) + k + 1,
            None => text.len(),
        };
        out.push(&text[i..j]);
        i = j;
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (ranks, a, b, pat) = common::rank_texts(&args);
    let enc = Encoder::new(
        Bpe::from_ranks(ranks).unwrap(),
        Pretokenizer::new(Some(pat)).unwrap(),
        vec![],
    )
    .unwrap();
    // `SEGMENTS=0`: the segment cache off, so that a repeated pass encodes its pieces again.
    if std::env::var_os("SEGMENTS").is_some_and(|v| v == "0") {
        enc.set_segment_cache(0);
    }
    let repeats: usize = args.get(5).map_or(1, |r| r.parse().unwrap());
    let mut out = Vec::new();
    // The split alone (no lookups): what the pre-tokenizer costs of the warm path.
    if std::env::var_os("SPLIT_ONLY").is_some() {
        for _ in 0..3 {
            let t = cpu_seconds();
            let mut n = 0usize;
            for d in documents(&b) {
                // The encoder's own walk (the 64-byte mask windows where the preset has them).
                let _ = enc
                    .pretokenizer()
                    .try_for_each_piece_bytes::<()>(d, |p| {
                        n += p.len() & 1;
                        std::ops::ControlFlow::Continue(())
                    })
                    .unwrap();
            }
            let s = cpu_seconds() - t;
            eprintln!(
                "   split: {n} odd pieces, {:.1} MB/s",
                b.len() as f64 / s / 1e6
            );
        }
    }
    let passes = [("first", &a), ("unseen", &b)]
        .into_iter()
        .chain(std::iter::repeat_n(("repeated", &b), repeats));
    // `PERF_CTL=FIFO`: `perf record -D -1 --control=fifo:FIFO` records the unseen pass alone.
    let ctl = std::env::var_os("PERF_CTL");
    // `PERF_PASS=repeated`: record the repeated passes instead.
    let recorded = std::env::var("PERF_PASS").unwrap_or_else(|_| "unseen".into());
    let perf = |cmd: &str| {
        if let Some(p) = &ctl {
            std::fs::write(p, cmd).unwrap();
        }
    };
    for (name, text) in passes {
        if name == recorded {
            perf("enable\n");
        }
        let t = cpu_seconds();
        let mut n = 0;
        for d in documents(text) {
            out.clear();
            enc.encode_ordinary_into(d, &mut out).unwrap();
            n += out.len();
        }
        let s = cpu_seconds() - t;
        if name == recorded {
            perf("disable\n");
        }
        eprintln!(
            "{name:>8}: {n} tokens, {:.1} MB/s",
            text.len() as f64 / s / 1e6
        );
    }
}
