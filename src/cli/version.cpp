// SPDX-License-Identifier: Apache-2.0
// `gua version`: the version, the git commit it was built from, and the libraries it runs with
// (SQLite, and the NVIDIA driver when one loads).
#include "cli/command.hpp"
#include "core/build_info.hpp"
#include "nvml/open.hpp"
#include "store/database.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <string>

namespace gua::cli {

namespace {

/// "driver 560.35.05", or "no driver (why)" when NVML does not load or initialize.
std::string driver_line(const std::string& library) {
    auto source = nvml::open_nvml_source(library);
    if (!source) {
        return fmt::format("no driver ({})", source.error().message);
    }
    const std::string version = source.value()->driver_version();
    return fmt::format("driver {}", version.empty() ? "of unknown version" : version);
}

} // namespace

Runner register_version(CLI::App& app) {
    auto library = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand(
        "version", "Print the version, the git commit and the SQLite and NVIDIA driver versions");
    cmd->add_option("--nvml-library", *library,
                    "Path of libnvidia-ml.so.1 (default: $GUA_NVML_LIBRARY, else the system's)");
    return [library] {
        fmt::print("gua {}\n", k_version);
        fmt::print("commit  {}\n", build_commit());
        fmt::print("sqlite  {}\n", store::sqlite_library_version());
        fmt::print("nvml    {}\n", driver_line(*library));
        return 0;
    };
}

} // namespace gua::cli
