# SPDX-License-Identifier: Apache-2.0
# Warning and sanitizer flags as INTERFACE targets, linked by every gua target.
add_library(gua_warnings INTERFACE)
target_compile_options(gua_warnings INTERFACE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor
    -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough
    # GCC 12 reports std::optional members as "maybe uninitialized" at -O2 (false positives).
    $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>
    $<$<BOOL:${GUA_WERROR}>:-Werror>)

add_library(gua_sanitize INTERFACE)
if(GUA_SANITIZE STREQUAL "thread")
    # ThreadSanitizer (clang; `make test-tsan`): the daemon's threads and the /metrics server.
    target_compile_options(gua_sanitize INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
    target_link_options(gua_sanitize INTERFACE -fsanitize=thread)
elseif(GUA_SANITIZE)
    target_compile_options(gua_sanitize INTERFACE
        -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
    target_link_options(gua_sanitize INTERFACE -fsanitize=address,undefined)
elseif(GUA_BUILD_FUZZ)
    # The libFuzzer build (fuzz/): every library gua's fuzz targets link is compiled with
    # coverage for the fuzzer, ASan and UBSan; the targets add the fuzzer's own main.
    target_compile_options(gua_sanitize INTERFACE -fsanitize=fuzzer-no-link,address,undefined
        -fno-sanitize-recover=all -fno-omit-frame-pointer)
    target_link_options(gua_sanitize INTERFACE -fsanitize=address,undefined)
endif()
