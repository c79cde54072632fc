//! Profiling harness (not a test): encodes a file twice with o200k (or the preset named by
//! the fourth argument: gpt2, gpt4, o200k), cold then warm.
//! `cargo run --release --example warm -- RANKS.tiktoken TEXT [passes] [preset]`
use bytepair_core::bpe::encode::{Bpe, Encoder};
use bytepair_core::text::pretok::{Pretokenizer, PRESETS};

mod common;
use common::cpu_seconds;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ranks = bytepair_core::bpe::ranks::parse(&std::fs::read(&args[1]).unwrap()).unwrap();
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
        let (t, cpu) = (std::time::Instant::now(), cpu_seconds());
        let mut out = Vec::with_capacity(text.len() / 3);
        enc.encode_ordinary_into(&text, &mut out).unwrap();
        n = out.len();
        // Also per second of this thread's CPU time: on a shared machine, time spent waiting
        // for a core is not the encoder's.
        eprintln!(
            "{} tokens, {:.1} MB/s, {:.1} MB/s of CPU time",
            n,
            text.len() as f64 / t.elapsed().as_secs_f64() / 1e6,
            text.len() as f64 / (cpu_seconds() - cpu) / 1e6
        );
    }
    println!("{n}");
}
