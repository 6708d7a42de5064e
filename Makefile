# weft — a thin front door over CMake presets (CMakePresets.json) and scripts/.
# Every target works on a fresh Debian 12 machine run as root: the ones that need
# system packages install the set they need first (scripts/deps.sh). See docs/build.md.
#
#   make demo          packages for the benchmarks + release build of weft-bench +
#                      weft-bench demo: short runs of every experiment (about 80
#                      s), tables, out/report/index.html
#   make bench         the same packages and build + weft-bench all: the full suite
#                      at benchmark sizes (about 40 minutes on 2 cores, estimated), same report
#   make test          packages for the tests + release (all tests), asan (all tests),
#                      tsan (label concurrency), fuzz; last line "N passed, N failed"
#   make deps          every package any target needs (scripts/deps.sh all)
#   make release|debug|asan|tsan|ubsan|ucontext   configure + build that preset
#   make format-check  clang-format --dry-run -Werror (skipped if not installed)
#   make format        clang-format -i
#   make clean         remove build/;  make distclean also removes out/
SHELL := /usr/bin/env bash
JOBS ?= 2
PRESETS := release debug asan tsan ubsan ucontext
BENCH := build/release/bin/weft-bench

# Sources clang-format owns (generated and third-party files live elsewhere).
FORMAT_DIRS := include src tests bench examples apps
FORMAT_FILES = $(shell find $(wildcard $(FORMAT_DIRS)) -type f \
	\( -name '*.c' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) 2>/dev/null | sort)

.PHONY: help all deps demo test bench bench-build format-check format clean distclean $(PRESETS)

help:
	@sed -n '2,18s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

all: release

deps:
	@scripts/deps.sh all

$(PRESETS):
	cmake --preset $@
	cmake --build --preset $@ -j$(JOBS)

# The demo and the suite need only weft-bench (the library and apps/ with it);
# `make release` builds the tests and examples too.
bench-build:
	@scripts/deps.sh bench
	cmake --preset release
	cmake --build --preset release -j$(JOBS) --target weft-bench

demo: bench-build
	$(BENCH) demo

bench: bench-build
	$(BENCH) all

test:
	@scripts/deps.sh test
	@WEFT_JOBS=$(JOBS) scripts/test.sh

format-check:
	@if command -v clang-format >/dev/null 2>&1; then \
	    echo "clang-format $$(clang-format --version | sed 's/.*version //') on $(words $(FORMAT_FILES)) files"; \
	    clang-format --dry-run -Werror $(FORMAT_FILES) && echo "format-check: clean"; \
	else \
	    echo "format-check skipped: clang-format is not installed (apt-get install clang-format)"; \
	fi

format:
	@if command -v clang-format >/dev/null 2>&1; then \
	    clang-format -i $(FORMAT_FILES); \
	else \
	    echo "format skipped: clang-format is not installed (apt-get install clang-format)"; \
	fi

clean:
	rm -rf build

distclean: clean
	rm -rf out
