#!/bin/sh
# Nsight Compute over the kernels behind issue 6's open targets, on a GPU machine: XMSS^MT
# key generation's chains, L-trees and levels (XMSSMT-SHA2_20/2_256, 0.8 ms wanted, 1.2 ms
# now, the chains alone 0.78 ms at 84 % of the hash ceiling) and the batch signer's chains
# and L-trees (batches of 16,384, 2 M signatures/s wanted). The chains did not speed up
# with 8 % fewer SHA-256 rounds (bench/README.md, "The stateful kernels: what was tried"),
# so they are not bound by their instruction count: this asks the hardware what their warps
# wait on (warp states, scheduler issue, occupancy, instruction fetch, spills).
#   bench/gpu/stateful-ncu.sh [build dir]     (default build-gpu; built here if missing)
# Writes the reports (.ncu-rep) and their text to $OUT (or /tmp): ncu-keygen.txt and
# ncu-sign.txt, and prints the lines that matter most. About two minutes of device time.
# STATEFUL_NCU (default keygen,sign,verify) picks the reports: verify profiles the batch
# verifier's chains, L-trees and path (batches of 16,384 in one chunk), ncu-verify.txt.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${1:-build-gpu}
out=${OUT:-/tmp}
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
echo "stateful ncu, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
if [ ! -x "$B/hbs" ]; then
    cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null &&
        cmake --build "$B" -j "$(nproc)" --target hbs_cli >"$B.log" 2>&1 ||
        { tail -n 30 "$B.log"; exit 2; }
fi
# what: report name; kernels (regex); launches to skip (the first calls warm up); to profile;
# then the hbs command line
profile() {
    what=$1 kernels=$2 skip=$3 count=$4
    shift 4
    "$NCU" --set full -k "regex:$kernels" --launch-skip "$skip" --launch-count "$count" \
        -f -o "$out/ncu-$what" "$@" >"$out/ncu-$what.run" 2>&1 ||
        { echo "stateful-ncu: ncu failed for $what"; tail -n 20 "$out/ncu-$what.run"; return 1; }
    "$NCU" --import "$out/ncu-$what.ncu-rep" --page details >"$out/ncu-$what.txt" 2>&1
    echo "== $what: $out/ncu-$what.txt"
    grep -E '^  [a-z_]+.*\(|Duration|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Issued Ipc Active|No Eligible|Warp Cycles Per Issued|Local Memory Spilling|Compute \(SM\) Throughput' \
        "$out/ncu-$what.txt" | head -n 80
}
status=0
want() { case ",${STATEFUL_NCU:-keygen,sign,verify}," in *",$1,"*) return 0 ;; esac; return 1; }
want keygen && { profile keygen 'xmss_chains_sha256|xmss_ltree_sha256|xf_levels' 3 6 \
    "$B/hbs" bench --gpu --stateful --ops keygen -a XMSSMT-SHA2_20/2_256 --iterations 2 ||
    status=1; }
want sign && { profile sign 'xf_chains|xf_ltree' 8 8 \
    "$B/hbs" bench --gpu --stateful --ops sign -a XMSSMT-SHA2_20/2_256 --iterations 1 ||
    status=1; }
# (the bench verifies its batch several times: the first calls' launches are skipped; 9
# launches are one layer's chains, L-tree levels and path, or a call and a half with the
# L-trees in one launch a layer; NCU_VERIFY_SKIP and NCU_VERIFY_COUNT say otherwise)
want verify && { export HBS_GPU_VERIFY_CHUNK=16384; profile verify 'xv_chains|xv_ltree|xv_path' \
    "${NCU_VERIFY_SKIP:-18}" "${NCU_VERIFY_COUNT:-9}" \
    "$B/hbs" bench --gpu --stateful --ops verify -a XMSSMT-SHA2_20/2_256 --iterations 1 ||
    status=1; unset HBS_GPU_VERIFY_CHUNK; }
exit $status
