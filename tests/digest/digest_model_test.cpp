// SPDX-License-Identifier: Apache-2.0
// The digest's figures taken from hand-made report models: stretches of the card timelines,
// the trend's percentage, the one recommendation naming the recipient.
#include "report/digest.hpp"

#include <gtest/gtest.h>

namespace gua::report::digest_model_test {

constexpr TimeUs k_h = k_us_per_hour;

TimelineSpan span(TimeUs from, TimeUs to, double idle_held) {
    TimelineSpan s;
    s.from = from;
    s.to = to;
    s.idle_held_hours = idle_held;
    return s;
}

ReportModel with_timeline() {
    ReportModel m;
    m.host = "node1";
    m.gpus.resize(2);
    m.gpus[0].model = "NVIDIA A";
    m.gpus[1].model = "NVIDIA B";
    m.timeline.gpus = {GpuTimeline{0,
                                   {span(0, k_h, 0.5), span(k_h, 2 * k_h, 1.0),
                                    span(2 * k_h, 3 * k_h, 0), span(3 * k_h, 4 * k_h, 0.2)}},
                       GpuTimeline{3, {span(0, k_h, 0.9), span(2 * k_h, 3 * k_h, 0.9)}}};
    return m;
}

TEST(DigestModel, WorstSessionsJoinBackToBackBucketsOnly) {
    const std::vector<DigestSession> s = worst_sessions(with_timeline(), 10);
    ASSERT_EQ(s.size(), 4u);
    EXPECT_EQ(s[0].gpu, 0);
    EXPECT_EQ(s[0].model, "NVIDIA A");
    EXPECT_EQ(s[0].host, "node1");
    EXPECT_EQ(s[0].from, 0);
    EXPECT_EQ(s[0].to, 2 * k_h);
    EXPECT_DOUBLE_EQ(s[0].idle_held_hours, 1.5);
    // Card 3's two buckets are an hour apart: two stretches, in time order at equal hours.
    EXPECT_EQ(s[1].gpu, 3);
    EXPECT_EQ(s[1].to, k_h);
    EXPECT_EQ(s[2].gpu, 3);
    EXPECT_EQ(s[2].from, 2 * k_h);
    EXPECT_DOUBLE_EQ(s[3].idle_held_hours, 0.2);
    EXPECT_EQ(worst_sessions(with_timeline(), 2).size(), 2u);
}

TEST(DigestModel, TrendPercentNeedsAPreviousFigure) {
    const DigestTrend up{15, 10};
    const DigestTrend gone{0, 4};
    const DigestTrend fresh{3, 0};
    EXPECT_DOUBLE_EQ(*up.change_pct(), 50.0);
    EXPECT_DOUBLE_EQ(up.change(), 5.0);
    EXPECT_DOUBLE_EQ(*gone.change_pct(), -100.0);
    EXPECT_FALSE(fresh.change_pct());
}

TEST(DigestModel, IdentityFiguresAndTheRecommendationNamingThem) {
    ReportModel now;
    now.identities = {IdentityRow{"alice", 5, 3, 2, 0.4, 0, 1},
                      IdentityRow{"bob", 1, 1, 0, 0, 0, 1}};
    now.cost.identities = {IdentityCostRow{"alice", 600, 400}};
    audit::Recommendation general;
    general.id = "idle-culling";
    general.identities = {"bob"};
    audit::Recommendation mine;
    mine.id = "right-size";
    mine.identities = {"carol", "alice"};
    mine.addressed_gpu_hours = 2;
    now.advice.recommendations = {general, mine};
    ReportModel before;
    before.identities = {IdentityRow{"alice", 4, 4, 0, 0, 0, 1}};

    const std::optional<DigestFigures> f = identity_digest(now, before, "user", "alice", nullptr);
    ASSERT_TRUE(f);
    EXPECT_DOUBLE_EQ(f->active_hours, 3);
    EXPECT_DOUBLE_EQ(f->idle_held_hours, 2);
    EXPECT_EQ(f->active_cents, 600);
    EXPECT_EQ(f->idle_held_cents, 400);
    EXPECT_FALSE(f->allocated_unused_hours) << "no allocation section";
    EXPECT_DOUBLE_EQ(f->gpu_hours.previous, 4);
    EXPECT_DOUBLE_EQ(*f->gpu_hours.change_pct(), 25.0);
    EXPECT_DOUBLE_EQ(f->idle_held_trend.previous, 0.0);
    EXPECT_FALSE(f->idle_held_trend.change_pct());
    ASSERT_TRUE(f->advice);
    EXPECT_EQ(f->advice->id, "right-size");

    const std::optional<DigestFigures> bob = identity_digest(now, before, "user", "bob", nullptr);
    ASSERT_TRUE(bob);
    EXPECT_DOUBLE_EQ(bob->gpu_hours.previous, 0) << "absent the week before";
    EXPECT_EQ(bob->advice->id, "idle-culling");
    EXPECT_FALSE(identity_digest(now, before, "user", "dave", nullptr));
    EXPECT_EQ(admin_digest(now, before).advice->id, "idle-culling");
}

TEST(DigestModel, NamesAreEscapedInTheHtmlBody) {
    ReportModel now;
    now.identities = {IdentityRow{"<b>x</b>", 1, 0, 1, 1, 0, 1}};
    const std::optional<DigestFigures> f = identity_digest(now, now, "user", "<b>x</b>", nullptr);
    ASSERT_TRUE(f);
    const DigestMessage m = digest_message(*f, "x@example.org");
    EXPECT_EQ(m.html.find("<b>x"), std::string::npos);
    EXPECT_NE(m.html.find("&lt;b&gt;x"), std::string::npos);
    EXPECT_EQ(m.subject.find('\n'), std::string::npos);
    EXPECT_NE(m.text.find("1.00 GPU-hours"), std::string::npos);
}

} // namespace gua::report::digest_model_test
