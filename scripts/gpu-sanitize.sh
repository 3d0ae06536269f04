#!/bin/sh
# compute-sanitizer over the GPU kernels, for a machine with an NVIDIA GPU: memcheck (out of
# bounds and misaligned accesses, leaks of device memory) and racecheck (shared-memory
# hazards) on tests that launch every kind of kernel with small inputs: the one-signature
# kernel of every parameter set, the batch signer and verifier (mixed sets and corrupted
# signatures), the device-resident entry points, and the stateful leaf kernels.
# Uses the binaries of scripts/gpu-check.sh ($BUILD, default build-gpu); appends to
# bench/results/gpu-<gpu name>-sanitize.log. Each run is capped by SANITIZE_TIMEOUT seconds
# (default 240), since the tools slow kernels down a hundredfold.
set -u
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD:-build-gpu}
LIMIT=${SANITIZE_TIMEOUT:-240}
TESTS=${SANITIZE_TESTS:-"gpu/latency_all_sets gpu/verify_mixed gpu/device_resident gpu/signer gpu_stateful/lms gpu_stateful/xmss_keys"}

command -v compute-sanitizer >/dev/null 2>&1 || PATH=$PATH:/usr/local/cuda/bin
command -v compute-sanitizer >/dev/null 2>&1 || { echo "gpu-sanitize: no compute-sanitizer"; exit 2; }
[ -x "$BUILD/hbs_tests" ] || { echo "gpu-sanitize: no $BUILD/hbs_tests (run scripts/gpu-check.sh)"; exit 2; }
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 |
       sed 's/^NVIDIA //; s/[^A-Za-z0-9._-]/-/g')
log=bench/results/gpu-$name-sanitize.log

sanitize() {
    status=0
    echo "hbs gpu-sanitize, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null)"
    for tool in memcheck racecheck; do
        for t in $TESTS; do
            extra=
            [ "$tool" = memcheck ] && extra="--leak-check full"
            echo "== $tool $t =="
            # shellcheck disable=SC2086
            out=$(timeout "$LIMIT" compute-sanitizer --tool "$tool" $extra --error-exitcode 3 \
                  "$BUILD/hbs_tests" "$t" 2>&1)
            rc=$?
            echo "$out" | grep -E '^(ok|FAIL|SKIP)|SUMMARY|Error|error|hazard' | head -n 20
            case $rc in
            0) ;;
            124) echo "(stopped after $LIMIT s: the part that ran is above)" ;;
            *) echo "gpu-sanitize: $tool $t exit $rc"; status=1 ;;
            esac
        done
    done
    echo "gpu-sanitize: $( [ $status = 0 ] && echo clean || echo FOUND PROBLEMS )"
    return $status
}

mkdir -p bench/results
sanitize >"$log" 2>&1
status=$?
cat "$log"
[ -n "${OUT:-}" ] && [ -d "${OUT:-}" ] && cp "$log" "$OUT/" 2>/dev/null
exit $status
