//! Profiling harness (not a test): WordPiece encoding of a file, first pass then warm.
//! `cargo run --release --example wordpiece -- VOCAB.txt TEXT [passes] [offsets]`
//! VOCAB.txt: one token per line (the line number is the id), as BERT's `vocab.txt`.
//! Documents are the file's blank-line separated parts, as `bench/bench_wordpiece.py` makes them.
use bytepair_core::wordpiece::model::{BertOptions, WordPiece};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: wordpiece VOCAB.txt TEXT [passes] [offsets]");
        std::process::exit(2);
    }
    let vocab: Vec<(u32, String)> = std::fs::read_to_string(&args[1])
        .expect("vocab")
        .lines()
        .enumerate()
        .map(|(i, t)| (i as u32, t.to_string()))
        .collect();
    let text = std::fs::read_to_string(&args[2]).expect("text");
    let passes: usize = args.get(3).and_then(|p| p.parse().ok()).unwrap_or(3);
    let offsets = args.get(4).is_some_and(|o| o == "offsets");
    let docs: Vec<&str> = text
        .split("\n\n")
        .filter(|d| !d.trim().is_empty())
        .collect();
    let mb = docs.iter().map(|d| d.len()).sum::<usize>() as f64 / 1e6;
    let specials: Vec<(String, u32)> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .iter()
        .filter_map(|s| {
            vocab
                .iter()
                .find(|(_, t)| t == s)
                .map(|(i, _)| (s.to_string(), *i))
        })
        .collect();
    // CPU time of this thread (Linux: /proc/thread-self/schedstat, in ns), less noisy than the
    // wall clock on a shared machine; the wall clock elsewhere.
    let cpu = || -> Option<f64> {
        let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        Some(s.split_whitespace().next()?.parse::<f64>().ok()? / 1e9)
    };
    let run = |wp: &WordPiece| {
        let (c, t) = (cpu(), std::time::Instant::now());
        let out = wp.encode_batch(&docs, offsets, 1).expect("encode");
        let n: usize = out.iter().map(|(ids, _)| ids.len()).sum();
        let secs = match (c, cpu()) {
            (Some(a), Some(b)) => b - a,
            _ => t.elapsed().as_secs_f64(),
        };
        (mb / secs, n)
    };
    // Each round: a new model (its first pass has an empty word cache), then a warm pass.
    for round in 0..passes {
        let wp = WordPiece::new(
            &vocab,
            "[UNK]",
            "##",
            100,
            BertOptions::default(),
            &specials,
        )
        .expect("model");
        let (first, n) = run(&wp);
        let (warm, _) = run(&wp);
        println!("round {round}: first {first:.1} MB/s, warm {warm:.1} MB/s, {n} tokens");
    }
}
