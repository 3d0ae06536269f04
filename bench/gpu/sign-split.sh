#!/bin/sh
# The batch signer's groups of bottom trees with the first, the last or both split in two
# (HBS_GPU_SIGN_SPLIT=first|last|both), on a GPU machine, one binary: the signer's tests in
# each mode (GPU signatures = CPU's), then rounds of XMSSMT-SHA2_20/2_256 batches of 16,384
# (with fsync) with the modes alternating, then a timeline of a batch in each.
# Why: the GPU is partly idle before the first group's chains end and after the last group's
# (its L-trees, levels, assembly and copy back): about 0.3 and 0.7 ms of a 9 ms batch on an
# H100 (session 24, HBS_GPU_SIGN_TIMING=2). Smaller end groups may shorten both.
#   bench/gpu/sign-split.sh [build dir] [rounds]   (default build-gpu, 2)
# With BASE set to a folder holding another revision's hbs (scripts/gpu-ab.sh build, carried
# and unpacked), each round also runs that one, unsplit: the baseline in the same run.
set -u
cd "$(dirname "$0")/../.." || exit 2
title="sign split"
. bench/gpu/prologue.sh
modes="none first last both"
tests_each HBS_GPU_SIGN_SPLIT "$modes" gpu_stateful/tall_and_sign gpu_stateful/sign_many
r=1
while [ "$r" -le "$R" ]; do
    for m in $modes ${BASE:+base}; do
        printf '== round %s, split %-6s ' "$r" "$m"
        bin=$B/hbs
        [ "$m" = base ] && bin=$BASE/hbs
        HBS_GPU_SIGN_SPLIT=$m "$bin" bench --gpu --stateful --ops sign -a XMSSMT-SHA2_20/2_256 \
            --iterations 7 2>&1 | grep -E '^XMSS' | tr -s ' '
    done
    r=$((r + 1))
done
echo "== timeline of a batch in each mode"
for m in $modes ${BASE:+base}; do
    echo "-- $m"
    bin=$B/hbs
    [ "$m" = base ] && bin=$BASE/hbs
    HBS_GPU_SIGN_SPLIT=$m HBS_GPU_SIGN_TIMING=2 "$bin" bench --gpu --stateful --ops sign \
        -a XMSSMT-SHA2_20/2_256 --iterations 3 2>&1 | grep -E 'timeline|sign_many\(' | tail -n 2
done
exit $status
