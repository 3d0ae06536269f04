#!/bin/sh
# The one-signature GPU path (src/gpu/latency.cu and the kernel of src/gpu/latency.cuh) on
# the CPU, against the CPU's signatures (tests/gpu_emu/latency_test.cpp): the .cu files
# compiled as C++ with tests/gpu_emu/shim_threads.h, a host thread for every GPU thread and
# __syncthreads a barrier among them, the kernel's dynamic shared memory exactly the launch's
# bytes (filled with garbage, guarded behind) and its launch a loop over its blocks. Every
# set in its default kernel (at SHA-2 n = 16 with the LAT_* ways of lat_sha2_sc), then
# SHA2-128f and SHA2-128s in their plain forms (HBS_GPU_LAT_SHA: the whole signature copied
# out by the last block). scripts/gpu-emulate.sh (make check) runs it.
#   scripts/gpu-emulate-latency.sh [--tsan]
# --tsan: built with ThreadSanitizer, SHA2-128f in the default kernel and its plain form:
# a race between the threads of a block (a missing barrier) is reported and fails the run
# (make check-sanitize). Environment: BUILD, a build without CUDA whose libhbs.a it links
# (default build-emu, configured and built if missing).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-emu}
CXX=${CXX:-g++}
tsan=
[ "${1:-}" = --tsan ] && tsan=1
if [ ! -f "$BUILD/libhbs.a" ]; then
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DHBS_NO_CUDA=ON >/dev/null
    cmake --build "$BUILD" -j "$(nproc 2>/dev/null || echo 2)" --target hbs >/dev/null
fi
out=$BUILD/gpu-emu/lat${tsan:+-tsan}
mkdir -p "$out/gpu"
flags="-std=c++17 -Itests/gpu_emu -Isrc -Iinclude -include tests/gpu_emu/shim_threads.h
    -include tests/gpu_emu/latency_rt.h"
if [ -n "$tsan" ]; then
    flags="$flags -O1 -g -fsanitize=thread -Wno-tsan"
else
    flags="$flags -O2"
fi
perl -0pe 's/#include <cuda_runtime.h>\n//;
    s/extern __shared__ __align__\(16\) uint32_t lat_sh\[\];/uint32_t *const lat_sh = static_cast<uint32_t *>(emu_dyn_smem);/;
    s/(\w+(?:<[^<>]*>)?)<<<([^,]+),\s*([^,>]+),\s*([^,>]+)[^;]*?>>>\(([^;]*)\);/emu_launch($2, $3, $4, [&] { $1($5); });/g' \
    src/gpu/latency.cuh >"$out/gpu/latency.cuh"
grep -q 'emu_launch' "$out/gpu/latency.cuh" && grep -q 'lat_sh = static_cast' "$out/gpu/latency.cuh" ||
    { echo "gpu-emulate-latency: latency.cuh not rewritten"; exit 2; }
objs=
for f in latency latency_sha2_16 latency_sha2_24 latency_sha2_32 latency_shake_16 \
    latency_shake_24 latency_shake_32; do
    # (the .cu file beside the rewritten latency.cuh, so that its #include finds that one)
    perl -0pe 's/#include <cuda_runtime.h>\n//' "src/gpu/$f.cu" >"$out/$f.cpp"
    # shellcheck disable=SC2086
    $CXX $flags -c "$out/$f.cpp" -o "$out/$f.o" &
    objs="$objs $out/$f.o"
done
# shellcheck disable=SC2086
$CXX $flags -c tests/gpu_emu/latency_test.cpp -o "$out/latency_test.o"
wait
# shellcheck disable=SC2086
$CXX ${tsan:+-fsanitize=thread} -o "$out/latency_test" "$out/latency_test.o" $objs \
    "$BUILD/libhbs.a" -lpthread -lm
status=0
if [ -n "$tsan" ]; then
    echo "== the one-signature kernel, emulated under ThreadSanitizer: SHA2-128f, default and plain =="
    export TSAN_OPTIONS="halt_on_error=1 exitcode=66"
    "$out/latency_test" SLH-DSA-SHA2-128f || status=1
    HBS_GPU_LAT_SHA=2 "$out/latency_test" SLH-DSA-SHA2-128f || status=1
    exit $status
fi
echo "== the one-signature kernel, emulated, against the CPU =="
"$out/latency_test" || status=1
echo "== the one-signature kernel, emulated: SHA-2 n = 16 in the plain forms =="
HBS_GPU_LAT_SHA=2 "$out/latency_test" SLH-DSA-SHA2-128f || status=1
HBS_GPU_LAT_SHA=4 "$out/latency_test" SLH-DSA-SHA2-128s || status=1
exit $status
