# `make quickstart` runs the main job, `make test` runs the tests; both set up their venvs first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# The framework extras need versions of their own (docs/integrations.md): RLlib pins
# gymnasium==1.2.2, AgileRL pettingzoo<1.27. Each group gets a venv; the AgileRL one also holds
# the low end of our pettingzoo range (1.24), .venv the high end (1.27).
FW_VENV  := .venv-frameworks
FW_STAMP := $(FW_VENV)/.installed
AG_VENV  := .venv-agilerl
AG_STAMP := $(AG_VENV)/.installed
# The env's own PettingZoo/gymnasium tests, run again beside each framework's versions.
ENV_TESTS := tests/test_env_api.py tests/test_env_masks.py tests/test_env_rewards.py tests/test_wrappers.py
# FRAMEWORKS=0 make test: the core suite only (the framework tests then skip, saying why).
FRAMEWORKS ?= 1

.PHONY: $(VENV) quickstart test test-core test-frameworks bench clean

# torch goes in first, pinned, so pip takes the local CPU wheel and never a CUDA build.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

$(FW_STAMP): pyproject.toml
	$(PYTHON) -m venv $(FW_VENV)
	$(FW_VENV)/bin/python -m pip install -q torch==2.13.0
	$(FW_VENV)/bin/python -m pip install -q -e '.[test,rllib,torchrl,tianshou]'
	touch $(FW_STAMP)

$(AG_STAMP): pyproject.toml
	$(PYTHON) -m venv $(AG_VENV)
	$(AG_VENV)/bin/python -m pip install -q torch==2.13.0
	$(AG_VENV)/bin/python -m pip install -q -e '.[test,agilerl]' 'pettingzoo==1.24.*'
	touch $(AG_STAMP)

$(VENV): $(STAMP)

quickstart: $(STAMP)
	$(VENV)/bin/arboretum train --config configs/quickstart.yaml --replace

test: test-core
ifneq ($(FRAMEWORKS),0)
test: test-frameworks
endif

test-core: $(STAMP)
	$(PY) -m pytest -q -n 2

# Each framework's example, run with --smoke, in the venv that has the framework; and the env's
# own API tests at the other versions of gymnasium and pettingzoo.
test-frameworks: $(FW_STAMP) $(AG_STAMP)
	$(FW_VENV)/bin/python -m pytest -q -m frameworks -p no:cacheprovider tests/test_frameworks_rllib.py tests/test_frameworks_torchrl.py tests/test_frameworks_tianshou.py
	$(FW_VENV)/bin/python -m pytest -q -n 2 -p no:cacheprovider $(ENV_TESTS)
	$(AG_VENV)/bin/python -m pytest -q -m frameworks -p no:cacheprovider tests/test_frameworks_agilerl.py
	$(AG_VENV)/bin/python -m pytest -q -n 2 -p no:cacheprovider $(ENV_TESTS)

bench: $(STAMP)
	@set -e; for f in benchmarks/*.py; do \
		[ -e "$$f" ] || continue; \
		echo "== $$f"; $(PY) "$$f"; \
	done

clean:
	rm -rf $(VENV) $(FW_VENV) $(AG_VENV) build dist *.egg-info .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
