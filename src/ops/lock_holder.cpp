// /proc/locks lines look like "3: FLOCK  ADVISORY  WRITE 20825 fe:00:10961036 0 EOF"
// (pid, then major:minor in hex and the inode in decimal).
#include "ops/lock_holder.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace gua::ops {

std::optional<pid_t> database_lock_holder(const std::string& db_path) {
    struct stat st {};
    if (::stat((db_path + ".lock").c_str(), &st) != 0) {
        return std::nullopt;
    }
    const std::string key = fmt::format("{:02x}:{:02x}:{}", major(st.st_dev), minor(st.st_dev),
                                        static_cast<unsigned long long>(st.st_ino));
    std::ifstream locks("/proc/locks");
    std::string line;
    while (std::getline(locks, line)) {
        std::istringstream fields(line);
        std::string id;
        std::string type;
        std::string mode;
        std::string access;
        long pid = 0;
        std::string file;
        fields >> id >> type;
        if (type == "->") {
            continue; // a waiter, not the holder
        }
        fields >> mode >> access >> pid >> file;
        if (type == "FLOCK" && access == "WRITE" && file == key && pid > 0) {
            return static_cast<pid_t>(pid);
        }
    }
    return std::nullopt;
}

} // namespace gua::ops
