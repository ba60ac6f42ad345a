// SPDX-License-Identifier: Apache-2.0
// Step constructors.
#include "ops/steps.hpp"

#include "ops/command.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

namespace gua::ops {

namespace fs = std::filesystem;

namespace {

std::string last_line(const std::string& text) {
    std::string t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) {
        t.pop_back();
    }
    const std::size_t nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

} // namespace

Step make_directory(const std::string& dir, mode_t mode) {
    return Step{fmt::format("create directory {}", dir), [dir, mode]() -> Result<std::string> {
                    std::error_code ec;
                    fs::create_directories(dir, ec);
                    if (ec) {
                        return Error{ec.message()};
                    }
                    if (::chmod(dir.c_str(), mode) != 0) {
                        return Error{std::strerror(errno)};
                    }
                    return std::string();
                }};
}

Step write_file(const std::string& path, const std::string& content, mode_t mode,
                const std::string& what) {
    return Step{fmt::format("write {} ({})", path, what), [=]() -> Result<std::string> {
                    std::error_code ec;
                    fs::create_directories(fs::path(path).parent_path(), ec);
                    const std::string tmp = path + ".gua-new";
                    {
                        std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
                        out << content;
                        if (!out.flush()) {
                            return Error{fmt::format("cannot write {}", tmp)};
                        }
                    }
                    if (::chmod(tmp.c_str(), mode) != 0 ||
                        std::rename(tmp.c_str(), path.c_str()) != 0) {
                        const std::string why = std::strerror(errno);
                        fs::remove(tmp, ec);
                        return Error{why};
                    }
                    return std::string();
                }};
}

Step remove_file(const std::string& path, const std::string& what) {
    return Step{fmt::format("remove {} ({})", path, what), [path]() -> Result<std::string> {
                    std::error_code ec;
                    fs::remove(path, ec);
                    if (ec) {
                        return Error{ec.message()};
                    }
                    return std::string();
                }};
}

Step remove_empty_directory(const std::string& dir) {
    return Step{fmt::format("remove directory {} if empty", dir), [dir]() -> Result<std::string> {
                    std::error_code ec;
                    if (fs::is_directory(dir, ec) && fs::is_empty(dir, ec)) {
                        fs::remove(dir, ec);
                        return std::string();
                    }
                    return std::string("not empty; kept");
                }};
}

Step run_program(const std::vector<std::string>& argv) {
    return Step{fmt::format("run {}", command_line(argv)), [argv]() -> Result<std::string> {
                    const CommandResult r = run_command(argv);
                    if (r.exit_code != 0) {
                        const std::string line = last_line(r.output);
                        return Error{fmt::format("exit code {}{}", r.exit_code,
                                                 line.empty() ? "" : ": " + line)};
                    }
                    return std::string();
                }};
}

Step systemctl_step(const Systemctl& systemctl, const std::string& verb) {
    if (systemctl.can_run(verb)) {
        return run_program(systemctl.argv(verb));
    }
    return Step{fmt::format("skip `{}`: no running systemd manages a --root tree",
                            command_line(systemctl.argv(verb))),
                [] { return Result<std::string>(std::string()); }, true};
}

} // namespace gua::ops
