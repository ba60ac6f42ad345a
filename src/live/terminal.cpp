// SPDX-License-Identifier: Apache-2.0
// termios, ANSI alternate screen, SIGWINCH and poll(2) for `gua top`.
//
// Hand-written escapes rather than ncurses: gua top needs four sequences (alternate screen, hide
// cursor, home, clear) and SGR colours it already writes for `gua now`; ncursesw would mean
// converting those strings into curses attributes, its own SIGWINCH handler and ESCDELAY next to
// ours, and a terminfo lookup that fails under TERM=dumb — more code, not less, and no safer.
#include "live/terminal.hpp"

#include "core/clock.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace gua::live {

namespace {

constexpr const char* k_enter = "\x1b[?1049h\x1b[?25l";
constexpr const char* k_leave = "\x1b[?25h\x1b[?1049l";

// The write end of the live ResizeSignal's pipe, for the handler (which can reach nothing else).
std::atomic<int> g_resize_write{-1};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_resize(int) {
    const int saved = errno;
    const int fd = g_resize_write.load();
    if (fd >= 0) {
        const char byte = 'w';
        [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1); // full pipe: already pending
    }
    errno = saved;
}

void write_all(int fd, const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        done += static_cast<std::size_t>(n);
    }
}

} // namespace

TerminalSession::TerminalSession(int in_fd, int out_fd) : m_in(in_fd), m_out(out_fd) {
    if (m_in >= 0 && ::tcgetattr(m_in, &m_saved) == 0) {
        termios raw = m_saved;
        raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        m_restore_termios = ::tcsetattr(m_in, TCSANOW, &raw) == 0;
    }
    write_all(m_out, k_enter);
}

TerminalSession::~TerminalSession() {
    write_all(m_out, k_leave);
    if (m_restore_termios) {
        ::tcsetattr(m_in, TCSANOW, &m_saved);
    }
}

void TerminalSession::draw(const std::string& frame) const {
    std::string text = "\x1b[H\x1b[2J";
    text += frame;
    write_all(m_out, text);
}

TerminalSize terminal_size(int fd) {
    winsize ws{};
    if (::isatty(fd) != 1 || ::ioctl(fd, TIOCGWINSZ, &ws) != 0) {
        return {};
    }
    return {ws.ws_col, ws.ws_row};
}

int terminal_columns(int fd) {
    return terminal_size(fd).columns;
}

ResizeSignal::ResizeSignal() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        return;
    }
    m_read = fds[0];
    m_write = fds[1];
    g_resize_write.store(m_write);
    struct sigaction sa {};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sa.sa_handler = on_resize;
    sigaction(SIGWINCH, &sa, &m_previous);
}

ResizeSignal::~ResizeSignal() {
    if (m_read < 0) {
        return;
    }
    sigaction(SIGWINCH, &m_previous, nullptr);
    g_resize_write.store(-1);
    ::close(m_read);
    ::close(m_write);
}

bool ResizeSignal::take() const {
    bool any = false;
    char buffer[64];
    while (m_read >= 0 && ::read(m_read, buffer, sizeof buffer) > 0) {
        any = true;
    }
    return any;
}

Input wait_for_input(int key_fd, int wake_fd, DurationUs timeout_us,
                     const std::atomic<bool>& stop) {
    SystemClock clock;
    const std::int64_t deadline = clock.mono_now() + timeout_us;
    Input in;
    while (!stop.load()) {
        const std::int64_t left = deadline - clock.mono_now();
        if (left <= 0) {
            break;
        }
        const int wait_ms = static_cast<int>(std::min<std::int64_t>((left + 999) / 1000, 100));
        pollfd p[2] = {{key_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
        if (::poll(p, 2, wait_ms) <= 0) { // fds of -1 are skipped; EINTR: look again
            continue;
        }
        in.resized = (p[1].revents & POLLIN) != 0;
        if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            char buffer[256];
            const ssize_t n = ::read(key_fd, buffer, sizeof buffer);
            if (n > 0) {
                in.bytes.assign(buffer, static_cast<std::size_t>(n));
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                in.closed = true;
            }
        }
        if (in.resized || in.closed || !in.bytes.empty()) {
            break;
        }
    }
    return in;
}

} // namespace gua::live
