// SPDX-License-Identifier: Apache-2.0
// Online best-fit placement with a FIFO queue, and the unbounded replay for concurrency.
#include "plan/place.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <tuple>

namespace gua::plan {

namespace {

constexpr TimeUs k_never = std::numeric_limits<TimeUs>::max();

/// The free capacity of each card, grouped into hosts of `per_host` cards.
class Cards {
  public:
    Cards(Capacity card, int gpus, int per_host)
        : m_card(card), m_free(static_cast<std::size_t>(gpus), card), m_per_host(per_host),
          m_host_empty(static_cast<std::size_t>((gpus + per_host - 1) / per_host), 0) {
        for (std::size_t i = 0; i < m_free.size(); ++i) {
            ++m_host_empty[host(i)];
        }
    }

    /// Places `r`: the cards it got, or empty when it does not fit now.
    std::vector<int> place(const Request& r) {
        return r.gpus > 1 ? place_gang(r.gpus) : place_one(r.need);
    }

    void release(const std::vector<int>& cards, Capacity need) {
        for (int c : cards) {
            Capacity& f = m_free[static_cast<std::size_t>(c)];
            f.a += need.a;
            f.b += need.b;
            if (f == m_card) {
                ++m_host_empty[host(static_cast<std::size_t>(c))];
            }
        }
    }

  private:
    std::size_t host(std::size_t card) const { return card / static_cast<std::size_t>(m_per_host); }

    void take(std::size_t c, Capacity need) {
        if (m_free[c] == m_card) {
            --m_host_empty[host(c)];
        }
        m_free[c].a -= need.a;
        m_free[c].b -= need.b;
    }

    std::vector<int> place_one(Capacity need) {
        std::optional<std::size_t> best;
        std::tuple<double, int> best_key{0.0, 0};
        for (std::size_t c = 0; c < m_free.size(); ++c) {
            const Capacity& f = m_free[c];
            if (f.a < need.a || f.b < need.b) {
                continue;
            }
            const double left = static_cast<double>(f.a - need.a) / static_cast<double>(m_card.a) +
                                static_cast<double>(f.b - need.b) / static_cast<double>(m_card.b);
            const std::tuple<double, int> key{left, m_host_empty[host(c)]};
            if (!best || key < best_key) {
                best = c;
                best_key = key;
            }
        }
        if (!best) {
            return {};
        }
        take(*best, need);
        return {static_cast<int>(*best)};
    }

    std::vector<int> place_gang(int k) {
        std::optional<std::size_t> best;
        for (std::size_t h = 0; h < m_host_empty.size(); ++h) {
            if (m_host_empty[h] >= k && (!best || m_host_empty[h] < m_host_empty[*best])) {
                best = h;
            }
        }
        if (!best) {
            return {};
        }
        std::vector<int> got;
        const std::size_t first = *best * static_cast<std::size_t>(m_per_host);
        for (std::size_t c = first; c < m_free.size() && static_cast<int>(got.size()) < k; ++c) {
            if (m_free[c] == m_card) {
                take(c, m_card);
                got.push_back(static_cast<int>(c));
            }
        }
        return got;
    }

    Capacity m_card;
    std::vector<Capacity> m_free;
    int m_per_host;
    std::vector<int> m_host_empty; ///< per host: cards with nothing on them
};

struct Departure {
    TimeUs end = 0;
    std::size_t request = 0;
    bool operator>(const Departure& o) const { return end > o.end; }
};

} // namespace

Replay replay(const std::vector<Request>& requests, Capacity card, int gpus, int per_host,
              const std::function<bool(bool, DurationUs)>& give_up) {
    Replay out;
    out.waits.assign(requests.size(), std::nullopt);
    per_host = std::max(1, std::min(per_host, gpus));
    Cards cards(card, gpus, per_host);
    std::vector<std::vector<int>> placed(requests.size());
    std::priority_queue<Departure, std::vector<Departure>, std::greater<>> running;
    std::deque<std::size_t> queue;
    std::size_t next = 0;
    while (next < requests.size() || !queue.empty()) {
        const TimeUs t_arrival = next < requests.size() ? requests[next].arrival : k_never;
        const TimeUs t_departure = running.empty() ? k_never : running.top().end;
        const TimeUs t = std::min(t_arrival, t_departure);
        if (t == k_never) {
            out.stopped = true; // the head can never start
            return out;
        }
        while (!running.empty() && running.top().end == t) {
            const std::size_t r = running.top().request;
            running.pop();
            cards.release(placed[r], requests[r].gpus > 1 ? card : requests[r].need);
        }
        while (next < requests.size() && requests[next].arrival == t) {
            queue.push_back(next++);
        }
        while (!queue.empty()) {
            const std::size_t r = queue.front();
            const Request& req = requests[r];
            if (req.gpus > per_host) {
                out.stopped = true;
                return out;
            }
            placed[r] = cards.place(req);
            if (placed[r].empty()) {
                break;
            }
            queue.pop_front();
            const DurationUs wait = t - req.arrival;
            out.waits[r] = wait;
            running.push(Departure{t + req.duration, r});
            if (wait > 0 && give_up(req.interactive, wait)) {
                out.stopped = true;
                return out;
            }
        }
    }
    return out;
}

std::vector<Step> recorded_placement(const Demand& demand) {
    std::map<std::int64_t, std::vector<std::pair<TimeUs, TimeUs>>> by_card;
    for (const Unit& u : demand.units) {
        for (const Presence& p : u.presences) {
            for (const Phase& ph : p.phases) {
                by_card[p.gpu].emplace_back(ph.begin, ph.end);
            }
        }
    }
    std::vector<std::pair<TimeUs, int>> edges;
    for (auto& [gpu, spans] : by_card) {
        std::sort(spans.begin(), spans.end());
        std::pair<TimeUs, TimeUs> cur = spans.front();
        for (const auto& s : spans) {
            if (s.first > cur.second) {
                edges.emplace_back(cur.first, 1);
                edges.emplace_back(cur.second, -1);
                cur = s;
            } else {
                cur.second = std::max(cur.second, s.second);
            }
        }
        edges.emplace_back(cur.first, 1);
        edges.emplace_back(cur.second, -1);
    }
    std::sort(edges.begin(), edges.end());
    std::vector<Step> steps;
    int count = 0;
    for (std::size_t i = 0; i < edges.size();) {
        const TimeUs t = edges[i].first;
        for (; i < edges.size() && edges[i].first == t; ++i) {
            count += edges[i].second;
        }
        steps.push_back(Step{t, count});
    }
    return steps;
}

namespace {

/// The cards in use when nothing waits: opened as needed, best fit onto those in use.
class OpenCards {
  public:
    OpenCards(Capacity card, double* slowdown_us, double* run_us)
        : m_card(card), m_slowdown_us(slowdown_us), m_run_us(run_us) {}

