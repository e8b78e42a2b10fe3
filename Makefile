# godevarrow developer tasks. `make test` and `make demo` work on a fresh
# machine with Go, Python 3 and a C compiler: they create .venv and install
# what they need from PyPI.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
export GOFLAGS := -buildvcs=false
PYINC   = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
FAKECUDA := $(CURDIR)/tests_go/fakecuda/libfakecuda.so
# The test suites run the CUDA paths against the strict fake driver.
TEST_ENV := GODEVARROW_LIBCUDA=$(FAKECUDA) FAKECUDA_DEVICES=2

.PHONY: api-reference all venv build fakecuda test test-gpu test-go test-py typecheck docs wheel test-wheel test-sdist test-pythons test-strict fuzz fuzz-smoke stress valgrind valgrind-if-present demo info bench bench-abi3 bench-compare profile lint fmt clean gpu-kit

all: build

$(VENV)/.installed: requirements-dev.txt requirements-test.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

venv: $(VENV)/.installed

# Build the extension and install the package into .venv (Go's build cache
# makes rebuilds incremental).
build: venv fakecuda
	$(PY) -m pip install -q --no-build-isolation --no-deps --force-reinstall .

# The fake driver and the C producer whose release needs the GIL (tests_py/gilprod).
fakecuda:
	$(MAKE) -s -C tests_go/fakecuda
	$(MAKE) -s -C tests_py/gilprod PYINC="$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
	  PYVER="$$($(PY) -c 'import sys; print("%d.%d" % sys.version_info[:2])')"

test: lint test-go test-py typecheck docs test-strict valgrind-if-present test-wheel test-sdist

test-go: venv fakecuda
	CGO_CFLAGS="-I$(PYINC)" go vet ./...
	$(TEST_ENV) go test -count=1 ./gosrc/... ./tests_go/...
	$(TEST_ENV) go test -count=1 -race ./tests_go/...
	cd tests_go/asyncv18 && go vet ./... && go test -count=1 -race ./...
	$(MAKE) -s fuzz-smoke

# Coverage-guided fuzzing of the parsers and importers (seed corpora live in
# testdata/fuzz). `make fuzz FUZZTIME=10m` for a longer run (see fuzz-smoke
# for why CI gives a count of inputs instead).
FUZZTIME ?= 1m
FUZZ_TARGETS := gosrc/cschema:FuzzParseFormat gosrc/cschema:FuzzDecodeMetadata tests_go:FuzzSchemaImport tests_go:FuzzArrayImport tests_go:FuzzHostileTree
fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  echo "fuzz $$t for $(FUZZTIME)"; \
	  go test -run XXX -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) ./$${t%%:*}/ || exit 1; \
	done

# CI machines have valgrind (.ci/run installs it), and under CI=true a
# missing one fails the run; elsewhere the run is skipped with a note.
valgrind-if-present:
	@if command -v valgrind >/dev/null; then $(MAKE) -s valgrind; \
	elif [ "$${CI:-}" = true ]; then echo "valgrind-if-present: valgrind is not installed, and CI=true needs the memcheck run (apt-get install valgrind)" >&2; exit 1; \
	else echo "valgrind not installed: memcheck run skipped"; fi

# A count, not a duration: Go 1.26's fuzzing coordinator can fail a run whose
# -fuzztime deadline expires while a worker is busy ("context deadline
# exceeded", no failing input; go.dev/issue/75804, fixed in Go 1.27), which a
# loaded CI machine hits. 20,000 inputs take about 5 s per target here.
fuzz-smoke:
	$(MAKE) -s fuzz FUZZTIME=20000x

# The async close paths, where a reader's Close races the producer's
# deliveries, run STRESS_COUNT times under -race while a busy loop runs on
# every core, so that the scheduler interleaves them in as many ways as it
# can. .ci/run calls it after make test (5000 runs: about 30 s on 2 cores).
STRESS_COUNT ?= 5000
STRESS_RUN := TestAsync.*Close
STRESS_PKGS := ./gosrc/streams/ ./tests_go/
stress:
	$(MAKE) -s -C tests_go/fakecuda
	$(TEST_ENV) go test -race -count=1 -run '^$$' $(STRESS_PKGS)
	@hogs=""; for i in $$(seq $$(nproc)); do (while :; do :; done) & hogs="$$hogs $$!"; done; \
	trap 'kill $$hogs' EXIT; \
	echo "stress: $(STRESS_COUNT) runs of $(STRESS_RUN) under -race with $$(nproc) busy loops"; \
	$(TEST_ENV) go test -race -count=$(STRESS_COUNT) -run '$(STRESS_RUN)' $(STRESS_PKGS)

