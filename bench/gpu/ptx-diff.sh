#!/bin/sh
# Which kernels of one .cu file compile differently at another revision: for each kernel
# entry, whether its PTX (internal symbol prefixes normalised) and its sm_90 SASS (.text of
# the cubin) are the same, and how many SASS instructions differ. Runs here (nvcc and ptxas,
# no GPU).
#   bench/gpu/ptx-diff.sh REV [FILE.cu]   (default src/gpu/latency_sha2_16.cu)
# Why: the compiler's output moves with edits that mean nothing (session 17: one unused
# constexpr local in sha256_compress changed 3 of the 4 one-signature kernels, and the 128f
# signature moved by 3 %). Before crediting or blaming a change with a timing, see whether
# the kernel changed at all.
set -eu
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
rev=$1
file=${2:-src/gpu/latency_sha2_16.cu}
tmp=$(mktemp -d /tmp/hbs-ptx-XXXXXX)
trap 'git worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add -f --detach "$tmp/old" "$rev" >/dev/null 2>&1
build() { # tree, output stem
    (cd "$1" && nvcc -O3 -std=c++17 -arch=sm_90 -Isrc -Iinclude -ptx "$file" -o "$2.ptx") &&
        ptxas -arch=sm_90 -O3 "$2.ptx" -o "$2.cubin"
}
build "$tmp/old" "$tmp/a" &
build . "$tmp/b" &
wait
python3 - "$tmp/a" "$tmp/b" "$rev" <<'EOF'
import re, struct, sys

def entries(stem):
    s = open(stem + ".ptx").read()
    s = re.sub(r"_ZN\d+_INTERNAL_[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]+", "_INTERNAL_", s)
    out = {}
    for part in re.split(r"\n(?=\.visible \.entry|\.entry)", s):
        m = re.match(r"\.(?:visible )?\.?entry (\S+)\(", part.strip())
        if m:
            out[m.group(1)] = part
    return out

def texts(stem):
    b = open(stem + ".cubin", "rb").read()
    shoff = struct.unpack_from("<Q", b, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    secs = [struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize) for i in range(shnum)]
    strtab = secs[shstrndx][4]
    def name(n):
        return b[strtab + n:b.index(b"\0", strtab + n)].decode()
    return {name(s[0])[6:]: b[s[4]:s[4] + s[5]] for s in secs if name(s[0]).startswith(".text.")}

a, b = entries(sys.argv[1]), entries(sys.argv[2])
ta, tb = texts(sys.argv[1]), texts(sys.argv[2])
print(f"kernels of the working tree against {sys.argv[3]}:")
for k in sorted(set(a) | set(b)):
    if k not in a or k not in b:
        print(f"  {k[:72]}: only {'here' if k in b else 'at ' + sys.argv[3]}")
        continue
    x, y = ta.get(k, b""), tb.get(k, b"")
    n = max(len(x), len(y)) // 16
    d = sum(1 for i in range(n) if x[16 * i:16 * i + 16] != y[16 * i:16 * i + 16])
    ptx = "PTX same" if a[k] == b[k] else "PTX differs"
    print(f"  {k[:72]}: {ptx}; SASS {n} instructions, {d} differ")
EOF
