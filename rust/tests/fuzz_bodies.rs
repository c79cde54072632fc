//! The fuzz target bodies of `fuzz/bodies.rs` on stable Rust: each runs over its
//! checked-in seed corpus (`fuzz/seeds/<target>/`) and over inputs from a deterministic
//! pseudo-random generator that mutates the seeds. `BYTEPAIR_FUZZ_ITERS` sets the number of
//! generated inputs per target (default 300, so `cargo test` stays quick); long runs use
//! cargo-fuzz (see the README).

#[path = "../fuzz/bodies.rs"]
mod bodies;

use std::path::Path;

/// xorshift64*: deterministic, so a failure names an iteration that reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes that the pre-tokenizers and readers treat specially, to splice into inputs.
const DICT: [&[u8]; 19] = [
    b" ",
    b"\n",
    b"\r\n",
    b"\t",
    b"'s",
    b"'LL",
    b"123456",
    b"<|x|>",
    "é".as_bytes(),
    "中文".as_bytes(),
    "\u{301}".as_bytes(),
    "\u{a0}".as_bytes(),
    b"BPC1",
    b"IQ== 0\n",
    b"\xff",
    b"==",
    b"\"",
    b"\\u",
    b"{\"text\": \"",
];

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut data = if seeds.is_empty() || rng.below(4) == 0 {
        Vec::new()
    } else {
        seeds[rng.below(seeds.len())].clone()
    };
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(data.len() + 1);
        match rng.below(5) {
            0 => data.insert(at, rng.next() as u8),
            1 if at < data.len() => {
                data.remove(at);
            }
            2 if at < data.len() => data[at] ^= 1 << rng.below(8),
            3 => {
                let word = DICT[rng.below(DICT.len())];
                data.splice(at..at, word.iter().copied());
            }
            _ => {
                let end = (at + rng.below(16)).min(data.len());
                let copy = data[at..end].to_vec();
                data.splice(at..at, copy);
            }
        }
    }
    data
}

fn run(target: &str, body: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/seeds")
        .join(target);
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("seed corpus {}: {e}", dir.display()))
        .map(|entry| std::fs::read(entry.expect("entry").path()).expect("seed"))
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    for seed in &seeds {
        body(seed);
    }
    let iters: usize = std::env::var("BYTEPAIR_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ target.len() as u64);
    for i in 0..iters {
        let data = mutate(&mut rng, &seeds);
        let result = std::panic::catch_unwind(|| body(&data));
        if result.is_err() {
            panic!("{target}: generated input {i} fails: {data:?}");
        }
    }
}

#[test]
fn fuzz_pretok() {
    run("pretok", bodies::pretok);
}

#[test]
fn fuzz_encode() {
    run("encode", bodies::encode);
}

#[test]
fn fuzz_ranks() {
    run("ranks", bodies::ranks);
}

#[test]
fn fuzz_packed() {
    run("packed", bodies::packed);
}

#[test]
fn fuzz_jsonl() {
    run("jsonl", bodies::jsonl);
}
