# `make demo`: the EAR x XNLI smoke sweep on the embedded default (local Ray, SQLite
# MLflow, tiny model, synthetic data). `make test`: ruff, then the whole test suite (CI);
# `make test-fast`: ruff, then the tests not marked slow (no Ray, no sweep; docs/usage.md#tests).
# All create .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed

.PHONY: demo test test-fast lint install clean

install: $(INSTALLED)

$(INSTALLED): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The CPU build; a bare `torch` requirement would pull a multi-GB CUDA build.
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(INSTALLED)

demo: $(INSTALLED)
	$(PY) sweeps/ear_xnli.py --preset smoke

lint: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test: lint
	$(PY) -m pytest

test-fast: lint
	$(PY) -m pytest -m "not slow"

# `make bench`: the benchmark suite (docs/benchmarks.md; its paper-scale cases take many minutes):
# per case the figure, its target and PASS / MISS; the table is appended to docs/benchmarks.md.
.PHONY: bench
bench: $(INSTALLED)
	$(PY) -m benchmarks --markdown docs/benchmarks.md

clean:
	rm -rf $(VENV) .cache ray_results mlflow.db mlartifacts optuna.db reports
