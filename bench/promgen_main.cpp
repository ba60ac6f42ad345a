// SPDX-License-Identifier: Apache-2.0
// gua-promgen: the fleet scale test's data. `generate` streams a simulated fleet's scrapes as
// OpenMetrics files, one per 2-hour block for `promtool tsdb create-blocks-from openmetrics`,
// and writes the ground truth; `compare` holds a `gua report --prometheus --format json` to it.
#include "core/time.hpp"
#include "scale_fleet.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace {

using gua::DurationUs;
using gua::TimeUs;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr DurationUs k_block_us = 2 * gua::k_us_per_hour; // promtool cuts blocks at 2 h

TimeUs parse_time(const std::string& text) {
    const auto t = gua::parse_iso8601(text);
    if (!t) {
        throw std::runtime_error(fmt::format("bad time {}: {}", text, t.error().message));
    }
    return t.value();
}

double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::size_t pending_chunks(const fs::path& dir) {
    std::size_t n = 0;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
        n += e.path().extension() == ".om" ? 1 : 0;
    }
    return n;
}

json truth_json(const gua::bench::ScaleFleet& fleet, const gua::bench::ScaleOptions& o) {
    json j{{"hosts", o.hosts},
           {"gpus", o.hosts * o.gpus_per_host},
           {"tick_seconds", static_cast<double>(o.tick_us) / 1e6},
           {"scrape_seconds", static_cast<double>(o.scrape_us) / 1e6},
           {"series", fleet.series()},
           {"samples", fleet.samples()},
           {"windows", json::array()}};
    for (const gua::bench::WindowTruth& w : fleet.truth()) {
        json cards = json::array();
        for (const auto& [key, s] : w.cards) {
            cards.push_back({{"host", key.first},
                             {"uuid", key.second},
                             {"gpu", w.card_index.at(key.second)},
                             {"active", s.active},
                             {"idle_held", s.idle_held},
                             {"truly_idle", s.truly_idle},
                             {"unmeasured", s.unmeasured}});
        }
        json users = json::array();
        for (const auto& [name, u] : w.users) {
            users.push_back({{"name", name},
                             {"active", u.active},
                             {"idle_held", u.idle_held},
                             {"cards", u.cards}});
        }
        json heatmap = json::array();
        for (std::size_t d = 0; d < 7; ++d) {
            for (std::size_t h = 0; h < 24; ++h) {
                const gua::bench::StateSeconds& c = w.heatmap[d][h];
                heatmap.push_back({{"weekday", d},
                                   {"hour", h},
                                   {"active", c.active},
                                   {"idle_held", c.idle_held},
                                   {"truly_idle", c.truly_idle},
                                   {"unmeasured", c.unmeasured}});
            }
        }
        j["windows"].push_back({{"from", gua::format_iso8601(w.from)},
                                {"to", gua::format_iso8601(w.to)},
                                {"cards", cards},
                                {"users", users},
                                {"heatmap", heatmap}});
    }
    return j;
}

struct GenerateArgs {
    gua::bench::ScaleOptions options;
    std::string start;
    std::string end;
    double tick_s = 30;
    double scrape_s = 30;
    bool no_churn = false;
    bool all_families = false;
    std::string out_dir;
    std::string truth_file;
    std::vector<std::string> windows;
    std::size_t max_pending = 2;
};

/// The options and windows of `a`, checked.
std::vector<std::pair<TimeUs, TimeUs>> prepare(GenerateArgs& a) {
    gua::bench::ScaleOptions& o = a.options;
    o.start = parse_time(a.start);
    o.end = parse_time(a.end);
    o.tick_us = std::llround(a.tick_s * 1e6);
    o.scrape_us = std::llround(a.scrape_s * 1e6);
    o.churn = !a.no_churn;
    if (o.end <= o.start || o.tick_us <= 0 || o.scrape_us < gua::k_us_per_ms) {
        throw std::runtime_error("need --start < --end and positive intervals");
    }
    std::vector<std::pair<TimeUs, TimeUs>> windows;
    for (const std::string& w : a.windows) {
        const std::size_t slash = w.find('/');
        if (slash == std::string::npos) {
            throw std::runtime_error("--window wants FROM/TO, got " + w);
        }
        windows.emplace_back(parse_time(w.substr(0, slash)), parse_time(w.substr(slash + 1)));
    }
    return windows;
}

