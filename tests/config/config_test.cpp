// SPDX-License-Identifier: Apache-2.0
// gua.toml: a full valid file, and every invalid key or type → "file:line: key: what".
#include "config/config.hpp"
#include "core/timezone.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace gua::config {
namespace {

using ::testing::HasSubstr;

constexpr const char* k_full = R"toml(# every key
[thresholds]
active_util_pct = 15
held_mib = 256
graphics_is_holder = true

[daemon]
interval = "10s"
db = "/tmp/gua.db"
listen = "0.0.0.0:10409"

[pricing]
currency = "EUR"
default = 1.25
spot_discount = 0.65

[pricing.models]
"H100 NVL" = 5.10
H100 = 4
A100 = 2.00
L40S = 1.10
L4 = 0.5

[report]
group_by = "team"

[teams]
alice = "vision"
bob = "speech"
)toml";

TEST(Config, FullFileParses) {
    const Result<Config> r = parse_config(k_full, "gua.toml");
    ASSERT_TRUE(r) << r.error().message;
    const Config& c = r.value();
    EXPECT_DOUBLE_EQ(c.thresholds.active_util_pct, 15.0);
    EXPECT_EQ(c.thresholds.held_mib, 256);
    EXPECT_TRUE(c.thresholds.graphics_is_holder);
    EXPECT_EQ(c.interval_us, 10 * k_us_per_second);
    EXPECT_EQ(c.listen, "0.0.0.0:10409");
    EXPECT_TRUE(c.pricing.configured);
    EXPECT_EQ(c.pricing.currency, "EUR");
    EXPECT_EQ(c.pricing.default_micros_per_gpu_hour, 1'250'000);
    EXPECT_DOUBLE_EQ(c.pricing.spot_discount, 0.65);
    ASSERT_EQ(c.pricing.models.size(), 5u);
    // File order, not toml++'s sorted key order: "H100 NVL" must win over "H100".
    EXPECT_EQ(c.pricing.models[0].match, "H100 NVL");
    EXPECT_EQ(c.pricing.models[0].micros_per_gpu_hour, 5'100'000);
    EXPECT_EQ(c.pricing.models[1].match, "H100");
    EXPECT_EQ(c.pricing.models[1].micros_per_gpu_hour, 4'000'000);
    EXPECT_EQ(c.pricing.models[4].match, "L4");
    EXPECT_EQ(audit::price_micros(c.pricing, "NVIDIA H100 NVL"), 5'100'000);
    EXPECT_EQ(audit::price_micros(c.pricing, "NVIDIA H100 80GB HBM3"), 4'000'000);
    // Substrings: "L4" also matches "L40S", so L40S is listed first.
    EXPECT_EQ(audit::price_micros(c.pricing, "NVIDIA L40S"), 1'100'000);
    EXPECT_EQ(audit::price_micros(c.pricing, "NVIDIA L4"), 500'000);
    EXPECT_EQ(audit::price_micros(c.pricing, "Tesla T4"), 1'250'000);
    EXPECT_EQ(c.grouping.by, audit::GroupBy::team);
    EXPECT_EQ(c.grouping.group_of("alice"), "vision");
    EXPECT_EQ(c.grouping.group_of("carol"), "(no team)");
}

TEST(Config, EmptyFileKeepsTheBuiltInExamplePrices) {
    const Result<Config> r = parse_config("", "gua.toml");
    ASSERT_TRUE(r);
    EXPECT_FALSE(r.value().pricing.configured);
    EXPECT_EQ(r.value().pricing.models.size(), 2u);
    EXPECT_EQ(r.value().grouping.group_of("alice"), "alice");
}

TEST(Config, GroupByNamespaceGroupsByThePodsNamespace) {
    const Result<Config> r = parse_config("[report]\ngroup_by = \"namespace\"\n", "gua.toml");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r.value().grouping.by, audit::GroupBy::pod_namespace);
    telemetry::Identity pod;
    pod.user = "root";
    pod.pod_uid = "0c1d2e3f-4a5b-4c6d-8e7f-0123456789ab";
    pod.pod_namespace = "ml";
    EXPECT_EQ(r.value().grouping.group_of(pod), "ml");
    pod.pod_namespace.clear(); // a pod the node did not name
    EXPECT_EQ(r.value().grouping.group_of(pod), "(no namespace)");
    telemetry::Identity alice;
    alice.user = "alice";
    EXPECT_EQ(r.value().grouping.group_of(alice), "(no namespace)");
}

