// SPDX-License-Identifier: Apache-2.0
// Reading a holder's CPU time, resident memory and parent from /proc.
#include "live/proc_usage.hpp"

#include "identity/proc_file.hpp"
#include "identity/proc_stat.hpp"

#include <charconv>
#include <unistd.h>
#include <vector>

namespace gua::live {

namespace {

constexpr std::size_t k_max_proc_bytes = 8192;

std::optional<std::uint64_t> number(std::string_view token) {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    if (token.empty() || ec != std::errc{} || end != token.data() + token.size()) {
        return std::nullopt;
    }
    return v;
}

/// The fields after the comm's closing ')': field 3 (state) first.
std::vector<std::string_view> fields_after_comm(std::string_view stat) {
    std::vector<std::string_view> out;
    const std::size_t close = stat.rfind(')');
    if (close == std::string_view::npos) {
        return out;
    }
    std::string_view rest = stat.substr(close + 1);
    while (!rest.empty()) {
        const std::size_t start = rest.find_first_not_of(" \n");
        if (start == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(start);
        const std::size_t end = rest.find_first_of(" \n");
        out.push_back(rest.substr(0, end));
        rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    }
    return out;
}

std::optional<std::int64_t> vm_rss_kib(std::string_view status) {
    const std::size_t at = status.find("\nVmRSS:");
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    std::string_view line = status.substr(at + 7);
    line = line.substr(0, line.find('\n'));
    const std::size_t digits = line.find_first_of("0123456789");
    if (digits == std::string_view::npos) {
        return std::nullopt;
    }
    line.remove_prefix(digits);
    const std::optional<std::uint64_t> kib = number(line.substr(0, line.find(' ')));
    return kib ? std::optional<std::int64_t>(static_cast<std::int64_t>(*kib)) : std::nullopt;
}

} // namespace

std::optional<ProcSample> parse_stat_sample(std::string_view stat) {
    // Fields 3.. after the comm: ppid is field 4, utime 14, stime 15, starttime 22.
    const std::vector<std::string_view> f = fields_after_comm(stat);
    const std::size_t open = stat.find('(');
    if (f.size() < 20 || open == std::string_view::npos) {
        return std::nullopt;
    }
    const auto ppid = number(f[1]);
    const auto utime = number(f[11]);
    const auto stime = number(f[12]);
    const auto start = number(f[19]);
    if (!ppid || !utime || !stime || !start) {
        return std::nullopt;
    }
    ProcSample s;
    s.ppid = static_cast<std::uint32_t>(*ppid);
    s.cpu_ticks = *utime + *stime;
    s.start_ticks = *start;
    s.comm = std::string(stat.substr(open + 1, stat.rfind(')') - open - 1));
    return s;
}

std::optional<ProcSample> read_proc_sample(std::uint32_t pid, const std::string& proc_root) {
    const std::string dir = proc_root + "/" + std::to_string(pid);
    const Result<std::string> stat = identity::read_proc_file(dir + "/stat", k_max_proc_bytes);
    if (!stat) {
        return std::nullopt;
    }
    std::optional<ProcSample> s = parse_stat_sample(stat.value());
    const Result<std::string> status = identity::read_proc_file(dir + "/status", k_max_proc_bytes);
    if (s && status) {
        s->rss_kib = vm_rss_kib(status.value());
        if (const Result<std::uint32_t> uid = identity::parse_status_real_uid(status.value())) {
            s->uid = uid.value();
        }
    }
    return s;
}

void CpuMeter::measure(NowModel& model, std::int64_t mono_us) {
    static const double k_ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
    std::map<std::pair<std::uint32_t, std::uint64_t>, Seen> seen;
    model.host_columns = true;
    for (HolderNow& h : model.holders) {
        const std::optional<ProcSample> s = read_proc_sample(h.pid, m_root);
        if (!s || (h.start_ticks && *h.start_ticks != s->start_ticks)) {
            continue; // gone, or the pid now names another process
        }
        h.rss_kib = s->rss_kib;
        h.ppid = s->ppid;
        const auto key = std::make_pair(h.pid, s->start_ticks);
        const auto before = m_seen.find(key);
        if (before != m_seen.end() && mono_us > before->second.mono_us &&
            s->cpu_ticks >= before->second.cpu_ticks) {
            const double seconds = static_cast<double>(mono_us - before->second.mono_us) / 1e6;
            h.cpu_pct = 100.0 * static_cast<double>(s->cpu_ticks - before->second.cpu_ticks) /
                        k_ticks_per_second / seconds;
        }
        seen[key] = Seen{s->cpu_ticks, mono_us};
    }
    m_seen = std::move(seen);
}

} // namespace gua::live
