// SPDX-License-Identifier: Apache-2.0
// Credentials from /proc/<pid>/status, and the privilege each policy action needs.
#include "policy/privileges.hpp"

#include "identity/proc_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <grp.h>
#include <sstream>

namespace gua::policy {

namespace {

/// The value after "<name>:" on its own line of `text`, or nullopt.
std::optional<std::string> field(const std::string& text, const std::string& name) {
    const std::string key = name + ":";
    std::size_t at = text.rfind("\n" + key);
    if (text.starts_with(key)) {
        at = 0;
    } else if (at != std::string::npos) {
        ++at;
    } else {
        return std::nullopt;
    }
    const std::size_t begin = at + key.size();
    const std::size_t end = text.find('\n', begin);
    return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

std::vector<std::uint32_t> numbers(const std::string& text) {
    std::vector<std::uint32_t> out;
    std::istringstream in(text);
    for (std::uint32_t n = 0; in >> n;) {
        out.push_back(n);
    }
    return out;
}

} // namespace

bool Credentials::in_group(std::uint32_t gid) const {
    return std::find(gids.begin(), gids.end(), gid) != gids.end();
}

Result<Credentials> parse_proc_status(const std::string& text) {
    const std::optional<std::string> uid = field(text, "Uid");
    const std::optional<std::string> gid = field(text, "Gid");
    const std::optional<std::string> cap = field(text, "CapEff");
    if (!uid || !gid || !cap) {
        return Error{"no Uid, Gid or CapEff line"};
    }
    const std::vector<std::uint32_t> uids = numbers(*uid); // real, effective, saved, fs
    const std::vector<std::uint32_t> gids = numbers(*gid);
    if (uids.size() < 2 || gids.size() < 2) {
        return Error{"malformed Uid or Gid line"};
    }
    Credentials c;
    c.uid = uids[1];
    c.gids.push_back(gids[1]);
    for (std::uint32_t g : numbers(field(text, "Groups").value_or(""))) {
        if (!c.in_group(g)) {
            c.gids.push_back(g);
        }
    }
    const std::string hex = [&] {
        const std::size_t b = cap->find_first_not_of(" \t");
        return b == std::string::npos ? std::string() : cap->substr(b);
    }();
    const auto [ptr, ec] =
        std::from_chars(hex.data(), hex.data() + hex.size(), c.effective_caps, 16);
    if (ec != std::errc() || hex.empty()) {
        return Error{"malformed CapEff line"};
    }
    return c;
}

Result<Credentials> read_credentials(const std::string& status_path) {
    const Result<std::string> text = identity::read_proc_file(status_path, 16384);
    if (!text) {
        return text.error();
    }
    Result<Credentials> c = parse_proc_status(text.value());
    if (!c) {
        return Error{fmt::format("{}: {}", status_path, c.error().message)};
    }
    return c;
}

std::optional<std::uint32_t> tty_group() {
    group storage{};
    group* found = nullptr;
    char buffer[4096];
    if (::getgrnam_r("tty", &storage, buffer, sizeof buffer, &found) != 0 || found == nullptr) {
        return std::nullopt;
    }
    return found->gr_gid;
}

std::string required_privilege(Action action) {
    switch (action) {
    case Action::terminate:
        return "CAP_KILL";
    case Action::notify:
        return "group tty (or CAP_DAC_OVERRIDE)";
    case Action::log:
        break;
    }
    return "";
}

std::optional<std::string> missing_privilege(Action action, const Credentials& creds,
                                             std::optional<std::uint32_t> tty_gid) {
    switch (action) {
    case Action::terminate:
        if (creds.has_capability(k_cap_kill)) {
            return std::nullopt;
        }
        return fmt::format("uid {} has no CAP_KILL, so it may signal only its own processes",
                           creds.uid);
    case Action::notify:
        if (creds.has_capability(k_cap_dac_override) || (tty_gid && creds.in_group(*tty_gid))) {
            return std::nullopt;
        }
        return tty_gid ? fmt::format("uid {} is not in group tty (gid {}), so it cannot write to "
                                     "other users' terminals",
                                     creds.uid, *tty_gid)
                       : fmt::format("there is no tty group, and uid {} has no CAP_DAC_OVERRIDE",
                                     creds.uid);
    case Action::log:
        break;
    }
    return std::nullopt;
}

} // namespace gua::policy
