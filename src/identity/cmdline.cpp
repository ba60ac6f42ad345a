// SPDX-License-Identifier: Apache-2.0
// Pure parsers for /proc/<pid>/cmdline: argv splitting, display and the Jupyter kernel id.
#include "identity/cmdline.hpp"

#include "core/printable.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace gua::identity {
namespace {

std::string_view basename_of(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string lowercase(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

bool is_id_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

// "kernel-<id>.json" anywhere as the file name of `arg` or of its "--opt=" value → <id>.
std::string kernel_id_in(std::string_view arg) {
    if (arg.starts_with('-')) {
        const std::size_t equals = arg.find('=');
        if (equals == std::string_view::npos) {
            return {};
        }
        arg.remove_prefix(equals + 1);
    }
    std::string_view name = basename_of(arg);
    constexpr std::string_view prefix = "kernel-";
    constexpr std::string_view suffix = ".json";
    if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) ||
        !name.ends_with(suffix)) {
        return {};
    }
    name = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    return std::all_of(name.begin(), name.end(), is_id_char) ? std::string(name) : std::string{};
}

// True when `arg` names a Jupyter kernel launcher (a program, a script or a "-m" module).
bool is_kernel_marker(std::string_view arg) {
    if (arg.starts_with("-m") && arg.size() > 2) {
        arg.remove_prefix(2); // "-mipykernel_launcher"
    }
    const std::string lower = lowercase(arg);
    const std::string_view name = basename_of(lower);
    constexpr std::array<std::string_view, 3> k_anywhere = {"ipykernel", "irkernel", "ijulia"};
    constexpr std::array<std::string_view, 3> k_name_prefixes = {"jupyter", "xpython", "xeus"};
    return std::any_of(
               k_anywhere.begin(), k_anywhere.end(),
               [&](std::string_view word) { return lower.find(word) != std::string::npos; }) ||
           std::any_of(k_name_prefixes.begin(), k_name_prefixes.end(),
                       [&](std::string_view word) { return name.starts_with(word); });
}

} // namespace

std::string display_cmdline(const std::vector<std::string>& argv) {
    std::string out;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        std::string arg = argv[i];
        if (i == 0) {
            const std::size_t slash = arg.find_last_of('/');
            if (slash != std::string::npos && slash + 1 < arg.size()) {
                arg = arg.substr(slash + 1);
            }
        }
        if (arg.empty() || arg.find_first_of(" '\"\t") != std::string::npos) {
            if (arg.find('\'') == std::string::npos) {
                arg = "'" + arg + "'";
            } else {
                std::string quoted = "\"";
                for (const char c : arg) {
                    quoted += c == '"' ? std::string("\\\"") : std::string(1, c);
                }
                arg = quoted + "\"";
            }
        }
        out += (i == 0 ? "" : " ") + printable(arg);
    }
    return out;
}

std::vector<std::string> split_cmdline(std::string_view raw) {
    if (raw.ends_with('\0')) {
        raw.remove_suffix(1);
    }
    std::vector<std::string> argv;
    if (raw.empty()) {
        return argv;
    }
    while (true) {
        const std::size_t nul = raw.find('\0');
        argv.emplace_back(raw.substr(0, nul));
        if (nul == std::string_view::npos) {
            return argv;
        }
        raw.remove_prefix(nul + 1);
    }
}

std::string jupyter_kernel_id(const std::vector<std::string>& argv) {
    std::string id;
    std::size_t id_index = argv.size();
    for (std::size_t i = 0; i < argv.size() && id.empty(); ++i) {
        id = kernel_id_in(argv[i]);
        id_index = i;
    }
    if (id.empty()) {
        return {};
    }
    for (std::size_t i = 0; i < argv.size(); ++i) {
        if (i != id_index && is_kernel_marker(argv[i])) {
            return id;
        }
    }
    return {};
}

} // namespace gua::identity
