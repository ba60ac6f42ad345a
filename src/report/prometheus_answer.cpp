// SPDX-License-Identifier: Apache-2.0
// A SAX handler for {"status", "data": {"resultType", "result": [{"metric", "value(s)"}]}}.
#include "report/prometheus_answer.hpp"

#include "core/fatal.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <optional>

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

    bool null() override { return scalar(); }
    bool boolean(bool) override { return scalar(); }
    bool number_integer(number_integer_t v) override { return number(static_cast<double>(v)); }
    bool number_unsigned(number_unsigned_t v) override { return number(static_cast<double>(v)); }
    bool number_float(number_float_t v, const string_t&) override { return number(v); }
    bool binary(binary_t&) override { return scalar(); }

    bool string(string_t& s) override {
        switch (top()) {
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
            if (m_value) {
                m_points.emplace_back(m_time, *m_value);
            }
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

    void start_point() {
        m_stack.push_back(Ctx::point);
        m_index = 0;
        m_value.reset();
    }

    bool scalar() {
        const Ctx at = top();
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

    /// A sample value; nullopt for Prometheus's NaN and ±Inf, which stand for no number (the
    /// sample is then missing, never 0).
    static std::optional<double> value_of(const std::string& text) {
        char* end = nullptr;
        const double d = std::strtod(text.c_str(), &end);
        if (end == text.c_str()) {
            throw Fatal("Prometheus returned a sample value that is not a number: " + text);
        }
        return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
    }

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
    std::optional<double> m_value;
};

} // namespace

void parse_answer(const PromAnswer& answer, const std::string& server, const SeriesSink& sink) {
    AnswerHandler handler(server, sink);
    if (!json::sax_parse(answer.body, &handler)) {
        throw Fatal(fmt::format("Prometheus at {} answered HTTP {} with a body that is not JSON "
                                "(is this the server's root URL?)",
                                server, answer.status));
    }
    if (handler.status != "success") {
        throw Fatal(fmt::format("Prometheus at {} refused a query (HTTP {}): {}: {}", server,
                                answer.status, handler.error_type.value_or("error"),
                                handler.error.value_or("?")));
    }
}

} // namespace gua::report
