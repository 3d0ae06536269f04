#!/bin/sh
# The one-signature kernel's ways still to be measured (src/gpu/latency.cuh, LAT_*: T_len and
# T_k in two passes, the spread copy-out, the FORS blocks first; src/gpu/latency.cu: a block
# to an SM, HBS_GPU_LAT_ONE_PER_SM), on a GPU machine: the
# one-signature tests in each way, then SHA2-128f and SHA2-128s in each way against the
# default kernel, alternating, two rounds, and the timing line of the default and of all
# ways together. The default kernels compile to the same SASS as before these ways existed
# (bench/gpu/ptx-diff.sh), so the default rows are the kernel measured so far.
#   bench/gpu/latency-ways.sh [build dir]     (default build-gpu; built here if missing)
# Prints everything; where $OUT is set, also writes it to $OUT/latency-ways.txt.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${1:-build-gpu}
log=${OUT:-/tmp}/latency-ways.txt
{
    echo "latency ways, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null)"
    nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
    if [ ! -x "$B/hbs" ] || [ ! -x "$B/hbs_tests" ]; then
        cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
            cmake --build "$B" -j "$(nproc)" --target hbs_cli hbs_tests >"$B.log" 2>&1 ||
            { tail -n 30 "$B.log"; exit 2; }
    fi
    ways="default TL2 SPREAD ONE_PER_SM TL2,SPREAD TL2,SPREAD,ONE_PER_SM FORS_FIRST
        TL2,SPREAD,FORS_FIRST"
    envs_of() { # "TL2,SPREAD" -> "HBS_GPU_LAT_TL2=1 HBS_GPU_LAT_SPREAD=1"
        [ "$1" = default ] && return
        echo "$1" | tr ',' '\n' | sed 's/^/HBS_GPU_LAT_/; s/$/=1/' | tr '\n' ' '
    }
    for w in $ways; do
        echo "== tests: $w"
        # shellcheck disable=SC2046
        env $(envs_of "$w") "$B/hbs_tests" gpu/latency_all_sets gpu/latency_repeat |
            grep -E '^(ok|FAIL)'
    done
    for round in 1 2; do
        for w in $ways; do
            case $w in
            *FORS_FIRST*) sets="-a SLH-DSA-SHA2-128s" ;; # (an 's'-set way)
            *ONE_PER_SM*) sets="-a SLH-DSA-SHA2-128f -a SLH-DSA-SHAKE-128f" ;; # (blocks <= SMs)
            *) sets="-a SLH-DSA-SHA2-128f -a SLH-DSA-SHA2-128s" ;;
            esac
            echo "== round $round: $w"
            # shellcheck disable=SC2046,SC2086
            env $(envs_of "$w") "$B/hbs" bench --gpu --modes latency --ops sign $sets \
                --iterations 60 | grep ' latency '
        done
    done
    for w in default TL2,SPREAD,FORS_FIRST ONE_PER_SM TL2,SPREAD,ONE_PER_SM; do
        for s in SLH-DSA-SHA2-128f SLH-DSA-SHA2-128s; do
            echo "== timing: $w, $s"
            # shellcheck disable=SC2046
            env $(envs_of "$w") HBS_GPU_LATENCY_TIMING=1 "$B/hbs" bench --gpu --modes latency \
                --ops sign -a "$s" --iterations 3 2>&1 | grep 'gpu latency' | tail -n 1
        done
    done
} 2>&1 | tee "$log"
