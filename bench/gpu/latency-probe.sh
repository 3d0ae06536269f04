#!/bin/sh
# One-signature probes for a GPU machine: the SHA-256 code forms (bench/gpu/sha256_forms.cu,
# then the one-signature kernel in each form, alternating), and the 's' sets' block cuts
# (HBS_GPU_LAT_LPB / HBS_GPU_LAT_FPB), with the kernel's timing line for each.
#   bench/gpu/latency-probe.sh [build dir]     (default build-gpu; built here if missing)
# Prints everything; where $OUT is set, also writes it to $OUT/latency-probe.txt.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${1:-build-gpu}
log=${OUT:-/tmp}/latency-probe.txt
{
    echo "latency probe, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null)"
    nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
    nvcc -O3 -std=c++17 -arch=sm_90 -I src -I include bench/gpu/sha256_forms.cu \
        -o "${TMPDIR:-/tmp}/sha256_forms" && "${TMPDIR:-/tmp}/sha256_forms" 600
    if [ ! -x "$B/hbs" ]; then
        cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
            cmake --build "$B" -j "$(nproc)" >"$B.log" 2>&1 || { tail -n 30 "$B.log"; exit 2; }
    fi
    sets="-a SLH-DSA-SHA2-128f -a SLH-DSA-SHA2-128s -a SLH-DSA-SHA2-192f -a SLH-DSA-SHA2-256f"
    for f in ${PROBE_FORMS:-3 1 2 3 2 0}; do
        echo "== HBS_GPU_LAT_SHA=$f"
        HBS_GPU_LAT_SHA=$f "$B/hbs_tests" gpu/latency_all_sets gpu/latency_repeat | grep -E '^(ok|FAIL)'
        # shellcheck disable=SC2086
        HBS_GPU_LAT_SHA=$f "$B/hbs" bench --gpu --modes latency --ops sign $sets --iterations 60 |
            grep ' latency '
    done
    for f in 2 3; do
        echo "== timing, HBS_GPU_LAT_SHA=$f"
        HBS_GPU_LAT_SHA=$f HBS_GPU_LATENCY_TIMING=1 "$B/hbs" bench --gpu --modes latency --ops sign \
            -a SLH-DSA-SHA2-128f --iterations 3 2>&1 | grep 'gpu latency' | tail -n 1
    done
    for cut in "" "LPB=2" "LPB=2 FPB=9" "LPB=1" "FPB=10"; do
        envs=""
        for c in $cut; do envs="$envs HBS_GPU_LAT_$c"; done
        echo "== 128s cut: ${cut:-default}"
        # shellcheck disable=SC2086
        env $envs HBS_GPU_LATENCY_TIMING=1 "$B/hbs" bench --gpu --modes latency --ops sign \
            -a SLH-DSA-SHA2-128s --iterations 20 2>&1 | grep -E 'gpu latency| latency ' | tail -n 2
    done
} 2>&1 | tee "$log"
