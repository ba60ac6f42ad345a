// SPDX-License-Identifier: Apache-2.0
// Default database locations (DESIGN.md "Storage").
#include "store/paths.hpp"

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace gua::store {

std::string user_db_path() {
    if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg == '/') {
        return std::string(xdg) + "/gua/gua.db";
    }
    const char* home = std::getenv("HOME");
    return std::string(home != nullptr ? home : "/tmp") + "/.local/state/gua/gua.db";
}

std::string default_write_path() {
    if (const char* env = std::getenv("GUA_DB"); env != nullptr && *env != '\0') {
        return env;
    }
    return geteuid() == 0 ? k_system_db_path : user_db_path();
}

std::optional<std::string> default_read_path() {
    if (const char* env = std::getenv("GUA_DB"); env != nullptr && *env != '\0') {
        return std::string(env);
    }
    std::error_code ec;
    if (const std::string user = user_db_path(); std::filesystem::exists(user, ec)) {
        return user;
    }
    if (std::filesystem::exists(k_system_db_path, ec)) {
        return std::string(k_system_db_path);
    }
    return std::nullopt;
}

} // namespace gua::store
