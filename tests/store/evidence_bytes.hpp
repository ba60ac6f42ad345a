// SPDX-License-Identifier: Apache-2.0
// The evidence BLOB's two byte formats as docs/schema.md describes them, written out here on their
// own (not with the store's code) so that tests can pin the format and produce old files.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gua::testing {

/// Field number → its 64 bits (a double's bits for a double field).
using EvidenceFields = std::map<unsigned, std::uint64_t>;

/// True for the card evidence fields that hold doubles (pools 0–7 and 91, profile sums 18–23).
inline bool is_card_double(unsigned number) {
    return number <= 7 || (number >= 18 && number <= 23) || number == 91;
}

/// One entry of the format before schema 9: the number, then 8 little-endian bytes.
inline std::string legacy_entry(unsigned number, std::uint64_t bits) {
    std::string e(1, static_cast<char>(number));
    for (int k = 0; k < 8; ++k) {
        e.push_back(static_cast<char>((bits >> (8 * k)) & 0xFF));
    }
    return e;
}

/// `fields` as gua wrote them before schema 9 (ascending numbers, zero fields left out).
inline std::string legacy_blob(const EvidenceFields& fields) {
    std::string out;
    for (const auto& [number, bits] : fields) {
        if (bits != 0) {
            out += legacy_entry(number, bits);
        }
    }
    return out;
}

/// Reads a BLOB of the compact format (schema 9); nullopt when it is not exactly one such BLOB.
/// `is_double` says which numbers hold doubles (their integers are stored as the double's bits).
inline std::optional<EvidenceFields> read_compact(std::string_view blob,
                                                  bool (*is_double)(unsigned)) {
    std::size_t at = 0;
    const auto next = [&](std::uint64_t& v) {
        v = 0;
        for (int shift = 0; at < blob.size() && shift < 64; shift += 7) {
            const auto b = static_cast<unsigned char>(blob[at++]);
            v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
            if (b < 0x80) {
                return true;
            }
        }
        return false;
    };
    const auto signed_of = [](std::uint64_t z) {
        return static_cast<std::int64_t>(z >> 1) * ((z & 1) != 0 ? -1 : 1) - ((z & 1) != 0 ? 1 : 0);
    };
    if (blob.empty() || static_cast<unsigned char>(blob[at++]) != 0x89) {
        return std::nullopt;
    }
    std::uint64_t groups = 0;
    if (!next(groups)) {
        return std::nullopt;
    }
    std::vector<unsigned> numbers;
    for (unsigned g = 0; g < 64; ++g) {
        if ((groups >> g) & 1) {
            if (at >= blob.size()) {
                return std::nullopt;
            }
            const auto present = static_cast<unsigned char>(blob[at++]);
            for (unsigned j = 0; j < 8; ++j) {
                if ((present >> j) & 1) {
                    numbers.push_back(8 * g + j);
                }
            }
        }
    }
    EvidenceFields out;
    std::vector<std::int64_t> integers;
    for (const unsigned number : numbers) {
        std::uint64_t code = 0;
        if (!next(code)) {
            return std::nullopt;
        }
        const std::uint64_t payload = code >> 2;
        std::int64_t n = 0;
        switch (code & 3) {
        case 0: // an integer, zigzag
            n = signed_of(payload);
            break;
        case 1: // the integer stored `payload` integers before the latest one
            if (payload >= integers.size()) {
                return std::nullopt;
            }
            n = integers[integers.size() - 1 - payload];
            break;
        case 2: { // m × 10^(k+1): m zigzag above the low 4 bits holding k
            n = signed_of(payload >> 4);
            for (std::uint64_t k = 0; k <= (payload & 15); ++k) {
                n *= 10;
            }
            break;
        }
        default: { // 8 raw little-endian bytes
            if (payload != 0 || at + 8 > blob.size()) {
                return std::nullopt;
            }
            std::uint64_t bits = 0;
            for (int k = 0; k < 8; ++k) {
                bits |= static_cast<std::uint64_t>(static_cast<unsigned char>(blob[at++]))
                        << (8 * k);
            }
            out[number] = bits;
            continue;
        }
        }
        integers.push_back(n);
        if (is_double(number)) {
            const auto d = static_cast<double>(n);
            std::memcpy(&out[number], &d, sizeof d);
        } else {
            out[number] = static_cast<std::uint64_t>(n);
        }
    }
    if (at != blob.size()) {
        return std::nullopt;
    }
    return out;
}

/// No field holds a double (the identity evidence).
inline bool no_doubles(unsigned) {
    return false;
}

} // namespace gua::testing
