// SPDX-License-Identifier: Apache-2.0
// `gua completion bash|zsh|fish` (hidden): reads the registered CLI11 command tree and prints the
// completion script for the shell. The package installs the three scripts generated at build time.
#include "cli/completion.hpp"

#include "cli/command.hpp"
#include "core/fatal.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <set>
#include <string>

namespace gua::cli {

namespace {

/// Options whose value names a file or a directory on this host.
const std::set<std::string> k_file_options = {"--db", "--config", "--nvml-library", "--log",
                                              "--web-config"};
const std::set<std::string> k_directory_options = {"--root"};

/// "{text,json}" in a CLI11 type name ("TEXT:{text,json}") as its members.
std::vector<std::string> choices_of(const std::string& type_name) {
    const std::size_t open = type_name.find('{');
    const std::size_t close = type_name.find('}', open);
    std::vector<std::string> out;
    if (open == std::string::npos || close == std::string::npos) {
        return out;
    }
    std::string item;
    for (std::size_t i = open + 1; i <= close; ++i) {
        if (i == close || type_name[i] == ',') {
            if (!item.empty()) {
                out.push_back(item);
            }
            item.clear();
        } else {
            item += type_name[i];
        }
    }
    return out;
}

CompletionOption describe_option(const CLI::Option& opt) {
    CompletionOption o;
    for (const std::string& name : opt.get_lnames()) {
        o.names.push_back("--" + name);
    }
    for (const std::string& name : opt.get_snames()) {
        o.names.push_back("-" + name);
    }
    o.help = opt.get_description();
    if (opt.get_expected_max() == 0) {
        o.value = ValueKind::none;
        return o;
    }
    o.choices = choices_of(opt.get_type_name());
    const std::string first = o.names.empty() ? "" : o.names.front();
    if (!o.choices.empty()) {
        o.value = ValueKind::choice;
    } else if (k_directory_options.count(first) != 0) {
        o.value = ValueKind::directory;
    } else if (k_file_options.count(first) != 0 || (o.names.empty() && opt.get_name() == "FILE")) {
        o.value = ValueKind::file;
    } else {
        o.value = ValueKind::text;
    }
    return o;
}

CompletionCommand describe(const CLI::App& app, const std::string& name) {
    CompletionCommand c;
    c.name = name;
    c.help = app.get_description();
    for (const CLI::Option* opt : app.get_options()) {
        if (!opt->get_group().empty()) { // an empty group hides an option from --help
            c.options.push_back(describe_option(*opt));
        }
    }
    // Hidden commands (an empty group), such as this one, are not offered.
    for (const CLI::App* sub :
         app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
        c.subcommands.push_back(describe(*sub, sub->get_name()));
    }
    return c;
}

} // namespace

Runner register_completion(CLI::App& app) {
    auto shell = std::make_shared<std::string>();
    CLI::App* cmd = app.add_subcommand("completion", "Print the shell completion script");
    cmd->group("");
    cmd->add_option("SHELL", *shell, "bash, zsh or fish")
        ->required()
        ->check(CLI::IsMember({"bash", "zsh", "fish"}));
    const CLI::App* root = &app;
    return [shell, root] {
        const CompletionCommand tree = describe(*root, "gua");
        const std::string script = *shell == "bash"  ? bash_completion(tree)
                                   : *shell == "zsh" ? zsh_completion(tree)
                                                     : fish_completion(tree);
        std::fwrite(script.data(), 1, script.size(), stdout);
        return 0;
    };
}

} // namespace gua::cli
