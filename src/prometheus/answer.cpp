// SPDX-License-Identifier: Apache-2.0
// SAX handlers for {"status", "data": {"resultType", "result": [{"metric", "value(s)"}]}} and
// for label value lists, refusing what no Prometheus server sends.
#include "prometheus/answer.hpp"

#include "core/fatal.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <unistd.h>
#include <unordered_set>

namespace gua::report {

namespace {

using nlohmann::json;

/// Latest sample time accepted from a server, in seconds (year 5138): later ones are garbage.
constexpr double k_max_time_s = 1e11;

/// Where the parser is: the containers it is in, innermost last.
enum class Ctx : std::uint8_t {
    root,    ///< the answer object
    data,    ///< "data"
    result,  ///< "data.result"
    series,  ///< one element of "result"
    metric,  ///< its "metric"
    points,  ///< its "values" (a matrix)
    point,   ///< one [time, "value"] pair
    ignored, ///< anything else, skipped whole
};

class AnswerHandler final : public nlohmann::json_sax<json> {
  public:
    AnswerHandler(const std::string& server, const SeriesSink& sink)
        : m_server(server), m_sink(sink) {}

    std::string status;
    std::optional<std::string> error_type;
    std::optional<std::string> error;
    bool has_result = false; ///< "data.result" was a list

    bool null() override { return scalar(); }
    bool boolean(bool) override { return scalar(); }
    bool number_integer(number_integer_t v) override { return number(static_cast<double>(v)); }
    bool number_unsigned(number_unsigned_t v) override { return number(static_cast<double>(v)); }
    bool number_float(number_float_t v, const string_t&) override { return number(v); }
    bool binary(binary_t&) override { return scalar(); }

    bool string(string_t& s) override {
        switch (top()) {
        case Ctx::data:
            return scalar();
        case Ctx::root:
            if (m_key == "status") {
                status = s;
            } else if (m_key == "errorType") {
                error_type = s;
            } else if (m_key == "error") {
                error = s;
            }
            return true;
        case Ctx::metric:
            if (m_key.size() > k_prom_max_label_bytes || s.size() > k_prom_max_label_bytes) {
                refuse(fmt::format("a label {} longer than {} bytes", m_key.substr(0, 64),
                                   k_prom_max_label_bytes));
            }
            if (m_labels.size() >= k_prom_max_labels && !m_labels.contains(m_key)) {
                refuse(fmt::format("more than {} labels", k_prom_max_labels));
            }
            m_bytes += m_key.size() + s.size() + 64;
            m_labels[m_key] = std::move(s);
            return true;
        case Ctx::point:
            if (m_index++ != 1) {
                unexpected("a sample time that is not a number");
            }
            m_value = value_of(s);
            return true;
        case Ctx::series:
        case Ctx::result:
        case Ctx::points:
            unexpected("a string where a series was expected");
        default:
            return true;
        }
    }

    bool start_object(std::size_t) override {
        const Ctx at = m_stack.empty() ? Ctx::ignored : top();
        if (m_stack.empty()) {
            m_stack.push_back(Ctx::root);
        } else if (at == Ctx::root && m_key == "data") {
            m_stack.push_back(Ctx::data);
        } else if (at == Ctx::data && m_key == "result") {
            unexpected("a result that is not a list of series");
        } else if (at == Ctx::result) {
            m_stack.push_back(Ctx::series);
            m_labels.clear();
            m_points.clear();
            m_has_metric = false;
            m_has_value = false;
        } else if (at == Ctx::series && m_key == "metric") {
            m_stack.push_back(Ctx::metric);
            m_has_metric = true;
        } else if (at == Ctx::series || at == Ctx::points || at == Ctx::point ||
                   at == Ctx::metric) {
            unexpected("an object where a label or a sample was expected");
        } else {
            m_stack.push_back(Ctx::ignored);
        }
        m_key.clear();
        return true;
    }

