# Sourced by the device A/B scripts (bench/gpu/*.sh) from the repository root, with $1 the
# build dir (default build-gpu) and $2 the rounds (default 2) of the script and $title set:
# sets B and R, prints the run's header (title, time, revision, GPU) and builds the tool and
# the tests for sm_90 unless B has them (a build dir carried from an earlier call).
B=${1:-build-gpu}
R=${2:-2}
echo "$title, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
if [ ! -x "$B/hbs" ] || [ ! -x "$B/hbs_tests" ]; then
    cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
        cmake --build "$B" -j "$(nproc)" >"$B.log" 2>&1 || { tail -n 30 "$B.log"; exit 2; }
fi
status=0
# tests_each VAR "V1 V2 ..." TEST...: the tests once with VAR set to each value; a failure
# sets status to 1
tests_each() {
    var=$1 vals=$2
    shift 2
    for v in $vals; do
        echo "== tests, $var=$v"
        out=$(env "$var=$v" "$B/hbs_tests" "$@" 2>&1) || status=1
        echo "$out" | grep -E '^(ok|FAIL)|passed'
    done
}
