// SPDX-License-Identifier: Apache-2.0
// [allocations] in gua.toml: mapping_dir (a list or one path) and kubelet_socket; bad values are
// one-line errors naming file, line and key; the factory builds nothing without a source.
#include "alloc/settings.hpp"
#include "config/config.hpp"

#include <gtest/gtest.h>

namespace gua::config {
namespace allocations_config_test {

TEST(AllocationsConfig, DefaultIsNoSource) {
    const Result<Config> c = parse_config("", "gua.toml");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_FALSE(c.value().allocations.any());
    EXPECT_EQ(alloc::make_allocation_source(c.value().allocations), nullptr);
}

TEST(AllocationsConfig, ParsesEveryKey) {
    const Result<Config> c = parse_config(
        "[allocations]\nmapping_dir = [\"/run/gua/jobs\", \"/run/dcgm-job-map\", "
        "\"/run/gua/jobs\"]\nkubelet_socket = \"/var/lib/kubelet/pod-resources/kubelet.sock\"\n",
        "gua.toml");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c.value().allocations.mapping_dirs,
              (std::vector<std::string>{"/run/gua/jobs", "/run/dcgm-job-map"}));
    EXPECT_EQ(c.value().allocations.kubelet_socket, "/var/lib/kubelet/pod-resources/kubelet.sock");
    const Result<Config> one = parse_config("[allocations]\nmapping_dir = \"/srv/map\"\n", "g");
    ASSERT_TRUE(one) << one.error().message;
    EXPECT_EQ(one.value().allocations.mapping_dirs, std::vector<std::string>{"/srv/map"});
}

TEST(AllocationsConfig, BadValuesAreOneLineErrors) {
    const auto error = [](const std::string& text) {
        const Result<Config> c = parse_config(text, "gua.toml");
        return c ? std::string("parsed") : c.error().message;
    };
    EXPECT_EQ(error("[allocations]\nmapping_dir = [\"run/jobs\"]\n"),
              "gua.toml:2: allocations.mapping_dir: path: expected an absolute path, got "
              "\"run/jobs\"");
    EXPECT_EQ(error("[allocations]\nmapping_dir = [\"/run/../etc\"]\n"),
              "gua.toml:2: allocations.mapping_dir: path: the path \"/run/../etc\" holds a \".\" "
              "or \"..\" component");
    EXPECT_EQ(error("[allocations]\nmapping_dir = [3]\n"),
              "gua.toml:2: allocations.mapping_dir: expected a directory path (a string)");
    EXPECT_EQ(error("[allocations]\nkubelet_socket = 1\n"),
              "gua.toml:2: allocations.kubelet_socket: expected a socket path (a string)");
    EXPECT_EQ(error("[allocations]\nkubelet_socket = \"\"\n"),
              "gua.toml:2: allocations.kubelet_socket: path: expected an absolute path, got \"\"");
    EXPECT_EQ(error("[allocations]\nslurm = true\n"), "gua.toml:2: allocations.slurm: unknown key");
}

} // namespace allocations_config_test
} // namespace gua::config
