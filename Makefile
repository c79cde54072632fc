# bytepair — `make help` lists the targets.
PYTHON ?= python3
PIP := $(PYTHON) -m pip

.DEFAULT_GOAL := help

.PHONY: help
help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

.PHONY: install
install:  ## install bytepair (builds the Rust extension in release mode)
	$(PIP) install .

# --sdist: the wheel is built from the unpacked sdist, which proves the sdist complete; in the
# clone's target directory, so that what `make install` / `make test` compiled is reused.
.PHONY: wheel
wheel:  ## build an abi3 wheel (one for every CPython >= 3.10 on this platform) and an sdist into dist/
	$(PIP) install -q 'maturin>=1.9.4,<2'
	rm -f dist/bytepair-*.whl dist/bytepair-*.tar.gz
	CARGO_TARGET_DIR="$${CARGO_TARGET_DIR:-$(CURDIR)/rust/target}" $(PYTHON) -m maturin build --release --sdist --features abi3 --out dist

.PHONY: demo
demo: install  ## install, then train on the bundled Shakespeare, show merges, encode a line
	bytepair train --sample --vocab-size 1000 -o shakespeare.json
	bytepair show shakespeare.json --limit 15
	echo "To be, or not to be, that is the question." | bytepair encode -t shakespeare.json

.PHONY: test
test:  ## install test dependencies, then run every test (Rust, Python, type stubs)
	$(PIP) install -e '.[dev]'
	cd rust && cargo test
	$(PYTHON) -m pytest
	$(PYTHON) -m mypy
	$(PYTHON) -m mypy.stubtest bytepair._core

.PHONY: bench
bench:  ## build the benchmark corpus (see bench/README.md) and compare with peers
	$(PIP) install -e '.[bench]'
	$(PYTHON) bench/make_corpus.py
	$(PYTHON) bench/bench_train.py
	$(PYTHON) bench/bench_train.py --small
	$(PYTHON) bench/bench_encode.py
	$(PYTHON) bench/bench_wordpiece.py  # WordPiece against its peers

.PHONY: bench-scale
bench-scale:  ## 200 MB side by side at vocab 32768/65536, scaling curve 50-200 MB, mixing (long)
	$(PIP) install -e '.[bench]'
	$(PYTHON) bench/make_corpus.py --mb 200
	$(PYTHON) bench/bench_scale.py

.PHONY: lint
lint:  ## formatting and lints (Rust and Python)
	cd rust && cargo fmt --check && cargo clippy --all-targets --features python -- -D warnings
	$(PYTHON) -m mypy
