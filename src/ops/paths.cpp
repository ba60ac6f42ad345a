// SPDX-License-Identifier: Apache-2.0
// Paths for the system service (optionally under --root) and for a user's own daemon.
#include "ops/paths.hpp"

#include "config/config.hpp"
#include "core/fatal.hpp"
#include "store/paths.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <unistd.h>

namespace gua::ops {

namespace fs = std::filesystem;

bool path_exists(const std::string& path) {
    std::error_code ec;
    return fs::exists(path, ec);
}

std::string Paths::under_root(const std::string& path) const {
    if (live()) {
        return path;
    }
    return (fs::path(root) / fs::path(path).relative_path()).string();
}

Paths system_paths(const std::string& root) {
    Paths p;
    if (!root.empty() && root != "/") {
        std::error_code ec;
        if (!fs::is_directory(root, ec)) {
            throw Fatal(fmt::format("--root: {} is not a directory", root), ExitCode::usage);
        }
        p.root = fs::weakly_canonical(fs::absolute(root)).string();
    }
    p.scope = Scope::system;
    p.unit_file = p.under_root("/etc/systemd/system/gua.service");
    p.unit_search = {p.unit_file, p.under_root("/lib/systemd/system/gua.service"),
                     p.under_root("/usr/lib/systemd/system/gua.service")};
    p.config_file = p.under_root("/etc/gua/gua.toml");
    p.state_dir = p.under_root("/var/lib/gua");
    p.db = p.under_root(store::k_system_db_path);
    p.pid_file = p.state_dir + "/gua.pid";
    p.log_file = p.state_dir + "/gua.log";
    return p;
}

Paths user_paths() {
    Paths p;
    p.scope = Scope::user;
    p.db = store::user_db_path();
    p.state_dir = fs::path(p.db).parent_path().string();
    p.pid_file = p.state_dir + "/gua.pid";
    p.log_file = p.state_dir + "/gua.log";
    const std::string home = std::getenv("HOME") != nullptr ? std::getenv("HOME") : "/tmp";
    p.config_file = config::find_config_file().value_or(home + "/.config/gua/gua.toml");
    return p;
}

Paths resolve_paths(const std::string& root) {
    if (!root.empty() || geteuid() == 0) {
        return system_paths(root);
    }
    return user_paths();
}

} // namespace gua::ops