/// The ground truth alone: the same scenario, no scrapes written.
int truth_only(GenerateArgs& a) {
    const std::vector<std::pair<TimeUs, TimeUs>> windows = prepare(a);
    a.options.truth_only = true;
    gua::bench::ScaleFleet fleet(a.options, windows, {});
    std::string none;
    fleet.advance(a.options.end, none, [](std::string& text) { text.clear(); });
    std::ofstream(a.truth_file) << truth_json(fleet, a.options).dump(1) << '\n';
    return 0;
}

int generate(GenerateArgs& a) {
    const std::vector<std::pair<TimeUs, TimeUs>> windows = prepare(a);
    const gua::bench::ScaleOptions& o = a.options;
    fs::create_directories(a.out_dir);
    gua::bench::ScaleFleet fleet(
        o, windows, a.all_families ? std::vector<std::string>{} : gua::bench::report_families());
    const auto wall0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_seconds();
    std::uint64_t bytes = 0;
    std::string buffer;
    int chunks = 0;
    for (TimeUs b = o.start / k_block_us * k_block_us; b < o.end; b += k_block_us) {
        while (pending_chunks(a.out_dir) >= a.max_pending) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        const fs::path path = fs::path(a.out_dir) / fmt::format("chunk-{:05}.om", chunks);
        const fs::path tmp = fs::path(path).concat(".tmp");
        std::FILE* f = std::fopen(tmp.c_str(), "wb");
        if (f == nullptr) {
            throw std::runtime_error("cannot write " + tmp.string());
        }
        std::uint64_t chunk_bytes = 0;
        const auto flush = [&](std::string& text) {
            if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) {
                throw std::runtime_error("cannot write " + tmp.string());
            }
            chunk_bytes += text.size();
            text.clear();
        };
        fleet.advance(b + k_block_us, buffer, flush);
        const bool empty = chunk_bytes == 0 && buffer.empty();
        buffer += "# EOF\n";
        flush(buffer);
        if (std::fclose(f) != 0) {
            throw std::runtime_error("cannot write " + tmp.string());
        }
        if (empty) {
            fs::remove(tmp);
            continue;
        }
        fs::rename(tmp, path);
        bytes += chunk_bytes;
        ++chunks;
        fmt::print("{}\n", path.string());
        std::fflush(stdout);
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    std::ofstream(a.truth_file) << truth_json(fleet, o).dump(1) << '\n';
    fmt::print(stderr,
               "gua-promgen: {} hosts × {} GPUs, {} series, {} samples, {} chunks, {:.1f} GB of "
               "OpenMetrics, {:.1f} s wall ({:.1f} s CPU, waiting for the consumer included)\n",
               o.hosts, o.gpus_per_host, fleet.series(), fleet.samples(), chunks,
               static_cast<double>(bytes) / 1e9, wall, cpu_seconds() - cpu0);
    return 0;
}

struct CompareArgs {
    std::string truth_file;
    std::string report_file;
    std::size_t window = 0;
    double tolerance_s = 60;
    double heatmap_tolerance = 0.005;
};

json read_json(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        throw std::runtime_error("cannot read " + path);
    }
    json j = json::parse(in, nullptr, false);
    if (j.is_discarded()) {
        throw std::runtime_error(path + " is not JSON");
    }
    return j;
}

