// termios, ANSI alternate screen and poll(2) for `gua top`.
#include "live/terminal.hpp"

#include <algorithm>
#include <cerrno>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace gua::live {

namespace {

constexpr const char* k_enter = "\x1b[?1049h\x1b[?25l";
constexpr const char* k_leave = "\x1b[?25h\x1b[?1049l";

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

int terminal_columns(int fd) {
    winsize ws{};
    if (::isatty(fd) != 1 || ::ioctl(fd, TIOCGWINSZ, &ws) != 0) {
        return 0;
    }
    return ws.ws_col;
}

bool wait_for_quit(int fd, DurationUs timeout_us, const std::atomic<bool>& stop) {
    const auto deadline = SystemClock().mono_now() + timeout_us;
    SystemClock clock;
    while (!stop.load()) {
        const std::int64_t left = deadline - clock.mono_now();
        if (left <= 0) {
            return false;
        }
        const int wait_ms = static_cast<int>(std::min<std::int64_t>(left / 1000 + 1, 100));
        if (fd < 0) {
            ::usleep(static_cast<useconds_t>(wait_ms) * 1000);
            continue;
        }
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, wait_ms) <= 0) {
            continue;
        }
        char c = 0;
        const ssize_t n = ::read(fd, &c, 1);
        if (n == 0 || (n == 1 && (c == 'q' || c == 'Q'))) {
            return true;
        }
    }
    return false;
}

void KeyWatchingClock::sleep_until(std::int64_t deadline, const std::atomic<bool>& stop) {
    if (wait_for_quit(m_fd, deadline - m_clock.mono_now(), stop)) {
        m_quit.store(true);
    }
}

} // namespace gua::live
