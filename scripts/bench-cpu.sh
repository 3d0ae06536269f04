#!/bin/sh
# Records a CPU benchmark under bench/results/: every parameter set on the portable code and
# on the best backend with one thread and with all cores, plus the batch API, and the
# stateful schemes' main sets.
# Usage: scripts/bench-cpu.sh [NAME]   (default: the date); run on an idle machine.
set -eu
cd "$(dirname "$0")/.."
make -s build >/dev/null
name=${1:-$(date -u +%Y-%m-%d)-cpu}
out=bench/results/$name
mkdir -p bench/results
HBS_GIT_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
export HBS_GIT_COMMIT
cores=$(nproc)
{
  echo "# hbs CPU benchmark $name"
  echo "# $(uname -srm); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $cores logical CPUs"
  echo "# cpu family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' '), model $(grep -m1 -E '^model\s' /proc/cpuinfo | cut -d: -f2 | tr -d ' ') (AMD family 25 model 17 is Zen 4)"
  echo "# flags: $(grep -m1 -o -w -E 'avx2|avx512f|sha_ni' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo
  echo "## portable code, 1 thread"
  HBS_BACKEND=portable build/hbs bench --threads 1 --json "$out-portable.json"
  echo
  echo "## best backend, 1 thread"
  build/hbs bench --threads 1 --json "$out-best-1t.json"
  echo
  echo "## best backend, $cores threads"
  build/hbs bench --threads "$cores" --json "$out-best-${cores}t.json"
  echo
  echo "## best backend, batch API (64 signatures/verifications per call), $cores threads"
  build/hbs bench --threads "$cores" --batch 64 --ops sign,verify --iterations 1 \
    -a SLH-DSA-SHA2-128f -a SLH-DSA-SHAKE-128f -a SLH-DSA-SHA2-192f -a SLH-DSA-SHA2-256f \
    --json "$out-batch.json"
  echo
  echo "## stateful schemes (LMS/HSS, XMSS/XMSS^MT): $cores library threads per operation"
  build/hbs bench --stateful --threads "$cores" --json "$out-stateful.json"
} 2>&1 | tee "$out.txt"
