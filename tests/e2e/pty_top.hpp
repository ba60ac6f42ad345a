// SPDX-License-Identifier: Apache-2.0
// `gua top` in a pseudo-terminal for the end-to-end tests: its output so far, keys to send,
// resizes, its frames, and its exit; optionally run through a prefix such as setpriv (another uid).
#pragma once

#include "policy/support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <poll.h>
#include <pty.h>
#include <sstream>
#include <string>
#include <sys/ioctl.h>
#include <unistd.h>
#include <vector>

namespace gua::policy_e2e {

using namespace std::chrono_literals;

/// `gua top` in a pseudo-terminal: the output so far, keys to send, and its exit. `prefix` (an
/// absolute program and its arguments, e.g. setpriv) runs gua.
class PtyTop {
  public:
    explicit PtyTop(const std::vector<std::string>& args, unsigned short rows = 40,
                    unsigned short columns = 120, const std::vector<std::string>& prefix = {}) {
        std::vector<std::string> argv = prefix;
        argv.insert(argv.end(), {GUA_BINARY, "top"});
        argv.insert(argv.end(), args.begin(), args.end());
        std::vector<char*> c;
        for (const std::string& a : argv) {
            c.push_back(const_cast<char*>(a.c_str()));
        }
        c.push_back(nullptr);
        winsize ws{rows, columns, 0, 0};
        m_pid = ::forkpty(&m_master, nullptr, nullptr, &ws);
        if (m_pid == 0) {
            ::setenv("NO_COLOR", "1", 1);
            ::execv(c[0], c.data());
            ::_exit(127);
        }
        m_child = Child::adopt(m_pid);
    }
    ~PtyTop() {
        m_child.reset();
        if (m_master >= 0) {
            ::close(m_master);
        }
    }
    PtyTop(const PtyTop&) = delete;
    PtyTop& operator=(const PtyTop&) = delete;

    /// Reads until the output contains `text` (true) or `timeout` passes.
    bool read_until(const std::string& text, std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (m_out.find(text) == std::string::npos &&
               std::chrono::steady_clock::now() < deadline) {
            pump(100);
        }
        return m_out.find(text) != std::string::npos;
    }
    void send(const std::string& keys) const {
        EXPECT_EQ(::write(m_master, keys.data(), keys.size()), static_cast<ssize_t>(keys.size()));
    }
    /// Resizes the terminal (TIOCSWINSZ on the master) and signals the child, as a terminal
    /// emulator does.
    void resize(unsigned short rows, unsigned short columns) const {
        winsize ws{rows, columns, 0, 0};
        EXPECT_EQ(::ioctl(m_master, TIOCSWINSZ, &ws), 0);
        ::kill(m_pid, SIGWINCH);
    }
    /// How many frames were drawn so far (each starts with cursor home and clear screen).
    std::size_t frames() const {
        std::size_t n = 0;
        for (std::size_t at = m_out.find(k_clear); at != std::string::npos;
             at = m_out.find(k_clear, at + 1)) {
            ++n;
        }
        return n;
    }
    /// The newest frame's lines (carriage returns dropped), empty before the first frame.
    std::vector<std::string> last_frame() const {
        const std::size_t at = m_out.rfind(k_clear);
        std::vector<std::string> lines;
        if (at == std::string::npos) {
            return lines;
        }
        std::string frame = m_out.substr(at + std::string(k_clear).size());
        std::erase(frame, '\r');
        std::istringstream in(frame);
        for (std::string line; std::getline(in, line);) {
            lines.push_back(line);
        }
        return lines;
    }
    /// Reads until a frame newer than the first `after` ones is complete (its last line contains
    /// `footer`) and satisfies `ok`; true when one did before `timeout`.
    bool frame_until(std::size_t after, const std::string& footer,
                     const std::function<bool(const std::vector<std::string>&)>& ok,
                     std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        const auto done = [&] {
            const std::vector<std::string> lines = last_frame();
            return frames() > after && !lines.empty() &&
                   lines.back().find(footer) != std::string::npos && ok(lines);
        };
        while (!done() && std::chrono::steady_clock::now() < deadline) {
            pump(100);
        }
        return done();
    }
    /// Waits for the exit while draining the terminal; the wait status, nullopt on timeout.
    std::optional<int> wait_exit(std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            pump(50);
            if (auto status = m_child->wait_exit(0ms)) {
                pump(50);
                return status;
            }
        }
        return std::nullopt;
    }
    const std::string& output() const { return m_out; }

  private:
    static constexpr const char* k_clear = "\x1b[H\x1b[2J";

    void pump(int timeout_ms) {
        pollfd p{m_master, POLLIN, 0};
        if (::poll(&p, 1, timeout_ms) > 0) {
            char buffer[4096];
            const ssize_t n = ::read(m_master, buffer, sizeof buffer);
            if (n > 0) {
                m_out.append(buffer, static_cast<std::size_t>(n));
            }
        }
    }

    int m_master = -1;
    pid_t m_pid = -1;
    std::unique_ptr<Child> m_child;
    std::string m_out;
};

} // namespace gua::policy_e2e
