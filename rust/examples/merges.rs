//! Profiling harness (not a test): the merges of new pieces alone. Splits text B with the
//! preset's pattern, keeps the distinct pieces that are no token and that text A does not hold
//! (what an unseen pass hands to the merge loop), and times `encode_piece` (no cache) over them,
//! `rounds` times; prints the best and the median.
//! `cargo run --release --example merges -- RANKS.tiktoken A.txt B.txt [preset] [rounds]`
use bytepair_core::bpe::encode::Bpe;
use bytepair_core::text::pretok::Pretokenizer;
use std::collections::HashSet;

mod common;
use common::cpu_seconds;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (ranks, a, b, pat) = common::rank_texts(&args);
    let rounds: usize = args.get(5).map_or(20, |r| r.parse().unwrap());
    let pretok = Pretokenizer::new(Some(pat)).unwrap();
    let bpe = Bpe::from_ranks(ranks).unwrap();
    let pieces = |text: &str| {
        let mut v: Vec<Vec<u8>> = Vec::new();
        let _ = pretok
            .try_for_each_piece_bytes::<()>(text, |p| {
                v.push(p.to_vec());
                std::ops::ControlFlow::Continue(())
            })
            .unwrap();
        v
    };
    let seen: HashSet<Vec<u8>> = pieces(&a).into_iter().collect();
    let mut new: Vec<Vec<u8>> = Vec::new();
    let mut kept = HashSet::new();
    for p in pieces(&b) {
        if p.len() >= 2
            && p.len() < 128
            && bpe.lookup(&p).is_none()
            && !seen.contains(&p)
            && kept.insert(p.clone())
        {
            new.push(p);
        }
    }
    let bytes: usize = new.iter().map(|p| p.len()).sum();
    let mut by_len = [0usize; 4];
    for p in &new {
        by_len[match p.len() {
            0..=16 => 0,
            17..=32 => 1,
            33..=64 => 2,
            _ => 3,
        }] += 1;
    }
    eprintln!(
        "{} new pieces, {bytes} bytes (<=16: {}, 17-32: {}, 33-64: {}, 65-127: {})",
        new.len(),
        by_len[0],
        by_len[1],
        by_len[2],
        by_len[3]
    );
    let mut out = Vec::with_capacity(bytes);
    let mut speeds = Vec::new();
    let mut tokens = 0;
    for _ in 0..rounds {
        out.clear();
        let t = cpu_seconds();
        for p in &new {
            bpe.encode_piece(p, &mut out);
        }
        speeds.push(bytes as f64 / (cpu_seconds() - t) / 1e6);
        tokens = out.len();
    }
    speeds.sort_by(|x, y| x.partial_cmp(y).unwrap());
    println!(
        "{tokens} tokens; MB/s best {:.1} median {:.1}",
        speeds[rounds - 1],
        speeds[rounds / 2]
    );
}
