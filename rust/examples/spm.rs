//! Encodes a text file's lines with a SentencePiece .model, for profiling:
//! `cargo run --release --example spm -- MODEL TEXT [passes]`.
use bytepair_core::sentencepiece::{Scratch, SentencePiece};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let t = std::time::Instant::now();
    let sp = SentencePiece::from_file(&args[1]).expect("model");
    eprintln!(
        "loaded {} pieces in {:.1} ms",
        sp.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    let text = std::fs::read_to_string(&args[2]).expect("text");
    let passes: usize = args.get(3).map_or(3, |p| p.parse().unwrap());
    let mut scratch = Scratch::default();
    let mut ids = Vec::new();
    for _ in 0..passes {
        let t = std::time::Instant::now();
        ids.clear();
        for line in text.lines() {
            sp.encode_into(line, &mut scratch, &mut ids, None);
        }
        let s = t.elapsed().as_secs_f64();
        eprintln!("{} ids, {:.1} MB/s", ids.len(), text.len() as f64 / 1e6 / s);
    }
}