    bool key(string_t& k) override {
        m_key = std::move(k);
        return true;
    }

    bool end_object() override {
        if (top() == Ctx::series) {
            if (!m_has_metric || !m_has_value) {
                unexpected("a series without metric or values");
            }
            if (++m_series > k_prom_max_series) {
                refuse(fmt::format("more than {} series in one answer", k_prom_max_series));
            }
            if (!m_seen.insert(series_text(m_labels)).second) {
                refuse("the same series twice in one answer");
            }
            m_bytes += m_points.size() * sizeof(m_points[0]) + 64;
            if (m_bytes >= k_check_every_bytes) {
                m_bytes = 0;
                check_prom_memory(m_server);
            }
            m_sink(m_labels, m_points);
        }
        m_stack.pop_back();
        m_key.clear();
        return true;
    }

    bool start_array(std::size_t) override {
        const Ctx at = m_stack.empty() ? Ctx::ignored : top();
        if (at == Ctx::data && m_key == "result") {
            m_stack.push_back(Ctx::result);
            has_result = true;
        } else if (at == Ctx::series && m_key == "value") {
            m_has_value = true;
            start_point();
        } else if (at == Ctx::series && m_key == "values") {
            m_has_value = true;
            m_stack.push_back(Ctx::points);
        } else if (at == Ctx::points) {
            start_point();
        } else if (at == Ctx::series || at == Ctx::point || at == Ctx::metric) {
            unexpected("an array where a label or a sample was expected");
        } else {
            m_stack.push_back(Ctx::ignored);
        }
        return true;
    }

    bool end_array() override {
        if (top() == Ctx::point) {
            if (m_index != 2) {
                unexpected("a sample that is not a [time, value] pair");
            }
            if (m_points.size() >= k_prom_max_points) {
                refuse(fmt::format("more than {} points in one series", k_prom_max_points));
            }
            m_points.emplace_back(m_time, m_value);
        }
        m_stack.pop_back();
        return true;
    }

    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }

  private:
    Ctx top() const { return m_stack.empty() ? Ctx::ignored : m_stack.back(); }

    [[noreturn]] void unexpected(const char* what) const {
        throw Fatal(fmt::format("unexpected answer from Prometheus at {}: {}", m_server, what));
    }

    /// Refuses the series being read (its labels so far) for `why`.
    [[noreturn]] void refuse(const std::string& why) const {
        throw Fatal(fmt::format("refused an answer from Prometheus at {}: series {}: {}", m_server,
                                describe_series(m_labels), why));
    }

    void start_point() {
        m_stack.push_back(Ctx::point);
        m_index = 0;
        m_value = 0;
    }

    bool scalar() {
        const Ctx at = top();
        if (at == Ctx::data && m_key == "result") {
            unexpected("a result that is not a list of series");
        }
        if (at == Ctx::metric || at == Ctx::point || at == Ctx::series || at == Ctx::points ||
            at == Ctx::result) {
            unexpected("a value of the wrong type");
        }
        return true;
    }

    bool number(double v) {
        if (top() != Ctx::point) {
            return scalar();
        }
        if (m_index++ != 0) {
            unexpected("a sample value that is not a string");
        }
        if (!(v >= 0 && v <= k_max_time_s)) {
            throw Fatal(fmt::format("Prometheus returned a sample time out of range: {}", v));
        }
        m_time = static_cast<TimeUs>(std::llround(v * 1e6));
        return true;
    }

    /// A sample value: a finite number ≥ 0 (gua reads counters, gauges of sizes and states, and
    /// times; NaN, ±Inf and negative values are impossible answers, refused with the series).
    double value_of(const std::string& text) const {
        char* end = nullptr;
        const double d = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') {
            refuse("a sample value that is not a number: " + text.substr(0, 32));
        }
        if (!std::isfinite(d)) {
            refuse("a sample value that is not finite: " + text.substr(0, 32));
        }
        if (d < 0) {
            refuse("a negative sample value: " + text.substr(0, 32));
        }
        return d;
    }

