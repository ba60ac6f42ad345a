// SPDX-License-Identifier: Apache-2.0
// [report] group_by = "namespace": §4 and §7 group identities by the Kubernetes namespace of their
// pod, with every identity outside a named pod as "(no namespace)".
#include "report/build.hpp"
#include "store/schema.hpp"
#include "store/writer.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

namespace gua::report {
namespace group_by_namespace_test { // named after the file: unique in a unity batch

constexpr TimeUs k_start = 1777593600LL * k_us_per_second;
constexpr int k_ticks = 4;
constexpr DurationUs k_tick_us = 30 * k_us_per_second;

telemetry::ProcessTick holder(std::uint32_t pid, const std::string& user, std::int64_t mib,
                              const std::string& ns, const std::string& pod) {
    telemetry::ProcessTick p;
    p.pid = pid;
    p.start_ticks = pid * 10;
    p.identity.user = user;
    p.identity.command = "python3";
    if (!pod.empty()) {
        p.identity.pod_uid = "uid-" + pod;
        p.identity.pod_namespace = ns;
        p.identity.pod_name = ns.empty() ? "" : pod;
    }
    p.mem_used_mib = mib;
    p.sm_util_pct = 0;
    return p;
}

telemetry::CardTickRecord idle_card(int index, std::vector<telemetry::ProcessTick> holders) {
    telemetry::CardTickRecord c;
    c.device =
        telemetry::DeviceInfo{"GPU-" + std::to_string(index), index, "NVIDIA H100", 81920, "", ""};
    c.util_source = telemetry::UtilSource::samples;
    c.util_pct = 0;
    c.active_us = 0;
    c.bucket_us = {k_tick_us, 0, 0, 0};
    c.processes = std::move(holders);
    return c;
}

TEST(GroupByNamespace, IdentitiesByTheirPodsNamespace) {
    test::TempDir dir;
    const std::string path = dir.file("gua.db");
    {
        store::Database db(path, store::OpenMode::create);
        store::migrate(db);
        store::Writer w(db, store::RunInfo{"h", "d", "nvml", k_tick_us, 10.0, k_start});
        for (int k = 0; k < k_ticks; ++k) {
            telemetry::Tick t;
            t.t0 = k_start + k * k_tick_us;
            t.duration_us = k_tick_us;
            // Card 0: two pods of namespace ml (3:1 of the held memory). Card 1: alice outside
            // any pod and a pod the node did not name (uid only), 1:1.
            t.cards.push_back(idle_card(0, {holder(11, "root", 3000, "ml", "train-0"),
                                            holder(12, "root", 1000, "ml", "train-1")}));
            t.cards.push_back(idle_card(
                1, {holder(21, "alice", 2048, "", ""), holder(22, "root", 2048, "", "unnamed")}));
            w.write(t);
        }
        w.finish(k_start + k_ticks * k_tick_us);
    }
    BuildOptions o;
    o.from = k_start;
    o.to = k_start + k_ticks * k_tick_us;
    o.window_label = "test";
    o.grouping.by = audit::GroupBy::pod_namespace;
    store::Database db(path, store::OpenMode::read_only);
    const ReportModel m = build_report(db, o, TimeZone::load("UTC").value());
    const double card_hours = static_cast<double>(k_ticks * k_tick_us) / k_us_per_hour;
    ASSERT_EQ(m.identities.size(), 2U);
    std::map<std::string, double> held;
    for (const IdentityRow& r : m.identities) {
        held[r.name] = r.idle_held_hours;
        EXPECT_DOUBLE_EQ(r.active_hours, 0) << r.name;
    }
    EXPECT_NEAR(held.at("ml"), card_hours, 1e-9) << "both pods of card 0";
    EXPECT_NEAR(held.at("(no namespace)"), card_hours, 1e-9) << "alice and the unnamed pod";
    ASSERT_EQ(m.cost.identities.size(), 2U);
    EXPECT_EQ(m.cost.identities[0].name, m.identities[0].name);

    o.grouping.by = audit::GroupBy::user; // the same file by user: root spans both cards
    const ReportModel by_user = build_report(db, o, TimeZone::load("UTC").value());
    std::map<std::string, double> user_held;
    for (const IdentityRow& r : by_user.identities) {
        user_held[r.name] = r.idle_held_hours;
    }
    EXPECT_NEAR(user_held.at("root"), 1.5 * card_hours, 1e-9);
    EXPECT_NEAR(user_held.at("alice"), 0.5 * card_hours, 1e-9);
}

} // namespace group_by_namespace_test
} // namespace gua::report
