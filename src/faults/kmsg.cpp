// SPDX-License-Identifier: Apache-2.0
// Parsers of /dev/kmsg records and the NVIDIA driver's Xid lines (see kmsg.hpp).
#include "faults/kmsg.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <utility>

namespace gua::faults {

namespace {

template <typename T> std::optional<T> number(std::string_view s, int base = 10) {
    T value{};
    const char* end = s.data() + s.size();
    const auto [ptr, ec] = std::from_chars(s.data(), end, value, base);
    if (s.empty() || ec != std::errc{} || ptr != end) {
        return std::nullopt;
    }
    return value;
}

bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        if (c >= 'A' && c <= 'F') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    return out;
}

/// "dddd:bb:dd" at the front of `s` (a domain of 1–8 hex digits, a bus and a device of 1–2),
/// lowercase; consumes it. Anything else, or a longer segment, is not an address.
std::optional<std::string> take_pci(std::string_view& s) {
    constexpr std::array<std::size_t, 3> k_max_digits = {8, 2, 2};
    std::array<std::size_t, 3> digits{};
    std::size_t part = 0;
    std::size_t n = 0;
    for (; n < s.size(); ++n) {
        if (s[n] == ':' && part < 2 && digits[part] > 0) {
            ++part;
        } else if (is_hex(s[n]) && digits[part] < k_max_digits[part]) {
            ++digits[part];
        } else if (is_hex(s[n])) {
            return std::nullopt; // a segment too long
        } else {
            break;
        }
    }
    if (part != 2 || digits[2] == 0) {
        return std::nullopt;
    }
    std::string pci = lower(s.substr(0, n));
    s.remove_prefix(n);
    return pci;
}

/// Consumes `prefix` at the front of `s`; false (s unchanged) when it is not there.
bool take(std::string_view& s, std::string_view prefix) {
    if (!s.starts_with(prefix)) {
        return false;
    }
    s.remove_prefix(prefix.size());
    return true;
}

/// Decimal digits at the front of `s` (consumed), as T.
template <typename T> std::optional<T> take_number(std::string_view& s) {
    std::size_t n = 0;
    while (n < s.size() && s[n] >= '0' && s[n] <= '9' && n < 20) {
        ++n;
    }
    const auto value = number<T>(s.substr(0, n));
    if (value) {
        s.remove_prefix(n);
    }
    return value;
}

/// " GPU-I:NN" / " GPU-CI:NN" inside the parentheses.
void take_instances(std::string_view& s, XidLine& out) {
    if (take(s, " GPU-I:")) {
        out.gpu_instance = take_number<unsigned>(s);
    }
    if (take(s, " GPU-CI:")) {
        out.compute_instance = take_number<unsigned>(s);
    }
}

/// After the code: `, pid=P, name=NAME, rest` in that order, each part optional.
void take_process(std::string_view s, XidLine& out) {
    if (take(s, ", pid=")) {
        const std::size_t end = std::min(s.find(','), s.size());
        out.pid = number<std::uint32_t>(s.substr(0, end));
        s.remove_prefix(end);
        if (take(s, ", name=")) {
            const std::size_t stop = std::min(s.find(", "), s.size());
            const std::string_view name = s.substr(0, stop);
            out.name = name == "<unknown>" || name == "'<unknown>'" ? "" : std::string(name);
            s.remove_prefix(stop);
        }
    }
    take(s, ", ") || take(s, ",");
    out.message = std::string(s);
}

} // namespace

std::optional<KmsgRecord> parse_kmsg_record(std::string_view line) {
    const std::size_t semi = line.find(';');
    if (line.empty() || line.front() == ' ' || semi == std::string_view::npos) {
        return std::nullopt;
    }
    std::string_view head = line.substr(0, semi);
    std::string_view fields[3];
    for (std::string_view& f : fields) {
        const std::size_t comma = head.find(',');
        if (comma == std::string_view::npos) {
            return std::nullopt;
        }
        f = head.substr(0, comma);
        head.remove_prefix(comma + 1);
    }
    const auto prio = number<int>(fields[0]);
    const auto seq = number<std::uint64_t>(fields[1]);
    const auto ts = number<std::int64_t>(fields[2]);
    if (!prio || !seq || !ts || *prio < 0 || *ts < 0) {
        return std::nullopt;
    }
    return KmsgRecord{*prio, *seq, *ts, line.substr(semi + 1)};
}

std::optional<XidLine> parse_xid_line(std::string_view text) {
    const std::size_t at = text.find("NVRM: Xid (");
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    std::string_view s = text.substr(at + 11);
    take(s, "PCI:");
    XidLine out;
    const auto pci = take_pci(s);
    if (!pci) {
        return std::nullopt;
    }
    out.pci = *pci;
    take_instances(s, out);
    if (!take(s, "): ")) {
        return std::nullopt;
    }
    const auto code = take_number<int>(s);
    if (!code) {
        return std::nullopt;
    }
    out.xid = *code;
    take_process(s, out);
    return out;
}

std::optional<GpuAtPci> parse_gpu_at_pci(std::string_view text) {
    const std::size_t at = text.find("NVRM: GPU at PCI:");
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    std::string_view s = text.substr(at + 17);
    const auto pci = take_pci(s);
    if (!pci || !take(s, ": GPU-")) {
        return std::nullopt;
    }
    std::size_t n = 0;
    while (n < s.size() && n < 64 &&
           (std::isalnum(static_cast<unsigned char>(s[n])) != 0 || s[n] == '-')) {
        ++n;
    }
    if (n == 0) {
        return std::nullopt;
    }
    std::string uuid = "GPU-";
    uuid.append(s.substr(0, n));
    return GpuAtPci{*pci, std::move(uuid)};
}

std::optional<FallenOff> parse_fallen_off(std::string_view text) {
    std::string_view s;
    bool multi = false;
    if (const std::size_t at = text.find("NVRM: The NVIDIA GPU "); at != std::string_view::npos) {
        s = text.substr(at + 21);
        multi = true;
    } else if (const std::size_t gpu = text.find("NVRM: GPU ");
               gpu != std::string_view::npos &&
               text.find("fallen off the bus") != std::string_view::npos) {
        s = text.substr(gpu + 10);
    } else {
        return std::nullopt;
    }
    const auto pci = take_pci(s);
    if (!pci || !take(s, ".")) {
        return std::nullopt;
    }
    return FallenOff{*pci, multi};
}

std::string kmsg_pci_of(std::string_view bus_id) {
    std::string_view s = bus_id;
    const auto pci = take_pci(s);
    if (!pci) {
        return {};
    }
    const std::size_t first = pci->find(':');
    const std::size_t second = pci->find(':', first + 1);
    const auto padded = [](std::string part, std::size_t width) {
        while (part.size() < width) {
            part.insert(part.begin(), '0');
        }
        return part.substr(part.size() - width);
    };
    return padded(pci->substr(0, first), 4) + ":" +
           padded(pci->substr(first + 1, second - first - 1), 2) + ":" +
           padded(pci->substr(second + 1), 2);
}

} // namespace gua::faults
