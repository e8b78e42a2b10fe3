#!/usr/bin/env bash
# godevarrow's GPU kit: the GPU tests and the device bench against the
# machine's own CUDA driver, with the wheel beside this script. Needs no Go
# and no network: only a CUDA driver, Python 3.10+ with pyarrow and numpy,
# and whichever of CuPy, PyTorch and cuDF the machine has (the tests of a
# missing one skip, saying so). It makes a venv that sees the machine's
# packages (--system-site-packages), installs the wheel into it without
# dependencies, and writes one report: $OUT/report.md (OUT defaults to the
# current directory), with run.log, junit.xml and bench.md beside it.
#
#   OUT=/some/dir bash gpu-kit/run.sh        # PYTHON=python3.12 to pick one
#   KIT_QUICK=1 ...                          # the bench's small sizes
#   KIT_NO_VENV=1 ...                        # $PYTHON as it is, the wheel unpacked onto PYTHONPATH
#   KIT_TEST_LIMIT_S=240 KIT_BENCH_LIMIT_S=240 ...   # each step's hang guard (420 and 300 s)
set -u
KIT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
OUT="${OUT:-$PWD}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/godevarrow-gpu-kit.XXXXXX")"
LOG="$OUT/run.log"
: >"$LOG"
say() { echo "gpu-kit: $*" | tee -a "$LOG"; }
# a hang guard for each step (the device tool allows 10 minutes a command)
guard() { local s="$1"; shift; if command -v timeout >/dev/null; then timeout "$s" "$@"; else "$@"; fi; }

shopt -s nullglob
wheels=("$KIT"/godevarrow-*x86_64.whl)
if [ "${#wheels[@]}" -ne 1 ]; then say "expected one x86-64 godevarrow wheel in $KIT, found ${#wheels[@]}"; exit 2; fi
WHEEL="${wheels[0]}"

# The wheel goes into a venv over the machine's packages; where venv or its
# pip is missing (Debian without python3-venv), it is unpacked onto
# PYTHONPATH instead: a wheel is a zip of its installed files. A $PYTHON
# that is itself a venv's (a GPU image's python3 often is) gets the unpacked
# wheel too: a venv made from it would see its base interpreter's packages,
# not the ones installed in it (CuPy, PyTorch, pyarrow).
unpack() { "$PYTHON" -c 'import sys, zipfile; [zipfile.ZipFile(w).extractall(sys.argv[1]) for w in sys.argv[2:]]' "$@"; }
if "$PYTHON" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)' 2>/dev/null; then
  say "$PYTHON runs in a venv ($("$PYTHON" -c 'import sys; print(sys.prefix)')): the wheel is unpacked onto PYTHONPATH"
  KIT_NO_VENV=1
fi
if [ -z "${KIT_NO_VENV:-}" ] && "$PYTHON" -m venv --system-site-packages "$WORK/venv" >>"$LOG" 2>&1 \
  && "$WORK/venv/bin/python" -m pip install -q --no-index --no-deps --disable-pip-version-check "$WHEEL" >>"$LOG" 2>&1; then
  VPY="$WORK/venv/bin/python"
  INSTALL="Installed into a venv with --system-site-packages ($VPY)."
  if ! "$VPY" -c 'import pytest' 2>/dev/null; then
    "$VPY" -m pip install -q --no-index --find-links "$KIT/wheels" --disable-pip-version-check pytest >>"$LOG" 2>&1 \
      || say "pytest could not be installed from $KIT/wheels"
    INSTALL="$INSTALL pytest from the kit's wheels."
  fi
else
  [ -z "${KIT_NO_VENV:-}" ] && say "no venv with pip here ($PYTHON -m venv failed, see run.log)"
  rm -rf "$WORK/venv"
  unpack "$WORK/site" "$WHEEL"
  if ! "$PYTHON" -c 'import pytest' 2>/dev/null; then unpack "$WORK/site" "$KIT"/wheels/*.whl; fi
  export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
  VPY="$PYTHON"
  INSTALL="Unpacked onto PYTHONPATH ($WORK/site) for $PYTHON."
fi
say "$INSTALL"

missing=""
for m in godevarrow pyarrow numpy pytest; do "$VPY" -c "import $m" 2>>"$LOG" || missing="$missing $m"; done
if [ -n "$missing" ]; then say "cannot run: not importable:$missing (the kit installs only godevarrow and pytest; pyarrow and numpy come from the machine)"; fi

say "GPU tests"
(cd "$KIT/tests" && guard "${KIT_TEST_LIMIT_S:-420}" "$VPY" -m pytest -p no:cacheprovider -q -rA --junitxml "$OUT/junit.xml" . 2>&1) | tee "$OUT/pytest.log" >>"$LOG"
pytest_rc=${PIPESTATUS[0]}
say "GPU tests: exit $pytest_rc ($(tail -1 "$OUT/pytest.log"))"

say "device bench"
quick=(); [ -n "${KIT_QUICK:-}" ] && quick=(--quick)
(cd "$WORK" && OPENBLAS_NUM_THREADS=1 guard "${KIT_BENCH_LIMIT_S:-300}" "$VPY" "$KIT/bench/bench.py" --device-only ${quick[@]+"${quick[@]}"} --out "$OUT/bench.md" 2>&1) >>"$LOG"
bench_rc=$?
say "device bench: exit $bench_rc"

say "driver call costs"
(cd "$WORK" && guard 120 "$VPY" "$KIT/bench/driver_costs.py" --out "$OUT/driver_costs.md" 2>&1) >>"$LOG"
say "driver call costs: exit $?"

say "steps of the device rows"
(cd "$WORK" && guard 120 "$VPY" "$KIT/bench/breakdown.py" --out "$OUT/breakdown.md" 2>&1) >>"$LOG"
say "steps of the device rows: exit $?"

"$VPY" "$KIT/report.py" --out "$OUT/report.md" --junit "$OUT/junit.xml" --pytest-log "$OUT/pytest.log" \
  --pytest-rc "$pytest_rc" --bench "$OUT/bench.md" --bench-rc "$bench_rc" --install "$INSTALL" 2>&1 | tee -a "$LOG"
rm -rf "$WORK"
# the gist on stdout too, for a caller that sees only the output's tail:
# failed tests, then the bench's rows
if [ -f "$OUT/report.md" ]; then
  grep -E '^## Tests|^- (GPU|CUDA driver|cuda:)|\| (failed|error) \|' "$OUT/report.md"
  [ -f "$OUT/bench.md" ] && grep -E '^\|' "$OUT/bench.md"
  [ -f "$OUT/driver_costs.md" ] && grep -E '^\|' "$OUT/driver_costs.md"
  [ -f "$OUT/breakdown.md" ] && grep -E '^\|' "$OUT/breakdown.md"
fi
[ "$pytest_rc" -eq 0 ] && [ "$bench_rc" -eq 0 ]
