//! Profiling harness (not a test): encodes a file twice with o200k (or the preset named by
//! the fourth argument: gpt2, gpt4, o200k), cold then warm.
//! `cargo run --release --example warm -- RANKS.tiktoken TEXT [passes] [preset]`
use bytepair_core::bpe::encode::{Bpe, Encoder};
use bytepair_core::text::pretok::{Pretokenizer, PRESETS};

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

/// CPU time of this thread, in seconds (Linux; elsewhere, wall-clock time).
fn cpu_seconds() -> f64 {
    #[cfg(target_os = "linux")]
    {
        #[repr(C)]
        struct Timespec {
            sec: i64,
            nsec: i64,
        }
        extern "C" {
            fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
        }
        const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
        let mut ts = Timespec { sec: 0, nsec: 0 };
        // SAFETY: `ts` is a valid timespec to write to.
        unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.sec as f64 + ts.nsec as f64 * 1e-9
    }
    #[cfg(not(target_os = "linux"))]
    {
        use std::sync::OnceLock;
        static START: OnceLock<std::time::Instant> = OnceLock::new();
        START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_secs_f64()
    }
}
