// SPDX-License-Identifier: Apache-2.0
// Digests and policy decisions as notices.
#include "notify/notices.hpp"

#include "core/duration.hpp"
#include "core/printable.hpp"
#include "policy/notify.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gua::notify {

namespace {

bool mailbox_name(const std::string& name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '.' || c == '_' || c == '+' || c == '-';
    });
}

nlohmann::json gpu_list(const std::vector<policy::GpuRef>& gpus, bool uuids) {
    nlohmann::json out = nlohmann::json::array();
    for (const policy::GpuRef& g : gpus) {
        if (uuids) {
            out.push_back(g.uuid);
        } else {
            out.push_back(g.index);
        }
    }
    return out;
}

} // namespace

std::string mail_address(const std::string& kind, const std::string& name,
                         const std::string& address, const std::string& domain) {
    if (!address.empty()) {
        return address;
    }
    if (kind == "user" && !domain.empty() && mailbox_name(name)) {
        return name + "@" + domain;
    }
    return "";
}

Notice digest_notice(const report::DigestMessage& m, const std::string& domain,
                     nlohmann::json figures) {
    Notice n;
    n.event = "digest";
    n.who = printable(m.kind + " " + m.name);
    n.address = mail_address(m.kind, m.name, m.address, domain);
    n.subject = m.subject;
    n.text = m.text;
    n.html = m.html;
    n.fields = {{"kind", m.kind},
                {"name", valid_utf8(m.name)},
                {"address", n.address},
                {"html", valid_utf8(m.html)},
                {"digest", std::move(figures)}};
    return n;
}

Notice policy_notice(const policy::Decision& d, const std::string& host,
                     const std::map<std::string, std::string>& recipients,
                     const std::string& domain) {
    const policy::Candidate& c = d.candidate;
    const telemetry::Identity& id = c.identity;
    const auto known = recipients.find(id.user);
    Notice n;
    n.event = "policy";
    n.who = printable(fmt::format("user {} (pid {})", id.user, c.process.pid));
    n.address =
        mail_address("user", id.user, known == recipients.end() ? "" : known->second, domain);
    std::string gpus;
    for (const policy::GpuRef& g : c.gpus) {
        gpus += (gpus.empty() ? "" : ",") + std::to_string(g.index);
    }
    n.subject =
        valid_utf8(fmt::format("gua: GPU {} on {} held idle for {} by your process {} ({})", gpus,
                               host, format_duration(c.idle_us), c.process.pid, id.command));
    n.text = valid_utf8(policy::decision_message(d)) + "\n";
    n.fields = {{"host", valid_utf8(host)},
                {"rule", valid_utf8(d.rule)},
                {"action", policy::to_string(d.action)},
                {"dry_run", d.dry_run},
                {"user", valid_utf8(id.user)},
                {"uid", id.uid ? nlohmann::json(*id.uid) : nlohmann::json(nullptr)},
                {"pid", c.process.pid},
                {"command", valid_utf8(id.command)},
                {"gpus", gpu_list(c.gpus, false)},
                {"gpu_uuids", gpu_list(c.gpus, true)},
                {"memory_mib", c.memory_mib ? nlohmann::json(*c.memory_mib) : nlohmann::json()},
                {"idle_seconds", c.idle_us / k_us_per_second},
                {"idle_since", format_iso8601(c.idle_since)},
                {"container", valid_utf8(id.container_id)},
                {"slurm_job", valid_utf8(id.slurm_job)},
                {"address", n.address}};
    return n;
}

} // namespace gua::notify
