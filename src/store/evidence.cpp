// Field table of the evidence BLOB: numbers are part of the file format, never reuse one.
#include "store/evidence.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <variant>
#include <vector>

namespace gua::store {

namespace {

static_assert(std::endian::native == std::endian::little, "the BLOB layout is little-endian");

/// A field of the evidence: a double or an integer member, addressed by pointer.
struct Field {
    std::variant<double*, DurationUs*> value;
};

std::vector<Field> fields_of(audit::PoolTimes& pools, audit::CardProfile& p) {
    std::vector<Field> f;
    f.reserve(audit::k_pool_count + 18);
    for (double& pool : pools) { // numbers 0–7
        f.push_back(Field{&pool});
    }
    for (DurationUs* v : {&p.office_us, &p.off_hours_us, &p.steady_us, &p.bursty_us,
                          &p.steady_under_us, &p.steady_compute_bound_us}) { // 8–13
        f.push_back(Field{v});
    }
    for (DurationUs& b : p.bursty_bucket_us) { // 14–17
        f.push_back(Field{&b});
    }
    for (double* v :
         {&p.bursty_util_us, &p.steady_under_util_us, &p.steady_compute_bound_util_us,
          &p.active_held_mib_us, &p.steady_under_held_mib_us, &p.idle_held_mib_us}) { // 18–23
        f.push_back(Field{v});
    }
    return f;
}

} // namespace

std::string encode_evidence(const audit::PoolTimes& pools, const audit::CardProfile& profile) {
    audit::PoolTimes pools_copy = pools;
    audit::CardProfile profile_copy = profile;
    std::string out;
    const std::vector<Field> fields = fields_of(pools_copy, profile_copy);
    for (std::size_t n = 0; n < fields.size(); ++n) {
        std::uint64_t bits = 0;
        if (const auto* d = std::get_if<double*>(&fields[n].value)) {
            bits = std::bit_cast<std::uint64_t>(**d);
        } else {
            bits = static_cast<std::uint64_t>(*std::get<DurationUs*>(fields[n].value));
        }
        if (bits == 0) {
            continue;
        }
        out.push_back(static_cast<char>(n));
        char bytes[sizeof bits];
        std::memcpy(bytes, &bits, sizeof bits);
        out.append(bytes, sizeof bits);
    }
    return out;
}

void decode_evidence(std::string_view blob, audit::PoolTimes& pools, audit::CardProfile& profile) {
    pools = audit::PoolTimes{};
    profile = audit::CardProfile{};
    const std::vector<Field> fields = fields_of(pools, profile);
    constexpr std::size_t k_entry = 1 + sizeof(std::uint64_t);
    for (std::size_t at = 0; at + k_entry <= blob.size(); at += k_entry) {
        const auto n = static_cast<unsigned char>(blob[at]);
        std::uint64_t bits = 0;
        std::memcpy(&bits, blob.data() + at + 1, sizeof bits);
        if (n >= fields.size()) {
            continue;
        }
        if (auto* d = std::get_if<double*>(&fields[n].value)) {
            **d = std::bit_cast<double>(bits);
        } else {
            *std::get<DurationUs*>(fields[n].value) = static_cast<DurationUs>(bits);
        }
    }
}

} // namespace gua::store
