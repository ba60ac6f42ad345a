// SPDX-License-Identifier: Apache-2.0
// Shared CLI11 validators and the "did you mean" lookup.
#include "cli/validators.hpp"

#include "audit/cost.hpp"
#include "core/duration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace gua::cli {

CLI::Option* add_positive_duration(CLI::App& cmd, const std::string& name, DurationUs& target,
                                   const std::string& help) {
    return cmd.add_option_function<std::string>(
        name,
        [name, &target](const std::string& text) {
            const Result<DurationUs> d = parse_duration(text);
            if (!d || d.value() <= 0) {
                throw CLI::ValidationError(name,
                                           d ? "expected a duration above 0" : d.error().message);
            }
            target = d.value();
        },
        help);
}

CLI::Validator non_empty() {
    return CLI::Validator(
        [](std::string& value) { return value.empty() ? std::string("must not be empty") : ""; },
        "TEXT", "non-empty");
}

CLI::Validator prometheus_label_name() {
    return CLI::Validator(
        [](std::string& value) {
            const auto letter = [](char c) {
                return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
            };
            const bool ok = !value.empty() && letter(value.front()) && !value.starts_with("__") &&
                            std::all_of(value.begin(), value.end(), [&](char c) {
                                return letter(c) || (c >= '0' && c <= '9');
                            });
            return ok ? std::string()
                      : std::string("expected a Prometheus label name: letters, digits and _, "
                                    "not starting with a digit or __");
        },
        "LABEL", "Prometheus label name");
}

CLI::Validator price_per_gpu_hour() {
    return CLI::Validator(
        [](std::string& value) {
            char* end = nullptr;
            const double v = std::strtod(value.c_str(), &end);
            const bool number = !value.empty() && end != nullptr && *end == '\0';
            if (!number || !std::isfinite(v) || !audit::to_micros(v)) {
                return std::string("expected a price per GPU-hour from 0 to 1000, e.g. 3.50");
            }
            return std::string();
        },
        "PRICE", "price per GPU-hour");
}

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = above;
        }
    }
    return row[b.size()];
}

} // namespace

std::optional<std::string> closest_name(const std::string& typed,
                                        const std::vector<std::string>& names) {
    std::optional<std::string> best;
    std::size_t best_distance = 3;
    for (const std::string& name : names) {
        const std::size_t d =
            name.rfind(typed, 0) == 0 && !typed.empty() ? 1 : edit_distance(typed, name);
        if (d < best_distance) {
            best = name;
            best_distance = d;
        }
    }
    return best;
}

} // namespace gua::cli
