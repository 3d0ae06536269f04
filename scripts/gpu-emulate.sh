#!/bin/sh
# Runs the GPU batch verifier and batch signer of the stateful schemes (src/gpu/
# stateful_verify.cu, stateful_sign.cu, xmss_sign.cu, lms_sign.cu, stateful_keys.cu and their kernels) on the
# CPU: the .cu files are compiled as C++ with tests/gpu_emu/shim.h (CUDA qualifiers and
# intrinsics) and tests/gpu_emu/gpu/gpu_internal.h (host memory for device memory), each
# kernel launch becomes a loop over its threads, and the result replaces the no-GPU stubs in
# a copy of the CPU library (tests/gpu_emu/glue.cpp supplies the rest: leaves from the CPU,
# whole XMSS trees with their levels from the emulated kernels, and key generation through
# that engine, which fills the signer's tree cache as the GPU's does). Then the GPU tests run
# against it: gpu_stateful/xmss_keys (keys from whole trees equal the CPU's), verify_many and
# verify_device with LMS/HSS items on the kernels and on the CPU verifier and in chunks of 8 items,
# gpu_stateful/sign_many with and without the fused signing, gpu_stateful/sign_keys (one
# message under each of many keys, every family and shape), and fused with each L-tree
# kernel, with the messages hashed by the host, with the trees built in groups and with no
# tree kept between calls. It checks
# the kernels' logic and the host drivers without a GPU (not what only the hardware or its
# compiler does). tests/gpu_emu/hash_test.cpp checks device hashes written word by word
# (SLH-DSA's F chains, which start from rounds worked out ahead; XMSS's F and H) against
# SHA-256 of the whole message. Last, tests/gpu_emu/spread_test.cpp checks how work is cut into parts, and
# the tests run again on three emulated GPUs (HBS_EMU_DEVICES=3) with every batch and key
# generation spread over them however small (HBS_GPU_SPLIT_MIN=1). The command-line tool is
# linked the same way for cli/stateful_many (hbs sign|verify --gpu with a stateful key).
# scripts/gpu-emulate-latency.sh runs the one-signature kernel (src/gpu/latency.cuh) with a
# host thread for each GPU thread against the CPU's signatures, in every set and in each way
# of the kernel not yet measured on a GPU.
# Environment: BUILD (default build-emu), HBS_VECTORS.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-emu}
CXX=${CXX:-g++}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DHBS_NO_CUDA=ON >/dev/null
cmake --build "$BUILD" -j "$(nproc 2>/dev/null || echo 2)" --target hbs hbs_cli hbs_tests >/dev/null
emu=$BUILD/gpu-emu
mkdir -p "$emu"
# kernel<<<grid, block, ...>>>(args); -> one call per thread, blockIdx.x numbering them
# (stateful_sign.cu is the signer's entry point and tree cache: it launches nothing)
files="stateful_verify stateful_sign xmss_sign lms_sign stateful_keys"
for f in $files; do
    perl -0pe 's/#include <cuda_runtime.h>\n//; s/(\w+(?:<[^<>]*>)?)<<<([^,]+),\s*([^,>]+)[^;]*?>>>\(([^;]*)\);/for (blockIdx.x = 0; blockIdx.x < (unsigned)(($2) * ($3)); blockIdx.x++) $1($4);/g' \
        "src/gpu/$f.cu" >"$emu/$f.cpp"
    [ "$f" = stateful_sign ] || grep -q 'blockIdx.x = 0' "$emu/$f.cpp" ||
        { echo "gpu-emulate: no launch rewritten in $f"; exit 2; }
done
flags="-O1 -std=c++17 -Itests/gpu_emu -Isrc -Iinclude"
for f in $files; do
    # shellcheck disable=SC2086
    $CXX $flags -include tests/gpu_emu/shim.h -c "$emu/$f.cpp" -o "$emu/$f.o"
done
# shellcheck disable=SC2086
$CXX $flags -include tests/gpu_emu/shim.h -c tests/gpu_emu/glue.cpp -o "$emu/glue.o"
cp "$BUILD/libhbs.a" "$emu/libhbs.a"
objcopy -W hbs_gpu_stateful_verify_many -W hbs_gpu_stateful_verify_device \
    -W hbs_gpu_stateful_sign_many -W hbs_gpu_stateful_sign_keys -W hbs_gpu_leaf_engine -W hbs_gpu_device_name \
    -W hbs_gpu_device_count -W hbs_gpu_last_error -W hbs_gpu_stateful_keygen \
    -W hbs_gpu_use_devices -W hbs_gpu_devices_used \
    -W hbs_gpu_alloc -W hbs_gpu_free -W hbs_gpu_copy_to -W hbs_gpu_copy_from \
    -W hbs_gpu_host_alloc -W hbs_gpu_host_free "$emu/libhbs.a"