TEST(Config, ReportTimeZoneDefaultsToUtc) {
    EXPECT_EQ(parse_config("", "gua.toml").value().time_zone, "UTC");
    if (!TimeZone::load("Europe/Berlin")) {
        GTEST_SKIP() << "no tz database";
    }
    const Result<Config> r = parse_config("[report]\ntime_zone = \"Europe/Berlin\"\n", "gua.toml");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r.value().time_zone, "Europe/Berlin");
}

TEST(Config, EnergyPriceAndCarbonIntensityAreOptional) {
    const Result<Config> none = parse_config("", "gua.toml");
    ASSERT_TRUE(none);
    EXPECT_EQ(none.value().energy, audit::EnergyPricing{});
    const Result<Config> r =
        parse_config("[energy]\nprice_per_kwh = 0.155\ngrams_co2_per_kwh = 350\n", "gua.toml");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r.value().energy.micros_per_kwh, 155'000);
    EXPECT_EQ(r.value().energy.grams_co2_per_kwh, 350.0);
    const Result<Config> price_only = parse_config("[energy]\nprice_per_kwh = 0\n", "gua.toml");
    ASSERT_TRUE(price_only);
    EXPECT_EQ(price_only.value().energy.micros_per_kwh, 0);
    EXPECT_EQ(price_only.value().energy.grams_co2_per_kwh, std::nullopt);
    EXPECT_EQ(none.value().health.light_power_pct, 30);
    const Result<Config> light = parse_config("[health]\nlight_power_pct = 25\n", "gua.toml");
    ASSERT_TRUE(light) << light.error().message;
    EXPECT_EQ(light.value().health.light_power_pct, 25);
}

TEST(Config, PricingWithoutModelsUsesTheDefaultForEveryCard) {
    const Result<Config> r = parse_config("[pricing]\ndefault = 3.3\n", "gua.toml");
    ASSERT_TRUE(r);
    EXPECT_TRUE(r.value().pricing.models.empty());
    EXPECT_EQ(audit::price_micros(r.value().pricing, "NVIDIA H100 80GB HBM3"), 3'300'000);
}

struct Bad {
    const char* text;
    const char* message; ///< the whole expected message
};

class ConfigError : public ::testing::TestWithParam<Bad> {};

