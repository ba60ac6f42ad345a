// SPDX-License-Identifier: Apache-2.0
// gua::Fatal: an error the user must fix (bad flag, missing file, no driver); caught only in main.
#pragma once

#include <stdexcept>
#include <string>

namespace gua {

/// Process exit codes; each kind of failure has its own so scripts can tell them apart.
enum class ExitCode : int {
    ok = 0,
    failure = 1,   ///< runtime failure (I/O, database)
    usage = 2,     ///< bad command line or configuration
    no_driver = 3, ///< the NVML library or the NVIDIA driver is not usable
    conflict = 4,  ///< another gua already owns the resource (e.g. a daemon on the same database)
};

/// Thrown for problems that end the command; `what()` is the one-line message shown to the user.
class Fatal : public std::runtime_error {
  public:
    explicit Fatal(const std::string& message, ExitCode code = ExitCode::failure)
        : std::runtime_error(message), m_code(code) {}
    ExitCode code() const { return m_code; }

  private:
    ExitCode m_code;
};

} // namespace gua
