# tensogram-cpp: convenience targets over CMake.
#
#   make demo    install deps, build Release, run the demo + the CLI on its output
#   make test    install deps, build build-test/ and run the whole CTest suite
#
# See `make help` and docs/building.md for the rest.

# bash with pipefail so `prog | tee log` fails when prog fails.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Debian 12 packages the build, the tests and the dev tools need. One list on
# purpose: new dependencies (codecs, Python, ...) are added here and nowhere
# else (libzstd-dev/liblz4-dev/zlib1g-dev: the codecs under src/codecs/; libcurl: remote
# reads in src/io/; nginx-light: the loopback HTTP server of the remote tests; libpcre2-dev:
# metatensor schema `pattern` keywords; libsimdjson-dev: metatensor header parsing; pybind11/python3-*: the Python module,
# its xarray engine, dask.distributed, Zarr and PyTorch tests and its pytest suite; libeccodes-dev/libnetcdf-dev: the GRIB and
# NetCDF importers; libhwy-dev: SIMD kernels with run-time dispatch; libngtcp2*/libgnutls28:
# metatensor streaming over QUIC; gfortran: the Fortran module in fortran/; nodejs/npm: the
# TypeScript package js/metatensor and its tests).
# `--no-install-recommends` skips what clang only recommends, so its
# libFuzzer/sanitizer runtimes (libclang-rt-14-dev) are listed explicitly.
DEPS := build-essential cmake pkg-config \
        libxxhash-dev nlohmann-json3-dev libcli11-dev \
        libzstd-dev liblz4-dev zlib1g-dev libaec-dev libzfp-dev libpcre2-dev libhwy-dev libsimdjson-dev \
        python3-zstandard python3-lz4 libaec-tools \
        libcurl4-openssl-dev nginx-light \
        libngtcp2-dev libngtcp2-crypto-gnutls-dev libgnutls28-dev \
        pybind11-dev python3-dev python3-numpy python3-xarray python3-dask python3-distributed \
        python3-zarr python3-torch python3-pytest \
        libeccodes-dev libnetcdf-dev \
        libgtest-dev libgmock-dev libbenchmark-dev \
        clang libclang-rt-14-dev clang-format gfortran nodejs
# What only the WebAssembly module needs (`make viewer`, and the tests below):
# Emscripten, and dpkg-dev for `apt-get source` of its third-party sources;
# what the tests of the module's package and of the web viewer add (`make
# test`, test-wasm, test-viewer): Chromium and the font the viewer's reference
# screenshots were drawn with.
WASM_DEPS := emscripten dpkg-dev
WEB_DEPS := $(WASM_DEPS) chromium fonts-dejavu-core

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
CTEST ?= ctest
PREFIX ?= /usr/local
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?= 10000000
FUZZ_JOBS ?= 1
# Kill points per writer in `make soak` (the default suite uses 20).
SOAK_KILLS ?= 500
# Extra -D options for every configure step, e.g. CMAKE_ARGS=-DTENSOGRAM_WERROR=OFF.
CMAKE_ARGS ?=

BUILD_DIR := build
TEST_DIR := build-test
ASAN_DIR := build-asan
FUZZ_DIR := build-fuzz
BENCH_DIR := build-bench
BENCH_PYTHON = "$$(sed -n 's/^Python_EXECUTABLE:[A-Z]*=//p' $(BENCH_DIR)/CMakeCache.txt)"
OUT_DIR := out

CLI := $(BUILD_DIR)/tools/tensogram/tensogram
DEMO := $(BUILD_DIR)/examples/tensogram_demo
METATENSOR := $(BUILD_DIR)/tools/metatensor/metatensor

SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
FORMAT_DIRS := include src tools tests bench fuzz examples python/src fortran

.PHONY: help deps build demo test test-sanitize test-wasm bench-wasm viewer viewer-build test-viewer soak fuzz fuzz-long bench format format-check install clean

