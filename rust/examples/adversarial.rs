//! Timing harness (not a test) for the long-piece path: encodes the adversarial
//! inputs of `bench/bench_encode.py` at 1.25 MB and 10 MB and prints the best CPU time of each.
//! `cargo run --release --example adversarial -- RANKS.tiktoken PRESET [KINDS] [SIZES] [REPEAT]`
//! PRESET: gpt4 (cl100k) or o200k; KINDS: comma-separated of letter,digits,spaces,cjk;
//! SIZES: comma-separated byte counts (default 1250000,10000000).
use bytepair_core::bpe::encode::{Bpe, Encoder};
use bytepair_core::text::pretok::{Pretokenizer, PRESETS};

/// The inputs of `adversarial_text` in bench/bench_encode.py.
fn text(kind: &str, n: usize) -> String {
    match kind {
        "letter" => "a".repeat(n),
        "digits" => "1".repeat(n),
        "spaces" => " ".repeat(n),
        _ => (0..n / 3)
            .map(|i| char::from_u32(0x4E00 + ((i * 7919) % 20_902) as u32).unwrap())
            .collect(),
    }
}

/// CPU time of this thread, in seconds.
fn thread_time() -> f64 {
    let mut ts = std::mem::MaybeUninit::<[i64; 2]>::uninit();
    // CLOCK_THREAD_CPUTIME_ID = 3 on Linux.
    extern "C" {
        fn clock_gettime(clk: i32, ts: *mut [i64; 2]) -> i32;
    }
    // SAFETY: clock_gettime writes a timespec (two longs on 64-bit Linux) into `ts`.
    let ts = unsafe {
        clock_gettime(3, ts.as_mut_ptr());
        ts.assume_init()
    };
    ts[0] as f64 + ts[1] as f64 * 1e-9
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ranks = bytepair_core::bpe::ranks::parse(&std::fs::read(&args[1]).unwrap()).unwrap();
    let pat = PRESETS.iter().find(|(n, _)| *n == args[2]).unwrap().1;
    let kinds = args
        .get(3)
        .map_or("letter,digits,spaces,cjk", |s| s.as_str());
    let sizes: Vec<usize> = args
        .get(4)
        .map_or("1250000,10000000", |s| s.as_str())
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let repeat: usize = args.get(5).map_or(3, |r| r.parse().unwrap());
    let enc = Encoder::new(
        Bpe::from_ranks(ranks).unwrap(),
        Pretokenizer::new(Some(pat)).unwrap(),
        vec![],
    )
    .unwrap();
    for kind in kinds.split(',') {
        let mut times = Vec::new();
        for &n in &sizes {
            let t = text(kind, n);
            let mut best = f64::INFINITY;
            for _ in 0..repeat {
                let mut out = Vec::new();
                let start = thread_time();
                enc.encode_ordinary_into(&t, &mut out).unwrap();
                best = best.min(thread_time() - start);
                std::hint::black_box(&out);
            }
            times.push(best);
        }
        let cells: Vec<String> = sizes
            .iter()
            .zip(&times)
            .map(|(n, t)| format!("{n}: {t:.3}"))
            .collect();
        let ratio = if times.len() >= 2 {
            format!("  ratio {:.2}", times[times.len() - 1] / times[0])
        } else {
            String::new()
        };
        println!("{} {kind:7} {}{ratio}", args[2], cells.join("  "));
    }
}
