# The README's two commands: `make demo` and `make test` (each installs what is missing first).
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps test-deps build demo test test-asan bench format format-check tidy package clean

all: build

deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh --test

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/src/gua demo

test: test-deps build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

$(ASAN_BUILD)/build.ninja: | deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGUA_SANITIZE=ON \
	    -DGUA_BUILD_BENCH=OFF $(CMAKE_FLAGS)

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
