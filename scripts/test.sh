#!/usr/bin/env bash
# The whole test suite, as CI runs it: install, lint, type-check, then every test
# (real fio on small files; loop-device tests need root and are skipped otherwise).
# The tests run in three groups (each test's marker says which; pyproject.toml lists them):
# 1. all but `paced` and `serial` on five pytest-xdist workers, at the lowest CPU priority
#    (nice 19): it is CPU-bound (both CPUs 99 % busy), so it takes whatever CPU is left;
# 2. at the same time, at normal priority, `paced` four at a time: they judge rates or seconds
#    but use little CPU (0.1-0.6 of one each, measured): a woken nice-0 process preempts a
#    nice-19 one and, contested, gets 98.5 % of a CPU, so they keep the machine they need;
#    the parallel group's output is printed when it ends;
# 3. `serial`, alone: they judge CPU use, noise between runs or the machine's block devices.
# Arguments go to every group (e.g. a test file); a group selecting no test is not a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh --dev
.venv/bin/ruff check src tests benchmarks
.venv/bin/ruff format --check src tests benchmarks
.venv/bin/mypy src
# The core fio tests run on the system's fio and on a current one (tests/conftest.py each_fio):
# say which were found (an absent one's tests are skipped, each with the reason)
echo "fio: $(fio --version 2>/dev/null || echo none); current fio: $(../shared/tools/fio-3.42/fio \
    --version 2>/dev/null || echo 'absent at ../shared/tools/fio-3.42/fio: its tests skip')"

phase() {
    local code=0
    .venv/bin/python -m pytest -q --durations=10 "$@" || code=$?
    if [ "$code" -eq 5 ]; then # no test selected in this phase
        empty=$((empty + 1))
        code=0
    fi
    return "$code"
}
# Python may cache the compiled tests and sources (an environment asking it not to write
# them makes every pytest process and every child `arraybench` compile them again: 5 s of
# collection per process). The caches are git-ignored __pycache__ folders.
unset PYTHONDONTWRITEBYTECODE
status=0
empty=0
# Without arguments the last two groups read only the files that say their mark (each pytest
# process collecting all 300 test files costs 4 s of CPU); tests/conftest.py fails a test whose
# mark its file does not say, so none can be left out of every group.
marked() {
    if [ "$#" -gt 1 ]; then printf '%s\n' "${@:2}"; else git grep -l "pytest.mark.$1\b" -- 'tests/*.py'; fi
}
mapfile -t paced < <(marked paced "$@")
mapfile -t alone < <(marked serial "$@")
side=$(mktemp)
nice -n 19 .venv/bin/python -m pytest -q --durations=10 -n 5 --dist loadgroup \
    -m "not paced and not serial" "$@" >"$side" 2>&1 &
parallel=$!
trap 'kill "$parallel" 2>/dev/null; rm -f "$side"' EXIT
phase -n 4 --dist loadgroup -m paced "${paced[@]}" || status=$?
code=0
wait "$parallel" || code=$?
echo "--- the parallel group, run beside the paced one at nice 19:"
cat "$side"
if [ "$code" -eq 5 ]; then
    empty=$((empty + 1))
elif [ "$code" -ne 0 ]; then
    status=$code
fi
phase -m serial "${alone[@]}" || status=$?
[ "$empty" -eq 3 ] && status=5 # no group selected a test
exit "$status"
