// SPDX-License-Identifier: Apache-2.0
// ProcessHandle refuses to signal a process whose uids are not (or no longer) the uid the decision
// was made for, re-read right before each signal.
#include "policy/process_handle.hpp"
#include "policy/support.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <unistd.h>

namespace gua::policy {
namespace process_uid_test { // named after the file: unique in a unity batch

using policy_test::Child;

TEST(ProcessHandleUid, OpensOnlyWhenAllUidsAreTheDecidedOne) {
    Child child({"/bin/sleep", "30"});
    ASSERT_GT(child.pid(), 0);
    const auto pid = static_cast<std::uint32_t>(child.pid());
    const std::optional<ProcState> state = read_proc_state("/proc", pid);
    ASSERT_TRUE(state);
    const audit::ProcessKey key{pid, state->start_ticks};
    const Result<ProcessHandle> other = ProcessHandle::open("/proc", key, ::getuid() + 1);
    ASSERT_TRUE(other) << other.error().message;
    const Result<void> same = other.value().uid_unchanged();
    ASSERT_FALSE(same);
    EXPECT_NE(same.error().message.find("uid changed"), std::string::npos) << same.error().message;
    const Result<void> refused = other.value().send(SIGTERM);
    ASSERT_FALSE(refused) << "never signalled under another uid";
    EXPECT_NE(refused.error().message.find("uid changed"), std::string::npos);
    const Result<ProcessHandle> mine = ProcessHandle::open("/proc", key, ::getuid());
    ASSERT_TRUE(mine) << mine.error().message;
    EXPECT_TRUE(mine.value().uid_unchanged());
    EXPECT_TRUE(ProcessHandle::open("/proc", key)) << "no uid given: not checked";
    EXPECT_TRUE(mine.value().send(SIGTERM));
    const std::optional<int> status = child.wait_exit(std::chrono::seconds(5));
    ASSERT_TRUE(status);
    EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGTERM);
}

} // namespace process_uid_test
} // namespace gua::policy
