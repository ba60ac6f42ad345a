// SPDX-License-Identifier: Apache-2.0
// The command-line application: registers every subcommand by hand and maps errors to exit codes.
#include "cli/app.hpp"

#include "cli/command.hpp"
#include "cli/validators.hpp"
#include "core/fatal.hpp"
#include "core/printable.hpp"
#include "core/version.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace gua::cli {

int main_entry(int argc, char** argv) {
    CLI::App app{"gua: audit how NVIDIA GPUs are really used — active, idle-held (memory held, "
                 "SMs cold) and truly idle time, per card and per person."};
    app.set_version_flag("--version", std::string("gua ") + k_version);
    app.require_subcommand(1);
    app.footer("Run `gua <command> --help` for the flags of a command.");
    std::vector<std::pair<CLI::App*, Runner>> commands;
    const auto add = [&](Runner (*reg)(CLI::App&)) {
        Runner runner = reg(app);
        commands.emplace_back(app.get_subcommands({}).back(), std::move(runner));
    };
    add(register_report);
    add(register_demo);
    add(register_daemon);
    add(register_doctor);
    add(register_start);
    add(register_status);
    add(register_stop);
    add(register_uninstall);
    add(register_now);
    add(register_top);
    add(register_db);
    add(register_import);
    add(register_version);
    add(register_completion);
    if (argc > 1 && argv[1][0] != '-') {
        // CLI11 would only say "A subcommand is required": name what was typed instead.
        const std::string typed = argv[1];
        std::vector<std::string> names;
        for (const CLI::App* cmd : app.get_subcommands({})) {
            names.push_back(cmd->get_name());
        }
        if (std::find(names.begin(), names.end(), typed) == names.end()) {
            const std::optional<std::string> guess = closest_name(typed, names);
            fmt::print(stderr, "gua: unknown command '{}'{} (see `gua --help`)\n", printable(typed),
                       guess ? fmt::format(" — did you mean `gua {}`?", *guess) : "");
            return static_cast<int>(ExitCode::usage);
        }
    }
    try {
        app.parse(argc, argv);
        for (auto& [cmd, run] : commands) {
            if (cmd->parsed()) {
                return run();
            }
        }
        return 0;
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        fmt::print(stderr, "gua: {} (see `gua --help`)\n", printable(e.what()));
        return static_cast<int>(ExitCode::usage);
    } catch (const Fatal& e) {
        std::fflush(stdout);
        fmt::print(stderr, "gua: {}\n", printable(e.what()));
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        std::fflush(stdout);
        fmt::print(stderr, "gua: error: {}\n", printable(e.what()));
        return static_cast<int>(ExitCode::failure);
    }
}

} // namespace gua::cli
