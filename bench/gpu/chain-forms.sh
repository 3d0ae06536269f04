#!/bin/sh
# The XMSS SHA-256 chain kernels (key generation's xmss_chains_sha256, the batch signer's
# xf_chains_sha256_cap) in each form of their compressions (HBS_GPU_CHAIN_FORM: full
# unroll or compact; session 23 also had looped and one out-of-line copy), on a GPU
# machine, one binary; key generation's packed L-trees with their compressions inline or
# not (HBS_GPU_LTREE_INL=1|0):
#   - the tests that run those kernels, in each form (GPU keys and signatures = CPU's);
#   - rounds of XMSSMT-SHA2_20/2_256 and XMSS-SHA2_10_256 key generation (GPU steps with
#     HBS_GPU_KEYGEN_TIMING=2) and XMSSMT batches of 16,384 signatures, the forms alternating.
# Why: the full form puts four unrolled compressions in a chain step's loop, about 100 KB of
# code a warp runs through every step. Session 23 (bench/results/gpu-H100-s23-forms.log):
# compact won in key generation (chains 0.79-0.81 -> 0.73 ms) and lost in the batch signer
# (9.0 -> 9.8-10.1 ms a batch), so each has its default (stateful_device.cuh).
#   bench/gpu/chain-forms.sh [build dir] [rounds]   (default build-gpu, 2)
set -u
cd "$(dirname "$0")/../.." || exit 2
title="chain forms"
. bench/gpu/prologue.sh
forms="full compact"
tests_each HBS_GPU_CHAIN_FORM "$forms" gpu_stateful/xmss_keys gpu_stateful/tall_and_sign \
    gpu_stateful/sign_many gpu_stateful/sign_many_cache
echo "== tests, key generation's L-trees through out-of-line compressions"
out=$(HBS_GPU_LTREE_INL=0 "$B/hbs_tests" gpu_stateful/xmss_keys gpu_stateful/xmss_vectors 2>&1) ||
    status=1
echo "$out" | grep -E '^(ok|FAIL)|passed'
r=1
while [ "$r" -le "$R" ]; do
    # key generation also with its packed L-trees' compressions inline (+lt)
    for spec in $forms full+lt compact+lt; do
        fm=${spec%+lt}
        lt=0
        [ "$spec" = "$fm" ] || lt=1
        echo "== round $r, form $spec: key generation"
        HBS_GPU_LTREE_INL=$lt HBS_GPU_CHAIN_FORM=$fm HBS_GPU_KEYGEN_TIMING=2 \
            "$B/hbs" bench --gpu --stateful --ops keygen -a XMSSMT-SHA2_20/2_256 \
            -a XMSS-SHA2_10_256 --iterations 9 2>&1 |
            awk '/^XMSS/ { print } /steps/ { k = $0; sub(/^.*steps /, "", k); sub(/:.*/, "", k)
                  v = $0; sub(/.*chains /, "", v); sub(/,.*/, "", v); c[k] = c[k] " " v
                  v = $0; sub(/.*L-trees /, "", v); sub(/,.*/, "", v); l[k] = l[k] " " v }
                  END { for (k in c) print "  chains ms " k ":" c[k] "\n  L-trees ms " k ":" l[k] }'
    done
    for fm in $forms; do
        echo "== round $r, form $fm: signing"
        HBS_GPU_CHAIN_FORM=$fm "$B/hbs" bench --gpu --stateful --ops sign \
            -a XMSSMT-SHA2_20/2_256 --iterations 7 2>&1 | grep -E '^XMSS'
    done
    r=$((r + 1))
done
echo "== timeline of a batch (form full, then compact)"
for fm in full compact; do
    HBS_GPU_CHAIN_FORM=$fm HBS_GPU_SIGN_TIMING=2 "$B/hbs" bench --gpu --stateful --ops sign \
        -a XMSSMT-SHA2_20/2_256 --iterations 3 2>&1 | grep -E 'timeline|sign_many' | tail -n 4
done
exit $status
