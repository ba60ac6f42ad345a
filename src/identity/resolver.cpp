// SPDX-License-Identifier: Apache-2.0
// identity::Resolver: reads /proc/<pid>/{stat,status,loginuid,cgroup,cmdline} and caches the
// result.
#include "identity/resolver.hpp"

#include "core/clock.hpp"
#include "identity/cgroup.hpp"
#include "identity/cmdline.hpp"
#include "identity/proc_file.hpp"

#include <array>
#include <cerrno>
#include <fcntl.h>
#include <linux/magic.h>
#include <string_view>
#include <sys/epoll.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <utility>

namespace gua::identity {
namespace {

constexpr std::size_t k_max_small_file = 64 * 1024;
// Kernel connection files usually come last on long command lines, so read argv generously.
constexpr std::size_t k_max_cmdline = 1024 * 1024;
constexpr int k_exit_batch = 64;

bool is_procfs(const std::string& path) {
    struct statfs fs {};
    return ::statfs(path.c_str(), &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

std::uint64_t epoll_key(std::uint32_t pid, int fd) {
    return (std::uint64_t{pid} << 32U) | static_cast<std::uint32_t>(fd);
}

} // namespace

bool Resolver::names(const UniqueFd& comm, const std::string& name) {
    if (!comm.valid()) {
        return false;
    }
    std::array<char, 64> buffer{};
    ssize_t got = -1;
    do {
        got = ::pread(comm.get(), buffer.data(), buffer.size(), 0);
    } while (got < 0 && errno == EINTR);
    if (got <= 0) {
        return false; // ESRCH: the process this descriptor names is gone
    }
    std::string_view text(buffer.data(), static_cast<std::size_t>(got));
    if (text.ends_with('\n')) {
        text.remove_suffix(1);
    }
    return text == name;
}

Resolver::Resolver(std::string proc_root, std::uint32_t first_person_uid,
                   std::int64_t exec_check_us, const NodePaths& node, std::int64_t names_retry_us)
    : m_proc_root(std::move(proc_root)), m_procfs(is_procfs(m_proc_root)),
      m_first_person_uid(first_person_uid), m_exec_check_us(exec_check_us),
      m_names_retry_us(names_retry_us), m_node_names(node) {
    if (m_procfs) {
        m_epoll = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
    }
}

void Resolver::reap_exited() {
    m_reaped = true;
    m_now_us = SystemClock().mono_now();
    collect_exits();
}

void Resolver::take_exits(std::vector<std::pair<std::uint32_t, std::uint64_t>>& out) {
    if (!watching()) {
        return;
    }
    // Level-triggered: an exited pidfd stays ready until collect_exits() forgets its entry, so
    // entries already reported are skipped.
    std::array<epoll_event, k_exit_batch> events{};
    const int n = ::epoll_wait(m_epoll.get(), events.data(), k_exit_batch, 0);
    for (int i = 0; i < n; ++i) {
        const std::uint64_t key = events[static_cast<std::size_t>(i)].data.u64;
        const auto it = m_cache.find(static_cast<std::uint32_t>(key >> 32U));
        if (it != m_cache.end() && epoll_key(it->first, it->second.pidfd.get()) == key &&
            !it->second.exit_taken && it->second.facts.start_ticks) {
            it->second.exit_taken = true;
            out.emplace_back(it->first, *it->second.facts.start_ticks);
        }
    }
}

void Resolver::collect_exits() {
    m_exits_noticed = true;
    if (!m_epoll.valid() || m_watched == 0) {
        return;
    }
    std::array<epoll_event, k_exit_batch> events{};
    int n = k_exit_batch;
    while (n == k_exit_batch) {
        n = ::epoll_wait(m_epoll.get(), events.data(), k_exit_batch, 0);
        for (int i = 0; i < n; ++i) {
            const std::uint64_t key = events[static_cast<std::size_t>(i)].data.u64;
            const auto it = m_cache.find(static_cast<std::uint32_t>(key >> 32U));
            if (it != m_cache.end() && epoll_key(it->first, it->second.pidfd.get()) == key) {
                forget(it);
            }
        }
    }
}

bool Resolver::hit(Entry& entry) {
    if (!entry.pidfd.valid()) {
        return names(entry.comm, entry.facts.identity.command);
    }
    // Alive: reap_exited() would have dropped the entry otherwise.
    if (m_now_us - entry.comm_read < m_exec_check_us) {
        return true;
    }
    entry.comm_read = m_now_us;
    return names(entry.comm, entry.facts.identity.command);
}

void Resolver::forget(std::unordered_map<std::uint32_t, Entry>::iterator it) {
    if (it->second.comm.valid()) {
        --m_watched;
    }
    m_cache.erase(it);
}

void Resolver::retry_names(Entry& entry) {
    // Names the budget skipped are looked up again in the next round, missing ones later.
    const bool next_round = entry.facts.names_deferred && entry.names_tried != m_now_us;
    if (!entry.names_tried || (!next_round && m_now_us - *entry.names_tried < m_names_retry_us)) {
        return;
    }
    telemetry::Identity& known = entry.facts.identity;
    telemetry::Identity found = known;
    const bool deferred = !m_node_names.name(found, m_now_us);
    if (deferred != entry.facts.names_deferred) {
        entry.facts.names_deferred = deferred;
        entry.facts.serial = ++m_serial;
    }
    // Only what was missing is taken, so a name once found stays.
    bool changed = false;
    for (auto member : {&telemetry::Identity::pod_namespace, &telemetry::Identity::pod_name,
                        &telemetry::Identity::container_name}) {
        if ((known.*member).empty() && !(found.*member).empty()) {
            known.*member = std::move(found.*member);
            changed = true;
        }
    }
    if (changed) {
        entry.facts.serial = ++m_serial;
    }
    entry.names_tried = names_missing(known) ? std::optional(m_now_us) : std::nullopt;
}

void Resolver::watch(std::uint32_t pid, Entry& entry, UniqueFd comm, UniqueFd pidfd) {
    if (!names(comm, entry.facts.identity.command)) {
        return;
    }
    entry.comm = std::move(comm);
    entry.comm_read = m_now_us;
    ++m_watched;
    if (pidfd.valid()) {
        epoll_event event{};
        event.events = EPOLLIN;
        event.data.u64 = epoll_key(pid, pidfd.get());
        if (::epoll_ctl(m_epoll.get(), EPOLL_CTL_ADD, pidfd.get(), &event) == 0) {
            entry.pidfd = std::move(pidfd);
        }
    }
}

const ProcessFacts& Resolver::resolve(std::uint32_t pid) {
    if (!m_reaped) {
        reap_exited();
    } else if (!m_exits_noticed) {
        collect_exits();
    }
    auto it = m_cache.find(pid);
    if (it != m_cache.end() && it->second.comm.valid()) {
        if (hit(it->second)) {
            it->second.seen = true;
            retry_names(it->second);
            return it->second.facts;
        }
        // Gone (even if its pid was reused within the same clock tick of start time, which the
        // start time cannot tell) or exec'd: resolve afresh.
        forget(it);
        it = m_cache.end();
    }
    if (it == m_cache.end()) {
        if (const auto a = m_absent.find(pid); a != m_absent.end()) {
            a->second.seen = true;
            if (SystemClock().mono_now() - a->second.checked_us < m_exec_check_us) {
                return m_unknown;
            }
        }
    }
    // Opened before stat is read, so they name this process or one that is already gone; they
    // are kept only if the comm still names the process resolved below.
    UniqueFd comm;
    UniqueFd pidfd;
    if (m_procfs && m_watched < k_max_watched) {
        comm = UniqueFd(::open(pid_path(pid, "comm").c_str(), O_RDONLY | O_CLOEXEC));
        if (comm.valid() && m_epoll.valid()) {
            pidfd = UniqueFd(open_pidfd(pid));
            if (!pidfd.valid() && (errno == ENOSYS || errno == EPERM)) {
                m_epoll = UniqueFd{}; // no pidfds here: every hit reads the comm file
            }
        }
    }
    const std::optional<ProcStat> stat = read_stat(pid);
    if (!stat) {
        if (it != m_cache.end()) {
            forget(it);
        }
        return absent(pid);
    }
    m_absent.erase(pid);
    // The same start time means the same process; a different comm means it exec'd another program
    // (e.g. a wrapper script that became python), which may have changed its argv and uid.
    if (it != m_cache.end() && it->second.facts.start_ticks == stat->start_ticks &&
        it->second.facts.identity.command == stat->comm) {
        it->second.seen = true;
        watch(pid, it->second, std::move(comm), std::move(pidfd));
        retry_names(it->second);
        return it->second.facts;
    }
    if (it != m_cache.end()) {
        forget(it);
    }
    ProcessFacts facts = resolve_uncached(pid, *stat);
    if (!facts.start_ticks) {
        return absent(pid);
    }
    facts.serial = ++m_serial;
    const std::optional<std::int64_t> names_tried =
        names_missing(facts.identity) ? std::optional(m_now_us) : std::nullopt;
    Entry& entry =
        m_cache.emplace(pid, Entry{std::move(facts), true, {}, {}, 0, names_tried}).first->second;
    watch(pid, entry, std::move(comm), std::move(pidfd));
    return entry.facts;
}

const ProcessFacts& Resolver::absent(std::uint32_t pid) {
    m_absent.insert_or_assign(pid, Absent{SystemClock().mono_now(), true});
    return m_unknown;
}

void Resolver::sweep() {
    for (auto it = m_cache.begin(); it != m_cache.end();) {
        if (it->second.seen) {
            it->second.seen = false;
            ++it;
        } else {
            forget(it++);
        }
    }
    for (auto it = m_absent.begin(); it != m_absent.end();) {
        if (it->second.seen) {
            it->second.seen = false;
            ++it;
        } else {
            it = m_absent.erase(it);
        }
    }
    m_reaped = false;
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
    bool names_deferred = false;
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
        // A container the user can claim is no container id (docs/security.md): only the name
        // their own store gives it.
        const std::string claimed = facts.user_claimed ? std::move(facts.container_id) : "";
        identity.container_id = facts.user_claimed ? "" : std::move(facts.container_id);
        identity.pod_uid = std::move(facts.pod_uid);
        identity.slurm_job = std::move(facts.slurm_job);
        identity.systemd_unit = std::move(facts.systemd_unit);
        names_deferred = !m_node_names.name(identity, m_now_us, claimed);
    }
    if (const auto cmdline = read_proc_file(pid_path(pid, "cmdline"), k_max_cmdline)) {
        identity.jupyter_kernel = jupyter_kernel_id(split_cmdline(cmdline.value()));
    }
    const std::optional<ProcStat> again = read_stat(pid);
    if (!again || again->start_ticks != stat.start_ticks) {
        return ProcessFacts{};
    }
    return ProcessFacts{std::move(identity), stat.start_ticks, 0, names_deferred};
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
