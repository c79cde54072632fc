//! The `WordCounter` class: distinct words counted over texts, streams and files for training,
//! as BERT splits them (WordPiece training) or as a SentencePiece model's normalizer does
//! (Unigram training), then the training itself on the counts.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::utf8::{Text, Texts};
use super::{finish, parallel, to_py, Progress, PyWordPiece};
use crate::error::Error;
use crate::text::normalize::{Charsmap, Normalizer, NormalizerSpec, PrefixMatcher};
use crate::unigram::train::SpmSplit;
use crate::wordpiece::model::BertOptions;
use crate::words::{CountStats, WordCounter, Words, BLOCK_BYTES, UNIT_BYTES};
use crate::Rank;

/// WordPiece training's result: the vocabulary in id order, and each merge as (left id,
/// right id, count(ab), count(a), count(b)).
type MergeRecord = (Vec<String>, Vec<(Rank, Rank, u64, u64, u64)>);

pub(super) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyWordCounter>()?;
    Ok(())
}

/// Learned pieces with their scores, best first.
type Learned = Vec<(String, f32)>;

enum Counter {
    Bert(WordCounter<BertOptions>),
    // boxed: the SentencePiece normalizer makes this variant several times the other's size
    Spm(Box<WordCounter<SpmSplit>>),
}

/// Calls the same method on whichever counter it is.
macro_rules! each {
    ($c:expr, $x:ident => $e:expr) => {
        match $c {
            Counter::Bert($x) => $e,
            Counter::Spm($x) => $e,
        }
    };
}

/// Word counts for training, filled batch by batch.
#[pyclass(module = "bytepair._core", name = "WordCounter")]
struct PyWordCounter {
    counter: Counter,
    /// the counts, merged and compacted by the first `train` (counting then ends)
    words: Option<Words>,
}

impl PyWordCounter {
    fn counting(&mut self) -> PyResult<&mut Counter> {
        if self.words.is_some() {
            return Err(to_py(Error::Invalid(
                "this counter was already used for training".into(),
            )));
        }
        Ok(&mut self.counter)
    }

    fn words(&mut self) -> &Words {
        let counter = &mut self.counter;
        self.words
            .get_or_insert_with(|| each!(counter, c => c.finish()))
    }

    fn stats(&self) -> CountStats {
        each!(&self.counter, c => c.stats)
    }
}

