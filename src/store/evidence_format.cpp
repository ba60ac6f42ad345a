// SPDX-License-Identifier: Apache-2.0
// The compact evidence format: a presence bitmap in groups of eight fields, then one varint per
// present field whose two low bits say how it holds the value (an integer, a copy of an earlier
// one, a decimal m × 10^k, or a double's raw bits); and the reader of the format before it.
#include "store/evidence_format.hpp"

#include "store/codec.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

namespace gua::store::evidence_format {

namespace {

static_assert(std::endian::native == std::endian::little, "the BLOB layout is little-endian");

/// First byte of a BLOB in the compact format (schema 9); a legacy BLOB (schema 3 to 8) starts
/// with a field number, always below 0x80.
constexpr unsigned char k_compact_marker = 0x89;

/// How a value is stored: the two low bits of its varint, the payload above them.
enum Kind : std::uint64_t { k_integer = 0, k_copy = 1, k_decimal = 2, k_raw = 3 };

/// 10^k for the decimal kind's exponents (k = 1–16).
constexpr std::array<std::int64_t, 17> k_pow10 = [] {
    std::array<std::int64_t, 17> p{1};
    for (std::size_t k = 1; k < p.size(); ++k) {
        p[k] = p[k - 1] * 10;
    }
    return p;
}();

void put_varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out.push_back(static_cast<char>((v & 0x7F) | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<char>(v));
}

std::size_t varint_size(std::uint64_t v) {
    std::size_t n = 1;
    for (; v >= 0x80; v >>= 7) {
        ++n;
    }
    return n;
}

/// Reads the varint at `at` (advanced past it); false when truncated or wider than 64 bits.
bool get_varint(std::string_view in, std::size_t& at, std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (at >= in.size()) {
            return false;
        }
        const auto b = static_cast<unsigned char>(in[at++]);
        if (shift == 63 && b > 1) {
            return false;
        }
        v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
        if (b < 0x80) {
            return true;
        }
    }
    return false;
}

/// A field's value: its 64 bits, and the integer it equals exactly if it is one (a double whose
/// integer converts back to the same bits; -0.0, fractions and NaN are not).
struct Value {
    std::uint64_t bits = 0;
    std::optional<std::int64_t> integer;
};

Value value_of(const Field& f) {
    if (const auto* d = std::get_if<double*>(&f.value)) {
        const double x = **d;
        Value v{std::bit_cast<std::uint64_t>(x), std::nullopt};
        if (x >= -0x1p63 && x < 0x1p63 && std::trunc(x) == x) {
            const auto n = static_cast<std::int64_t>(x);
            if (std::bit_cast<std::uint64_t>(static_cast<double>(n)) == v.bits) {
                v.integer = n;
            }
        }
        return v;
    }
    const DurationUs n = *std::get<DurationUs*>(f.value);
    return Value{static_cast<std::uint64_t>(n), n};
}

/// The shortest varint (payload << 2 | kind) for integer `n`, given the integers stored before
/// it in this BLOB; nullopt when the raw bits take no more room (|n| ≥ 2^60 or so).
std::optional<std::uint64_t> integer_code(std::int64_t n, const std::vector<std::int64_t>& seen) {
    std::optional<std::uint64_t> best;
    const auto consider = [&](std::uint64_t code) {
        if (!best || varint_size(code) < varint_size(*best)) {
            best = code;
        }
    };
    if (const std::uint64_t z = codec::zigzag(n); z < (std::uint64_t{1} << 62)) {
        consider(z << 2 | k_integer);
    }
    if (const auto it = std::find(seen.rbegin(), seen.rend(), n); it != seen.rend()) {
        consider(static_cast<std::uint64_t>(it - seen.rbegin()) << 2 | k_copy);
    }
    if (n != 0 && n % 10 == 0) {
        std::size_t k = 0;
        std::int64_t m = n;
        while (m % 10 == 0 && k < 16) {
            m /= 10;
            ++k;
        }
        if (const std::uint64_t z = codec::zigzag(m); z < (std::uint64_t{1} << 56)) {
            consider(((z << 4 | (k - 1)) << 2) | k_decimal);
        }
    }
    if (best && varint_size(*best) > 1 + sizeof(std::uint64_t)) {
        return std::nullopt; // the raw bits take no more
    }
    return best;
}

std::string encode_compact(std::span<const Field> fields) {
    std::uint64_t groups = 0;
    std::array<unsigned char, 64> group_bits{};
    for (const Field& f : fields) {
        if (value_of(f).bits != 0) {
            const unsigned n = f.number;
            groups |= std::uint64_t{1} << (n / 8);
            group_bits[n / 8] |= static_cast<unsigned char>(1U << (n % 8));
        }
    }
    if (groups == 0) {
        return {};
    }
    std::string out(1, static_cast<char>(k_compact_marker));
    put_varint(out, groups);
    for (std::size_t g = 0; g < group_bits.size(); ++g) {
        if (((groups >> g) & 1) != 0) {
            out.push_back(static_cast<char>(group_bits[g]));
        }
    }
    std::vector<std::int64_t> seen;
    for (const Field& f : fields) { // numbers ascend with the table order
        const Value v = value_of(f);
        if (v.bits == 0) {
            continue;
        }
        const std::optional<std::uint64_t> code =
            v.integer ? integer_code(*v.integer, seen) : std::nullopt;
        if (code) {
            put_varint(out, *code);
            seen.push_back(*v.integer);
            continue;
        }
        out.push_back(static_cast<char>(k_raw));
        char bytes[sizeof v.bits];
        std::memcpy(bytes, &v.bits, sizeof v.bits);
        out.append(bytes, sizeof bytes);
    }
    return out;
}

const Field* field_numbered(std::span<const Field> fields, unsigned number) {
    if (number < fields.size() && fields[number].number == number) {
        return &fields[number];
    }
    const auto f = std::find_if(fields.begin(), fields.end(),
                                [number](const Field& x) { return x.number == number; });
    return f == fields.end() ? nullptr : &*f;
}

void assign_bits(const Field& f, std::uint64_t bits) {
    if (auto* d = std::get_if<double*>(&f.value)) {
        **d = std::bit_cast<double>(bits);
    } else {
        *std::get<DurationUs*>(f.value) = static_cast<DurationUs>(bits);
    }
}

void assign_integer(const Field& f, std::int64_t n) {
    if (auto* d = std::get_if<double*>(&f.value)) {
        **d = static_cast<double>(n);
    } else {
        *std::get<DurationUs*>(f.value) = n;
    }
}

/// Decodes the compact format; stops at a truncated or malformed value (what came before stays).
void decode_compact(std::string_view blob, std::span<const Field> fields) {
    std::size_t at = 1;
    std::uint64_t groups = 0;
    if (!get_varint(blob, at, groups)) {
        return;
    }
    std::vector<unsigned> numbers;
    for (unsigned g = 0; g < 64; ++g) {
        if (((groups >> g) & 1) == 0) {
            continue;
        }
        if (at >= blob.size()) {
            return;
        }
        const auto bits = static_cast<unsigned char>(blob[at++]);
        for (unsigned j = 0; j < 8; ++j) {
            if (((bits >> j) & 1) != 0) {
                numbers.push_back(g * 8 + j);
            }
        }
    }
    std::vector<std::int64_t> seen;
    for (const unsigned number : numbers) {
        std::uint64_t code = 0;
        if (!get_varint(blob, at, code)) {
            return;
        }
        const Field* f = field_numbered(fields, number); // nullptr: a later number, skipped
        const std::uint64_t payload = code >> 2;
        std::int64_t n = 0;
        switch (code & 3) {
        case k_raw: {
            std::uint64_t bits = 0;
            if (payload != 0 || at + sizeof bits > blob.size()) {
                return;
            }
            std::memcpy(&bits, blob.data() + at, sizeof bits);
            at += sizeof bits;
            if (f != nullptr) {
                assign_bits(*f, bits);
            }
            continue;
        }
        case k_integer:
            n = codec::unzigzag(payload);
            break;
        case k_copy:
            if (payload >= seen.size()) {
                return;
            }
            n = seen[seen.size() - 1 - payload];
            break;
        default: // k_decimal
            if (__builtin_mul_overflow(codec::unzigzag(payload >> 4), k_pow10[(payload & 15) + 1],
                                       &n)) {
                return;
            }
            break;
        }
        seen.push_back(n);
        if (f != nullptr) {
            assign_integer(*f, n);
        }
    }
}

/// Decodes a BLOB of schema 3 to 8: (number, 8 little-endian bytes) entries.
void decode_legacy(std::string_view blob, std::span<const Field> fields) {
    constexpr std::size_t k_entry = 1 + sizeof(std::uint64_t);
    for (std::size_t at = 0; at + k_entry <= blob.size(); at += k_entry) {
        std::uint64_t bits = 0;
        std::memcpy(&bits, blob.data() + at + 1, sizeof bits);
        if (const Field* f = field_numbered(fields, static_cast<unsigned char>(blob[at]))) {
            assign_bits(*f, bits);
        }
    }
}

} // namespace

std::string encode(std::span<const Field> fields) {
    return encode_compact(fields);
}

void decode(std::string_view blob, std::span<const Field> fields) {
    if (blob.empty()) {
        return;
    }
    if (static_cast<unsigned char>(blob[0]) == k_compact_marker) {
        decode_compact(blob, fields);
    } else {
        decode_legacy(blob, fields);
    }
}

} // namespace gua::store::evidence_format