    /// The labels of a series as one string, for telling two series apart.
    static std::string series_text(const PromLabels& labels) {
        std::string key;
        for (const auto& [k, v] : labels) {
            key += k + '\x1f' + v + '\x1e';
        }
        return key;
    }

    /// Bytes of series read between two looks at the process's memory.
    static constexpr std::size_t k_check_every_bytes = 1024 * 1024;

    const std::string& m_server;
    const SeriesSink& m_sink;
    std::vector<Ctx> m_stack;
    std::string m_key;
    PromLabels m_labels;
    std::vector<std::pair<TimeUs, double>> m_points;
    bool m_has_metric = false;
    bool m_has_value = false;
    int m_index = 0;
    TimeUs m_time = 0;
    double m_value = 0;
    std::size_t m_series = 0;
    std::size_t m_bytes = 0; ///< read since memory was last checked
    std::unordered_set<std::string> m_seen;
};

/// {"status": "success", "data": ["value", …]} (or an error answer).
class LabelValuesHandler final : public nlohmann::json_sax<json> {
  public:
    explicit LabelValuesHandler(const std::string& server) : m_server(server) {}

    std::string status;
    std::optional<std::string> error_type;
    std::optional<std::string> error;
    std::vector<std::string> values;
    bool has_list = false;

    bool null() override { return scalar(); }
    bool boolean(bool) override { return scalar(); }
    bool number_integer(number_integer_t) override { return scalar(); }
    bool number_unsigned(number_unsigned_t) override { return scalar(); }
    bool number_float(number_float_t, const string_t&) override { return scalar(); }
    bool binary(binary_t&) override { return scalar(); }

    bool string(string_t& s) override {
        if (m_depth == 1 && !m_in_list) {
            if (m_key == "status") {
                status = s;
            } else if (m_key == "errorType") {
                error_type = s;
            } else if (m_key == "error") {
                error = s;
            }
        } else if (m_in_list && m_depth == 2) {
            if (s.size() > k_prom_max_label_bytes) {
                unexpected(
                    fmt::format("a label value longer than {} bytes", k_prom_max_label_bytes));
            }
            if (values.size() >= k_prom_max_label_values) {
                unexpected(fmt::format("more than {} label values", k_prom_max_label_values));
            }
            m_bytes += s.size() + 32;
            if (m_bytes >= 1024 * 1024) {
                m_bytes = 0;
                check_prom_memory(m_server);
            }
            values.push_back(std::move(s));
        }
        return true;
    }
    bool start_object(std::size_t) override {
        if (m_in_list && m_depth == 2) {
            unexpected("a label value that is not a string");
        }
        ++m_depth;
        m_key.clear();
        return true;
    }
    bool key(string_t& k) override {
        m_key = std::move(k);
        return true;
    }
    bool end_object() override {
        --m_depth;
        return true;
    }
    bool start_array(std::size_t) override {
        if (m_in_list && m_depth == 2) {
            unexpected("a label value that is not a string");
        }
        ++m_depth;
        if (m_depth == 2 && m_key == "data") {
            m_in_list = true;
            has_list = true;
        }
        return true;
    }
    bool end_array() override {
        if (m_depth == 2) {
            m_in_list = false;
        }
        --m_depth;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }

  private:
    bool scalar() {
        if (m_in_list && m_depth == 2) {
            unexpected("a label value that is not a string");
        }
        return true;
    }
    [[noreturn]] void unexpected(const std::string& what) const {
        throw Fatal(fmt::format("unexpected answer from Prometheus at {}: {}", m_server, what));
    }

    const std::string& m_server;
    int m_depth = 0;
    bool m_in_list = false;
    std::string m_key;
    std::size_t m_bytes = 0;
};

