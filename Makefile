# The two commands of the README:
#   make demo   set up and build the example site into site/: two weekly releases and what changed
#   make test   set up and run every test (CI runs this one: the slow tests included)
# and beside them, for a quick check while working: make test-quick (every test not marked slow)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup setup-test demo test test-quick bench clean

# pip -qq: errors only. The package is installed once per change of pyproject.toml (a stamp in the
# venv), so a second `make demo` or `make test` installs nothing and prints nothing of pip's.
PIP    := $(BIN)/python -m pip -qq --disable-pip-version-check

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) install -e '.[test]'
	touch $@ $(VENV)/.installed

setup: $(VENV)/.installed

setup-test: $(VENV)/.installed-test

# The demo is two weeks of the example workspace (docs/example-workspace.md, "make demo: two releases"):
# 2026-W26, a snapshot of the pool without the 10,000 works week 27 adds and with 2,000 it no longer has,
# routed with last week's rule book; then 2026-W27, the workspace itself. Dated by SOURCE_DATE_EPOCH
# (the Mondays after the two weeks), so every run writes the same bytes; a second run changes nothing.
# Then the newest release's discard pile is certified from the labelled sheet the repository ships
# (examples/certify/README.md): its sample drawn with the labels carried over, and the certificate
# written to state/certify/. A certificate comes after its release, so the last step builds again: the
# same release (nothing new is published), its status page now showing the certificate on the discard box.
# Before it, the hand-off is exported (--partial: the example asks no model, so nothing is screened), which
# keeps the release's methods disclosure; the build publishes it as an archived page linked from the status
# page. Last, the disclosure is drafted again from the run records (docs/disclosure.md) into
# state/disclosure/<release id>/.
DEMO_W26_POOL  := data/2026-W26.parquet
DEMO_W26_SPECS := examples/demo/specs-2026-W26

demo: setup
	test -f $(DEMO_W26_POOL) || $(BIN)/python -m reporter.example $(DEMO_W26_POOL) --rows 202000 --seed 0 \
		--without 190000:200000 --quiet
	SOURCE_DATE_EPOCH=1782734400 $(BIN)/reporter route --pool $(DEMO_W26_POOL) --specs $(DEMO_W26_SPECS) \
		--out releases --label 2026-W26
	SOURCE_DATE_EPOCH=1783339200 $(BIN)/reporter build --label 2026-W27
	$(BIN)/reporter certify --pile discard --n 400 --seed 0 --from examples/certify/discard.csv \
		--out state/discard-sheet.csv
	$(BIN)/reporter certify --sheet state/discard-sheet.csv
	SOURCE_DATE_EPOCH=1783339200 $(BIN)/reporter export --out state/handoff.csv --partial
	SOURCE_DATE_EPOCH=1783339200 $(BIN)/reporter build --label 2026-W27
	$(BIN)/reporter disclose --release 2026-W27

test: setup-test
	$(BIN)/python -m pytest -q

# The tests marked slow (tests/README.md, "Slow tests") left out: a few minutes instead of the whole suite's.
test-quick: setup-test
	$(BIN)/python -m pytest -q -m "not slow"

bench: setup
	$(BIN)/python bench/route.py --rows 200000

clean:
	rm -rf data releases digests state site/*.html site/*.md site/releases site/static build *.egg-info