    int in_use() const { return m_in_use; }

    /// Adds the MPS stretch of the time since the last call.
    void accrue(TimeUs t) {
        for (const Open& o : m_open) {
            if (o.units > 0 && m_slowdown_us != nullptr && m_run_us != nullptr) {
                const double span = static_cast<double>(t - m_last) * o.units;
                *m_run_us += span;
                *m_slowdown_us += span * std::max(1.0, o.compute / 100.0);
            }
        }
        m_last = t;
    }

    std::vector<int> place(const Request& req) {
        std::vector<int> got;
        if (req.gpus == 1) {
            if (const std::optional<std::size_t> c = best_fit(req.need)) {
                got.push_back(static_cast<int>(*c));
            }
        }
        for (std::size_t c = 0; c < m_open.size() && static_cast<int>(got.size()) < req.gpus; ++c) {
            if (m_open[c].units == 0) {
                got.push_back(static_cast<int>(c));
            }
        }
        while (static_cast<int>(got.size()) < req.gpus) {
            m_open.push_back(Open{m_card, 0, 0});
            got.push_back(static_cast<int>(m_open.size() - 1));
        }
        change(got, req, 1);
        return got;
    }

    void release(const std::vector<int>& cards, const Request& req) { change(cards, req, -1); }

  private:
    struct Open {
        Capacity free;
        int units = 0;
        double compute = 0;
    };

    std::optional<std::size_t> best_fit(Capacity need) const {
        std::optional<std::size_t> best;
        std::int64_t best_left = 0;
        for (std::size_t c = 0; c < m_open.size(); ++c) {
            const Open& o = m_open[c];
            if (o.units > 0 && o.free.a >= need.a && o.free.b >= need.b) {
                const std::int64_t left =
                    (o.free.a - need.a) * m_card.b + (o.free.b - need.b) * m_card.a;
                if (!best || left < best_left) {
                    best = c;
                    best_left = left;
                }
            }
        }
        return best;
    }

    /// Takes (`sign` 1) or gives back (−1) `req`'s need on `cards`.
    void change(const std::vector<int>& cards, const Request& req, int sign) {
        const Capacity need = req.gpus > 1 ? m_card : req.need;
        for (int c : cards) {
            Open& o = m_open[static_cast<std::size_t>(c)];
            m_in_use += (sign > 0 && o.units == 0) ? 1 : 0;
            o.units += sign;
            m_in_use -= (sign < 0 && o.units == 0) ? 1 : 0;
            o.free.a -= sign * need.a;
            o.free.b -= sign * need.b;
            o.compute += sign * req.compute_pct;
        }
    }

    Capacity m_card;
    double* m_slowdown_us;
    double* m_run_us;
    std::vector<Open> m_open;
    int m_in_use = 0;
    TimeUs m_last = 0;
};

} // namespace

std::vector<Step> unbounded(const std::vector<Request>& requests, Capacity card,
                            double* slowdown_us, double* run_us) {
    OpenCards cards(card, slowdown_us, run_us);
    std::vector<std::vector<int>> placed(requests.size());
    std::priority_queue<Departure, std::vector<Departure>, std::greater<>> running;
    std::vector<Step> steps;
    if (!requests.empty()) {
        cards.accrue(requests.front().arrival);
    }
    std::size_t next = 0;
    while (next < requests.size() || !running.empty()) {
        const TimeUs t_arrival = next < requests.size() ? requests[next].arrival : k_never;
        const TimeUs t = running.empty() ? t_arrival : std::min(t_arrival, running.top().end);
        cards.accrue(t);
        while (!running.empty() && running.top().end == t) {
            const std::size_t r = running.top().request;
            running.pop();
            cards.release(placed[r], requests[r]);
        }
        for (; next < requests.size() && requests[next].arrival == t; ++next) {
            placed[next] = cards.place(requests[next]);
            running.push(Departure{t + requests[next].duration, next});
        }
        if (!steps.empty() && steps.back().t == t) {
            steps.back().count = cards.in_use();
        } else if (steps.empty() || steps.back().count != cards.in_use()) {
            steps.push_back(Step{t, cards.in_use()});
        }
    }
    return steps;
}

} // namespace gua::plan
