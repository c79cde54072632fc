//! The one error type of the core. `py/` maps each variant to a Python exception.

use std::fmt;

#[derive(Debug)]
pub enum Error {
    /// A pattern that does not compile, or that failed while matching (backtrack limit).
    Pattern(String),
    /// Input text that is not valid UTF-8: the source's name and the byte offset of the first bad byte.
    Utf8 { source: String, offset: u64 },
    /// An I/O failure on a named file.
    Io {
        source: String,
        error: std::io::Error,
    },
    /// A token id that the vocabulary does not have.
    UnknownId(u64),
    /// An inconsistent vocabulary or merge list (what is wrong and where).
    Vocab(String),
    /// A malformed file: its name, the field and what is wrong, already in the message.
    Format(String),
    /// Any other invalid argument.
    Invalid(String),
    /// Work stopped by the caller (a progress callback that raised, Ctrl-C).
    Interrupted,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Pattern(msg) => write!(f, "pattern error: {msg}"),
            Error::Utf8 { source, offset } => write!(
                f,
                "{source}: not valid UTF-8 at byte offset {offset} (pass errors=\"replace\" to replace bad bytes)"
            ),
            Error::Io { source, error } => write!(f, "{source}: {error}"),
            Error::UnknownId(id) => write!(f, "unknown token id {id}"),
            Error::Vocab(msg) => write!(f, "{msg}"),
            Error::Invalid(msg) | Error::Format(msg) => write!(f, "{msg}"),
            Error::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// Makes `Io` errors that name `source` (for `map_err`).
    pub fn io(source: &str) -> impl Fn(std::io::Error) -> Error + Copy + '_ {
        move |error| Error::Io {
            source: source.to_string(),
            error,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
