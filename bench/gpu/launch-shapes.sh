#!/bin/sh
# The XMSS SHA-256 kernels of the batch signer and of key generation in other launch shapes,
# on a GPU machine, one binary. The batch signer's:
#   base   the defaults: chains capped at 80 registers (3 blocks of 256 an SM), full form;
#          packed L-trees through sf_compress256's calls
#   lt     packed L-trees with their compressions inline (HBS_GPU_LTREE_INL=1)
#   u256c  chains uncapped (HBS_GPU_CHAIN_REGS=0), compact form, blocks of 256
#   u64c   the same in blocks of 64 (HBS_GPU_CHAIN_THREADS=64): key generation's shape
#   u64c+lt, u256c+lt
# First the tests that run the signer (GPU signatures = CPU's) in each shape, then rounds of
# XMSSMT-SHA2_20/2_256 batches of 16,384 signatures (HBS_STATEFUL_NO_SYNC off: with fsync),
# the shapes alternating. Why: key generation's chains run compact, uncapped, in blocks of
# 64, and its L-trees inline; the signer's were last measured in another shape (session 23,
# bench/results/gpu-H100-s23-forms.log).
# Key generation's compact chains uncapped (72 registers, 14 blocks of 64 an SM) or capped
# so that 16 or 17 fit (HBS_GPU_KEYGEN_CHAIN_MINB): the 137,216 chains of an XMSS^MT key's
# two trees are 1,040 an SM, more than one wave uncapped. Its tests in each, then rounds of
# XMSSMT-SHA2_20/2_256 and XMSS-SHA2_10_256 key generation with the GPU's steps timed.
#   bench/gpu/launch-shapes.sh [build dir] [rounds]   (default build-gpu, 2)
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${1:-build-gpu}
R=${2:-2}
echo "launch shapes, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
if [ ! -x "$B/hbs" ] || [ ! -x "$B/hbs_tests" ]; then
    cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
        cmake --build "$B" -j "$(nproc)" >"$B.log" 2>&1 || { tail -n 30 "$B.log"; exit 2; }
fi
# the environment of a shape
shape_env() {
    case $1 in
    base) echo "HBS_GPU_LTREE_INL=0" ;;
    lt) echo "HBS_GPU_LTREE_INL=1" ;;
    u256c) echo "HBS_GPU_LTREE_INL=0 HBS_GPU_CHAIN_REGS=0 HBS_GPU_CHAIN_FORM=compact HBS_GPU_CHAIN_THREADS=256" ;;
    u64c) echo "HBS_GPU_LTREE_INL=0 HBS_GPU_CHAIN_REGS=0 HBS_GPU_CHAIN_FORM=compact HBS_GPU_CHAIN_THREADS=64" ;;
    u256c+lt) echo "HBS_GPU_LTREE_INL=1 HBS_GPU_CHAIN_REGS=0 HBS_GPU_CHAIN_FORM=compact HBS_GPU_CHAIN_THREADS=256" ;;
    u64c+lt) echo "HBS_GPU_LTREE_INL=1 HBS_GPU_CHAIN_REGS=0 HBS_GPU_CHAIN_FORM=compact HBS_GPU_CHAIN_THREADS=64" ;;
    esac
}
shapes=${SHAPES:-"base lt u256c u64c u256c+lt u64c+lt"}
status=0
for s in $shapes; do
    echo "== tests, shape $s ($(shape_env "$s"))"
    out=$(env $(shape_env "$s") "$B/hbs_tests" gpu_stateful/tall_and_sign gpu_stateful/sign_many \
        gpu_stateful/sign_many_cache 2>&1) || status=1
    echo "$out" | grep -E '^(ok|FAIL)|passed'
done
for m in 0 16 17; do
    echo "== tests, key generation's chains, HBS_GPU_KEYGEN_CHAIN_MINB=$m"
    out=$(HBS_GPU_KEYGEN_CHAIN_MINB=$m "$B/hbs_tests" gpu_stateful/xmss_keys gpu_stateful/xmss_vectors \
        gpu_stateful/tall_and_sign 2>&1) || status=1
    echo "$out" | grep -E '^(ok|FAIL)|passed'
done
r=1
while [ "$r" -le "$R" ]; do
    for m in 0 16 17; do
        echo "== round $r, key generation, HBS_GPU_KEYGEN_CHAIN_MINB=$m"
        HBS_GPU_KEYGEN_CHAIN_MINB=$m HBS_GPU_KEYGEN_TIMING=2 "$B/hbs" bench --gpu --stateful \
            --ops keygen -a XMSSMT-SHA2_20/2_256 -a XMSS-SHA2_10_256 --iterations 9 2>&1 |
            awk '/^XMSS/ { print } /steps/ { k = $0; sub(/^.*steps /, "", k); sub(/:.*/, "", k)
                  v = $0; sub(/.*chains /, "", v); sub(/,.*/, "", v); c[k] = c[k] " " v }
                  END { for (k in c) print "  chains ms " k ":" c[k] }'
    done
    for s in $shapes; do
        printf '== round %s, shape %-9s ' "$r" "$s"
        env $(shape_env "$s") "$B/hbs" bench --gpu --stateful --ops sign -a XMSSMT-SHA2_20/2_256 \
            --iterations 7 2>&1 | grep -E '^XMSS' | tr -s ' '
    done
    r=$((r + 1))
done
echo "== timeline of a batch, shapes base and u64c+lt"
for s in base u64c+lt; do
    env $(shape_env "$s") HBS_GPU_SIGN_TIMING=2 "$B/hbs" bench --gpu --stateful --ops sign \
        -a XMSSMT-SHA2_20/2_256 --iterations 3 2>&1 | grep -E 'timeline|sign_many' | tail -n 2
done
exit $status
