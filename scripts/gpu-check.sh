#!/bin/sh
# GPU check, for a machine with an NVIDIA GPU: builds hbs with CUDA for sm_80, sm_86, sm_89
# and sm_90 (Release, in build-gpu/), runs the GPU tests and a quick CPU sanity check, runs
# the GPU benchmark (where several GPUs are visible, also on GPU 0 alone against all of them),
# and keeps the results:
#   bench/results/gpu-<gpu name>.log    everything printed
#   bench/results/gpu-<gpu name>.json   the benchmark records (hbs bench --json schema, plus
#                                       "mode" and "efficiency")
# Where $OUT is set (the device machine of this workplace) both files are copied there too.
#
# Environment: BUILD (default build-gpu), HBS_CUDA_ARCHS (default "80;86;89;90"),
# HBS_GPU_CHECK_NO_BUILD=1 (use the binaries already in $BUILD, e.g. built elsewhere),
# HBS_VECTORS (test vectors; default ../shared/vectors), GPU_CHECK_BENCH_ARGS (extra
# arguments for `hbs bench --gpu`, e.g. "-a SLH-DSA-SHA2-128s"), GPU_CHECK_MANY_KEYS=1 (also
# the table of signing under many keys, several minutes more).
set -u
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD:-build-gpu}
ARCHS=${HBS_CUDA_ARCHS:-80;86;89;90}
JOBS=$(nproc 2>/dev/null || echo 4)

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu-check: no NVIDIA GPU here (nvidia-smi finds none)" >&2
    exit 2
fi
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 |
       sed 's/^NVIDIA //; s/[^A-Za-z0-9._-]/-/g')
mkdir -p bench/results
log=bench/results/gpu-$name.log
json=bench/results/gpu-$name.json

run() {
    echo "+ $*"
    "$@"
}

