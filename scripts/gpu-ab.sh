#!/bin/sh
# A/B of several revisions on a GPU in one run, for the device machine of this workplace:
# its time is short, and builds there cost it, so the binaries are built here and carried.
#
#   scripts/gpu-ab.sh build REV...   here: builds each revision (a git worktree; sm_90 unless
#                                    HBS_CUDA_ARCHS says otherwise) and packs the stripped
#                                    hbs and hbs_tests of each, with a small vectors subset,
#                                    into build-carry/ (carry it: at most 64 MiB travel)
#   scripts/gpu-ab.sh add REV...     here: the same for more revisions, added to the pack
#   scripts/gpu-ab.sh run [BENCH...] on the GPU machine: each revision's GPU tests, then
#                                    `hbs bench BENCH...` of every revision in turn, twice
#                                    (default: the stateful batch sets of issue 6); all of it
#                                    to stdout and to $OUT/ab.log where $OUT is set
#
# Only comparisons within one run count on a shared host (medians and ratios from one run
# on one machine). Environment: HBS_VECTORS (build: the vectors to copy a subset of;
# default ../shared/vectors), AB_TESTS (run: the test filters; default gpu_stateful/).
set -eu
cd "$(dirname "$0")/.."
carry=build-carry

# REV built in a worktree, its stripped binaries into $carry/ab/NAME (NAME: REV, made safe)
build_rev() {
    rev=$1
    name=$(echo "$rev" | sed 's/[^A-Za-z0-9._-]/_/g')
    wt=$(mktemp -d /tmp/hbs-ab-XXXXXX)
    git worktree add -f --detach "$wt" "$rev" >/dev/null
    echo "gpu-ab: building $rev ($(git -C "$wt" log --oneline -1 | cut -c1-60))"
    cmake -S "$wt" -B "$wt/build" -DCMAKE_BUILD_TYPE=Release \
        "-DCMAKE_CUDA_ARCHITECTURES=${HBS_CUDA_ARCHS:-90}" >/dev/null
    cmake --build "$wt/build" -j "$(nproc 2>/dev/null || echo 2)" --target hbs_cli hbs_tests \
        >"$wt/build.log" 2>&1 || { tail -n 30 "$wt/build.log"; exit 1; }
    rm -rf "$carry/ab/$name"
    mkdir -p "$carry/ab/$name"
    strip -o "$carry/ab/$name/hbs" "$wt/build/hbs"
    strip -o "$carry/ab/$name/hbs_tests" "$wt/build/hbs_tests"
    echo "$rev $(git -C "$wt" rev-parse --short HEAD)" >"$carry/ab/$name/REV"
    git worktree remove --force "$wt"
}

pack() {
    # one big window: the revisions share most of their device code, hbs and hbs_tests too
    tar cf - -C "$carry" ab | xz --lzma2=preset=6,dict=256MiB >"$carry/ab.txz"
    rm -rf "$carry/ab"
    du -sh "$carry"
    echo "gpu-ab: on the device: scripts/gpu-ab.sh run   (carry [\"$carry\"])"
}

case "${1:-}" in
build)
    shift
    [ $# -ge 1 ] || { echo "usage: $0 build REV..." >&2; exit 2; }
    rm -rf "$carry/ab" "$carry/ab.txz"
    mkdir -p "$carry/ab"
    for rev in "$@"; do
        build_rev "$rev"
    done
    vec=${HBS_VECTORS:-../shared/vectors}
    rm -rf "$carry/vec"
    mkdir -p "$carry/vec"
    for d in README.md pqc-kat-xmss rfc8554 rfc9858; do
        if [ -e "$vec/$d" ]; then cp -r "$vec/$d" "$carry/vec/"; fi
    done
    pack
    ;;
add)
    shift
    [ $# -ge 1 ] || { echo "usage: $0 add REV..." >&2; exit 2; }
    [ -f "$carry/ab.txz" ] || { echo "gpu-ab: no $carry/ab.txz to add to ('$0 build' first)" >&2; exit 2; }
    rm -rf "$carry/ab"
    tar xJf "$carry/ab.txz" -C "$carry"
    for rev in "$@"; do
        build_rev "$rev"
    done
    pack
    ;;
run)
    shift
    [ -f "$carry/ab.txz" ] || { echo "gpu-ab: no $carry/ab.txz (run '$0 build' here first)" >&2; exit 2; }
    rm -rf "$carry/ab"
    tar xJf "$carry/ab.txz" -C "$carry"
    export HBS_VECTORS="$PWD/$carry/vec"
    if [ $# -eq 0 ]; then
        set -- --gpu --stateful -a XMSSMT-SHA2_20/2_256 -a XMSS-SHA2_10_256 \
            -a LMS_SHA256_M32_H10/LMOTS_SHA256_N32_W4 --iterations 7
    fi
    log=/dev/null
    [ -n "${OUT:-}" ] && [ -d "$OUT" ] && log=$OUT/ab.log
    {
        echo "gpu-ab, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
        for d in "$carry"/ab/*/; do
            echo "== tests: $(cat "$d/REV") =="
            # shellcheck disable=SC2086
            "$d/hbs_tests" ${AB_TESTS:-gpu_stateful/} 2>&1 | grep -E '^(ok|FAIL|SKIP)|passed' |
                cut -c1-160 || echo "gpu-ab: no test result from $d"
        done
        for round in 1 2; do
            for d in "$carry"/ab/*/; do
                echo "== bench, round $round: $(cat "$d/REV") =="
                "$d/hbs" bench "$@" 2>&1 || echo "gpu-ab: hbs bench failed"
            done
        done
    } 2>&1 | tee "$log"
    ;;
*)
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
