// SPDX-License-Identifier: Apache-2.0
// Doctor: can the daemon carry out the policy actions the configuration asks for, with the
// credentials it actually has (the running daemon's, else those the unit or `gua start` gives)?
#include "ops/doctor.hpp"
#include "ops/service_credentials.hpp"
#include "ops/unit_file.hpp"
#include "policy/privileges.hpp"

#include <fmt/format.h>

#include <unistd.h>

namespace gua::ops {

namespace {

/// Whose credentials were checked, and where the fix goes.
struct Actor {
    std::string who; ///< e.g. "the running systemd service (pid 812, uid 998)"
    policy::Credentials creds;
    bool service = false;                         ///< gua.service is (or would be) the daemon
    std::optional<policy::Credentials> from_unit; ///< what the installed unit grants
};

std::optional<policy::Credentials>
installed_unit(const DoctorInputs& in, const Installation& installed, std::string& error) {
    if (!installed.unit_path || in.paths.scope != Scope::system) {
        return std::nullopt;
    }
    const UnitSettings unit = read_unit_settings(
        *installed.unit_path, in.paths.under_root("/etc/systemd/system/gua.service.d"));
    Result<policy::Credentials> c = unit_credentials(unit, in.paths);
    if (!c) {
        error = c.error().message;
        return std::nullopt;
    }
    return c.value();
}

Result<Actor> actor_of(const DoctorInputs& in, const Installation& installed) {
    Actor a;
    std::string unit_error;
    a.from_unit = installed_unit(in, installed, unit_error);
    if (installed.daemon) {
        Result<policy::Credentials> c =
            policy::read_credentials(fmt::format("/proc/{}/status", installed.daemon->pid));
        if (c) {
            a.creds = c.value();
            a.service = installed.mode == RunMode::service;
            a.who = fmt::format("the running {} (pid {}, uid {})", to_string(installed.mode),
                                installed.daemon->pid, a.creds.uid);
            return a;
        }
    }
    if (in.paths.scope == Scope::system && installed.systemd && installed.unit_path) {
        if (!a.from_unit) {
            return Error{unit_error};
        }
        a.creds = *a.from_unit;
        a.service = true;
        a.who = fmt::format("{} (uid {})", k_unit_name, a.creds.uid);
        return a;
    }
    if (in.paths.scope == Scope::system) {
        a.creds.effective_caps = ~std::uint64_t{0};
        a.who = "a background daemon started by `gua start` (root)";
        return a;
    }
    Result<policy::Credentials> self = policy::read_credentials("/proc/self/status");
    if (!self) {
        return self.error();
    }
    a.creds = self.value();
    a.who = fmt::format("your own daemon (uid {})", a.creds.uid);
    return a;
}

std::string fix_for(policy::Action action, const Actor& a, std::optional<std::uint32_t> tty_gid) {
    if (a.service && a.from_unit && !missing_privilege(action, *a.from_unit, tty_gid)) {
        return fmt::format("`sudo systemctl restart gua` (the unit grants {}; the running daemon "
                           "started before it did)",
                           policy::required_privilege(action));
    }
    if (a.service) {
        return action == policy::Action::terminate
                   ? "`sudo systemctl edit gua`, add AmbientCapabilities=CAP_KILL and "
                     "CapabilityBoundingSet=CAP_KILL under [Service] (as the packaged unit has), "
                     "then `sudo systemctl restart gua`"
                   : "`sudo systemctl edit gua`, add SupplementaryGroups=video tty under "
                     "[Service] (as the packaged unit has), then `sudo systemctl restart gua`";
    }
    if (a.creds.uid != 0) {
        return "run the daemon as the system service (`sudo gua start`), whose unit grants "
               "CAP_KILL and group tty";
    }
    return fmt::format("give the daemon {} (e.g. run it as root without a capability bounding "
                       "set), or use gua.service",
                       policy::required_privilege(action));
}

Finding action_finding(policy::Action action, const std::string& rules, bool acting, const Actor& a,
                       std::optional<std::uint32_t> tty_gid) {
    const std::string name = policy::to_string(action);
    Finding f{"policy_" + name, "policy " + name, Severity::ok, "", ""};
    const std::string what = action == policy::Action::terminate
                                 ? "signal other users' processes"
                                 : "write to other users' terminals";
    const std::optional<std::string> missing = policy::missing_privilege(action, a.creds, tty_gid);
    if (!missing) {
        f.message = fmt::format(
            "rule {} can {}: {} has {}{}", rules, what, a.who, policy::required_privilege(action),
            action == policy::Action::notify ? " (terminals set to `mesg n` are skipped)" : "");
        return f;
    }
    f.severity = acting ? Severity::fail : Severity::warn;
    f.message = fmt::format("rule {} cannot {}{}: {}: {}", rules, what,
                            acting ? "" : " once enabled and out of dry run", a.who, *missing);
    f.fix = fix_for(action, a, tty_gid);
    return f;
}

} // namespace

std::vector<Finding> check_policy(const DoctorInputs& in, const Installation& installed) {
    std::vector<Finding> out;
    if (!in.config) {
        return out;
    }
    const policy::PolicyConfig& config = in.config.value().policy;
    std::optional<Result<Actor>> actor;
    for (const policy::Action action : {policy::Action::notify, policy::Action::terminate}) {
        std::string rules;
        bool acting = false;
        for (const policy::Rule& r : config.rules) {
            if (r.action == action) {
                rules += (rules.empty() ? "" : ", ") + r.name;
                acting = acting || (config.enabled && !r.dry_run);
            }
        }
        if (rules.empty()) {
            continue;
        }
        if (!actor) {
            actor = actor_of(in, installed);
        }
        if (!actor->ok()) {
            out.push_back({"policy_" + std::string(policy::to_string(action)),
                           "policy " + std::string(policy::to_string(action)), Severity::warn,
                           "cannot tell the daemon's credentials: " + actor->error().message,
                           "fix the unit or the account files it names"});
            continue;
        }
        // A --root tree's own group file when it has one, else the group database.
        std::optional<std::uint32_t> tty_gid =
            in.paths.live() ? std::nullopt : group_gid(in.paths, "tty");
        if (!tty_gid) {
            tty_gid = policy::tty_group();
        }
        out.push_back(action_finding(action, rules, acting, actor->value(), tty_gid));
    }
    return out;
}

} // namespace gua::ops