TEST_P(ConfigError, NamesFileLineAndKey) {
    const Result<Config> r = parse_config(GetParam().text, "/etc/gua/gua.toml");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Config, ConfigError,
    ::testing::Values(
        Bad{"[pricing]\n\ncurrency = \"usd\"\n",
            "/etc/gua/gua.toml:3: pricing.currency: expected an ISO 4217 code such as \"USD\""},
        Bad{"[pricing]\ncurrency = 840\n",
            "/etc/gua/gua.toml:2: pricing.currency: expected an ISO 4217 code such as \"USD\""},
        Bad{"[pricing]\ndefault = \"2.00\"\n",
            "/etc/gua/gua.toml:2: pricing.default: expected a price per GPU-hour from 0 to 1000, "
            "e.g. 2.50"},
        Bad{"[pricing]\ndefault = -1\n",
            "/etc/gua/gua.toml:2: pricing.default: expected a price per GPU-hour from 0 to 1000, "
            "e.g. 2.50"},
        Bad{"[pricing]\ndefault = 1001\n",
            "/etc/gua/gua.toml:2: pricing.default: expected a price per GPU-hour from 0 to 1000, "
            "e.g. 2.50"},
        Bad{"[pricing]\nspot_discount = 1.0\n",
            "/etc/gua/gua.toml:2: pricing.spot_discount: expected a fraction from 0 up to (not "
            "including) 1, e.g. 0.6 for 60 % off"},
        Bad{"[pricing]\nspot_discount = \"60%\"\n",
            "/etc/gua/gua.toml:2: pricing.spot_discount: expected a fraction from 0 up to (not "
            "including) 1, e.g. 0.6 for 60 % off"},
        Bad{"[pricing]\nspot = 0.6\n", "/etc/gua/gua.toml:2: pricing.spot: unknown key"},
        Bad{"[pricing]\nmodels = [\"H100\"]\n",
            "/etc/gua/gua.toml:2: pricing.models: expected a table of model-name substrings and "
            "prices, e.g. \"H100\" = 4.00"},
        Bad{"[pricing.models]\nH100 = 4.0\nA100 = \"cheap\"\n",
            "/etc/gua/gua.toml:3: pricing.models.A100: expected a price per GPU-hour from 0 to "
            "1000, e.g. 2.50"},
        Bad{"[pricing.models]\n\"\" = 4.0\n",
            "/etc/gua/gua.toml:2: pricing.models.: expected a non-empty model-name substring"},
        Bad{"pricing = 3\n", "/etc/gua/gua.toml:1: pricing: expected a table"},
        Bad{"[energy]\nprice_per_kwh = -0.1\n",
            "/etc/gua/gua.toml:2: energy.price_per_kwh: expected a price per kWh from 0 to 100 in "
            "the [pricing] currency, e.g. 0.15"},
        Bad{"[energy]\nprice_per_kwh = \"cheap\"\n",
            "/etc/gua/gua.toml:2: energy.price_per_kwh: expected a price per kWh from 0 to 100 in "
            "the [pricing] currency, e.g. 0.15"},
        Bad{"[energy]\nprice_per_kwh = 100.5\n",
            "/etc/gua/gua.toml:2: energy.price_per_kwh: expected a price per kWh from 0 to 100 in "
            "the [pricing] currency, e.g. 0.15"},
        Bad{"[energy]\ngrams_co2_per_kwh = 2500\n",
            "/etc/gua/gua.toml:2: energy.grams_co2_per_kwh: expected grams of CO2 per kWh from 0 "
            "to 2000, e.g. 350"},
        Bad{"[energy]\ngrams_co2_per_kwh = nan\n",
            "/etc/gua/gua.toml:2: energy.grams_co2_per_kwh: expected grams of CO2 per kWh from 0 "
            "to 2000, e.g. 350"},
        Bad{"[energy]\nco2 = 300\n", "/etc/gua/gua.toml:2: energy.co2: unknown key"},
        Bad{"energy = 0.15\n", "/etc/gua/gua.toml:1: energy: expected a table"},
        Bad{"[health]\nlight_power_pct = 33\n",
            "/etc/gua/gua.toml:2: health.light_power_pct: expected a whole percentage of the "
            "power limit, a multiple of 5 from 5 to 95, e.g. 30"},
        Bad{"[health]\nlight_power_pct = 0.3\n",
            "/etc/gua/gua.toml:2: health.light_power_pct: expected a whole percentage of the "
            "power limit, a multiple of 5 from 5 to 95, e.g. 30"},
        Bad{"[health]\nlight_power_pct = 100\n",
            "/etc/gua/gua.toml:2: health.light_power_pct: expected a whole percentage of the "
            "power limit, a multiple of 5 from 5 to 95, e.g. 30"},
        Bad{"[report]\ngroup_by = \"department\"\n",
            "/etc/gua/gua.toml:2: report.group_by: expected \"user\", \"team\" or "
            "\"namespace\""},
        Bad{"[report]\ngroup = \"team\"\n", "/etc/gua/gua.toml:2: report.group: unknown key"},
        Bad{"[report]\ntime_zone = \"Mars/Base\"\n",
            "/etc/gua/gua.toml:2: report.time_zone: expected UTC, local, or an IANA time zone "
            "name such as \"Europe/Berlin\""},
        Bad{"[report]\ntime_zone = 5\n",
            "/etc/gua/gua.toml:2: report.time_zone: expected UTC, local, or an IANA time zone "
            "name such as \"Europe/Berlin\""},
        Bad{"[teams]\nalice = \"vision\"\nbob = 3\n",
            "/etc/gua/gua.toml:3: teams.bob: expected a team name, e.g. alice = \"vision\""},
        Bad{"[teams]\nalice = \"\"\n",
            "/etc/gua/gua.toml:2: teams.alice: expected a team name, e.g. alice = \"vision\""},
        Bad{"[thresholds]\nactive_util_pct = 0\n",
            "/etc/gua/gua.toml:2: thresholds.active_util_pct: expected a number greater than 0 "
            "and at most 100"},
        Bad{"[thresholds]\nactive_util_pct = nan\n",
            "/etc/gua/gua.toml:2: thresholds.active_util_pct: expected a number greater than 0 "
            "and at most 100"},
        Bad{"[thresholds]\nactive_util_pct = inf\n",
            "/etc/gua/gua.toml:2: thresholds.active_util_pct: expected a number greater than 0 "
            "and at most 100"},
        Bad{"[pricing]\ndefault = nan\n",
            "/etc/gua/gua.toml:2: pricing.default: expected a price per GPU-hour from 0 to 1000, "
            "e.g. 2.50"},
        Bad{"[pricing]\nspot_discount = nan\n",
            "/etc/gua/gua.toml:2: pricing.spot_discount: expected a fraction from 0 up to (not "
            "including) 1, e.g. 0.6 for 60 % off"},
        Bad{"[thresholds]\nheld_mib = -5\n",
            "/etc/gua/gua.toml:2: thresholds.held_mib: expected a whole number of MiB >= 0"},
        // A float is not a whole number: no truncation of 2.5, and no float-to-integer conversion
        // past the int64 range (undefined behaviour the configuration fuzzer found).
        Bad{"[thresholds]\nheld_mib = 2.5\n",
            "/etc/gua/gua.toml:2: thresholds.held_mib: expected a whole number of MiB >= 0"},
        Bad{"[thresholds]\nheld_mib = 3.2e50\n",
            "/etc/gua/gua.toml:2: thresholds.held_mib: expected a whole number of MiB >= 0"},
        Bad{"[policy]\nmax_actions_per_hour = 1e300\n",
            "/etc/gua/gua.toml:2: policy.max_actions_per_hour: expected a whole number >= 0"},
        Bad{"[thresholds]\ngraphics_is_holder = \"yes\"\n",
            "/etc/gua/gua.toml:2: thresholds.graphics_is_holder: expected true or false"},
        Bad{"[thresholds]\nactive = 10\n", "/etc/gua/gua.toml:2: thresholds.active: unknown key"},
        Bad{"[daemon]\ninterval = \"soon\"\n",
            "/etc/gua/gua.toml:2: daemon.interval: expected a duration such as \"30s\""},
        Bad{"[daemon]\ninterval = \"10ms\"\n",
            "/etc/gua/gua.toml:2: daemon.interval: expected a duration of at least 100ms, such "
            "as \"30s\""},
        Bad{"[report]\ntime_zone = \"\"\n",
            "/etc/gua/gua.toml:2: report.time_zone: expected UTC, local, or an IANA time zone "
            "name such as \"Europe/Berlin\""},
        Bad{"[daemon]\nlisten = 10409\n",
            "/etc/gua/gua.toml:2: daemon.listen: expected an address such as \"127.0.0.1:10409\" "
            "or \"\" (off)"},
        Bad{"\n\n[prices]\n", "/etc/gua/gua.toml:3: prices: unknown key"}));

TEST(Config, SyntaxErrorsNameFileAndLine) {
    const Result<Config> r = parse_config("[pricing]\ndefault = = 2\n", "gua.toml");
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message, HasSubstr("gua.toml:2: "));
}

TEST(Config, LoadNamesAMissingFile) {
    const Result<Config> r = load_config("/nonexistent/gua.toml");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "cannot read config file /nonexistent/gua.toml");
}

TEST(Config, LoadRefusesADirectory) {
    const Result<Config> r = load_config("/tmp");
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "config file /tmp is a directory (expected a gua.toml file)");
}

TEST(Config, LoadReadsAFile) {
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("gua-config-test-" + std::to_string(getpid()));
    {
        std::ofstream out(path);
        out << k_full;
    }
    const Result<Config> r = load_effective_config(path.string());
    std::filesystem::remove(path);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r.value().path, path.string());
    EXPECT_EQ(r.value().pricing.currency, "EUR");
}

} // namespace
} // namespace gua::config
