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
# where paper-figures' outputs land: figures/ for a complete run (every experiment, every theory
# check), figures/smoke/ at smoke scale, figures/partial/ for EXPERIMENTS or THEORY_ONLY or where
# cells lack a result (repro/core/paths.py: outputs_place)
OUTPUTS = figures$(if $(filter smoke,$(SCALE)),/smoke,)

.PHONY: setup test lint theory paper-figures figures compare data bench clean \
	clean-committed-figures gpu-carry verify

# say what it does: the install takes 2-3 minutes (torch, cvxpy, dask, ray, ...); pip's
# "Collecting" lines show it moving; its warnings go to .venv/pip-install.log (shown on failure)
$(STAMP): pyproject.toml
	@echo "setup: creating $(VENV) with $$($(PYTHON) --version 2>&1) (once; every make target does this first)"
	$(PYTHON) -m venv $(VENV)
	@echo "setup: upgrading pip in $(VENV)"
	$(PY) -m pip install -qq --upgrade pip
	@echo "setup: installing fedrepro with its $(EXTRAS) extras (torch 2.13.0 CPU, cvxpy, dask, ray, ...; about 2-3 minutes)"
	@set -o pipefail; $(PY) -m pip install --progress-bar off -e ".[$(EXTRAS)]" \
		2>$(VENV)/pip-install.log \
		| grep --line-buffered -E '^(Collecting|Successfully installed)' \
		| sed -u -e 's/^Successfully installed \(.\{0,150\}\).*/installed: \1 .../' \
		  -e 's/^/  /' \
		|| { tail -n 30 $(VENV)/pip-install.log; \
		     echo "setup failed: pip's messages are in $(VENV)/pip-install.log"; exit 1; }
	touch $(STAMP)
	@echo "setup: done; $(VENV)/bin/repro and $(VENV)/bin/python are ready"

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

# untracked and ignored outputs and caches only: the run records (results/), the smoke and
# partial outputs, untracked files under figures/ and the tool caches; never a tracked file
clean:
	rm -rf results .pytest_cache .ruff_cache .hypothesis build figures/smoke figures/partial
	find . -path ./$(VENV) -prune -o -name __pycache__ -prune -exec rm -rf {} +
	@if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git clean -fdxq -- figures; fi
	@echo "removed the run records (results/), smoke and partial outputs and caches; the committed figures/ is kept ('make clean-committed-figures' deletes it, asking first)"

# the committed outputs themselves (REPORT.md, comparison, claims, tables, figures, the cells
# ledger): only after a yes at the terminal, or CONFIRM=yes; `git checkout -- figures` restores
clean-committed-figures:
	@files=$$(git ls-files figures | grep -vx 'figures/README.md'); \
	n=$$(printf '%s\n' "$$files" | grep -c .); \
	echo "this deletes the $$n committed files under figures/ (REPORT.md, comparison, claims, tables, figures, the cells ledger); 'git checkout -- figures' restores them"; \
	if [ "$(CONFIRM)" = yes ]; then ans=yes; elif [ -t 0 ]; then read -r -p "type yes to delete them: " ans; else ans=; fi; \
	if [ "$$ans" = yes ]; then printf '%s\n' "$$files" | xargs rm -f --; echo "deleted $$n files"; \
	else echo "nothing deleted (answer yes at the terminal, or run with CONFIRM=yes)"; exit 1; fi

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