#[pymethods]
impl PyWordCounter {
    /// Text matching `split_on` separates words and is not counted. `unit_bytes` and
    /// `block_bytes` (how texts are cut for the workers and files read) change no count; tests
    /// make them small.
    #[new]
    #[pyo3(signature = (*, clean_text, handle_chinese_chars, strip_accents, lowercase, split_on, unit_bytes = None, block_bytes = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        clean_text: bool,
        handle_chinese_chars: bool,
        strip_accents: bool,
        lowercase: bool,
        split_on: Vec<String>,
        unit_bytes: Option<usize>,
        block_bytes: Option<usize>,
    ) -> PyResult<Self> {
        let opts = BertOptions {
            clean_text,
            handle_chinese_chars,
            strip_accents,
            lowercase,
        };
        let counter = WordCounter::with_sizes(
            opts,
            &split_on,
            unit_bytes.unwrap_or(UNIT_BYTES),
            block_bytes.unwrap_or(BLOCK_BYTES),
        )
        .map_err(to_py)?;
        Ok(PyWordCounter {
            counter: Counter::Bert(counter),
            words: None,
        })
    }

    /// Counts the words a SentencePiece model's normalizer makes of each line (`charsmap`: a
    /// `precompiled_charsmap`, empty for none), cut before each `▁` (after it with
    /// `treat_whitespace_as_suffix`); `user_defined_symbols` are cut out and not counted.
    #[staticmethod]
    #[pyo3(signature = (*, charsmap, add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces, treat_whitespace_as_suffix, user_defined_symbols, unit_bytes = None, block_bytes = None))]
    #[allow(clippy::too_many_arguments)]
    fn sentencepiece(
        charsmap: &[u8],
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool,
        user_defined_symbols: Vec<String>,
        unit_bytes: Option<usize>,
        block_bytes: Option<usize>,
    ) -> PyResult<Self> {
        let charsmap = if charsmap.is_empty() {
            None
        } else {
            Some(
                Charsmap::parse(charsmap)
                    .map_err(|e| to_py(Error::Invalid(format!("precompiled_charsmap: {e}"))))?,
            )
        };
        let split = SpmSplit {
            normalizer: Normalizer {
                charsmap,
                user: PrefixMatcher::new(user_defined_symbols.iter().map(|s| s.as_bytes())),
                spec: NormalizerSpec {
                    add_dummy_prefix,
                    remove_extra_whitespaces,
                    escape_whitespaces,
                    treat_whitespace_as_suffix,
                },
            },
        };
        let counter = WordCounter::with_sizes(
            split,
            &[],
            unit_bytes.unwrap_or(UNIT_BYTES),
            block_bytes.unwrap_or(BLOCK_BYTES),
        )
        .map_err(to_py)?;
        Ok(PyWordCounter {
            counter: Counter::Spm(Box::new(counter)),
            words: None,
        })
    }

    /// Each character of the counted words with its count (words weighted by their count),
    /// most frequent first. Counting ends.
    fn char_counts(&mut self, py: Python<'_>) -> Vec<(char, u64)> {
        let words = self.words();
        py.detach(|| crate::unigram::train::char_counts(words))
    }

    /// Trains a SentencePiece model on the counted words, `model_type` "unigram"
    /// (`unigram::train`) or "bpe" (`bpe::spm_train`): its normal pieces with their scores, in
    /// id order, and a record of the training. `progress(pieces)` is called at each step with
    /// the size of the model.
    #[pyo3(signature = (*, model_type, pieces, character_coverage, max_piece_length, seed_size, shrinking_factor, sub_iterations, treat_whitespace_as_suffix, classes, alone, num_threads = None, progress = None))]
    #[allow(clippy::too_many_arguments)]
    fn train_sentencepiece<'py>(
        &mut self,
        py: Python<'py>,
        model_type: &str,
        pieces: usize,
        character_coverage: f64,
        max_piece_length: usize,
        seed_size: usize,
        shrinking_factor: f64,
        sub_iterations: usize,
        treat_whitespace_as_suffix: bool,
        classes: std::collections::HashMap<char, u32>,
        alone: Vec<char>,
        num_threads: Option<usize>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<(Learned, Bound<'py, PyDict>)> {
        let threads = parallel(num_threads, None)?.threads;
        let train = match model_type {
            "unigram" => crate::unigram::train::train,
            "bpe" => crate::bpe::spm_train::train,
            other => {
                return Err(to_py(Error::Invalid(format!(
                    "model_type must be \"unigram\" or \"bpe\", got {other:?}"
                ))))
            }
        };
        let opts = crate::unigram::train::Options {
            pieces,
            character_coverage,
            max_piece_length,
            seed_size,
            shrinking_factor,
            sub_iterations,
            treat_whitespace_as_suffix,
            classes: classes.into_iter().collect(),
            alone,
            threads,
        };
        let words = self.words();
        let raised = Mutex::new(None);
        let result = py.detach(|| {
            let mut p = Progress {
                callback: progress.as_ref(),
                last: Instant::now(),
                every: Duration::from_millis(100),
                raised: &raised,
            };
            train(words, &opts, &mut |_, n| p.tick(n as u64, false))
        });
        let trained = finish(result, raised)?;
        let info = PyDict::new(py);
        info.set_item("required_chars", trained.required_chars)?;
        info.set_item("seeds", trained.seeds)?;
        let rounds: Vec<(usize, f64)> = trained
            .rounds
            .iter()
            .map(|r| (r.pieces, r.objective))
            .collect();
        info.set_item("rounds", rounds)?;
        Ok((trained.pieces, info))
    }

    #[pyo3(signature = (texts, *, num_threads = None))]
    fn add_texts(
        &mut self,
        py: Python<'_>,
        texts: Texts<'_>,
        num_threads: Option<usize>,
    ) -> PyResult<()> {
        let texts: &[Text] = &texts;
        let threads = parallel(num_threads, None)?.threads;
        let counter = self.counting()?;
        py.detach(|| {
            let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
            each!(counter, c => c.add_texts(&refs, threads))
        })
        .map_err(to_py)
    }

    /// Streams a UTF-8 file; `progress(bytes_read)` is called now and then.
    #[pyo3(signature = (path, *, replace_errors = false, num_threads = None, progress = None))]
    fn add_file(
        &mut self,
        py: Python<'_>,
        path: &str,
        replace_errors: bool,
        num_threads: Option<usize>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let threads = parallel(num_threads, None)?.threads;
        let counter = self.counting()?;
        let raised = Mutex::new(None);
        let result = py.detach(|| {
            let mut p = Progress {
                callback: progress.as_ref(),
                last: Instant::now(),
                every: Duration::from_millis(100),
                raised: &raised,
            };
            each!(counter, c => c.add_file(path, replace_errors, threads, &mut |n| p.tick(n, false)))
        });
        finish(result, raised)
    }

    /// Counts the longest prefix of `data` that ends after whitespace (all of it when `last`);
    /// returns its length in bytes, and the caller keeps the rest. For streams read in Python
    /// (compressed files): `source` and `offset` (of `data[0]` in the stream) name bad UTF-8.
    #[pyo3(signature = (data, *, last, source, offset, replace_errors = false, num_threads = None))]
    #[allow(clippy::too_many_arguments)]
    fn add_bytes(
        &mut self,
        py: Python<'_>,
        data: &[u8],
        last: bool,
        source: &str,
        offset: u64,
        replace_errors: bool,
        num_threads: Option<usize>,
    ) -> PyResult<usize> {
        let threads = parallel(num_threads, None)?.threads;
        let counter = self.counting()?;
        py.detach(|| each!(counter, c => c.add_block(data, last, source, offset, replace_errors, threads)))
            .map_err(to_py)
    }

    /// Folds `other` (a counter of the same kind and settings, counted apart: one source) into
    /// this one: each of its word counts multiplied by `multiplier / denominator`, rounded to the
    /// nearest integer, halves up (`(count * multiplier + denominator // 2) // denominator`;
    /// words scaled to 0 are left out), and its text statistics as they are. `other`'s
    /// counting ends. Mixing sources with weights: count each apart, absorb each into a total.
    #[pyo3(signature = (other, multiplier, denominator))]
    fn absorb(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        other: &Bound<'_, Self>,
        multiplier: u64,
        denominator: u64,
    ) -> PyResult<()> {
        if slf.is(other) {
            return Err(to_py(Error::Invalid(
                "a counter cannot absorb itself".into(),
            )));
        }
        let mut this = slf.borrow_mut();
        let mut other = other.borrow_mut();
        let same_kind = matches!(
            (&this.counter, &other.counter),
            (Counter::Bert(_), Counter::Bert(_)) | (Counter::Spm(_), Counter::Spm(_))
        );
        if !same_kind {
            return Err(to_py(Error::Invalid(
                "a counter can only absorb one of its own kind (WordPiece or SentencePiece words)"
                    .into(),
            )));
        }
        let stats = other.stats();
        let words = other.words();
        let counter = this.counting()?;
        py.detach(|| {
            each!(counter, c => {
                c.add_words(words, multiplier, denominator)?;
                c.stats.add(&stats);
                Ok(())
            })
        })
        .map_err(to_py)
    }

    /// Each distinct word with its count, sorted by word (merging the counts: counting ends).
    fn word_counts(&mut self) -> Vec<(String, u64)> {
        self.words()
            .iter()
            .map(|(w, c)| (w.to_owned(), c))
            .collect()
    }

    /// (bytes, characters, bad UTF-8 sequences replaced) of the text counted.
    fn text_stats(&self) -> (u64, u64, u64) {
        let s = self.stats();
        (s.bytes, s.chars, s.replaced)
    }

    /// Number of distinct words and total words (merging the counts: counting ends).
    fn sizes(&mut self) -> (usize, u64) {
        let words = self.words();
        (words.len(), words.total())
    }

    /// What `encoder` makes of the counted words, each weighted by its count: (tokens, unknown
    /// tokens). Counting ends.
    #[pyo3(signature = (encoder, *, num_threads = None))]
    fn encode_stats(
        &mut self,
        py: Python<'_>,
        encoder: PyRef<'_, PyWordPiece>,
        num_threads: Option<usize>,
    ) -> PyResult<(u64, u64)> {
        let threads = parallel(num_threads, None)?.threads;
        let words = self.words();
        let wp = &encoder.inner;
        py.detach(|| words.encode_stats(wp, threads)).map_err(to_py)
    }

    /// Trains on the counted words: the vocabulary, tokens in id order, and each merge in order
    /// as (left id, right id, count(ab), count(a), count(b)), counted just before it.
    #[pyo3(signature = (*, vocab_size, min_frequency, special_tokens, continuing_subword_prefix, algorithm, continuation_order = None, progress = None))]
    #[allow(clippy::too_many_arguments)]
    fn train(
        &mut self,
        py: Python<'_>,
        vocab_size: usize,
        min_frequency: u64,
        special_tokens: Vec<String>,
        continuing_subword_prefix: String,
        algorithm: &str,
        continuation_order: Option<Vec<String>>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<MergeRecord> {
        let algorithm = match algorithm {
            "score" => crate::wordpiece::train::Algorithm::Score,
            "hf" => crate::wordpiece::train::Algorithm::Hf,
            other => {
                return Err(to_py(Error::Invalid(format!(
                    "algorithm must be \"score\" or \"hf\", got {other:?}"
                ))))
            }
        };
        let opts = crate::wordpiece::train::TrainOptions {
            vocab_size,
            min_frequency,
            special_tokens: &special_tokens,
            prefix: &continuing_subword_prefix,
            algorithm,
            continuation_order: continuation_order.as_deref(),
        };
        let words = self.words();
        let raised = Mutex::new(None);
        let result = py.detach(|| {
            let mut p = Progress {
                callback: progress.as_ref(),
                last: Instant::now(),
                every: Duration::from_millis(200),
                raised: &raised,
            };
            crate::wordpiece::train::train(words, &opts, &mut |n| p.tick(n as u64, false))
        });
        let (vocab, merges) = finish(result, raised)?;
        let rows = merges
            .iter()
            .map(|m| (m.left, m.right, m.pair, m.left_count, m.right_count))
            .collect();
        Ok((vocab, rows))
    }
}
