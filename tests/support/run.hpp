// SPDX-License-Identifier: Apache-2.0
// Runs a program with arguments and extra environment, capturing stdout, stderr and exit code.
#pragma once

#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace gua::test {

/// What a finished child process produced. `exit_code` is 128 + signal when it was killed.
struct RunResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

/// Reads a whole file; "" when it does not exist.
std::string read_text(const std::string& path);

/// The current environment with `env` on top (an empty value unsets the variable), as
/// NAME=value strings for posix_spawn.
std::vector<std::string> merged_environment(const std::map<std::string, std::string>& env);

/// Pointers into `strings` followed by nullptr (argv/envp for posix_spawn); `strings` must
/// outlive them.
std::vector<char*> argv_pointers(std::vector<std::string>& strings);

/// The exit code of a waitpid() status: 128 + signal for a killed process, -1 otherwise.
int exit_code_of(int wait_status);

/// Runs `program` with `args` (argv[1..]) via posix_spawn, stdin from /dev/null. `env` entries are
/// set on top of the current environment (an empty value unsets the variable). Throws
/// std::runtime_error when the program cannot be started.
RunResult run(const std::string& program, const std::vector<std::string>& args,
              const std::map<std::string, std::string>& env = {});

/// Like run(), but stdout and stderr are the slave side of a new pseudo-terminal (so isatty() is
/// true in the child); `out` receives everything written to it and `err` stays empty.
RunResult run_in_pty(const std::string& program, const std::vector<std::string>& args,
                     const std::map<std::string, std::string>& env = {});

/// Runs the gua binary under test (GUA_BINARY) with `args`; NO_COLOR is set unless `env` says
/// otherwise.
RunResult run_gua(const std::vector<std::string>& args,
                  std::map<std::string, std::string> env = {});

/// Starts `argv` (argv[0] an absolute path) as a child whose pid is exactly `pid` (clone3 with
/// set_tid: needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE); -1 with errno set when the kernel
/// refuses. The caller reaps the child.
pid_t spawn_with_pid(pid_t pid, const std::vector<std::string>& argv);

} // namespace gua::test
