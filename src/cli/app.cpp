// The command-line application: registers every subcommand by hand and maps errors to exit codes.
#include "cli/app.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "core/fatal.hpp"
#include "core/version.hpp"

namespace gua::cli {

int main_entry(int argc, char** argv) {
    CLI::App app{"gua: audit how NVIDIA GPUs are really used (active, idle-held, truly idle)"};
    app.set_version_flag("--version", std::string("gua ") + k_version);
    app.require_subcommand(1);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    } catch (const Fatal& e) {
        fmt::print(stderr, "gua: {}\n", e.what());
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        fmt::print(stderr, "gua: internal error: {}\n", e.what());
        return static_cast<int>(ExitCode::failure);
    }
    return 0;
}

} // namespace gua::cli
