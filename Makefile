# weft — a thin front door over CMake presets (CMakePresets.json) and scripts/.
# Every target works on a fresh Debian 12 machine run as root: the ones that need
# system packages call `deps` first. See docs/build.md.
#
#   make demo          deps + release build + build/release/bin/weft-bench demo
#   make test          deps + release (all tests), asan (all tests), tsan (label
#                      concurrency); last line "N passed, N failed"
#   make bench         deps + release build + weft-bench micro
#   make deps          install the missing Debian packages (scripts/deps.sh)
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

.PHONY: help all deps demo test bench format-check format clean distclean $(PRESETS)

help:
	@sed -n '2,15s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

all: release

deps:
	@scripts/deps.sh

$(PRESETS):
	cmake --preset $@
	cmake --build --preset $@ -j$(JOBS)

demo: deps
	@$(MAKE) --no-print-directory release
	$(BENCH) demo

bench: deps
	@$(MAKE) --no-print-directory release
	$(BENCH) micro

test: deps
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
