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

namespace {

/// The deepest parsed subcommand (e.g. `db upgrade`), or `app` when none was.
const CLI::App* parsed_command(const CLI::App& app) {
    for (const CLI::App* sub : app.get_subcommands({})) {
        if (sub->parsed()) {
            return parsed_command(*sub);
        }
    }
    return &app;
}

/// For an unknown `--option` of the command line: " — did you mean --other?" naming the closest
/// long option of the command it was given to, or "" when none is close.
std::string option_suggestion(const CLI::App& app, int argc, char** argv) {
    const CLI::App* cmd = parsed_command(app);
    std::vector<std::string> known;
    for (const CLI::App* scope = cmd; scope != nullptr; scope = scope->get_parent()) {
        for (const CLI::Option* opt : scope->get_options()) {
            for (const std::string& name : opt->get_lnames()) {
                known.push_back("--" + name);
            }
        }
    }
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const std::string typed = arg.substr(0, arg.find('='));
        if (arg == "--") {
            break;
        }
        if (typed.rfind("--", 0) != 0 || typed.size() < 3 ||
            std::find(known.begin(), known.end(), typed) != known.end()) {
            continue;
        }
        if (const std::optional<std::string> guess = closest_name(typed, known)) {
            return fmt::format(" — did you mean {}?", *guess);
        }
    }
    return "";
}

} // namespace

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
    add(register_free);
    add(register_db);
    add(register_job);
    add(register_plan);
    add(register_digest);
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
    } catch (const CLI::ExtrasError& e) {
        std::string command;
        for (const CLI::App* c = parsed_command(app); c != &app; c = c->get_parent()) {
            command = " " + c->get_name() + command;
        }
        fmt::print(stderr, "gua: {}{} (see `gua{} --help`)\n", printable(e.what()),
                   printable(option_suggestion(app, argc, argv)), command);
        return static_cast<int>(ExitCode::usage);
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