# The CPythons godevarrow supports (requires-python in pyproject.toml), oldest first.
SUPPORTED_PYTHONS := 3.10 3.11 3.12 3.13

# One wheel per architecture for every supported CPython: the extension
# keeps to the Limited API (cp310-abi3, checked by abi3audit). Both are
# cross-built on this machine (any Linux x86-64) by setup.py with
# GODEVARROW_TARGET: cgo's C side compiled and linked by zig cc (the ziglang
# package) against glibc 2.17, stripped at link, so auditwheel tags them
# manylinux2014 / manylinux_2_17; .ci/check_wheels.py fails the target on any
# tag, architecture, library or glibc symbol version beyond that. And an
# sdist that carries its Go modules (setup.py vendors them). Go is needed
# only here.
WHEEL_ARCHS := x86_64 aarch64
.PHONY: test-wheel-aarch64 publish-check
wheel: venv
	rm -rf dist build/wheel-raw
	@for arch in $(WHEEL_ARCHS); do echo "wheel for $$arch"; \
	  GODEVARROW_TARGET=$$arch $(PY) -m pip wheel -q --no-build-isolation --no-deps -w build/wheel-raw/$$arch . || exit 1; \
	  PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PY) -m auditwheel repair -w dist build/wheel-raw/$$arch/*.whl || exit 1; done
	$(PY) -m abi3audit --strict dist/*.whl
	$(PY) .ci/check_wheels.py dist $(WHEEL_ARCHS)
	$(PY) setup.py -q sdist -d dist
	@ls -l dist

# The repaired wheels: their tags and symbol versions, the x86-64 one's
# suite on the oldest and the newest supported CPython in fresh virtualenvs
# with no Go on PATH, and the aarch64 one's under qemu-user.
test-wheel: wheel fakecuda test-wheel-aarch64
	@for w in dist/*.whl; do $(PY) -m auditwheel show $$w || exit 1; done
	$(PY) .ci/check_wheels.py dist $(WHEEL_ARCHS)
	.ci/suite-in-venv $(firstword $(SUPPORTED_PYTHONS)) wheel
	.ci/suite-in-venv $(lastword $(SUPPORTED_PYTHONS)) wheel
	@echo "build-ext from the installed wheel (it carries godevarrow's Go source), with Go on PATH:"
	cd build && $(CURDIR)/build/venv-wheel-$(firstword $(SUPPORTED_PYTHONS))/bin/python $(CURDIR)/examples/go_functions/run.py

# The aarch64 wheel on Debian 12's aarch64 CPython under qemu-user (installed
# with apt-get when missing): import, round trips and values suites with
# aarch64 pyarrow, numpy, polars and duckdb (.ci/test-wheel-aarch64 says
# which files).
test-wheel-aarch64: wheel
	.ci/test-wheel-aarch64 $(PY)

# What PyPI will check of the wheels and the sdist: metadata, and that the
# long description (README.md) renders. twine skips the rendering when no
# Markdown renderer is installed, so the render is asked for first.
publish-check: wheel
	$(PY) -c "import sys, readme_renderer.markdown as md; html = md.render(open('README.md').read()); \
	  sys.exit('publish-check: README.md did not render (pip install readme-renderer[md])' if not html else 0)"
	$(PY) -m twine check --strict dist/*

# The sdist builds with the Go module proxy off and an empty module cache:
# everything it needs is in it.
SDIST_VENV := build/sdist-venv
test-sdist: wheel
	rm -rf $(SDIST_VENV) build/sdist-gomodcache
	$(PYTHON) -m venv $(SDIST_VENV)
	$(SDIST_VENV)/bin/python -m pip install -q $$(grep -E '^(setuptools|wheel)==' requirements-dev.txt)
	GOPROXY=off GOFLAGS=-mod=vendor GOTOOLCHAIN=local GOMODCACHE=$(CURDIR)/build/sdist-gomodcache \
	  $(SDIST_VENV)/bin/python -m pip install -q --no-index --no-build-isolation --no-deps dist/godevarrow-*.tar.gz
	$(SDIST_VENV)/bin/python -m pip install -q "$$(grep -m1 '^pyarrow==' requirements-test.txt)"  # from PyPI: only the Go build is offline
	cd build && $(CURDIR)/$(SDIST_VENV)/bin/python -c "import pyarrow as pa, godevarrow as gda; \
	  t = pa.record_batch({'x': [1, 2, None]}); assert pa.record_batch(gda.record_batch(t)).equals(t); \
	  print('the sdist built offline:', gda.__file__)"

# The suite on every supported CPython this machine has, each building
# godevarrow from this tree (not part of `make test`: about 5 minutes each).
test-pythons: fakecuda
	@for v in $(SUPPORTED_PYTHONS); do .ci/suite-in-venv $$v source || exit 1; done

# docs/reference.md: the API reference as plain Markdown, from the docstrings
# of the installed build (tests_py/api/test_api_docs.py checks it is current).
api-reference: build
	cd tests_py/api && ../../$(PY) api_reference.py > ../../docs/reference.md

# The documentation site (MkDocs, strict: broken links and bad references fail).
docs: venv
	$(PY) -m mkdocs build --strict -q

# mypy --strict on the package, the extension's stubs checked against the
# built module, and mypy --strict over the code the README and the guides
# show and the example extension's Python (with the stub build-ext writes).
typecheck: build
	$(PY) -m mypy
	$(PY) -m mypy.stubtest godevarrow._godevarrow
	$(PY) tests_py/api/typecheck_docs.py

# A C program exports, reads, imports and releases Arrow data through
# godevarrow 200 times under valgrind's memcheck: no invalid access, nothing
# definitely lost, every release exactly once.
VG_DIR := $(CURDIR)/build/valgrind
valgrind:
	mkdir -p $(VG_DIR)
	go build -buildmode=c-shared -ldflags=-w -o $(VG_DIR)/libvg.so ./tests_go/valgrind/lib
	gcc -O1 -g -o $(VG_DIR)/harness tests_go/valgrind/harness.c -L$(VG_DIR) -lvg -Wl,-rpath,$(VG_DIR)
	GODEBUG=asyncpreemptoff=1 valgrind -q --error-exitcode=9 --leak-check=full --show-leak-kinds=definite \
	  --errors-for-leak-kinds=definite --suppressions=tests_go/valgrind/go-runtime.supp $(VG_DIR)/harness

# The Go and Python suites with cgo's strictest pointer checks: the
# extension is rebuilt with GOEXPERIMENT=cgocheck2 and -d=checkptr (make
# build restores the normal one).
STRICT_ENV := GOEXPERIMENT=cgocheck2 GOFLAGS="-buildvcs=false -gcflags=all=-d=checkptr"
test-strict: venv fakecuda
	$(STRICT_ENV) $(TEST_ENV) go test -count=1 ./gosrc/... ./tests_go/...
	$(STRICT_ENV) $(PY) -m pip install -q --no-build-isolation --no-deps --force-reinstall .
	$(TEST_ENV) $(PY) -m pytest -q -m "not nocuda" tests_py

# Two passes: everything with the fake CUDA driver, then the tests of life
# without a driver in a process that cannot load one.
test-py: build
	$(TEST_ENV) $(PY) -m pytest -q -m "not nocuda" tests_py
	GODEVARROW_LIBCUDA=/nonexistent/libcuda.so.1 $(PY) -m pytest -q -m nocuda tests_py

# The gpu-marked tests and the demo against the real driver, CuPy and cuDF,
# ending with a report to paste into a bug report (the versions they ran
# with first). Without a device it says why and succeeds. cuDF pins pyarrow
# (cudf-cu12 25.08: pyarrow < 20; 26.08: pyarrow < 24 and Python >= 3.11), so
# the tests run in a venv of their own, $(GPU_VENV), with godevarrow's wheel
# and a combination cuDF supports; .venv keeps requirements-test.txt's pyarrow.
GPU_VENV := .venv-gpu
GPU_CUDF_NEW := 'cudf-cu12==26.08.*' 'pyarrow>=19,<24'
GPU_CUDF_OLD := 'cudf-cu12==25.08.*' 'pyarrow>=19,<20'
test-gpu: wheel
	@if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1'; then \
	  echo "test-gpu: skipped: no CUDA driver (libcuda.so.1) on this machine"; exit 0; fi; \
	rm -rf $(GPU_VENV) && python3 -m venv $(GPU_VENV) || exit 1; \
	if $(GPU_VENV)/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then cudf="$(GPU_CUDF_NEW)"; \
	else cudf="$(GPU_CUDF_OLD)"; fi; \
	eval "$(GPU_VENV)/bin/python -m pip install -q $$cudf 'cupy-cuda12x>=13' pytest dist/*.whl" \
	  || { echo "test-gpu: skipped: cuDF/CuPy could not be installed ($$cudf)"; exit 0; }; \
	echo "---- godevarrow test-gpu: versions ----"; \
	$(GPU_VENV)/bin/python -c 'import sys, pyarrow, cupy, cudf, godevarrow; \
	  print("python", sys.version.split()[0], "pyarrow", pyarrow.__version__, "cudf", cudf.__version__, \
	        "cupy", cupy.__version__, "godevarrow", godevarrow.__version__)'; \
	$(GPU_VENV)/bin/python -m pytest -q tests_py/cuda/test_gpu.py; rc=$$?; \
	$(GPU_VENV)/bin/python -m godevarrow demo >/dev/null 2>&1 && demo=ok || demo=failed; \
	echo "---- godevarrow test-gpu report ----"; \
	$(GPU_VENV)/bin/python -m godevarrow info 2>&1 | head -20; \
	echo "gpu tests exit $$rc, demo $$demo"; exit $$rc

# The GPU kit: everything a machine with a GPU needs to run the GPU tests and
# the device bench without Go or a network (the x86-64 abi3 wheel, the tests,
# the gold corpus, the bench, pytest's wheels, run.sh), under 20 MB. There:
# `OUT=dir bash build/gpu-kit/run.sh` writes dir/report.md (docs/benchmarks.md).
GPU_KIT := build/gpu-kit
gpu-kit: wheel
	rm -rf build/gpu-kit-wheels
	$(PY) -m pip download -q --only-binary=:all: --python-version 3.10 -d build/gpu-kit-wheels \
	  "$$(grep -m1 '^pytest==' requirements-test.txt)" exceptiongroup tomli
	$(PY) tests_py/cuda/gpukit/assemble.py --wheel 'dist/*x86_64.whl' --pytest-wheels build/gpu-kit-wheels --out $(GPU_KIT)
	@du -sh $(GPU_KIT)

# Without a real CUDA driver, the demo's GPU leg runs on the strict fake one.
DEMO_ENV = $(shell ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1' || echo "$(TEST_ENV)")

demo: build
	$(DEMO_ENV) $(PY) -m godevarrow demo

info: build
	$(DEMO_ENV) $(PY) -m godevarrow info

# numpy's idle OpenBLAS threads spin on a small machine and blur the timings
# of every implementation alike: one thread for the whole run
bench: build
	$(DEMO_ENV) OPENBLAS_NUM_THREADS=1 $(PY) benchmarks/bench.py --out docs/benchmarks.md

# The Limited API's cost: every binding-bound bench row with the abi3 build
# and a full-API build, in alternating processes (docs/design.md, "Packaging").
bench-abi3: build
	$(DEMO_ENV) OPENBLAS_NUM_THREADS=1 $(PY) benchmarks/abi3.py --out build/abi3.md

# A change's cost on every binding-bound bench row: this tree against the
# build of git revision BASE, alternating in one run.
BASE ?= HEAD~1
bench-compare: build
	$(DEMO_ENV) OPENBLAS_NUM_THREADS=1 $(PY) benchmarks/abi3.py --against $(BASE) --out build/compare.md

# Where the time of one bench row goes: perf over a build that keeps its
# symbols (the C and Go code by name). `make profile` lists the rows;
# `make profile ROW=6 IMPL=nanoarrow` profiles one. The next `make build`
# strips the extension again.
ROW ?=
IMPL ?= godevarrow
profile: venv
	@command -v perf >/dev/null || (echo "profile: perf is not installed (linux-tools)"; exit 1)
	GODEVARROW_GO_LDFLAGS=-w $(PY) -m pip install -q --no-build-isolation --no-deps --force-reinstall .
	@if [ -z "$(ROW)" ]; then $(PY) benchmarks/bench.py --profile; else \
	  $(DEMO_ENV) OPENBLAS_NUM_THREADS=1 perf record -q -o build/perf.data $(PY) benchmarks/bench.py --profile $(ROW) --impl $(IMPL) && \
	  perf report -i build/perf.data --no-children --sort dso,sym --stdio -g none 2>/dev/null | grep -v -e '^$$' -e '^#' | cut -c1-150 | head -40; fi

# Go and Python style, and .ci/lint_tests.py: the test patterns that let a
# test pass without checking (pytest.raises(Exception), an except that only
# passes, contextlib.suppress, assertions on elapsed time).
lint: venv
	@test -z "$$(gofmt -l gosrc capsule tests_go tests_py/gofuncs/goext examples)" || (gofmt -l gosrc capsule tests_go tests_py/gofuncs/goext examples; echo "gofmt: files above need formatting"; exit 1)
	CGO_CFLAGS="-I$(PYINC)" go vet ./...
	$(PY) -m ruff check python tests_py benchmarks examples .ci
	$(PY) -m ruff format --check python tests_py benchmarks examples .ci
	$(PY) -m unittest discover -s .ci -p 'test_*.py'
	$(PY) .ci/lint_tests.py

fmt: venv
	gofmt -w gosrc capsule tests_go tests_py/gofuncs/goext examples
	$(PY) -m ruff format python tests_py benchmarks examples .ci

clean:
	rm -rf build dist *.egg-info python/*.egg-info .pytest_cache
	$(MAKE) -s -C tests_go/fakecuda clean
	$(MAKE) -s -C tests_py/gilprod clean
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
