//! Streaming a file in blocks for the counters (BPE's `count.rs`, WordPiece's
//! `wordpiece/train.rs`): each block is handed to the counter, which uses the longest prefix that
//! ends where its text may be cut and leaves the rest to be read on with the next block, so memory
//! stays at about one block whatever the file's size.

use std::io::{ErrorKind, Read};

use crate::error::{Error, Result};

/// What a counter does with a block: `(buf, last, at) -> bytes used`.
pub type Consume<'a> = dyn FnMut(&[u8], bool, u64) -> Result<usize> + 'a;

/// Reads `reader` (the bytes of the file `path` from its byte `offset` on) in blocks of about
/// `block` bytes. `consume(buf, last, at)` gets the bytes not used yet, `at` being the file offset
/// of `buf[0]` and `last` true once the reader is exhausted (it must then use all of `buf`), and
/// returns how many it used. `progress` gets the number of bytes used since `offset`.
pub fn stream_blocks(
    mut reader: impl Read,
    path: &str,
    offset: u64,
    block: usize,
    consume: &mut Consume<'_>,
    progress: &mut dyn FnMut(u64) -> Result<()>,
) -> Result<()> {
    let block = block.max(1);
    let mut buf: Vec<u8> = Vec::with_capacity(block);
    let mut consumed = offset; // file offset of buf[0]
    let mut eof = false;
    while !eof || !buf.is_empty() {
        if !eof {
            let old = buf.len();
            buf.resize(old + block, 0);
            let mut filled = old;
            while filled < buf.len() {
                match reader.read(&mut buf[filled..]) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(error) => return Err(Error::io(path)(error)),
                }
            }
            buf.truncate(filled);
        }
        let cut = consume(&buf, eof, consumed)?;
        consumed += cut as u64;
        buf.drain(..cut);
        if cut > 0 {
            progress(consumed - offset)?;
        }
    }
    Ok(())
}
