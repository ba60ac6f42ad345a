# The README's two commands: `make demo` and `make test` (each installs what is missing first).
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# Unity batches per source directory: a cold build takes about half the CPU time
# (docs/PERFORMANCE.md, "Build time"); UNITY=OFF compiles file by file.
UNITY ?= ON

.PHONY: all deps test-deps build demo test test-asan bench format format-check tidy package clean

all: build

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGUA_UNITY_BUILD=$(UNITY) \
	    $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# Only the gua binary: not the tests, the fake driver or the benchmarks.
demo: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target gua
	./$(BUILD)/src/gua demo

test: test-deps build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

$(ASAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGUA_SANITIZE=ON \
	    -DGUA_BUILD_BENCH=OFF -DGUA_UNITY_BUILD=$(UNITY) $(CMAKE_FLAGS)

test-asan: test-deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    ctest --output-on-failure -j $(JOBS)

bench: build
	bench/run.sh $(BUILD)

format:
	git ls-files '*.cpp' '*.hpp' '*.h' | xargs clang-format -i

format-check:
	git ls-files '*.cpp' '*.hpp' '*.h' | xargs clang-format --dry-run -Werror

tidy: build
	git ls-files 'src/*.cpp' | xargs clang-tidy -p $(BUILD) --quiet

package: test-deps build
	cd $(BUILD) && cpack -G DEB

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
