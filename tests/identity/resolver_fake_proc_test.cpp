// SPDX-License-Identifier: Apache-2.0
// identity::Resolver over a fake proc root: caching, pid reuse, sweeping, vanishing, sudo rule.
#include "identity/fake_proc.hpp"
#include "identity/resolver.hpp"

#include <gtest/gtest.h>

namespace gua::identity {
namespace resolver_fake_proc_test { // named after the file: unique in a unity batch

using testing::FakeProc;
using testing::FakeProcess;

const std::string k_cid = "3f1c2e9a8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e";

class IdentityFakeProc : public ::testing::Test {
  protected:
    void SetUp() override { ASSERT_FALSE(m_proc.root().empty()); }
    FakeProc m_proc;
    Resolver m_resolver{m_proc.root()};
};

TEST_F(IdentityFakeProc, ResolvesEveryField) {
    FakeProcess p;
    p.comm = "python3";
    p.start_ticks = 777;
    p.uid = "0";
    p.cgroup = "1:name=systemd:/kubepods/burstable/pod5ba4d5ae-1b2c-4d3e-9f80-123456789abc/" +
               k_cid + "\n0::/\n";
    p.cmdline = std::string("python3\0-m\0ipykernel_launcher\0-f\0/r/kernel-k1.json\0", 51);
    m_proc.write(4242, p);

    const ProcessFacts facts = m_resolver.resolve(4242);
    ASSERT_EQ(facts.start_ticks, 777u);
    telemetry::Identity want;
    want.user = "root";
    want.uid = 0;
    want.command = "python3";
    want.container_id = k_cid;
    want.pod_uid = "5ba4d5ae-1b2c-4d3e-9f80-123456789abc";
    want.jupyter_kernel = "k1";
    EXPECT_EQ(facts.identity, want);
}

TEST_F(IdentityFakeProc, PidReuseReResolves) {
    FakeProcess first;
    first.start_ticks = 1000;
    first.uid = "0";
    m_proc.write(99, first);
    EXPECT_EQ(m_resolver.resolve(99).identity.user, "root");

    FakeProcess second = first; // same pid and comm, a new process: new start time and owner
    second.start_ticks = 2000;
    second.uid = "54321";
    m_proc.write(99, second);
    const ProcessFacts facts = m_resolver.resolve(99);
    EXPECT_EQ(facts.start_ticks, 2000u);
    EXPECT_EQ(facts.identity.user, "uid:54321");
    EXPECT_EQ(facts.identity.uid, 54321u);
    EXPECT_EQ(m_resolver.cached_count(), 1u);
}

TEST_F(IdentityFakeProc, CacheHitReadsOnlyStat) {
    FakeProcess p;
    p.uid = "0";
    m_proc.write(7, p);
    EXPECT_EQ(m_resolver.resolve(7).identity.user, "root");
    // Same process (same start time and comm): the other files are not read again.
    m_proc.remove_file(7, "status");
    m_proc.remove_file(7, "cgroup");
    m_proc.remove_file(7, "cmdline");
    EXPECT_EQ(m_resolver.resolve(7).identity.user, "root");
    EXPECT_EQ(m_resolver.resolve(7).identity.systemd_unit, "session-3.scope");
}

TEST_F(IdentityFakeProc, ExecOfAnotherProgramReResolves) {
    FakeProcess p;
    p.comm = "bash";
    p.cmdline = std::string("bash\0run.sh\0", 12);
    m_proc.write(8, p);
    EXPECT_EQ(m_resolver.resolve(8).identity.jupyter_kernel, "");
    p.comm = "python3";
    p.cmdline = std::string("python3\0-m\0ipykernel\0-f\0kernel-abc.json\0", 40);
    m_proc.write(8, p);
    const ProcessFacts facts = m_resolver.resolve(8);
    EXPECT_EQ(facts.identity.command, "python3");
    EXPECT_EQ(facts.identity.jupyter_kernel, "abc");
}

TEST_F(IdentityFakeProc, SweepDropsEntriesNotSeenSinceLastSweep) {
    m_proc.write(1, FakeProcess{});
    m_proc.write(2, FakeProcess{});
    m_resolver.resolve(1);
    m_resolver.resolve(2);
    EXPECT_EQ(m_resolver.cached_count(), 2u);
    m_resolver.sweep(); // both seen during this tick
    EXPECT_EQ(m_resolver.cached_count(), 2u);
    m_resolver.resolve(1);
    m_resolver.sweep(); // 2 was not seen during this tick
    EXPECT_EQ(m_resolver.cached_count(), 1u);
    m_resolver.sweep(); // nor 1
    EXPECT_EQ(m_resolver.cached_count(), 0u);

    // Once swept, a lookup reads the files afresh.
    FakeProcess changed;
    changed.uid = "0";
    m_proc.write(1, changed);
    EXPECT_EQ(m_resolver.resolve(1).identity.user, "root");
}

TEST_F(IdentityFakeProc, VanishedPidIsUnknown) {
    const ProcessFacts missing = m_resolver.resolve(31337);
    EXPECT_EQ(missing.identity, telemetry::unknown_identity());
    EXPECT_EQ(missing.identity.user, "unknown");
    EXPECT_EQ(missing.start_ticks, std::nullopt);

    m_proc.write(5, FakeProcess{});
    EXPECT_TRUE(m_resolver.resolve(5).start_ticks.has_value());
    m_proc.remove(5);
    EXPECT_EQ(m_resolver.resolve(5).identity, telemetry::unknown_identity());
    EXPECT_EQ(m_resolver.cached_count(), 0u);
}

// A pid the driver lists but /proc does not show (exited, or in another pid namespace) is not
// looked for on every lookup: only once the check period has passed since the last attempt.
TEST_F(IdentityFakeProc, APidNotFoundIsLookedForAgainOnlyAfterTheCheckPeriod) {
    Resolver slow(m_proc.root(), k_first_person_uid, 3'600'000'000);
    EXPECT_EQ(slow.resolve(7).identity, telemetry::unknown_identity());
    EXPECT_EQ(slow.absent_count(), 1u);
    m_proc.write(7, FakeProcess{});
    EXPECT_EQ(slow.resolve(7).identity, telemetry::unknown_identity()) << "within the period";
    slow.sweep();
    EXPECT_EQ(slow.resolve(7).identity, telemetry::unknown_identity()) << "a sweep keeps it";

    Resolver eager(m_proc.root(), k_first_person_uid, 0);
    EXPECT_EQ(eager.resolve(8).identity, telemetry::unknown_identity());
    m_proc.write(8, FakeProcess{});
    EXPECT_EQ(eager.resolve(8).identity.command, "python3");
    EXPECT_EQ(eager.absent_count(), 0u) << "found: no longer remembered as absent";
}

TEST_F(IdentityFakeProc, SweepForgetsPidsNotFoundThatAreNoLongerLookedUp) {
    EXPECT_EQ(m_resolver.resolve(9).identity, telemetry::unknown_identity());
    EXPECT_EQ(m_resolver.resolve(10).identity, telemetry::unknown_identity());
    m_resolver.sweep();
    EXPECT_EQ(m_resolver.absent_count(), 2u);
    m_resolver.resolve(9);
    m_resolver.sweep();
    EXPECT_EQ(m_resolver.absent_count(), 1u) << "10 was not looked up in the last round";
    m_resolver.sweep();
    EXPECT_EQ(m_resolver.absent_count(), 0u);
}

TEST_F(IdentityFakeProc, MalformedStatIsUnknown) {
    m_proc.write(6, FakeProcess{});
    m_proc.write_file(6, "stat", "6 (broken");
    EXPECT_EQ(m_resolver.resolve(6).identity, telemetry::unknown_identity());
}

TEST_F(IdentityFakeProc, MissingFilesLeaveFieldsEmpty) {
    FakeProcess p;
    p.comm = "sleep";
    m_proc.write(9, p);
    m_proc.remove_file(9, "status");
    m_proc.remove_file(9, "loginuid"); // kernels without CONFIG_AUDIT have no loginuid
    m_proc.remove_file(9, "cgroup");
    const ProcessFacts facts = m_resolver.resolve(9);
    EXPECT_EQ(facts.start_ticks, 1000u);
    EXPECT_EQ(facts.identity.user, "unknown");
    EXPECT_EQ(facts.identity.uid, std::nullopt);
    EXPECT_EQ(facts.identity.command, "sleep");
    EXPECT_EQ(facts.identity.systemd_unit, "");
}

TEST_F(IdentityFakeProc, SudoIsAttributedToTheLoginUser) {
    FakeProcess p;
    p.uid = "0";
    p.loginuid = "65534"; // any uid ≥ 1000 with a passwd entry on every Debian host
    m_proc.write(11, p);
    const ProcessFacts facts = m_resolver.resolve(11);
    EXPECT_EQ(facts.identity.uid, 0u);
    EXPECT_EQ(facts.identity.login_uid, 65534u);
    EXPECT_EQ(facts.identity.user, "nobody");

    p.loginuid = "54321";
    p.start_ticks = 1001;
    m_proc.write(11, p);
    EXPECT_EQ(m_resolver.resolve(11).identity.user, "uid:54321");
}

TEST_F(IdentityFakeProc, LoginUidWhenStatusUnreadable) {
    FakeProcess p;
    p.loginuid = "0";
    m_proc.write(12, p);
    m_proc.remove_file(12, "status");
    const ProcessFacts facts = m_resolver.resolve(12);
    EXPECT_EQ(facts.identity.uid, std::nullopt);
    EXPECT_EQ(facts.identity.login_uid, 0u);
    EXPECT_EQ(facts.identity.user, "root");
}

} // namespace resolver_fake_proc_test
} // namespace gua::identity
