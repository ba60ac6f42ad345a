// SPDX-License-Identifier: Apache-2.0
// Unit settings → uid, groups and effective capabilities, through the target's account files.
#include "ops/service_credentials.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <grp.h>
#include <memory>
#include <pwd.h>
#include <sstream>

namespace gua::ops {

namespace {

constexpr std::uint64_t k_all_caps = ~std::uint64_t{0};

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

File open_file(const std::string& path) {
    return File(std::fopen(path.c_str(), "re"), &std::fclose);
}

std::uint64_t bit_of(const std::string& name) {
    if (name == "CAP_KILL") {
        return std::uint64_t{1} << policy::k_cap_kill;
    }
    if (name == "CAP_DAC_OVERRIDE") {
        return std::uint64_t{1} << policy::k_cap_dac_override;
    }
    return 0;
}

std::vector<std::string> words(const std::vector<std::string>& values) {
    std::vector<std::string> out;
    for (const std::string& v : values) {
        std::istringstream in(v);
        for (std::string w; in >> w;) {
            out.push_back(w);
        }
    }
    return out;
}

struct Account {
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
};

std::optional<Account> find_user(const Paths& paths, const std::string& name) {
    const File f = open_file(paths.under_root("/etc/passwd"));
    if (!f) {
        return std::nullopt;
    }
    while (const passwd* p = ::fgetpwent(f.get())) {
        if (name == p->pw_name) {
            return Account{p->pw_uid, p->pw_gid};
        }
    }
    return std::nullopt;
}

/// The gid of `name`, or the number itself when `name` is numeric.
std::optional<std::uint32_t> gid_of(const Paths& paths, const std::string& name) {
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) {
        return static_cast<std::uint32_t>(std::stoul(name));
    }
    return group_gid(paths, name);
}

std::vector<std::uint32_t> memberships(const Paths& paths, const std::string& user) {
    std::vector<std::uint32_t> out;
    const File f = open_file(paths.under_root("/etc/group"));
    if (!f) {
        return out;
    }
    while (const group* g = ::fgetgrent(f.get())) {
        for (char** m = g->gr_mem; m != nullptr && *m != nullptr; ++m) {
            if (user == *m) {
                out.push_back(g->gr_gid);
            }
        }
    }
    return out;
}

std::vector<std::string> values(const UnitSettings& unit, const std::string& key) {
    const auto it = unit.service.find(key);
    return it == unit.service.end() ? std::vector<std::string>{} : it->second;
}

} // namespace

std::uint64_t capability_mask(const std::vector<std::string>& lines) {
    std::uint64_t mask = 0;
    bool first = true;
    for (const std::string& line : lines) {
        const bool invert = line.starts_with("~");
        std::uint64_t bits = 0;
        for (const std::string& name : words({invert ? line.substr(1) : line})) {
            bits |= bit_of(name);
        }
        if (invert) {
            mask = (first ? k_all_caps : mask) & ~bits;
        } else {
            mask |= bits;
        }
        first = false;
    }
    return mask;
}

std::optional<std::uint32_t> group_gid(const Paths& paths, const std::string& name) {
    const File f = open_file(paths.under_root("/etc/group"));
    if (!f) {
        return std::nullopt;
    }
    while (const group* g = ::fgetgrent(f.get())) {
        if (name == g->gr_name) {
            return g->gr_gid;
        }
    }
    return std::nullopt;
}

Result<policy::Credentials> unit_credentials(const UnitSettings& unit, const Paths& paths) {
    const std::string user = unit.last("User").empty() ? "root" : unit.last("User");
    const std::optional<Account> account =
        user == "root" || user == "0" ? std::optional<Account>(Account{}) : find_user(paths, user);
    if (!account) {
        return Error{fmt::format("User={} is not in {}", user, paths.under_root("/etc/passwd"))};
    }
    policy::Credentials c;
    c.uid = account->uid;
    std::uint32_t primary = account->gid;
    if (const std::string g = unit.last("Group"); !g.empty()) {
        const std::optional<std::uint32_t> gid = gid_of(paths, g);
        if (!gid) {
            return Error{fmt::format("Group={} is not in {}", g, paths.under_root("/etc/group"))};
        }
        primary = *gid;
    }
    c.gids.push_back(primary);
    std::vector<std::uint32_t> extra = memberships(paths, user);
    for (const std::string& name : words(values(unit, "SupplementaryGroups"))) {
        const std::optional<std::uint32_t> gid = gid_of(paths, name);
        if (!gid) {
            return Error{fmt::format("SupplementaryGroups= names {}, which is not in {}", name,
                                     paths.under_root("/etc/group"))};
        }
        extra.push_back(*gid);
    }
    for (const std::uint32_t gid : extra) {
        if (!c.in_group(gid)) {
            c.gids.push_back(gid);
        }
    }
    const std::uint64_t bounding = unit.assigned.count("CapabilityBoundingSet") != 0
                                       ? capability_mask(values(unit, "CapabilityBoundingSet"))
                                       : k_all_caps;
    c.effective_caps =
        c.uid == 0 ? bounding : bounding & capability_mask(values(unit, "AmbientCapabilities"));
    return c;
}

} // namespace gua::ops
