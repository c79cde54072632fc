//! Thread pools for the calls that ask for threads, cached per size.
//!
//! Every call may ask for its own number of threads (`num_threads=` in Python), so pools are
//! built once per size and kept. After a `fork`, the child has none of the parent's threads:
//! a pool inherited through `fork` would wait forever for them. Pools therefore remember the
//! process that built them, and a child builds its own (the parent's are leaked, not dropped:
//! dropping would signal threads that do not exist there). The rayon global pool is not used.

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};

/// At most this many pool sizes are kept; asking for more sizes drops the old pools.
const MAX_POOLS: usize = 8;

struct Pools {
    pid: u32,
    by_size: FxHashMap<usize, Arc<rayon::ThreadPool>>,
}

static POOLS: Mutex<Option<Pools>> = Mutex::new(None);

/// The number of threads "all cores" means: what the OS lets this process run on, asked once.
/// `available_parallelism` reads the CPU affinity and the cgroup's quota files each time (two
/// `sched_getaffinity`, three `open`s and four `statx` on Linux): asked on every call, that was
/// most of the time of encoding a short text (`encode("hello world")`: 35 us, now 4 us). Like
/// rayon's own pools, a later change of the process's affinity or quota is not seen.
pub fn default_threads() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The pool of `n` threads of this process; `n` is capped at `default_threads()` (more threads
/// than cores would not be faster, and the ids never depend on the number of threads), so no
/// argument can start thousands of OS threads.
pub fn pool(n: usize) -> Result<Arc<rayon::ThreadPool>> {
    let n = n.min(default_threads()).max(1);
    let pid = std::process::id();
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    if pools.as_ref().is_some_and(|p| p.pid != pid) {
        std::mem::forget(pools.take());
    }
    let pools = pools.get_or_insert_with(|| Pools {
        pid,
        by_size: FxHashMap::default(),
    });
    if let Some(p) = pools.by_size.get(&n) {
        return Ok(p.clone());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(|i| format!("bytepair-{i}"))
        .build()
        .map_err(|e| Error::Invalid(format!("cannot start {n} threads: {e}")))?;
    if pools.by_size.len() >= MAX_POOLS {
        pools.by_size.clear();
    }
    let pool = Arc::new(pool);
    pools.by_size.insert(n, pool.clone());
    Ok(pool)
}

/// Runs `f` on a pool of `threads` threads (`f` uses it through rayon's parallel iterators),
/// or on the calling thread when `threads` is 1.
pub fn run<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> Result<R> {
    match threads {
        0 => Err(Error::Invalid("num_threads must be at least 1".into())),
        1 => Ok(f()),
        n => Ok(pool(n)?.install(f)),
    }
}
