#!/bin/sh
# Runs the GPU batch verifier of the stateful schemes (src/gpu/stateful_verify.cu and its
# kernels) on the CPU: the .cu file is compiled as C++ with tests/gpu_emu/shim.h (CUDA
# qualifiers and intrinsics) and tests/gpu_emu/gpu/gpu_internal.h (host memory for device
# memory), each kernel launch becomes a loop over its threads, and the result replaces the
# no-GPU stubs in a copy of the CPU library; then the GPU tests gpu_stateful/verify_many and
# gpu_stateful/verify_device (the device-resident entry) run against it, with LMS/HSS items
# on the kernels and on the CPU verifier. It checks the
# kernels' logic and the host driver without a GPU (not what only the hardware or its
# compiler does).
# Environment: BUILD (default build-emu), HBS_VECTORS.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-emu}
CXX=${CXX:-g++}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DHBS_NO_CUDA=ON >/dev/null
cmake --build "$BUILD" -j "$(nproc 2>/dev/null || echo 2)" --target hbs hbs_tests >/dev/null
emu=$BUILD/gpu-emu
mkdir -p "$emu"
# kernel<<<grid, block, ...>>>(args); -> one call per thread, blockIdx.x numbering them
perl -0pe 's/#include <cuda_runtime.h>\n//; s/(\w+(?:<[^<>]*>)?)<<<([^,]+),\s*([^,>]+)[^>]*>>>\(([^;]*)\);/for (blockIdx.x = 0; blockIdx.x < (unsigned)(($2) * ($3)); blockIdx.x++) $1($4);/g' \
    src/gpu/stateful_verify.cu >"$emu/stateful_verify.cpp"
grep -q 'blockIdx.x = 0' "$emu/stateful_verify.cpp" || { echo "gpu-emulate: no launch rewritten"; exit 2; }
flags="-O1 -std=c++17 -Itests/gpu_emu -Isrc -Iinclude"
# shellcheck disable=SC2086
$CXX $flags -include tests/gpu_emu/shim.h -c "$emu/stateful_verify.cpp" -o "$emu/stateful_verify.o"
# shellcheck disable=SC2086
$CXX $flags -c tests/gpu_emu/glue.cpp -o "$emu/glue.o"
cp "$BUILD/libhbs.a" "$emu/libhbs.a"
objcopy -W hbs_gpu_stateful_verify_many -W hbs_gpu_stateful_verify_device \
    -W hbs_gpu_device_count -W hbs_gpu_last_error -W hbs_gpu_stateful_keygen \
    -W hbs_gpu_alloc -W hbs_gpu_free -W hbs_gpu_copy_to -W hbs_gpu_copy_from "$emu/libhbs.a"
# shellcheck disable=SC2046
$CXX -o "$emu/hbs_tests" $(find "$BUILD/CMakeFiles/hbs_tests.dir" -name '*.o') \
    "$emu/stateful_verify.o" "$emu/glue.o" "$emu/libhbs.a" -lm -lpthread
status=0
for mode in default lms-on-cpu; do
    case $mode in
    default) env_set= ;;
    lms-on-cpu) env_set=HBS_GPU_LMS_VERIFY=0 ;;
    esac
    echo "== emulated GPU verifier: $mode =="
    # shellcheck disable=SC2086
    env $env_set "$emu/hbs_tests" gpu_stateful/verify_many gpu_stateful/verify_device \
        gpu_stateful/verify_device_misuse || status=1
done
exit $status
