# Front door. `make` builds everything under build/ (the tool at build/hbs);
# `make demo` runs the main job; `make check` runs every test. Each installs what it needs.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?=

.PHONY: all build demo check check-quick check-gpu-emu check-sanitize fuzz bench interop-deps clean

all: build

build:
	@scripts/deps.sh build
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@$(BUILD)/hbs demo

interop-deps:
	@scripts/deps.sh test
	@cd tests/interop && { [ -d node_modules/@noble/post-quantum ] || npm ci --no-audit --no-fund --loglevel=error; }

# Every test on every hash backend this CPU runs (those it lacks are reported as skipped).
check: build interop-deps
	@HBS_BIN=$(CURDIR)/$(BUILD)/hbs $(BUILD)/hbs_tests --backend all
	@scripts/gpu-emulate.sh

# The GPU batch verifier of the stateful schemes, emulated on the CPU (no GPU needed).
check-gpu-emu:
	@scripts/deps.sh build
	@scripts/gpu-emulate.sh

# Every test, on the best backend only.
check-quick: build interop-deps
	@HBS_BIN=$(CURDIR)/$(BUILD)/hbs $(BUILD)/hbs_tests

check-sanitize: interop-deps
	@scripts/deps.sh build
	@cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DHBS_SANITIZE=ON -DHBS_NO_CUDA=ON >/dev/null
	@cmake --build build-sanitize -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  HBS_BIN=$(CURDIR)/build-sanitize/hbs build-sanitize/hbs_tests
	@scripts/gpu-emulate-latency.sh --tsan

fuzz:
	@scripts/deps.sh fuzz
	@CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHBS_FUZZ=ON -DHBS_NO_CUDA=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS)
	@scripts/fuzz.sh build-fuzz $(FUZZ_SECONDS)

bench: build
	@$(BUILD)/hbs bench --json bench/results/latest.json

clean:
	rm -rf $(BUILD) build-sanitize build-fuzz build-emu
