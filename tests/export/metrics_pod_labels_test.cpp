// SPDX-License-Identifier: Apache-2.0
// export::Metrics: namespace, pod and container labels of the identity families — one series per
// named container, sanitized values, a bounded number of pod series, and their end after the pod.
#include "export/exposition_parse.hpp"
#include "export/metrics.hpp"
#include "export/ticks.hpp"

#include <gtest/gtest.h>

namespace gua::exporter {
namespace metrics_pod_labels_test { // named after the file: unique in a unity batch

using testing::card;
using testing::parse_exposition;
using testing::process;
using testing::who;

/// A process of `user` in container `container` of pod `ns`/`pod` (all names may be empty).
telemetry::ProcessTick in_pod(const std::string& user, const std::string& ns,
                              const std::string& pod, const std::string& container,
                              std::int64_t mem_mib, double sm_pct) {
    telemetry::ProcessTick p = process(user, mem_mib, sm_pct);
    p.identity.pod_uid = pod.empty() ? "" : "uid-of-" + pod;
    p.identity.container_id = container.empty() ? "" : std::string(64, 'a');
    p.identity.pod_namespace = ns;
    p.identity.pod_name = pod;
    p.identity.container_name = container;
    return p;
}

std::string labels(const std::string& user, const std::string& ns, const std::string& pod,
                   const std::string& container) {
    return "user=\"" + user + "\",namespace=\"" + ns + "\",pod=\"" + pod + "\",container=\"" +
           container + "\"";
}

double held(const std::map<std::string, double>& series, const std::string& who_labels) {
    const std::string key =
        "gua_identity_gpu_seconds_total{" + who_labels + ",state=\"idle_held\"}";
    return series.contains(key) ? series.at(key) : -1.0;
}

TEST(MetricsPodLabels, EachNamedContainerHasItsSeries) {
    Metrics m{MetricsOptions{}};
    telemetry::Tick t = testing::tick(0, 30);
    // Card 0 idle, held 3:1 by two containers of one pod; card 1 idle, held by a Docker
    // container (a container name without a pod) and by a process outside any container.
    t.cards.push_back(card(0, 30, 0,
                           {in_pod("root", "ml", "train-0", "trainer", 3000, 0),
                            in_pod("root", "ml", "train-0", "sidecar", 1000, 0)}));
    t.cards.push_back(
        card(1, 30, 0, {in_pod("alice", "", "", "llm-serve", 2048, 0), process("alice", 2048, 0)}));
    m.observe(t);
    const auto series = parse_exposition(m.render());
    EXPECT_DOUBLE_EQ(held(series, labels("root", "ml", "train-0", "trainer")), 22.5);
    EXPECT_DOUBLE_EQ(held(series, labels("root", "ml", "train-0", "sidecar")), 7.5);
    EXPECT_DOUBLE_EQ(held(series, labels("alice", "", "", "llm-serve")), 15);
    EXPECT_DOUBLE_EQ(held(series, who("alice")), 15);
    EXPECT_DOUBLE_EQ(series.at("gua_identity_card_ticks_total{" +
                               labels("root", "ml", "train-0", "trainer") + "}"),
                     1);
    EXPECT_EQ(m.pod_series(), 3u);
}

TEST(MetricsPodLabels, OddCharactersInNamesAreReplaced) {
    Metrics m{MetricsOptions{}};
    telemetry::Tick t = testing::tick(0, 10);
    t.cards.push_back(
        card(0, 10, 0, {in_pod("root", "ml team", "a\"b\nc\x1b[31m", "c\xff/d", 1000, 0)}));
    m.observe(t);
    const auto series = parse_exposition(m.render());
    EXPECT_DOUBLE_EQ(held(series, labels("root", "ml_team", "a_b_c__31m", "c__d")), 10);
    EXPECT_EQ(sanitize_name(""), "") << "not known stays empty";
    EXPECT_EQ(sanitize_name(std::string(300, 'p')).size(), 253u);
}

TEST(MetricsPodLabels, BeyondTheLimitPodsCountInTheUsersSeries) {
    MetricsOptions o;
    o.max_pod_series = 2;
    Metrics m(o);
    telemetry::Tick t = testing::tick(0, 10);
    t.cards.push_back(
        card(0, 10, 0,
             {in_pod("root", "ml", "p1", "c", 1000, 0), in_pod("root", "ml", "p2", "c", 1000, 0),
              in_pod("root", "ml", "p3", "c", 1000, 0), in_pod("root", "cv", "p4", "c", 1000, 0)}));
    m.observe(t);
    const auto series = parse_exposition(m.render());
    EXPECT_DOUBLE_EQ(held(series, labels("root", "ml", "p1", "c")), 2.5);
    EXPECT_DOUBLE_EQ(held(series, labels("root", "ml", "p2", "c")), 2.5);
    EXPECT_DOUBLE_EQ(held(series, labels("root", "ml", "p3", "c")), -1);
    EXPECT_DOUBLE_EQ(held(series, who("root")), 5) << "p3 and p4";
    EXPECT_EQ(m.pod_series(), 2u);
}

TEST(MetricsPodLabels, APodSeriesEndsAfterThePodIsGone) {
    MetricsOptions o;
    o.max_pod_series = 1;
    o.pod_series_ttl_us = 600 * k_us_per_second;
    Metrics m(o);
    telemetry::Tick first = testing::tick(0, 60);
    first.cards.push_back(card(0, 60, 0, {in_pod("root", "ml", "old", "c", 1000, 0)}));
    m.observe(first);
    // Ten minutes later the series is still there; one more minute and it has ended, so the
    // next pod gets the free slot.
    for (int k = 1; k <= 11; ++k) {
        telemetry::Tick t = testing::tick(k, 60);
        t.cards.push_back(card(0, 60, 0, {process("alice", 1000, 0)}));
        m.observe(t);
        const auto series = parse_exposition(m.render());
        EXPECT_EQ(held(series, labels("root", "ml", "old", "c")) == 60, k <= 10) << k;
    }
    telemetry::Tick next = testing::tick(12, 60);
    next.cards.push_back(card(0, 60, 0, {in_pod("root", "ml", "new", "c", 1000, 0)}));
    m.observe(next);
    const auto series = parse_exposition(m.render());
    EXPECT_DOUBLE_EQ(held(series, labels("root", "ml", "new", "c")), 60);
    EXPECT_DOUBLE_EQ(held(series, who("alice")), 11 * 60) << "series without a pod never end";
    EXPECT_EQ(m.pod_series(), 1u);
}

} // namespace metrics_pod_labels_test
} // namespace gua::exporter