# shellcheck disable=SC2046
$CXX -o "$emu/hbs_tests" $(find "$BUILD/CMakeFiles/hbs_tests.dir" -name '*.o') \
    "$emu/stateful_verify.o" "$emu/stateful_sign.o" "$emu/xmss_sign.o" "$emu/lms_sign.o" \
    "$emu/stateful_keys.o" "$emu/glue.o" "$emu/libhbs.a" -lm -lpthread
# and the command-line tool on the same emulated GPUs, for its stateful --gpu paths
# shellcheck disable=SC2046
$CXX -o "$emu/hbs" $(find "$BUILD/CMakeFiles/hbs_cli.dir" -name '*.o') \
    "$emu/stateful_verify.o" "$emu/stateful_sign.o" "$emu/xmss_sign.o" "$emu/lms_sign.o" \
    "$emu/stateful_keys.o" "$emu/glue.o" "$emu/libhbs.a" -lm -lpthread
status=0
echo "== hbs sign|verify --gpu with a stateful key, on the emulated GPU =="
HBS_BIN="$emu/hbs" "$emu/hbs_tests" cli/stateful_many || status=1
for mode in default lms-on-cpu; do
    case $mode in
    default) env_set= ;;
    lms-on-cpu) env_set=HBS_GPU_LMS_VERIFY=0 ;;
    esac
    echo "== emulated GPU batch verifier: $mode =="
    # shellcheck disable=SC2086
    env $env_set "$emu/hbs_tests" gpu_stateful/verify_many gpu_stateful/verify_device \
        gpu_stateful/verify_device_misuse gpu_stateful/verify_pinned || status=1
done
echo "== emulated GPU batch verifier: chunks of 8 items (the first of 2) =="
HBS_GPU_VERIFY_CHUNK=8 "$emu/hbs_tests" gpu_stateful/verify_many gpu_stateful/verify_pinned ||
    status=1
echo "== emulated GPU key generation: whole XMSS trees, their levels and roots' signatures by the GPU's kernels =="
"$emu/hbs_tests" gpu_stateful/xmss_keys gpu_stateful/root_sigs || status=1
echo "== the same with every tree's levels on one stream (HBS_GPU_KEYGEN_STREAMS=1) =="
HBS_GPU_KEYGEN_STREAMS=1 "$emu/hbs_tests" gpu_stateful/xmss_keys gpu_stateful/root_sigs \
    gpu_stateful/sign_many_cache || status=1
echo "== emulated GPU batch signer =="
"$emu/hbs_tests" gpu_stateful/sign_many gpu_stateful/sign_many_misuse || status=1
echo "== emulated GPU signing under many keys =="
"$emu/hbs_tests" gpu_stateful/sign_keys || status=1
for lt in levels serial; do
    echo "== emulated GPU batch signer: HBS_GPU_LTREE=$lt =="
    HBS_GPU_LTREE=$lt "$emu/hbs_tests" gpu_stateful/sign_many || status=1
done
echo "== emulated GPU batch signer: HBS_GPU_SIGN_HOST_MSGS=1 =="
HBS_GPU_SIGN_HOST_MSGS=1 "$emu/hbs_tests" gpu_stateful/sign_many || status=1
echo "== emulated GPU batch signer: HBS_GPU_SIGN_GROUPS=3 =="
HBS_GPU_SIGN_GROUPS=3 "$emu/hbs_tests" gpu_stateful/sign_many || status=1
echo "== emulated GPU batch signer: HBS_GPU_TREE_CACHE=0 =="
HBS_GPU_TREE_CACHE=0 "$emu/hbs_tests" gpu_stateful/sign_many || status=1
echo "== emulated GPU batch signer: HBS_GPU_SIGN_FUSE=0 =="
HBS_GPU_SIGN_FUSE=0 "$emu/hbs_tests" gpu_stateful/sign_many || status=1
echo "== device hashes (SLH-DSA F chains, XMSS F and H) against SHA-256 of the whole message =="
# shellcheck disable=SC2086
$CXX $flags -include tests/gpu_emu/shim.h tests/gpu_emu/hash_test.cpp "$emu/libhbs.a" \
    -o "$emu/hash_test" -lpthread
"$emu/hash_test" || status=1
# the one-signature kernel, a host thread for every GPU thread
BUILD=$BUILD scripts/gpu-emulate-latency.sh || status=1
# three GPUs, every batch and key generation spread however small (src/gpu/spread.h)
echo "== three emulated GPUs: the parts, and batches and keys spread over them =="
# shellcheck disable=SC2086
$CXX $flags -include tests/gpu_emu/shim.h tests/gpu_emu/spread_test.cpp -o "$emu/spread_test" \
    -lpthread
HBS_EMU_DEVICES=3 "$emu/spread_test" || status=1
HBS_EMU_DEVICES=3 HBS_GPU_SPLIT_MIN=1 HBS_BIN="$emu/hbs" "$emu/hbs_tests" \
    gpu_stateful/verify_many gpu_stateful/verify_device gpu_stateful/sign_many \
    gpu_stateful/sign_many_cache gpu_stateful/verify_pinned gpu_stateful/lms \
    gpu_stateful/hss cli/stateful_many ||
    status=1
exit $status
