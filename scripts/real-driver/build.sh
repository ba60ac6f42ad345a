#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Gathers what scripts/real-driver/run.sh needs into one folder (default .rd): the gua binary of
# the build folder (default build), nvml_probe and fault_probe built from this directory, and the shared
# libraries gua links or dlopens beyond the C and C++ runtime, so that it runs on a machine without them.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$root/build}
dest=${1:-$root/.rd}
mkdir -p "$dest"
cp "$build/src/gua" "$dest/gua"
strip --strip-debug "$dest/gua"
g++ -std=c++20 -O2 -Wall -Wextra -Werror -I"$root/src" "$root/scripts/real-driver/nvml_probe.cpp" \
    -o "$dest/nvml_probe" -ldl -static-libstdc++ -static-libgcc
g++ -std=c++20 -O2 -Wall -Wextra -Werror -I"$root/src" "$root/scripts/real-driver/fault_probe.cpp" \
    -o "$dest/fault_probe" -ldl -static-libstdc++ -static-libgcc
# libmicrohttpd is dlopen'ed by `gua daemon --listen`: take it and what it links too.
mhd=$(ldconfig -p | awk '/libmicrohttpd.so.12 / {print $NF; exit}')
cp -L "$mhd" "$dest/"
{ ldd "$dest/gua"; ldd "$mhd"; } | awk '/=> \// {print $3}' | grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s)\.so' |
    xargs -r cp -L -t "$dest"
ls -l "$dest"
