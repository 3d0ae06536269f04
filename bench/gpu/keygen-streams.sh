#!/bin/sh
# GPU key generation of whole XMSS^MT trees on one stream or with the top tree on a second
# one (HBS_GPU_KEYGEN_STREAMS=1|2), on a GPU machine, one binary:
#   - the tests that build whole trees (keys, roots' signatures, the pqc-kat-xmss keys, the
#     batch signer's cached trees) with each, GPU keys and signatures = CPU's;
#   - rounds of XMSSMT-SHA2_20/2_256, XMSSMT-SHA2_40/4_256 and XMSS-SHA2_10_256 key
#     generation, the two alternating, with the GPU's steps (HBS_GPU_KEYGEN_TIMING=2).
# Why: on one stream the lower trees' L-trees, levels and roots' signatures (latency-bound
# chains of dependent hashes: levels and signatures 0.105 ms of an XMSS^MT key's 1.1 ms on
# an H100) run after all the chains; on two they can run beside the top tree's chains.
# Session 32 measured it on an H100 (bench/results/gpu-H100-s32-streams.log): two streams
# won by 2-7 % for XMSSMT-SHA2_20/2_256 (medians of 15, three rounds) and became the default.
#   bench/gpu/keygen-streams.sh [build dir] [rounds]   (default build-gpu, 2)
set -u
cd "$(dirname "$0")/../.." || exit 2
title="keygen streams"
. bench/gpu/prologue.sh
tests_each HBS_GPU_KEYGEN_STREAMS "2 1" gpu_stateful/xmss_keys gpu_stateful/tall_and_sign \
    gpu_stateful/root_sigs gpu_stateful/xmss_vectors gpu_stateful/sign_many_cache
r=1
while [ "$r" -le "$R" ]; do
    for s in 1 2; do
        echo "== round $r, HBS_GPU_KEYGEN_STREAMS=$s"
        HBS_GPU_KEYGEN_STREAMS=$s HBS_GPU_KEYGEN_TIMING=2 "$B/hbs" bench --gpu --stateful \
            --ops keygen -a XMSSMT-SHA2_20/2_256 -a XMSSMT-SHA2_40/4_256 -a XMSS-SHA2_10_256 \
            --iterations 15 2>&1 |
            awk '/^XMSS/ { print } /steps/ { n++; if (n % 8 == 1) print "  " $0 }'
    done
    r=$((r + 1))
done
exit $status
