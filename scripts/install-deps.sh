#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages gua needs to build and test, printing what it installs:
# no argument: build and unit tests; --test: also the end-to-end tests' tools; --package: only what
# `make package` needs; --clang: the clang toolchain.
# Already-installed packages are left alone; needs root or sudo only when something is missing.
set -euo pipefail

# What building the gua binary needs (compiler, CMake, the libraries' headers).
packages=(
    cmake g++ ninja-build pkg-config make python3
    libsqlite3-dev libcli11-dev libfmt-dev nlohmann-json3-dev libtomlplusplus-dev
    libmicrohttpd-dev libcurl4-openssl-dev libyaml-cpp-dev libcrypt-dev libgnutls28-dev
    libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
)
if [ "${1:-}" = "--package" ]; then
    # `make package`: the build dependencies and dpkg-shlibdeps (dpkg-dev), nothing of the tests.
    packages+=(dpkg-dev)
else
    # The test and benchmark libraries (CMake finds them when it configures the test suite) and
    # the tools the tests and scripts call.
    packages+=(libgtest-dev libgmock-dev libbenchmark-dev librapidcheck-dev libfuse3-dev sqlite3
        jq tmux util-linux)
fi
if [ "${1:-}" = "--test" ]; then
    # Real components used by the end-to-end tests: prometheus (fleet tests, promtool); dpkg-dev
    # (dpkg-shlibdeps) also for `make package`; lintian for the package check; groff for the man
    # page check; systemd for `systemd-analyze verify`; zsh and fish to load their completion;
    # chromium to load the HTML report in a real browser (headless) and take its screenshots;
    # python3-kubernetes (its API models validate packaging/kubernetes/) and yamllint;
    # slurmctld, slurmd, slurm-client and munge for a real one-node Slurm (tests/alloc/).
    packages+=(dpkg-dev lintian groff-base systemd prometheus zsh fish chromium python3-kubernetes
        yamllint slurmctld slurmd slurm-client munge)
    # openssl and curl make and use the certificates of the --web-config tests (tests/export/).
    packages+=(openssl curl)
    # python3-aiosmtpd: the SMTP server (STARTTLS, AUTH) the mail delivery tests send to
    # (tests/notify/).
    packages+=(python3-aiosmtpd)
fi
if [ "${1:-}" = "--clang" ]; then
    # `make fuzz` (libFuzzer) and `make test-tsan` (ThreadSanitizer) build with clang;
    # `make format-check` runs clang-format 14.
    packages+=(clang-14 libclang-rt-14-dev clang-format)
fi

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "gua setup: installing missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
else
    echo "gua setup: need root or sudo to install: ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq || echo "gua setup: apt-get update failed; trying the cached lists" >&2
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "gua setup: installed ${missing[*]}"
