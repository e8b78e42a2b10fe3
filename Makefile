# godevarrow developer tasks. `make test` and `make demo` work on a fresh
# machine with Go, Python 3 and a C compiler: they create .venv and install
# what they need from PyPI.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
export GOFLAGS := -buildvcs=false
PYINC   = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
SHARED ?= ../shared
FAKECUDA := $(CURDIR)/tests_go/fakecuda/libfakecuda.so
# The test suites run the CUDA paths against the strict fake driver.
TEST_ENV := GODEVARROW_LIBCUDA=$(FAKECUDA) FAKECUDA_DEVICES=2

.PHONY: all venv build fakecuda test test-go test-py demo info bench lint fmt clean

all: build

$(VENV)/.installed: requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

venv: $(VENV)/.installed

# Build the extension and install the package into .venv (Go's build cache
# makes rebuilds incremental).
build: venv fakecuda
	$(PY) -m pip install -q --no-build-isolation --no-deps --force-reinstall .

fakecuda:
	$(MAKE) -s -C tests_go/fakecuda

test: test-go test-py

test-go: venv fakecuda
	CGO_CFLAGS="-I$(PYINC)" go vet ./...
	$(TEST_ENV) go test -count=1 ./gosrc/... ./tests_go/...
	$(TEST_ENV) go test -count=1 -race ./tests_go/...

# Two passes: everything with the fake CUDA driver, then the tests of life
# without a driver in a process that cannot load one.
test-py: build
	$(TEST_ENV) $(PY) -m pytest -q -m "not nocuda" tests_py
	GODEVARROW_LIBCUDA=/nonexistent/libcuda.so.1 $(PY) -m pytest -q -m nocuda tests_py

# Without a real CUDA driver, the demo's GPU leg runs on the strict fake one.
DEMO_ENV = $(shell ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1' || echo "$(TEST_ENV)")

demo: build
	$(DEMO_ENV) $(PY) -m godevarrow demo

info: build
	$(DEMO_ENV) $(PY) -m godevarrow info

bench: build
	$(DEMO_ENV) $(PY) benchmarks/bench.py

lint: venv
	@test -z "$$(gofmt -l gosrc capsule tests_go)" || (gofmt -l gosrc capsule tests_go; echo "gofmt: files above need formatting"; exit 1)
	CGO_CFLAGS="-I$(PYINC)" go vet ./...
	$(PY) -m ruff check python tests_py benchmarks
	$(PY) -m ruff format --check python tests_py benchmarks

fmt: venv
	gofmt -w gosrc capsule tests_go
	$(PY) -m ruff format python tests_py benchmarks

clean:
	rm -rf build dist *.egg-info python/*.egg-info .pytest_cache
	$(MAKE) -s -C tests_go/fakecuda clean
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
