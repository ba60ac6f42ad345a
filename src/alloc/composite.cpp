// SPDX-License-Identifier: Apache-2.0
// CompositeSource: several allocation sources of one host answered as one.
#include "alloc/source.hpp"
#include "alloc/timeline.hpp"

#include <algorithm>
#include <tuple>

namespace gua::alloc {
namespace {

// The segment of `segments` (covering the span in order) that contains `at`.
const Segment& covering(const std::vector<Segment>& segments, TimeUs at) {
    auto it = std::upper_bound(segments.begin(), segments.end(), at,
                               [](TimeUs t, const Segment& s) { return t < s.end; });
    return it == segments.end() ? segments.back() : *it;
}

Segment combine(const std::vector<const Segment*>& parts) {
    Segment out;
    out.state = AllocationState::unallocated;
    for (const Segment* part : parts) {
        if (part->state == AllocationState::allocated) {
            out.state = AllocationState::allocated;
            out.allocations.insert(out.allocations.end(), part->allocations.begin(),
                                   part->allocations.end());
        }
    }
    if (out.state == AllocationState::allocated) {
        out.reason.clear();
        return out;
    }
    for (const Segment* part : parts) {
        if (part->state == AllocationState::unknown) {
            out.state = AllocationState::unknown;
            out.reason += (out.reason.empty() ? "" : "; ") + part->reason;
        }
    }
    return out;
}

class CompositeSource final : public AllocationSource {
  public:
    explicit CompositeSource(std::vector<std::unique_ptr<AllocationSource>> sources)
        : m_sources(std::move(sources)) {}

    std::string describe() const override {
        std::string text;
        for (const auto& source : m_sources) {
            text += (text.empty() ? "" : ", ") + source->describe();
        }
        return text;
    }

    std::vector<Segment> query(const CardQuery& card, TimeUs begin, TimeUs end) const override {
        std::vector<std::vector<Segment>> answers;
        std::vector<TimeUs> edges{begin, end};
        for (const auto& source : m_sources) {
            answers.push_back(source->query(card, begin, end));
            for (const Segment& segment : answers.back()) {
                edges.push_back(segment.begin);
            }
        }
        std::sort(edges.begin(), edges.end());
        edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
        std::vector<Segment> out;
        for (std::size_t i = 0; i + 1 < edges.size() && !answers.empty(); ++i) {
            std::vector<const Segment*> parts;
            for (const auto& answer : answers) {
                parts.push_back(&covering(answer, edges[i]));
            }
            Segment piece = combine(parts);
            std::sort(piece.allocations.begin(), piece.allocations.end(),
                      [](const Allocation& a, const Allocation& b) {
                          return std::tie(a.kind, a.id) < std::tie(b.kind, b.id);
                      });
            piece.begin = edges[i];
            piece.end = edges[i + 1];
            append_merged(out, std::move(piece));
        }
        return out;
    }

    void forget_before(TimeUs before) override {
        for (const auto& source : m_sources) {
            source->forget_before(before);
        }
    }

  private:
    std::vector<std::unique_ptr<AllocationSource>> m_sources;
};

} // namespace

std::unique_ptr<AllocationSource>
make_composite_source(std::vector<std::unique_ptr<AllocationSource>> sources) {
    if (sources.size() == 1) {
        return std::move(sources.front());
    }
    return std::make_unique<CompositeSource>(std::move(sources));
}

} // namespace gua::alloc