help:
	@echo "make demo           install deps, build Release into $(BUILD_DIR)/, run the demo into $(OUT_DIR)/"
	@echo "make test           install deps, build $(TEST_DIR)/ (RelWithDebInfo at -O3), run ctest"
	@echo "make test-sanitize  the same under ASan+UBSan in $(ASAN_DIR)/ (Debug)"
	@echo "make test-wasm      the WebAssembly package js/tensogram (Emscripten build of the core, node --test); make test runs it too"
	@echo "make viewer         build and serve the web viewer js/viewer on http://127.0.0.1:$(VIEWER_PORT)/ (FILE=x.tgm opens a file)"
	@echo "make test-viewer    the viewer's tests in headless Chromium (Debian's chromium, puppeteer-core); make test runs them too"
	@echo "make soak           the crash-safety tests with SOAK_KILLS=$(SOAK_KILLS) SIGKILLs per writer, in $(TEST_DIR)/"
	@echo "make deps           install the Debian packages: $(DEPS)"
	@echo "make build          Release build into $(BUILD_DIR)/"
	@echo "make fuzz           libFuzzer targets (clang) for FUZZ_SECONDS=$(FUZZ_SECONDS) s each"
	@echo "make fuzz-long      every libFuzzer target for FUZZ_RUNS=$(FUZZ_RUNS) executions in FUZZ_JOBS=$(FUZZ_JOBS) processes (hours; not in CI)"
	@echo "make bench          Release benchmarks in $(BENCH_DIR)/"
	@echo "make bench-wasm     WebAssembly vs native decode (bench/wasm_bench.mjs; run before make bench to join its goals)"
	@echo "make format         clang-format -i the C++ sources; format-check only checks"
	@echo "make install        install $(BUILD_DIR)/ into PREFIX=$(PREFIX) (DESTDIR honoured)"
	@echo "make clean          remove every build directory and $(OUT_DIR)/"

# Asks dpkg about each package and calls apt only when something is missing,
# so the common case is fast, offline and needs no root. npm is asked for by
# command, not by package: NodeSource's nodejs ships its own npm and conflicts
# with Debian's `npm` package, which only a machine without one needs.
deps:
	@missing=""; \
	for p in $(DEPS); do \
	  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  echo "==> installing:$$missing"; \
	  $(SUDO) apt-get update; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; \
	else \
	  echo "==> all Debian packages present"; \
	fi

# Library, CLI and examples only: the test suite has its own build-test/, and
# skipping it here keeps `make demo` quick for a first-time user.
build: deps
	$(CMAKE) -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DTENSOGRAM_BUILD_TESTS=OFF $(CMAKE_ARGS)
	$(CMAKE) --build $(BUILD_DIR) -j $(JOBS)

demo: build
	@test -x $(CLI) || { echo "error: $(CLI) was not built (TENSOGRAM_BUILD_TOOLS=OFF?)" >&2; exit 1; }
	@mkdir -p $(OUT_DIR)
	@echo "==> $(DEMO) $(OUT_DIR)/demo.tgm"
	@$(DEMO) $(OUT_DIR)/demo.tgm | tee $(OUT_DIR)/demo.log
	@echo
	@echo "==> tensogram info $(OUT_DIR)/demo.tgm"
	@$(CLI) info $(OUT_DIR)/demo.tgm
	@echo "==> tensogram ls -p mars.param,mars.date,mars.step $(OUT_DIR)/demo.tgm"
	@$(CLI) ls -p mars.param,mars.date,mars.step $(OUT_DIR)/demo.tgm
	@echo
	@echo "==> tensogram dump $(OUT_DIR)/demo.tgm"
	@$(CLI) dump $(OUT_DIR)/demo.tgm
	@echo
	@echo "==> metatensor from-tgm $(OUT_DIR)/demo.tgm -o $(OUT_DIR)/demo.mt --name-key mars.param"
	@$(METATENSOR) from-tgm $(OUT_DIR)/demo.tgm -o $(OUT_DIR)/demo.mt --name-key mars.param
	@$(METATENSOR) info $(OUT_DIR)/demo.mt
	@$(METATENSOR) validate --deep $(OUT_DIR)/demo.mt
	@echo
	@echo "==> PYTHONPATH=$(BUILD_DIR)/python python3 examples/python_demo.py $(OUT_DIR)/demo.tgm"
	@PYTHONPATH=$(BUILD_DIR)/python "$$(sed -n 's/^Python_EXECUTABLE:[A-Z]*=//p' $(BUILD_DIR)/CMakeCache.txt)" \
	  examples/python_demo.py $(OUT_DIR)/demo.tgm
	@grep 'max abs error' $(OUT_DIR)/demo.log
	@echo; echo "==> open it in the web viewer: make viewer FILE=$(OUT_DIR)/demo.tgm   (or FILE=$(OUT_DIR)/demo.mt)"

