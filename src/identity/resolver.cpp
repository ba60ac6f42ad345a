// identity::Resolver: reads /proc/<pid>/{stat,status,loginuid,cgroup,cmdline} and caches the
// result.
#include "identity/resolver.hpp"

#include "identity/cgroup.hpp"
#include "identity/cmdline.hpp"
#include "identity/proc_file.hpp"

#include <array>
#include <cerrno>
#include <fcntl.h>
#include <linux/magic.h>
#include <string_view>
#include <sys/statfs.h>
#include <unistd.h>
#include <utility>

namespace gua::identity {
namespace {

constexpr std::size_t k_max_small_file = 64 * 1024;
// Kernel connection files usually come last on long command lines, so read argv generously.
constexpr std::size_t k_max_cmdline = 1024 * 1024;
// Open comm descriptors kept at most (one per cached process); beyond, lookups read stat.
constexpr std::size_t k_max_comm_fds = 512;

bool is_procfs(const std::string& path) {
    struct statfs fs {};
    return ::statfs(path.c_str(), &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

} // namespace

Resolver::CommFd& Resolver::CommFd::operator=(CommFd&& other) noexcept {
    if (this != &other) {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
        m_fd = std::exchange(other.m_fd, -1);
    }
    return *this;
}

Resolver::CommFd::~CommFd() {
    if (m_fd >= 0) {
        ::close(m_fd);
    }
}

bool Resolver::CommFd::names(const std::string& comm) const {
    std::array<char, 64> buffer{};
    ssize_t got = -1;
    do {
        got = ::pread(m_fd, buffer.data(), buffer.size(), 0);
    } while (got < 0 && errno == EINTR);
    if (got <= 0) {
        return false; // ESRCH: the process this descriptor names is gone
    }
    std::string_view text(buffer.data(), static_cast<std::size_t>(got));
    if (text.ends_with('\n')) {
        text.remove_suffix(1);
    }
    return text == comm;
}

Resolver::Resolver(std::string proc_root, std::uint32_t first_person_uid)
    : m_proc_root(std::move(proc_root)), m_procfs(is_procfs(m_proc_root)),
      m_first_person_uid(first_person_uid) {}

ProcessFacts Resolver::resolve(std::uint32_t pid) {
    auto it = m_cache.find(pid);
    if (it != m_cache.end() && it->second.comm.valid()) {
        if (it->second.comm.names(it->second.facts.identity.command)) {
            it->second.seen = true;
            return it->second.facts;
        }
        // Gone (even if its pid was reused within the same clock tick of start time, which the
        // start time cannot tell) or exec'd: resolve afresh.
        m_cache.erase(it);
        it = m_cache.end();
    }
    // Opened before stat is read, so it names this process or one that is already gone; it is
    // kept only if it still names the process resolved below.
    CommFd comm = open_comm(pid);
    const std::optional<ProcStat> stat = read_stat(pid);
    if (!stat) {
        m_cache.erase(pid);
        return ProcessFacts{};
    }
    // The same start time means the same process; a different comm means it exec'd another program
    // (e.g. a wrapper script that became python), which may have changed its argv and uid.
    if (it != m_cache.end() && it->second.facts.start_ticks == stat->start_ticks &&
        it->second.facts.identity.command == stat->comm) {
        it->second.seen = true;
        if (comm.valid() && comm.names(stat->comm)) {
            it->second.comm = std::move(comm);
        }
        return it->second.facts;
    }
    ProcessFacts facts = resolve_uncached(pid, *stat);
    if (facts.start_ticks) {
        Entry entry{facts, true, {}};
        if (comm.valid() && comm.names(facts.identity.command)) {
            entry.comm = std::move(comm);
        }
        m_cache.insert_or_assign(pid, std::move(entry));
    } else {
        m_cache.erase(pid);
    }
    return facts;
}

Resolver::CommFd Resolver::open_comm(std::uint32_t pid) const {
    if (!m_procfs || m_cache.size() >= k_max_comm_fds) {
        return CommFd{};
    }
    return CommFd{::open(pid_path(pid, "comm").c_str(), O_RDONLY | O_CLOEXEC)};
}

void Resolver::sweep() {
    std::erase_if(m_cache, [](const auto& item) { return !item.second.seen; });
    for (auto& [pid, entry] : m_cache) {
        entry.seen = false;
    }
    std::erase_if(m_names, [](const auto& item) { return !item.second.has_value(); });
}

std::optional<ProcStat> Resolver::read_stat(std::uint32_t pid) const {
    const Result<std::string> text = read_proc_file(pid_path(pid, "stat"), k_max_small_file);
    if (!text) {
        return std::nullopt;
    }
    Result<ProcStat> stat = parse_proc_stat(text.value());
    if (!stat) {
        return std::nullopt;
    }
    return std::move(stat).value();
}

// Reads each file independently: a file that cannot be read leaves its fields unknown. A final
// re-read of stat turns "the process exited or its pid was reused meanwhile" into unknown.
ProcessFacts Resolver::resolve_uncached(std::uint32_t pid, const ProcStat& stat) {
    telemetry::Identity identity;
    identity.command = stat.comm;
    if (const auto status = read_proc_file(pid_path(pid, "status"), k_max_small_file)) {
        if (const auto uid = parse_status_real_uid(status.value())) {
            identity.uid = uid.value();
        }
    }
    if (const auto login = read_proc_file(pid_path(pid, "loginuid"), k_max_small_file)) {
        identity.login_uid = parse_loginuid(login.value());
    }
    identity.user = user_for(attributed_uid(identity.uid, identity.login_uid, m_first_person_uid));
    if (const auto cgroup = read_proc_file(pid_path(pid, "cgroup"), k_max_small_file)) {
        CgroupFacts facts = parse_cgroup(cgroup.value());
        identity.container_id = std::move(facts.container_id);
        identity.pod_uid = std::move(facts.pod_uid);
        identity.slurm_job = std::move(facts.slurm_job);
        identity.systemd_unit = std::move(facts.systemd_unit);
    }
    if (const auto cmdline = read_proc_file(pid_path(pid, "cmdline"), k_max_cmdline)) {
        identity.jupyter_kernel = jupyter_kernel_id(split_cmdline(cmdline.value()));
    }
    const std::optional<ProcStat> again = read_stat(pid);
    if (!again || again->start_ticks != stat.start_ticks) {
        return ProcessFacts{};
    }
    return ProcessFacts{std::move(identity), stat.start_ticks};
}

std::string Resolver::user_for(std::optional<std::uint32_t> uid) {
    if (!uid) {
        return user_label(uid, std::nullopt);
    }
    auto it = m_names.find(*uid);
    if (it == m_names.end()) {
        it = m_names.emplace(*uid, passwd_name(*uid)).first;
    }
    return user_label(uid, it->second);
}

std::string Resolver::pid_path(std::uint32_t pid, const char* file) const {
    return m_proc_root + '/' + std::to_string(pid) + '/' + file;
}

} // namespace gua::identity