int compare(const CompareArgs& a) {
    const json truth = read_json(a.truth_file);
    const json report = read_json(a.report_file);
    const json& w = truth.at("windows").at(a.window);
    constexpr std::array<const char*, 4> k_states{"active", "idle_held", "truly_idle",
                                                  "unmeasured"};
    std::map<std::pair<std::string, std::string>, const json*> got;
    for (const json& g : report.at("gpus")) {
        got[{g.at("host").get<std::string>(), g.at("uuid").get<std::string>()}] = &g;
    }
    int failures = 0;
    std::array<double, 4> max_err{};
    std::array<double, 4> fleet_truth{};
    std::array<double, 4> fleet_report{};
    std::size_t beyond = 0;
    std::size_t within_scrape = 0;
    std::size_t within_lag = 0;
    std::size_t cards = 0;
    const double scrape_s = truth.at("scrape_seconds").get<double>();
    const double lag_s = scrape_s + truth.at("tick_seconds").get<double>();
    for (const json& c : w.at("cards")) {
        ++cards;
        const auto it =
            got.find({c.at("host").get<std::string>(), c.at("uuid").get<std::string>()});
        if (it == got.end()) {
            fmt::print("MISSING card {} {}\n", c.at("host").get<std::string>(),
                       c.at("uuid").get<std::string>());
            ++failures;
            continue;
        }
        const json& states = it->second->at("states");
        double worst = 0;
        for (std::size_t s = 0; s < k_states.size(); ++s) {
            const double expected = c.at(k_states[s]).get<double>();
            const double seen =
                states.at(fmt::format("{}_gpu_hours", k_states[s])).get<double>() * 3600.0;
            fleet_truth[s] += expected;
            fleet_report[s] += seen;
            const double err = std::abs(seen - expected);
            max_err[s] = std::max(max_err[s], err);
            worst = std::max(worst, err);
        }
        within_scrape += worst <= scrape_s ? 1 : 0;
        within_lag += worst <= lag_s ? 1 : 0;
        if (worst > a.tolerance_s) {
            ++beyond;
            if (beyond <= 5) {
                fmt::print("BEYOND card {} gpu {}: {:.1f} s off\n", c.at("host").get<std::string>(),
                           c.at("gpu").get<int>(), worst);
            }
        }
    }
    failures += static_cast<int>(beyond);
    if (got.size() != cards) {
        fmt::print("the report has {} cards, the truth {}\n", got.size(), cards);
        ++failures;
    }
    fmt::print("window {} .. {}\n", w.at("from").get<std::string>(), w.at("to").get<std::string>());
    fmt::print("cards: {} (report {}); largest error per card: active {:.1f} s, idle_held {:.1f} "
               "s, truly_idle {:.1f} s, unmeasured {:.1f} s; {} within one scrape interval ({} "
               "s), {} within a tick and a scrape interval ({} s), {} beyond the tolerance ({} "
               "s)\n",
               cards, got.size(), max_err[0], max_err[1], max_err[2], max_err[3], within_scrape,
               scrape_s, within_lag, lag_s, beyond, a.tolerance_s);
    for (std::size_t s = 0; s < k_states.size(); ++s) {
        const double err = fleet_report[s] - fleet_truth[s];
        fmt::print("fleet {}: truth {:.3f} GPU-h, report {:.3f} GPU-h, error {:+.1f} s ({:+.5f} "
                   "%)\n",
                   k_states[s], fleet_truth[s] / 3600, fleet_report[s] / 3600, err,
                   fleet_truth[s] > 0 ? 100 * err / fleet_truth[s] : 0.0);
        if (std::abs(err) > a.tolerance_s * static_cast<double>(cards)) {
            ++failures;
        }
    }
    std::map<std::string, const json*> users;
    for (const json& u : report.at("identities").at("top")) {
        users[u.at("name").get<std::string>()] = &u;
    }
    double user_worst = 0;
    double user_worst_per_card = 0;
    std::size_t n_users = 0;
    for (const json& u : w.at("users")) {
        const double active = u.at("active").get<double>();
        const double held = u.at("idle_held").get<double>();
        if (active + held <= 0) {
            continue;
        }
        ++n_users;
        const auto it = users.find(u.at("name").get<std::string>());
        if (it == users.end()) {
            fmt::print("MISSING user {}\n", u.at("name").get<std::string>());
            ++failures;
            continue;
        }
        const double err =
            std::max(std::abs(it->second->at("active_gpu_hours").get<double>() * 3600 - active),
                     std::abs(it->second->at("idle_held_gpu_hours").get<double>() * 3600 - held));
        const auto on_cards =
            static_cast<double>(std::max<std::size_t>(u.at("cards").get<std::size_t>(), 1));
        user_worst = std::max(user_worst, err);
        user_worst_per_card = std::max(user_worst_per_card, err / on_cards);
        if (err > a.tolerance_s * on_cards) {
            fmt::print("BEYOND user {}: {:.1f} s off over {} cards\n",
                       u.at("name").get<std::string>(), err, on_cards);
            ++failures;
        }
    }
    fmt::print("users: {} (report {}); largest error {:.1f} s, {:.2f} s per card the user was on\n",
               n_users, users.size(), user_worst, user_worst_per_card);
    // §5: each hour-of-week cell's time by state (the report run with --tz UTC).
    std::map<std::pair<int, int>, const json*> cells;
    for (const json& cell : report.at("heatmap").at("cells")) {
        cells[{cell.at("weekday").get<int>(), cell.at("hour").get<int>()}] = &cell;
    }
    double cell_worst_s = 0;
    double cell_worst_share = 0;
    std::size_t n_cells = 0;
    for (const json& t : w.at("heatmap")) {
        double total = 0;
        for (const char* state : k_states) {
            total += t.at(state).get<double>();
        }
        if (total <= 0) {
            continue;
        }
        ++n_cells;
        const auto it = cells.find({t.at("weekday").get<int>(), t.at("hour").get<int>()});
        if (it == cells.end()) {
            fmt::print("MISSING heatmap cell {} {}\n", t.at("weekday").get<int>(),
                       t.at("hour").get<int>());
            ++failures;
            continue;
        }
        const double seconds = it->second->at("gpu_hours").get<double>() * 3600;
        for (std::size_t s = 0; s < 3; ++s) {
            const double err = std::abs(it->second->at(k_states[s]).get<double>() * seconds -
                                        t.at(k_states[s]).get<double>());
            cell_worst_s = std::max(cell_worst_s, err);
            cell_worst_share = std::max(cell_worst_share, err / total);
        }
    }
    fmt::print("heatmap: {} cells; largest error {:.1f} s of a state in a cell, {:.4f} % of the "
               "cell's card time\n",
               n_cells, cell_worst_s, 100 * cell_worst_share);
    if (cell_worst_share > a.heatmap_tolerance) {
        ++failures;
    }
    if (failures == 0) {
        fmt::print("PASS\n");
    } else {
        fmt::print("FAIL: {} checks outside the tolerance\n", failures);
    }
    return failures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
    CLI::App app{"gua-promgen: the fleet scale test's OpenMetrics data and its ground truth"};
    app.require_subcommand(1);
    GenerateArgs g;
    CLI::App* gen = app.add_subcommand("generate", "write OpenMetrics chunks and the ground truth");
    CLI::App* tru = app.add_subcommand("truth", "write the ground truth alone (the same scenario)");
    for (CLI::App* cmd : {gen, tru}) {
        cmd->add_option("--hosts", g.options.hosts, "hosts")->capture_default_str();
        cmd->add_option("--gpus-per-host", g.options.gpus_per_host, "GPUs per host")
            ->capture_default_str();
        cmd->add_option("--start", g.start, "first tick (ISO 8601)")->required();
        cmd->add_option("--end", g.end, "end of the data (ISO 8601)")->required();
        cmd->add_option("--tick", g.tick_s, "the daemons' tick, seconds")->capture_default_str();
        cmd->add_option("--scrape-interval", g.scrape_s, "Prometheus scrape interval, seconds")
            ->capture_default_str();
        cmd->add_option("--seed", g.options.seed, "random seed")->capture_default_str();
        cmd->add_flag("--no-churn", g.no_churn, "no restarts, reset, host changes, missed scrapes");
        cmd->add_option("--truth", g.truth_file, "ground truth JSON file")->required();
        cmd->add_option("--window", g.windows, "report window FROM/TO (ISO 8601), repeatable");
    }
    gen->add_flag("--all-families", g.all_families, "every family the daemon exports");
    gen->add_option("--out", g.out_dir, "directory of the chunk files")->required();
    gen->add_option("--max-pending", g.max_pending, "chunk files on disk at most")
        ->capture_default_str();
    app.add_subcommand("version", "print the version of the generated data (the scenario)");
    CompareArgs c;
    CLI::App* cmp = app.add_subcommand("compare", "hold a JSON report to the ground truth");
    cmp->add_option("--truth", c.truth_file, "ground truth JSON file")->required();
    cmp->add_option("--window", c.window, "index of the window in the truth")
        ->capture_default_str();
    cmp->add_option("--report", c.report_file, "gua report --format json output")->required();
    cmp->add_option("--tolerance", c.tolerance_s, "seconds per card")->capture_default_str();
    cmp->add_option("--heatmap-tolerance", c.heatmap_tolerance,
                    "share of a heatmap cell's card time")
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);
    try {
        if (app.got_subcommand("version")) {
            fmt::print("{}\n", gua::bench::k_scale_data_version);
            return 0;
        }
        return gen->parsed() ? generate(g) : tru->parsed() ? truth_only(g) : compare(c);
    } catch (const std::exception& e) {
        fmt::print(stderr, "gua-promgen: {}\n", e.what());
        return 1;
    }
}