# RelWithDebInfo, but at Release's -O3: GCC 12 emits some warnings
# (-Wrestrict, -Wmaybe-uninitialized, ...) only at -O3, and with -Werror they
# would break `make build`/`make demo` without CI noticing. -g1 (line tables)
# keeps backtraces readable at a fraction of full -g's compile and link time;
# assertions are covered by the Debug sanitizer build.
TEST_OPT_FLAGS := -O3 -g1 -DNDEBUG
# The sanitizer build keeps assertions (Debug) but runs at -O1, as the ASan
# documentation recommends: the suite runs several times faster than at -O0,
# which kept CI over the hour.
SANITIZE_OPT_FLAGS := -O1 -g1
# ... and with clang, whose ASan+UBSan instrumentation compiles in ~0.7 of
# GCC 12's time (src/metatensor/view/file.cpp: 21.9 s of CPU against 31.3 s),
# which is most of the sanitizer build's share of CI. `make test` stays on GCC,
# so both compilers' -Werror warnings are checked.
SANITIZE_CC ?= clang
SANITIZE_CXX ?= clang++
test: deps
	$(MAKE) deps DEPS="$(WEB_DEPS)"
	$(CMAKE) -S . -B $(TEST_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(TEST_OPT_FLAGS)" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=$(TEST_OPT_FLAGS)" \
	  -DTENSOGRAM_WASM_TESTS=ON $(CMAKE_ARGS)
	$(CMAKE) --build $(TEST_DIR) -j $(JOBS)
	cd $(TEST_DIR) && $(CTEST) --output-on-failure -j $(JOBS)

# The crash-safety harness (tests/tools/crash_safety_test.cpp) with hundreds
# of kill points per writer instead of the default suite's 30; takes minutes.
soak: deps
	$(CMAKE) -S . -B $(TEST_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(TEST_OPT_FLAGS)" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=$(TEST_OPT_FLAGS)" \
	  $(CMAKE_ARGS)
	$(CMAKE) --build $(TEST_DIR) -j $(JOBS) --target tensogram_crash_tests
	cd $(TEST_DIR) && TENSOGRAM_SOAK_KILLS=$(SOAK_KILLS) $(CTEST) --output-on-failure -V -R 'tools\.crash\.' \
	  --timeout 3600

# The WebAssembly module of the core and its TypeScript package
# (docs/wasm.md), and the web viewer in headless Chromium (docs/viewer.md):
# the CTest tests `make test` runs among the others (tests/js/CMakeLists.txt),
# alone. The module's third-party sources come through `apt-get source` into a
# per-machine cache; the core goes through ccache.
# WEB_TEST names the CTest test, WEB_BUILD what it runs besides the module:
# the CLI of the cross tests; the demo and the metatensor CLI that make the
# demo's files the viewer opens.
test-wasm: WEB_TEST := tensogram_js_tests
test-wasm: WEB_BUILD := tensogram_cli
test-viewer: WEB_TEST := tensogram_viewer_tests
test-viewer: WEB_BUILD := tensogram_demo metatensor_cli
test-wasm test-viewer: deps
	$(MAKE) deps DEPS="$(WEB_DEPS)"
	$(CMAKE) -S . -B $(TEST_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(TEST_OPT_FLAGS)" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=$(TEST_OPT_FLAGS)" \
	  -DTENSOGRAM_WASM_TESTS=ON $(CMAKE_ARGS)
	$(CMAKE) --build $(TEST_DIR) -j $(JOBS) --target $(WEB_BUILD)
	cd $(TEST_DIR) && $(CTEST) --output-on-failure -V -R '^$(WEB_TEST)$$'

# The web viewer (js/viewer, docs/viewer.md): a static site built by Vite
# over the two TypeScript packages. `npm ci` runs only when a lockfile is
# newer than the installed tree. The WebAssembly module is brought up to date
# as in test-wasm (js/tensogram's build:wasm: incremental, ccache; the first
# build on a machine takes ~5 min).
VIEWER_PORT ?= 5173
FILE ?=
JS_TGM := js/tensogram
JS_MT := js/metatensor
JS_VIEWER := js/viewer

%/node_modules/.package-lock.json: %/package-lock.json
	cd $* && npm ci --no-audit --no-fund

viewer-build: $(JS_TGM)/node_modules/.package-lock.json $(JS_MT)/node_modules/.package-lock.json
	cd $(JS_TGM) && npm run build
	$(MAKE) deps DEPS="$(WASM_DEPS)"
	cd $(JS_TGM) && npm run build:wasm
	cd $(JS_MT) && npm run build
	$(MAKE) $(JS_VIEWER)/node_modules/.package-lock.json
	cd $(JS_VIEWER) && npm run build

# FILE=path is served by the preview server at /local/<name> and opened
# with ?url= (the page never reads the disk itself).
viewer: viewer-build
	@if [ -n "$(FILE)" ]; then test -f "$(FILE)" || { echo "error: $(FILE) not found" >&2; exit 1; }; \
	  echo "==> open http://127.0.0.1:$(VIEWER_PORT)/?url=/local/$$(basename "$(FILE)")"; \
	else echo "==> open http://127.0.0.1:$(VIEWER_PORT)/"; fi
	cd $(JS_VIEWER) && VIEWER_FILE="$(if $(FILE),$(abspath $(FILE)))" npx vite preview --port $(VIEWER_PORT) --strictPort

# The whole suite but the downstream (install/packaging) tests and the
# TypeScript packages' tests, which `make test` runs: the first rebuild
# consumer programs and check the installed layout, the second run node on
# TypeScript (their calls of the metatensor CLI are the CLI tests' paths,
# which run here); the sanitizers have nothing to add to either.
test-sanitize: deps
	$(CMAKE) -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DTENSOGRAM_SANITIZE=ON \
	  -DCMAKE_C_COMPILER=$(SANITIZE_CC) -DCMAKE_CXX_COMPILER=$(SANITIZE_CXX) \
	  "-DCMAKE_CXX_FLAGS_DEBUG=$(SANITIZE_OPT_FLAGS)" "-DCMAKE_C_FLAGS_DEBUG=$(SANITIZE_OPT_FLAGS)" \
	  "-DCMAKE_Fortran_FLAGS_DEBUG=$(SANITIZE_OPT_FLAGS)" $(CMAKE_ARGS)
	$(CMAKE) --build $(ASAN_DIR) -j $(JOBS)
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(CTEST) --output-on-failure -j $(JOBS) --label-exclude 'downstream|js'

# WebAssembly vs native decode on the same messages (bench/wasm_bench.mjs,
# docs/benchmarks.md): the module as `make test-wasm` builds it, the native
# side through the Python module of $(BENCH_DIR). Its goals join the codec
# matrix's goals block when `make bench` runs after it.
bench-wasm: deps
	$(MAKE) deps DEPS=emscripten
	cd js/tensogram && npm ci --no-audit --no-fund && npm run build:wasm && npm run build
	$(CMAKE) -S . -B $(BENCH_DIR) -DCMAKE_BUILD_TYPE=Release -DTENSOGRAM_BUILD_BENCH=ON \
	  -DTENSOGRAM_BUILD_TESTS=OFF -DTENSOGRAM_BUILD_EXAMPLES=OFF -DTENSOGRAM_BUILD_TOOLS=OFF $(CMAKE_ARGS)
	$(CMAKE) --build $(BENCH_DIR) -j $(JOBS) --target tensogram_python
	PYTHONPATH=$(BENCH_DIR)/python PYTHON=$(BENCH_PYTHON) node bench/wasm_bench.mjs \
	  --json-file $(BENCH_DIR)/wasm_bench.json

fuzz: deps
	CC=clang CXX=clang++ $(CMAKE) -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DTENSOGRAM_BUILD_FUZZ=ON -DTENSOGRAM_BUILD_TESTS=OFF -DTENSOGRAM_BUILD_TOOLS=OFF -DTENSOGRAM_BUILD_PYTHON=OFF \
	  -DTENSOGRAM_BUILD_EXAMPLES=OFF $(CMAKE_ARGS)
	$(CMAKE) --build $(FUZZ_DIR) -j $(JOBS)
	FUZZ_JOBS=$(FUZZ_JOBS) fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS)

# The campaign of issue 28 item 7 (docs/fuzzing.md): 10^7 executions per
# target, hours in all, so outside CI.
fuzz-long: deps
	CC=clang CXX=clang++ $(CMAKE) -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DTENSOGRAM_BUILD_FUZZ=ON -DTENSOGRAM_BUILD_TESTS=OFF -DTENSOGRAM_BUILD_TOOLS=OFF -DTENSOGRAM_BUILD_PYTHON=OFF \
	  -DTENSOGRAM_BUILD_EXAMPLES=OFF $(CMAKE_ARGS)
	$(CMAKE) --build $(FUZZ_DIR) -j $(JOBS)
	FUZZ_JOBS=$(FUZZ_JOBS) fuzz/run.sh --runs $(FUZZ_DIR) $(FUZZ_RUNS)

bench: deps
	$(CMAKE) -S . -B $(BENCH_DIR) -DCMAKE_BUILD_TYPE=Release -DTENSOGRAM_BUILD_BENCH=ON \
	  -DTENSOGRAM_BUILD_TESTS=OFF -DTENSOGRAM_BUILD_EXAMPLES=OFF -DTENSOGRAM_BUILD_TOOLS=OFF $(CMAKE_ARGS)
	$(CMAKE) --build $(BENCH_DIR) -j $(JOBS)
	$(BENCH_DIR)/bench/tensogram_bench
	$(BENCH_DIR)/bench/tensogram_memory_bench --json-file $(BENCH_DIR)/memory_bench.json
	$(BENCH_DIR)/bench/tensogram_io_bench
	$(BENCH_DIR)/bench/tensogram_metatensor_bench --json-file $(BENCH_DIR)/metatensor_bench.json
	PYTHONPATH=$(BENCH_DIR)/python $(BENCH_PYTHON) bench/python_bench.py
	PYTHONPATH=$(BENCH_DIR)/python $(BENCH_PYTHON) bench/metatensor_python_bench.py --kind-mib 64 \
	  --json-file $(BENCH_DIR)/metatensor_python_bench.json
	@# Last: the codec matrix, whose goals block merges every other benchmark's goals.
	$(BENCH_DIR)/bench/tensogram_codec_matrix --json-file $(BENCH_DIR)/codec_matrix.json \
	  --goals-from $(BENCH_DIR)/metatensor_bench.json --goals-from $(BENCH_DIR)/metatensor_python_bench.json \
	  $(if $(wildcard $(BENCH_DIR)/wasm_bench.json),--goals-from $(BENCH_DIR)/wasm_bench.json)

# Only C and C++ files of the listed folders: build trees and fixtures stay untouched.
format_files = $(shell find $(wildcard $(FORMAT_DIRS)) -type f \
                 \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.c' -o -name '*.cc' \) | sort)

format:
	clang-format -i $(format_files)

format-check:
	clang-format --dry-run --Werror $(format_files)

# Not depending on `deps`/`build`: `sudo make install` after `make build`
# should only copy files (the build step below is then a no-op). DESTDIR,
# when set, is passed on for staged/package installs.
install:
	@test -f $(BUILD_DIR)/CMakeCache.txt || { echo "error: run 'make build' first" >&2; exit 1; }
	$(CMAKE) --build $(BUILD_DIR) -j $(JOBS)
	DESTDIR="$(DESTDIR)" $(CMAKE) --install $(BUILD_DIR) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD_DIR) $(TEST_DIR) $(ASAN_DIR) $(FUZZ_DIR) $(BENCH_DIR) $(OUT_DIR)
