// SPDX-License-Identifier: Apache-2.0
// systemctl command lines: offline verbs get --root=DIR for a root tree; online verbs are never
// sent to the host's systemd on behalf of a root tree.
#include "ops/systemctl.hpp"

#include <cstdlib>
#include <filesystem>

namespace gua::ops {

namespace {

bool is_offline_verb(const std::string& verb) {
    return verb == "enable" || verb == "disable" || verb == "is-enabled";
}

std::string trimmed(const std::string& text) {
    const std::size_t end = text.find_first_of("\r\n");
    return text.substr(0, end);
}

} // namespace

Systemctl::Systemctl(const Paths& paths) : m_root(paths.root) {
    const char* replacement = std::getenv(k_systemctl_env);
    m_replaced = replacement != nullptr && *replacement != '\0';
    m_program = m_replaced ? replacement : "systemctl";
    std::error_code ec;
    m_booted = paths.scope == Scope::system &&
               std::filesystem::is_directory(paths.under_root("/run/systemd/system"), ec);
}

bool Systemctl::can_run(const std::string& verb) const {
    return is_offline_verb(verb) || m_root == "/" || m_replaced;
}

std::vector<std::string> Systemctl::argv(const std::string& verb) const {
    std::vector<std::string> args{m_program};
    if (m_root != "/" && is_offline_verb(verb)) {
        args.push_back("--root=" + m_root);
    }
    args.push_back(verb);
    if (verb != "daemon-reload") {
        args.push_back(k_unit_name);
    }
    return args;
}

CommandResult Systemctl::run(const std::string& verb) const {
    return run_command(argv(verb));
}

std::optional<bool> Systemctl::is_enabled() const {
    const CommandResult r = run("is-enabled");
    const std::string answer = trimmed(r.output);
    if (answer == "enabled" || answer == "enabled-runtime" || answer == "alias") {
        return true;
    }
    if (answer == "disabled" || answer == "static" || answer == "masked" || answer == "indirect" ||
        answer == "linked" || answer == "not-found") {
        return false;
    }
    return std::nullopt;
}

std::string Systemctl::is_active() const {
    if (!can_run("is-active")) {
        return "unknown";
    }
    const std::string answer = trimmed(run("is-active").output);
    return answer.empty() ? "unknown" : answer;
}

} // namespace gua::ops
