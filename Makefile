# `make quickstart` runs the main job, `make test` runs the tests; both set up .venv first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: $(VENV) quickstart test bench clean

# torch goes in first, pinned, so pip takes the local CPU wheel and never a CUDA build.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

$(VENV): $(STAMP)

quickstart: $(STAMP)
	$(VENV)/bin/arboretum train --config configs/quickstart.yaml --replace

test: $(STAMP)
	$(PY) -m pytest -q -n 2

bench: $(STAMP)
	@set -e; for f in benchmarks/*.py; do \
		[ -e "$$f" ] || continue; \
		echo "== $$f"; $(PY) "$$f"; \
	done

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