[[noreturn]] void not_json(const PromAnswer& answer, const std::string& server) {
    throw Fatal(fmt::format("Prometheus at {} answered HTTP {} with a body that is not JSON "
                            "(is this the server's root URL?)",
                            server, answer.status));
}

} // namespace

std::string printable(const std::string& text, std::size_t shown) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (i == shown) {
            out += "…";
            break;
        }
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f || c >= 0x80) {
            out += fmt::format("\\x{:02x}", c);
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

std::string describe_series(const PromLabels& labels) {
    constexpr std::size_t k_shown = 80; // bytes of one value shown
    const auto quoted = [](const std::string& text) { return printable(text, k_shown); };
    std::string out;
    const auto name = labels.find("__name__");
    if (name != labels.end()) {
        out = quoted(name->second);
    }
    out += '{';
    std::size_t n = 0;
    for (const auto& [k, v] : labels) {
        if (k == "__name__") {
            continue;
        }
        if (n++ == 16) {
            out += ", …";
            break;
        }
        out += fmt::format("{}{}=\"{}\"", n > 1 ? ", " : "", quoted(k), quoted(v));
    }
    return out + '}';
}

std::size_t prom_memory_limit() {
    // GUA_PROMETHEUS_MAX_RSS_MB raises (or lowers) the limit: for a fleet larger than any the
    // limit was sized for, and for sanitizer and fuzzing builds, whose resident set is mostly
    // the sanitizer's own.
    const char* text = std::getenv("GUA_PROMETHEUS_MAX_RSS_MB");
    if (text != nullptr) {
        char* end = nullptr;
        const unsigned long long mb = std::strtoull(text, &end, 10);
        if (end != text && *end == '\0' && mb > 0 && mb < (1ULL << 40)) {
            return static_cast<std::size_t>(mb) * 1024 * 1024;
        }
    }
    return k_prom_max_rss_bytes;
}

void check_prom_memory(const std::string& server) {
    std::FILE* f = std::fopen("/proc/self/statm", "re");
    if (f == nullptr) {
        return;
    }
    unsigned long size = 0;
    unsigned long resident = 0;
    const int n = std::fscanf(f, "%lu %lu", &size, &resident);
    std::fclose(f);
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t limit = prom_memory_limit();
    if (n == 2 && resident * page > limit) {
        throw Fatal(fmt::format("stopped reading Prometheus at {}: its answers would take gua past "
                                "its memory limit of {} MiB for a fleet report (narrow the "
                                "window, or see docs/security.md)",
                                server, limit / (1024 * 1024)));
    }
}

std::vector<std::string> parse_label_values(const PromAnswer& answer, const std::string& server) {
    LabelValuesHandler handler(server);
    if (!json::sax_parse(answer.body, &handler)) {
        not_json(answer, server);
    }
    if (handler.status != "success") {
        throw Fatal(fmt::format("Prometheus at {} refused a query (HTTP {}): {}: {}", server,
                                answer.status, printable(handler.error_type.value_or("error"), 80),
                                printable(handler.error.value_or("?"), 400)));
    }
    if (!handler.has_list) {
        throw Fatal(fmt::format("unexpected answer from Prometheus at {}: no list of label values",
                                server));
    }
    return std::move(handler.values);
}

void parse_answer(const PromAnswer& answer, const std::string& server, const SeriesSink& sink) {
    AnswerHandler handler(server, sink);
    if (!json::sax_parse(answer.body, &handler)) {
        not_json(answer, server);
    }
    if (handler.status != "success") {
        throw Fatal(fmt::format("Prometheus at {} refused a query (HTTP {}): {}: {}", server,
                                answer.status, printable(handler.error_type.value_or("error"), 80),
                                printable(handler.error.value_or("?"), 400)));
    }
    if (!handler.has_result) {
        throw Fatal(
            fmt::format("unexpected answer from Prometheus at {}: no list of series", server));
    }
}

} // namespace gua::report
