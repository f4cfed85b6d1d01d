# PPNN Lab — the README's two commands are `make reproduce` and `make test`.
# Both create/update the local virtual environment, install the package and the tfhe-rs
# binding from source, fetch the datasets, and then run the pipeline or the checks.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
# Compiled Rust artifacts are cached outside the work tree so a fresh clone rebuilds
# incrementally; delete the folder to force a clean build.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/ppnn-lab/cargo-target
export PIP_DISABLE_PIP_VERSION_CHECK := 1

TFHE_CRATE := lib/ppnn_tfhe
TFHE_SRC   := $(wildcard $(TFHE_CRATE)/Cargo.toml $(TFHE_CRATE)/Cargo.lock \
                $(TFHE_CRATE)/pyproject.toml $(TFHE_CRATE)/src/*.rs $(TFHE_CRATE)/src/*/*.rs \
                $(TFHE_CRATE)/*.pyi)
PYTEST_ARGS ?=
SITE_ARGS ?=

.PHONY: help setup install binding data reproduce reproduce-quick test lint unit notebooks \
        bench lab clean distclean browser site course

help:
	@echo "make reproduce   install everything, then regenerate all tables and figures"
	@echo "make test        install everything, then lint + unit tests + notebooks (quick)"
	@echo "make lab         open JupyterLab on the notebooks"
	@echo "make site        the executed notebooks, report, glossary and docs/ as HTML in build/site/"
	@echo "make bench       run the benchmarks, then their ratio table in benchmarks/README.md"
	@echo "make course      the lecturer's kit in build/course/: student notebooks, autograders"
	@echo "make clean       remove build outputs (keeps .venv and data/cache)"

# ---------------------------------------------------------------- environment
$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24"

$(VENV)/.stamp-install: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e ".[dev,lab,course]"
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3" >/dev/null
	touch $@

ifneq ($(TFHE_SRC),)
$(VENV)/.stamp-tfhe: $(TFHE_SRC) $(VENV)/.stamp-install
	@command -v cargo >/dev/null || { echo "cargo (Rust) is needed to build the tfhe-rs binding: https://rustup.rs"; exit 1; }
	$(PY) -m pip install --quiet ./$(TFHE_CRATE)
	touch $@
binding: $(VENV)/.stamp-tfhe
else
binding:
	@echo "no tfhe-rs binding crate in $(TFHE_CRATE); skipping"
endif

# Every interpreter of the environment pins numpy's and OpenBLAS's float kernels at start-up
# (ppnn.numerics): trained weights and what follows from them get the same bits on every CPU.
$(VENV)/.stamp-numerics: lib/ppnn/numerics/env.py lib/ppnn/numerics/__init__.py $(VENV)/.stamp-install
	$(PY) -m ppnn.numerics install >/dev/null
	touch $@

install: $(VENV)/.stamp-install $(VENV)/.stamp-numerics binding

data: $(VENV)/.stamp-install
	@if [ "$$(id -u)" = 0 ] && ! apt-cache show dataset-fashion-mnist >/dev/null 2>&1; then \
	  apt-get update -qq >/dev/null 2>&1 || true; fi
	$(PY) -m ppnn.data fetch mnist fashion

setup: install data

# ---------------------------------------------------------------- the two commands
reproduce: setup
	$(PY) -m ppnn.reproduce

reproduce-quick: setup
	$(PY) -m ppnn.reproduce --quick

lint: $(VENV)/.stamp-install
	$(BIN)/ruff check lib tests benchmarks notebooks/*.py

unit: setup
	$(BIN)/pytest -m "not slow and not notebook" $(PYTEST_ARGS)

notebooks: setup
	$(BIN)/pytest -m notebook $(PYTEST_ARGS)

# the browser test drives Debian's headless Chromium (nothing downloads a browser build)
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    chromium chromium-driver >/dev/null) || \
	  echo "WARNING: could not install chromium/chromium-driver: the browser test will be SKIPPED"; \
	else \
	  echo "WARNING: chromium/chromedriver missing and not root (sudo apt-get install chromium chromium-driver): the browser test will be SKIPPED"; \
	fi

# TEST_JOBS pytest workers (pytest-xdist; work stealing keeps both busy to the end)
TEST_JOBS ?= 2
test: setup lint browser
	$(BIN)/pytest -m "not slow" -n $(TEST_JOBS) --dist worksteal --durations=20 $(PYTEST_ARGS)

# build/site/: every notebook as it ran (full mode where make reproduce left it, else the quick
# run make test left, else run now in quick mode), REPORT.md, GLOSSARY.md and docs/*.md, as
# static HTML; SITE_ARGS=--quick: quick runs only, SITE_ARGS=--no-run: run no notebook
site: setup
	$(PY) -m ppnn.site $(SITE_ARGS)

# build/course/: student notebooks without solutions, Otter-Grader autograders, a README
course: setup
	$(PY) -m ppnn.course build

# every benchmark at its defaults, then the ratio table of benchmarks/README.md from their CSVs
bench: setup
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done
	$(PY) -m ppnn.benchtable

# JupyterLab on the notebooks, 00_overview open first; jupytext keeps each .py / .ipynb pair in
# sync when a notebook is saved (formats: ipynb,py:percent in every notebook's metadata).
# The server's root is the repository (as on Binder), so the notebooks' links to
# ../GLOSSARY.md and ../figures open in JupyterLab; the kernels still start in notebooks/.
lab: setup
	$(BIN)/jupyter lab --ServerApp.root_dir=. notebooks/00_overview.ipynb

clean:
	rm -rf build .pytest_cache .ruff_cache

distclean: clean
	rm -rf $(VENV) data/cache
