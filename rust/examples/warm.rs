//! Profiling harness (not a test): encodes a file twice with o200k (or the preset named by
//! the fourth argument: gpt2, gpt4, o200k), cold then warm.
//! `cargo run --release --example warm -- RANKS.tiktoken TEXT [passes] [preset]`
use bytepair_core::encode::{Bpe, Encoder};
use bytepair_core::pretok::{Pretokenizer, PRESETS};

fn b64(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => continue,
        } as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ranks: Vec<(u32, Vec<u8>)> = std::fs::read_to_string(&args[1])
        .unwrap()
        .lines()
        .map(|l| {
            let (t, r) = l.split_once(' ').unwrap();
            (r.parse().unwrap(), b64(t))
        })
        .collect();
    let text = std::fs::read_to_string(&args[2]).unwrap();
    let passes: usize = args.get(3).map_or(2, |p| p.parse().unwrap());
    let preset = args.get(4).map_or("o200k", |p| p.as_str());
    let pat = PRESETS.iter().find(|(n, _)| *n == preset).unwrap().1;
    let enc = Encoder::new(
        Bpe::from_ranks(ranks).unwrap(),
        Pretokenizer::new(Some(pat)).unwrap(),
        vec![],
    )
    .unwrap();
    let mut n = 0;
    for _ in 0..passes {
        let t = std::time::Instant::now();
        let mut out = Vec::with_capacity(text.len() / 3);
        enc.encode_ordinary_into(&text, &mut out).unwrap();
        n = out.len();
        eprintln!(
            "{} tokens, {:.1} MB/s",
            n,
            text.len() as f64 / t.elapsed().as_secs_f64() / 1e6
        );
    }
    println!("{n}");
}
