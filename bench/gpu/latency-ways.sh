#!/bin/sh
# The one-signature kernel's ways (src/gpu/latency.cuh, LAT_*), on a GPU machine: the
# one-signature tests in each way, then SHA2-128f and SHA2-128s in each way against the
# default kernel, alternating, three rounds (median of 60 each), and their timing lines.
# The ways: 'default' (lat_sha2_sc: at n = 16 T_len and T_k in two passes, each layer's
# part copied out when done, the 's' sets' FORS blocks first, the 'f' sets' launch bounds of
# one block an SM), 'plain' (the set's SHA-256 form alone, HBS_GPU_LAT_SHA: the kernel before
# those ways, the whole signature copied out by the last block).
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
    # way, set -> the environment of that run
    envs_of() {
        case $1,$2 in
        plain,*128f) echo HBS_GPU_LAT_SHA=2 ;;
        plain,*128s) echo HBS_GPU_LAT_SHA=4 ;;
        *) echo HBS_GPU_LAT_NONE=0 ;;
        esac
    }
    for w in default plain; do
        for s in SLH-DSA-SHA2-128f SLH-DSA-SHA2-128s; do
            echo "== tests: $w, $s"
            # (the tests cover every set; the way's variable names its set's kernel)
            env "$(envs_of $w $s)" "$B/hbs_tests" gpu/latency_all_sets gpu/latency_repeat |
                grep -E '^(ok|FAIL)'
        done
    done
    for round in 1 2 3; do
        for w in default plain; do
            for s in SLH-DSA-SHA2-128f SLH-DSA-SHA2-128s; do
                echo "== round $round: $w"
                env "$(envs_of $w $s)" "$B/hbs" bench --gpu --modes latency --ops sign -a "$s" \
                    --iterations 60 | grep ' latency '
            done
        done
    done
    for w in default plain; do
        for s in SLH-DSA-SHA2-128f SLH-DSA-SHA2-128s; do
            echo "== timing: $w, $s"
            env "$(envs_of $w $s)" HBS_GPU_LATENCY_TIMING=1 "$B/hbs" bench --gpu \
                --modes latency --ops sign -a "$s" --iterations 3 2>&1 | grep 'gpu latency' |
                tail -n 1
        done
    done
} 2>&1 | tee "$log"
