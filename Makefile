# fedrepro — every target installs what it needs into .venv first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SCALE ?= auto
JOBS ?= 2
EXTRAS ?= dev,dist
THEORY_SIZE ?= $(if $(filter smoke,$(SCALE)),small,default)
# paper-figures over some experiments / theory checks only (a name or glob each; tests use it)
EXPERIMENTS ?= all
THEORY_ONLY ?=
# where paper-figures' outputs land: figures/ for a complete run, figures/smoke/ at smoke scale,
# figures/partial/ where cells lack a result (repro/core/paths.py: outputs_place)
OUTPUTS = figures$(if $(filter smoke,$(SCALE)),/smoke,)

.PHONY: setup test lint theory paper-figures figures compare data bench clean gpu-carry verify

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -qq --upgrade pip
	$(PY) -m pip install -qq -e ".[$(EXTRAS)]"
	touch $(STAMP)

setup: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check repro theory bench tests tools scripts

test: $(STAMP) lint
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
	  $(PY) -m pytest -n $(JOBS) --dist loadgroup -q tests

theory: $(STAMP)
	$(PY) -m theory --all

paper-figures: $(STAMP)
	$(VENV)/bin/repro run '$(EXPERIMENTS)' --scale $(SCALE) --jobs $(JOBS) --keep-going; \
		echo $$? > $(VENV)/.paper-figures-run-status
	$(VENV)/bin/repro figures '$(EXPERIMENTS)' --scale $(SCALE)
	$(PY) -m theory --size $(THEORY_SIZE) $(if $(THEORY_ONLY),--only '$(THEORY_ONLY)',) || \
		echo "some theory checks failed: see theory.md in $(OUTPUTS)/"
	$(VENV)/bin/repro compare --scale $(SCALE)
	@test "$$(cat $(VENV)/.paper-figures-run-status)" = 0 || \
		{ echo "some cells failed (see above and comparison.md in $(OUTPUTS)/ or figures/partial/); rerun to retry"; exit 1; }

figures: $(STAMP)
	$(VENV)/bin/repro figures --scale $(SCALE)

compare: $(STAMP)
	$(VENV)/bin/repro compare --scale $(SCALE)

data: $(STAMP)
	$(VENV)/bin/repro data verify

# recompute 20 random committed cells (figures/cells/*.csv) among those whose recorded wall time
# is at most 30 s: at most 10 min; equal / different (both numbers) / stale code per cell
verify: $(STAMP)
	$(VENV)/bin/repro verify --sample 20 --max-seconds 30

bench: $(STAMP)
	$(PY) -m bench

clean:
	rm -rf results .pytest_cache .ruff_cache figures/smoke figures/partial
	rm -rf figures/cells
	find figures -maxdepth 1 -type f ! -name README.md \( -name '*.md' -o -name '*.csv' \
	  -o -name '*.png' -o -name '*.pdf' -o -name '*.tex' -o -name '*.json' \) -delete
	find . -name __pycache__ -prune -exec rm -rf {} +

# the data a lent GPU machine needs for fedmm's MNIST figures (scripts/gpu_fedmm_extended.sh):
# MNIST and the BSDS500 training images, copied from the shared mirror into .gpu/data (ignored
# through .git/info/exclude; the device tool carries it with `carry: [".gpu"]`, 27 MB)
gpu-carry:
	mkdir -p .gpu/data/bsds500/BSR/BSDS500/data/images
	cp -r ../shared/data/mnist .gpu/data/
	cp -r ../shared/data/bsds500/BSR/BSDS500/data/images/train \
	  .gpu/data/bsds500/BSR/BSDS500/data/images/
	grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
	du -sh .gpu
