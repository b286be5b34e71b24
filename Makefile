# `make demo`: the EAR x XNLI smoke sweep on the embedded default (local Ray, SQLite
# MLflow, tiny model, synthetic data). `make test`: ruff, then the whole test suite (CI);
# `make test-fast`: ruff, then the tests not marked slow, in parallel (no Ray, no sweep, no
# fresh Python process; docs/usage.md#tests).
# All create .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
# The lock: every pip call below installs the versions it pins (docs/usage.md#install).
CONSTRAINTS := constraints.txt
# torch's CPU build from PyTorch's own index: PyPI's Linux wheel of the same version is the
# multi-GB CUDA build (the cluster's, ray_cluster.yaml). Indexes and find-links set in pip's
# own configuration still apply. torch alone (--no-deps): its dependencies come with the
# project's, from the usual indexes at the lock's versions.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: demo test test-fast lint install constraints clean

install: $(INSTALLED)

$(INSTALLED): pyproject.toml $(CONSTRAINTS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip -c $(CONSTRAINTS)
	$(PY) -m pip install --quiet --no-deps torch -c $(CONSTRAINTS) --index-url $(TORCH_INDEX)
	$(PY) -m pip install --quiet -e ".[dev]" -c $(CONSTRAINTS)
	touch $(INSTALLED)

# `make constraints`: rewrite the lock from .venv (pip freeze; local version labels such as
# torch's +cpu dropped, so that the pin matches the CPU and the CUDA build alike).
constraints:
	@{ \
	echo "# The lock: the exact versions \`make install\` installs (each of its pip calls takes"; \
	echo "# -c constraints.txt) and CI tests; pyproject.toml gives each direct dependency a range."; \
	echo "# Made by \`make constraints\`: pip freeze --exclude-editable of .venv (Python 3.11, Linux"; \
	echo "# x86_64), local version labels dropped (torch==2.13.0 matches its +cpu and CUDA builds)."; \
	echo "# To move a pin: .venv/bin/pip install 'PACKAGE==NEW' (within its range), make constraints."; \
	$(PY) -m pip freeze --exclude-editable | sed -E 's/^([^=]+==[^+]+)\+.*/\1/'; \
	} > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)

demo: $(INSTALLED)
	$(PY) sweeps/ear_xnli.py --preset smoke

lint: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# Both run in parallel: one pytest-xdist worker per CPU (TEST_WORKERS), each with one torch
# thread (more threads than cores slow every step down). The whole suite hands out whole
# files, slow ones first (tests/conftest.py), so that a module's shared sweep runs once.
# Bytecode caches are written even where the environment sets PYTHONDONTWRITEBYTECODE (an
# empty value turns it off): without them every worker rewrites every test module's asserts
# and every fresh process compiles the project again.
TEST_WORKERS ?= auto
PYTEST_PARALLEL = PYTHONDONTWRITEBYTECODE= OMP_NUM_THREADS=1 $(PY) -m pytest -n $(TEST_WORKERS)
test: lint
	$(PYTEST_PARALLEL) --dist loadfile --no-loadscope-reorder

test-fast: lint
	$(PYTEST_PARALLEL) -m "not slow"

# `make bench`: the benchmark suite (docs/benchmarks.md; its paper-scale cases take many minutes):
# per case the figure, its target and PASS / MISS; the table is appended to docs/benchmarks.md.
.PHONY: bench
bench: $(INSTALLED)
	$(PY) -m benchmarks --markdown docs/benchmarks.md

# `make cluster-check` (as root; docs/cluster.md#on-your-own-machines): an on-premises cluster
# brought up by `ray up` on this machine (network namespaces, one sshd each), its smoke sweep,
# `ray up` again, a worker lost, `ray down`; the transcript in reports/cluster-check/.
.PHONY: cluster-check
cluster-check: $(INSTALLED)
	$(PY) -m sweeps.drills.cluster_check

clean:
	rm -rf $(VENV) .cache ray_results mlflow.db mlartifacts optuna.db reports
