# The two commands of the README:
#   make demo   set up and build the example site into site/
#   make test   set up and run every test
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup setup-test demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

setup: $(BIN)/python
	$(BIN)/pip install --quiet -e .

setup-test: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'

demo: setup
	$(BIN)/reporter build

test: setup-test
	$(BIN)/python -m pytest -q

bench: setup
	$(BIN)/python bench/route.py --rows 200000

clean:
	rm -rf data releases digests state site/*.html site/*.md site/releases site/static build *.egg-info
