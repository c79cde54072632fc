//! Encodes text files' lines with a SentencePiece .model, for profiling:
//! `cargo run --release --example spm -- MODEL TEXT [passes] [TEXT2]`: `passes` over TEXT, then
//! with TEXT2, one pass over it (unseen after TEXT) and one more (repeated).
use bytepair_core::sentencepiece::{Scratch, SentencePiece};

mod common;
use common::cpu_seconds;

fn pass(sp: &SentencePiece, text: &str, scratch: &mut Scratch, ids: &mut Vec<u32>, name: &str) {
    // CPU time: on a shared machine, wall time counts the time the thread was not running
    let t = cpu_seconds();
    ids.clear();
    for line in text.lines() {
        sp.encode_into(line, scratch, ids, None);
    }
    let s = cpu_seconds() - t;
    eprintln!(
        "{name}: {} ids, {:.1} MB/s",
        ids.len(),
        text.len() as f64 / 1e6 / s
    );
}

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
    // `FIRST_PASSES=N`: N first passes over TEXT, each on a fresh thread (its caches empty),
    // to profile a first pass
    if let Some(n) = std::env::var("FIRST_PASSES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        for _ in 0..n {
            std::thread::scope(|s| {
                s.spawn(|| {
                    let (mut scratch, mut ids) = (Scratch::default(), Vec::new());
                    pass(&sp, &text, &mut scratch, &mut ids, "first");
                });
            });
        }
        return;
    }
    let passes: usize = args.get(3).map_or(3, |p| p.parse().unwrap());
    let mut scratch = Scratch::default();
    let mut ids = Vec::new();
    for i in 0..passes {
        pass(
            &sp,
            &text,
            &mut scratch,
            &mut ids,
            if i == 0 { "first" } else { "again" },
        );
    }
    if let Some(other) = args.get(4) {
        let text = std::fs::read_to_string(other).expect("text");
        pass(&sp, &text, &mut scratch, &mut ids, "unseen");
        pass(&sp, &text, &mut scratch, &mut ids, "repeated");
    }
}