check() {
    status=0
    echo "hbs gpu-check, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    nvcc --version | tail -n 1
    echo
    if [ "${HBS_GPU_CHECK_NO_BUILD:-0}" != 1 ] && command -v cmake >/dev/null 2>&1; then
        mkdir -p "$BUILD"
        run cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
            "-DCMAKE_CUDA_ARCHITECTURES=$ARCHS" >"$BUILD/configure.log" 2>&1 ||
            { tail -n 30 "$BUILD/configure.log"; return 2; }
        start=$(date +%s)
        run cmake --build "$BUILD" -j "$JOBS" >"$BUILD/build.log" 2>&1 ||
            { tail -n 40 "$BUILD/build.log"; return 2; }
        echo "build: $(($(date +%s) - start)) s for sm $ARCHS"
    else
        echo "gpu-check: not building (no cmake, or HBS_GPU_CHECK_NO_BUILD=1); using $BUILD"
    fi
    [ -x "$BUILD/hbs" ] && [ -x "$BUILD/hbs_tests" ] || { echo "no binaries in $BUILD"; return 2; }
    echo
    echo "== GPU tests =="
    # gpu/: SLH-DSA on the GPU; gpu_cli/: hbs sign/verify --gpu on many files;
    # gpu_stateful/: LMS/HSS and XMSS key generation on the GPU
    # (HBS_BIN: gpu_cli/ runs this hbs, wherever the binaries were built)
    out=$(env HBS_BIN="$(cd "$BUILD" && pwd)/hbs" "$BUILD/hbs_tests" gpu/ gpu_cli/ gpu_stateful/ 2>&1)
    echo "$out"
    echo "$out" | grep -q '^ok .*gpu/' || { echo "gpu-check: no GPU test ran"; status=1; }
    echo "$out" | grep -q '^FAIL' && status=1
    # hbs sign|verify --gpu with a stateful key: the tool's GPU batches on this GPU
    run env HBS_BIN="$(cd "$BUILD" && pwd)/hbs" "$BUILD/hbs_tests" cli/stateful_many || status=1
    echo
    echo "== CPU sanity =="
    run "$BUILD/hbs_tests" unit/slhdsa_external unit/slhdsa_batches || status=1
    echo
    echo "== GPU benchmark =="
    # shellcheck disable=SC2086
    run "$BUILD/hbs" bench --gpu --json "$json" ${GPU_CHECK_BENCH_ARGS:-} || status=1
    echo
    echo "== SLH-DSA batches with the signatures in page-locked memory (hbs_gpu_host_alloc) =="
    # 'pinned' beside 'batch' (pageable memory: the library stages the copies) and 'device'
    run "$BUILD/hbs" bench --gpu --modes batch,pinned,device --ops verify \
        -a SLH-DSA-SHA2-128f -a SLH-DSA-SHA2-128s || status=1
    run "$BUILD/hbs" bench --gpu --modes batch,pinned --ops sign -a SLH-DSA-SHA2-128f || status=1
    echo
    echo "== GPU stateful key generation, batch signing and verification =="
    run "$BUILD/hbs" bench --gpu --stateful -a XMSSMT-SHA2_20/2_256 -a XMSS-SHA2_10_256 \
        -a LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4 -a LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W8 \
        -a LMS_SHA256_M32_H15/LMOTS_SHA256_N32_W8 \
        -a XMSS-SHA2_16_256 --iterations 5 || status=1
    echo
    echo "== GPU stateful key generation of tall trees (issue targets: XMSS_20 <= 0.5 s, LMS H20/W8 <= 1 s, H25/W8 <= 30 s) =="
    run "$BUILD/hbs" bench --gpu --stateful --ops keygen -a XMSS-SHA2_20_256 \
        -a LMS_SHA256_M32_H20/LMOTS_SHA256_N32_W8 -a LMS_SHA256_M32_H25/LMOTS_SHA256_N32_W8 \
        --iterations 1 || status=1
    if [ "${GPU_CHECK_MANY_KEYS:-0}" = 1 ]; then
        # (minutes: thousands of key files made, copied, written and fsynced; session 23's
        # device calls of 600 s could not hold it beside the rest)
        echo
        echo "== GPU signing under many keys (one message under each of 16,384 keys a call) =="
        run "$BUILD/hbs" bench --gpu --stateful --ops sign --many-keys -a XMSSMT-SHA2_20/2_256 \
            -a XMSS-SHA2_10_256 -a LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4 --iterations 5 ||
            status=1
    fi
    ngpu=$(nvidia-smi -L | grep -c '^GPU')
    if [ "$ngpu" -gt 1 ]; then
        echo
        echo "== several GPUs: the same work on GPU 0 alone, then on all $ngpu =="
        # (the GPU tests above ran on all of them: every batch spread)
        for devs in 0 "$(seq -s, 0 $((ngpu - 1)))"; do
            run "$BUILD/hbs" bench --gpu --gpu-devices "$devs" --modes batch \
                -a SLH-DSA-SHA2-128f -a SLH-DSA-SHA2-128s || status=1
            run "$BUILD/hbs" bench --gpu --gpu-devices "$devs" --stateful \
                -a XMSSMT-SHA2_20/2_256 -a XMSS-SHA2_16_256 --iterations 3 || status=1
            run "$BUILD/hbs" bench --gpu --gpu-devices "$devs" --stateful --ops keygen \
                -a XMSS-SHA2_20_256 -a LMS_SHA256_M32_H20/LMOTS_SHA256_N32_W8 \
                --iterations 1 || status=1
        done
    fi
    echo
    echo "gpu-check: $( [ $status = 0 ] && echo passed || echo FAILED )"
    return $status
}

# Where $OUT is a folder (the device machine), the log goes there as it is written too: a
# run killed by the call's time limit still leaves what it had done (session 30 lost one).
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
    check 2>&1 | tee "$log" "$OUT/$(basename "$log")"
else
    check 2>&1 | tee "$log"
fi
rc=$(tail -n 1 "$log" | grep -q 'passed$' && echo 0 || echo 1)
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then
    cp "$json" "$OUT/" 2>/dev/null
fi
exit "$rc"
