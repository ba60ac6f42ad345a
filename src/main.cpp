// SPDX-License-Identifier: Apache-2.0
// gua's entry point: build the command line, run it, and turn failures into exit codes.
#include "cli/app.hpp"

int main(int argc, char** argv) {
    return gua::cli::main_entry(argc, argv);
}
