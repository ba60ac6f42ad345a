# The README's two commands: `make demo` and `make test` (each installs what is missing first).
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# Unity batches per source directory: a cold build takes about half the CPU time
# (docs/PERFORMANCE.md, "Build time"); UNITY=OFF compiles file by file.
UNITY ?= ON

.PHONY: all deps test-deps package-deps clang-deps build demo test test-asan test-tsan fuzz bench format \
        format-check tidy package install clean screenshots

all: build

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

clang-deps:
	@scripts/install-deps.sh --clang

package-deps:
	@scripts/install-deps.sh --package

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGUA_UNITY_BUILD=$(UNITY) \
	    $(CMAKE_FLAGS)

# A build tree `make package` configured without the tests gets them back here.
build: deps $(BUILD)/build.ninja
	@if grep -q '^GUA_BUILD_TESTS:BOOL=OFF' $(BUILD)/CMakeCache.txt; then \
	    cmake -S . -B $(BUILD) -DGUA_BUILD_TESTS=ON -DGUA_BUILD_BENCH=ON; fi
	cmake --build $(BUILD) -j $(JOBS)

# Only the gua binary: not the tests, the fake driver or the benchmarks.
demo: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target gua
	./$(BUILD)/src/gua demo

# Everything but the README path (label readme: a fresh clone built from scratch, .ci/run).
test: test-deps build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE readme

$(ASAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGUA_SANITIZE=ON \
	    -DGUA_BUILD_BENCH=OFF -DGUA_UNITY_BUILD=$(UNITY) $(CMAKE_FLAGS)

test-asan: test-deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    ctest --output-on-failure -j $(JOBS) -LE readme

# ThreadSanitizer (clang): only the daemon's threads are under test — the daemon end-to-end,
# /metrics and HTTP server suites, the clock's stoppable wait (docs/TESTING.md); their files are
# the test binary gua_tsan_tests (tests/CMakeLists.txt).
TSAN_TESTS ?= DaemonE2E*:NotifyQueue*:DeadlineWorker*:Export*:FleetMetricsLoad*:StorageWatch*:DatabaseLock*:ScenarioFileClock*:FaultMatrixStorage.LongRead*:TzRules.Concurrent*

$(TSAN_BUILD)/build.ninja: | deps clang-deps
	CC=clang-14 CXX=clang++-14 cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DGUA_SANITIZE=thread -DGUA_BUILD_BENCH=OFF \
	    -DGUA_UNITY_BUILD=$(UNITY) \
	    $(CMAKE_FLAGS)

test-tsan: test-deps $(TSAN_BUILD)/build.ninja
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target gua gua_tsan_tests fake_nvml
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	    $(TSAN_BUILD)/tests/gua_tsan_tests --gtest_brief=1 --gtest_filter='$(TSAN_TESTS)'

# libFuzzer (clang): every target for FUZZ_SECONDS on its seed corpus (fuzz/run.sh).
$(FUZZ_BUILD)/build.ninja: | deps clang-deps
	CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DGUA_BUILD_FUZZ=ON -DGUA_BUILD_TESTS=OFF -DGUA_BUILD_BENCH=OFF $(CMAKE_FLAGS)

fuzz: $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_all
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh $(FUZZ_BUILD)

bench: build
	bench/run.sh $(BUILD)

# The demo's HTML report in headless Chromium at desktop and phone widths → docs/screenshots/.
screenshots: test-deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target gua
	scripts/screenshots.sh $(BUILD)

format: clang-deps
	git ls-files '*.cpp' '*.hpp' '*.h' | xargs clang-format -i

format-check: clang-deps
	git ls-files '*.cpp' '*.hpp' '*.h' | xargs clang-format --dry-run -Werror

tidy: build
	git ls-files 'src/*.cpp' | xargs clang-tidy -p $(BUILD) --quiet

# The .debs ($(BUILD)/gua_<version>_<arch>.deb and gua-kubelet_<version>_<arch>.deb, the kubelet
# client module): the build dependencies only, and only what the packages hold (the binary, the
# module, the man page, the changelog, the shell completion). A tree configured here has no tests
# or benchmarks until `make build` or `make test` adds them.
package: package-deps
	@[ -f $(BUILD)/build.ninja ] || cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DGUA_UNITY_BUILD=$(UNITY) -DGUA_BUILD_TESTS=OFF -DGUA_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS) --target gua gua_kubelet gua_man gua_changelog gua_completion
	cd $(BUILD) && cpack -G DEB

# gua on PATH: the binary, man page and completion under PREFIX (cmake --install; default
# /usr/local), the unit and /etc/gua/gua.toml where the package puts them.
PREFIX ?= /usr/local
install: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target gua gua_man gua_changelog gua_completion
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
