#!/bin/sh
# Installs what a build needs, only where it is missing, so a second run costs nothing.
# Usage: scripts/deps.sh build|test|fuzz
set -eu
need=""
want() { command -v "$1" >/dev/null 2>&1 || need="$need $2"; }
want cc gcc
want g++ g++
want objcopy binutils
want perl perl
want make make
want cmake cmake
case "${1:-build}" in
  test) want openssl openssl; want node nodejs; want npm npm ;;
  fuzz) want clang clang
        ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 \
          || need="$need libclang-rt-dev" ;;
esac
[ -z "$need" ] && exit 0
echo "deps: installing$need" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $need
