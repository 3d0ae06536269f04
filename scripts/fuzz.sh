#!/bin/sh
# Runs every libFuzzer target of a build for a while; exits non-zero if any of them finds a
# crash (or a sanitizer report, a leak, a timeout, an out-of-memory).
#
# Usage: scripts/fuzz.sh BUILD_DIR SECONDS
#
# Each BUILD_DIR/fuzz_NAME keeps its corpus in BUILD_DIR/corpus/NAME, so a second run goes on
# from where the first stopped. An empty corpus is seeded first: the RFC 9909 example keys,
# and, where an hbs tool is at hand (build/hbs, else BUILD_DIR/hbs), keys and signatures it
# makes. Crashing inputs land in BUILD_DIR/artifacts, logs in BUILD_DIR/fuzz-logs.
set -u

usage() { echo "usage: $0 BUILD_DIR SECONDS" >&2; exit 2; }
[ $# -eq 2 ] || usage
build=$1
secs=$2
case "$secs" in '' | *[!0-9]*) usage ;; esac
[ -d "$build" ] || { echo "fuzz: no build directory '$build'" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
hbs=""
# The release build first: the fuzz build's own tool runs under sanitizers, far slower.
for cand in "$here/build/hbs" "$build/hbs"; do
    if [ -x "$cand" ] && [ -f "$cand" ]; then hbs=$cand; break; fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hbs-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

# Sanitizers stop at the first report, so libFuzzer sees every finding as a crash.
ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS UBSAN_OPTIONS

# One byte, given as a number 0-255, to stdout (as an octal escape in printf's format).
# shellcheck disable=SC2059
byte() { printf "\\$(printf '%03o' "$1")"; }

count() { find "$1" -type f | wc -l; }

# The smallest selector byte with set index $1 (mod 12) and pre-hash index $2 (mod 13).
selector() {
    s=0
    while [ $s -lt 156 ]; do
        if [ $((s % 12)) -eq "$1" ] && [ $((s % 13)) -eq "$2" ]; then echo $s; return; fi
        s=$((s + 1))
    done
}

# Shell functions share the caller's variables: the seeding functions below use only names
# the main loop does not (dir, spec, alg, ph, base, id, rest, phname, ctx, ...).

# PEM text to DER bytes (the lines between BEGIN and END, base64-decoded).
pem_to_der() { sed -e '/^-----/d' "$1" | base64 -d; }

seed_keyparse() {
    dir=$1
    # RFC 9909 Appendix C: the example id-slh-dsa-sha2-128s public and private key.
    printf '%s\n' '-----BEGIN PUBLIC KEY-----' \
        'MDAwCwYJYIZIAWUDBAMUAyEAK4EJ7Hd8qk4fAkzPz5SX2ZGAUJKA9CVq8rB6+AKJ' \
        'tJQ=' '-----END PUBLIC KEY-----' >"$dir/rfc9909-pk.pem"
    printf '%s\n' '-----BEGIN PRIVATE KEY-----' \
        'MFICAQAwCwYJYIZIAWUDBAMUBECiJjvKRYYINlIxYASVI9YhZ3+tkNUetgZ6Mn4N' \
        'HmSlASuBCex3fKpOHwJMz8+Ul9mRgFCSgPQlavKwevgCibSU' '-----END PRIVATE KEY-----' \
        >"$dir/rfc9909-sk.pem"
    pem_to_der "$dir/rfc9909-pk.pem" >"$dir/rfc9909-pk.der" 2>/dev/null
    pem_to_der "$dir/rfc9909-sk.pem" >"$dir/rfc9909-sk.der" 2>/dev/null
    [ -n "$hbs" ] || return 0
    for spec in SLH-DSA-SHA2-128s: SLH-DSA-SHAKE-192f: SLH-DSA-SHA2-256s:SHA2-512 \
                SLH-DSA-SHAKE-256f:SHAKE-256; do
        alg=${spec%%:*} ph=${spec#*:}
        base=$dir/$alg${ph:+-$ph}
        if [ -n "$ph" ]; then set -- --prehash "$ph"; else set --; fi
        "$hbs" keygen -a "$alg" -s "$base-sk.pem" -p "$base-pk.pem" "$@" >/dev/null 2>&1 ||
            continue
        pem_to_der "$base-sk.pem" >"$base-sk.der" 2>/dev/null
        pem_to_der "$base-pk.pem" >"$base-pk.der" 2>/dev/null
    done
}

seed_verify() {
    dir=$1
    [ -n "$hbs" ] || return 0
    printf 'fuzz me' >"$tmp/msg"
    # set index, pre-hash index and name, context (hex): the 128-bit sets, where mutations
    # of a valid signature stay cheap, pure and pre-hashed, with and without a context.
    for spec in 0:0:: 6:0::0102 1:2:SHA2-256: 7:11:SHAKE-128:aa; do
        id=${spec%%:*} rest=${spec#*:}
        ph=${rest%%:*} rest=${rest#*:}
        phname=${rest%%:*} ctx=${rest#*:}
        alg=$(echo "SLH-DSA-SHA2-128s SLH-DSA-SHA2-128f SLH-DSA-SHA2-192s SLH-DSA-SHA2-192f \
            SLH-DSA-SHA2-256s SLH-DSA-SHA2-256f SLH-DSA-SHAKE-128s SLH-DSA-SHAKE-128f \
            SLH-DSA-SHAKE-192s SLH-DSA-SHAKE-192f SLH-DSA-SHAKE-256s SLH-DSA-SHAKE-256f" |
            tr -s ' ' '\n' | sed -n "$((id + 1))p")
        set --
        [ -n "$phname" ] && set -- "$@" --prehash "$phname"
        [ -n "$ctx" ] && set -- "$@" --context "$ctx"
        "$hbs" keygen --raw -a "$alg" -s "$tmp/sk" -p "$tmp/pk" >/dev/null 2>&1 || continue
        "$hbs" sign --raw -a "$alg" -s "$tmp/sk" -m "$tmp/msg" -x "$tmp/sig" --deterministic \
            "$@" >/dev/null 2>&1 || continue
        siglen=$(wc -c <"$tmp/sig")
        ctxlen=$((${#ctx} / 2))
        {
            byte "$(selector "$id" "$ph")"
            cat "$tmp/pk"
            byte "$ctxlen"
            for pair in $(printf '%s' "$ctx" | sed 's/../& /g'); do byte $((0x$pair)); done
            byte $((siglen >> 8))
            byte $((siglen & 255))
            cat "$tmp/sig" "$tmp/msg"
        } >"$dir/$alg${phname:+-$phname}.bin"
    done
}

write_dict() {
    # Tokens a mutator would take long to find byte by byte.
    cat >"$1" <<'EOF'
"-----BEGIN "
"-----END "
"PUBLIC KEY-----"
"PRIVATE KEY-----"
"\x06\x09\x60\x86\x48\x01\x65\x03\x04\x03"
"\x30\x0b\x06\x09\x60\x86\x48\x01\x65\x03\x04\x03"
"\x02\x01\x00"
"\x02\x01\x01"
"\x81\x21\x00"
"\x03\x21\x00"
"\x04\x40"
"\xa0\x00"
EOF
}

mkdir -p "$build/corpus" "$build/artifacts" "$build/fuzz-logs"
found=0 failed=""
for bin in "$build"/fuzz_*; do
    if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then continue; fi
    name=${bin##*/}
    corpus=$build/corpus/$name
    mkdir -p "$corpus"
    extra=""
    case $name in
        fuzz_keyparse) maxlen=4096 ;;
        fuzz_verify) maxlen=51200 ;; # room for a SLH-DSA-*-256f signature (49856 bytes)
        *) maxlen=4096 ;;
    esac
    if [ "$(count "$corpus")" -eq 0 ]; then
        case $name in
            fuzz_keyparse) seed_keyparse "$corpus" ;;
            fuzz_verify) seed_verify "$corpus" ;;
        esac
    fi
    if [ "$name" = fuzz_keyparse ]; then
        write_dict "$build/keyparse.dict"
        extra="-dict=$build/keyparse.dict"
    fi
    found=$((found + 1))
    log=$build/fuzz-logs/$name.log
    echo "fuzz: $name for ${secs}s ($(count "$corpus") inputs in $corpus)"
    # shellcheck disable=SC2086 # $extra is empty or one word
    "$bin" -max_total_time="$secs" -max_len="$maxlen" -timeout=60 -rss_limit_mb=4096 \
        -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" $extra "$corpus" \
        >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ $rc -ne 0 ]; then
        echo "fuzz: $name FAILED (exit $rc) after ${runs:-?} runs; last lines of $log:" >&2
        tail -n 30 "$log" >&2
        find "$build/artifacts" -name "$name-*" | sed 's/^/fuzz:   input: /' >&2
        failed="$failed $name"
    else
        echo "fuzz: $name ok, ${runs:-?} runs, corpus now $(count "$corpus") inputs"
    fi
done

if [ $found -eq 0 ]; then
    echo "fuzz: no fuzz_* programs in $build (configure with -DHBS_FUZZ=ON and clang)" >&2
    exit 2
fi
if [ -n "$failed" ]; then
    echo "fuzz: crashes found in:$failed" >&2
    exit 1
fi
echo "fuzz: all $found fuzzers ran ${secs}s without a crash"
