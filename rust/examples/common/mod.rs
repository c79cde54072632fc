//! What the profiling harnesses share.

/// CPU time of this thread, in seconds (Linux; elsewhere, wall-clock time).
pub fn cpu_seconds() -> f64 {
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

/// A rank file's ranks: (id, token bytes).
#[allow(dead_code)] // not every harness takes these arguments
pub type Ranks = Vec<(u32, Vec<u8>)>;

/// What the A / B harnesses read from `RANKS.tiktoken A.txt B.txt [preset]`: the ranks, texts
/// A and B, and the preset's pattern (`o200k` when none is named).
#[allow(dead_code)] // not every harness takes these arguments
pub fn rank_texts(args: &[String]) -> (Ranks, String, String, &'static str) {
    let ranks = bytepair_core::bpe::ranks::parse(&std::fs::read(&args[1]).unwrap()).unwrap();
    let a = std::fs::read_to_string(&args[2]).unwrap();
    let b = std::fs::read_to_string(&args[3]).unwrap();
    let preset = args.get(4).map_or("o200k", |p| p.as_str());
    let pattern = bytepair_core::text::pretok::PRESETS
        .iter()
        .find(|(n, _)| *n == preset)
        .unwrap()
        .1;
    (ranks, a, b, pattern)
}
