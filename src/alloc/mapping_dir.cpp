// SPDX-License-Identifier: Apache-2.0
// One scan of a job-mapping directory, reading each file as hostile input.
#include "alloc/mapping_dir.hpp"

#include "core/fd.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace gua::alloc {
namespace {

constexpr std::size_t k_max_id_length = 64;
constexpr std::size_t k_max_index_digits = 4;

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_id_char(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           c == '.' || c == ':' || c == '+' || c == '-';
}

bool valid_id(std::string_view id) {
    return !id.empty() && id.size() <= k_max_id_length && id != "." && id != ".." &&
           std::all_of(id.begin(), id.end(), is_id_char);
}

std::optional<unsigned> parse_small_number(std::string_view text) {
    if (text.empty() || text.size() > k_max_index_digits ||
        !std::all_of(text.begin(), text.end(), is_digit)) {
        return std::nullopt;
    }
    unsigned value = 0;
    for (char c : text) {
        value = value * 10 + static_cast<unsigned>(c - '0');
    }
    return value;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r')) {
        text.remove_prefix(1);
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
        text.remove_suffix(1);
    }
    return text;
}

std::vector<std::string_view> lines_of(std::string_view content) {
    std::vector<std::string_view> lines;
    while (!content.empty()) {
        const std::size_t newline = content.find('\n');
        lines.push_back(trim(content.substr(0, newline)));
        content.remove_prefix(newline == std::string_view::npos ? content.size() : newline + 1);
    }
    return lines;
}

// The file `name` under `dir_fd`, refused unless it is a regular file of bounded size.
Result<std::string> read_bounded(int dir_fd, const std::string& name) {
    UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) {
        const ErrorKind kind = errno == ENOENT ? ErrorKind::gone : ErrorKind::other;
        return Error{name + ": " + std::strerror(errno), kind};
    }
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
        return Error{name + ": not a regular file"};
    }
    std::string content(k_max_mapping_file_bytes + 1, '\0');
    std::size_t used = 0;
    while (used < content.size()) {
        const ssize_t got = ::read(fd.get(), content.data() + used, content.size() - used);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            return Error{name + ": " + std::strerror(errno)};
        }
        if (got == 0) {
            break;
        }
        used += static_cast<std::size_t>(got);
    }
    if (used > k_max_mapping_file_bytes) {
        return Error{name + ": larger than " + std::to_string(k_max_mapping_file_bytes) + " bytes"};
    }
    content.resize(used);
    return content;
}

// The owner of job `id` from its sidecar file; a missing file (a dcgm-exporter-only prolog)
// leaves user and account empty.
Result<OwnerInfo> read_owner(int owner_dir_fd, const std::string& id) {
    if (owner_dir_fd < 0) {
        return OwnerInfo{};
    }
    Result<std::string> content = read_bounded(owner_dir_fd, id);
    if (!content) {
        if (content.error().kind == ErrorKind::gone) {
            return OwnerInfo{};
        }
        return Error{std::string(k_owner_dir) + "/" + content.error().message};
    }
    Result<OwnerInfo> owner = parse_owner(content.value());
    if (!owner) {
        return Error{std::string(k_owner_dir) + "/" + id + ": " + owner.error().message};
    }
    return owner;
}

std::vector<std::string> list_names(DIR* dir) {
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(dir)) {
        names.emplace_back(entry->d_name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace

std::optional<DeviceRef> parse_mapping_name(std::string_view name) {
    const std::size_t dot = name.find('.');
    DeviceRef device;
    device.index = parse_small_number(name.substr(0, dot));
    if (!device.index) {
        return std::nullopt;
    }
    if (dot != std::string_view::npos) {
        device.gpu_instance = parse_small_number(name.substr(dot + 1));
        if (!device.gpu_instance) {
            return std::nullopt;
        }
    }
    return device;
}

Result<std::vector<std::string>> parse_job_ids(std::string_view content) {
    std::vector<std::string> ids;
    std::size_t number = 0;
    for (std::string_view line : lines_of(content)) {
        ++number;
        if (line.empty()) {
            continue;
        }
        if (!valid_id(line)) {
            return Error{"line " + std::to_string(number) + ": not a job id"};
        }
        ids.emplace_back(line);
    }
    return ids;
}

Result<OwnerInfo> parse_owner(std::string_view content) {
    OwnerInfo owner;
    std::size_t number = 0;
    for (std::string_view line : lines_of(content)) {
        ++number;
        const std::size_t equals = line.find('=');
        if (line.empty() || line.starts_with('#') || equals == std::string_view::npos) {
            continue;
        }
        const std::string_view key = trim(line.substr(0, equals));
        const std::string_view value = trim(line.substr(equals + 1));
        const std::string where = "line " + std::to_string(number) + ": ";
        if (key == "kind") {
            const auto kind = parse_kind(value);
            if (!kind || *kind == AllocationKind::pod) {
                return Error{where + "kind must be slurm-job or reservation"};
            }
            owner.kind = *kind;
        } else if (key == "user" || key == "account") {
            if (!value.empty() && !valid_id(value)) {
                return Error{where + std::string(key) + " is not a plain name"};
            }
            (key == "user" ? owner.user : owner.account) = value;
        }
    }
    return owner;
}

Snapshot read_mapping_dir(const std::string& dir) {
    Snapshot snapshot;
    UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    DIR* stream = dir_fd.valid() ? ::fdopendir(::dup(dir_fd.get())) : nullptr;
    if (stream == nullptr) {
        snapshot.readable = false;
        snapshot.error = "mapping directory " + dir + ": " + std::strerror(errno);
        return snapshot;
    }
    const std::vector<std::string> names = list_names(stream);
    ::closedir(stream);
    const UniqueFd owner_fd(::openat(dir_fd.get(), std::string(k_owner_dir).c_str(),
                                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    std::map<std::string, Result<OwnerInfo>> owners;
    for (const std::string& name : names) {
        const std::optional<DeviceRef> device = parse_mapping_name(name);
        if (!device) {
            continue;
        }
        Result<std::string> content = read_bounded(dir_fd.get(), name);
        if (!content && content.error().kind == ErrorKind::gone) {
            continue; // removed since the listing: the next scan sees the directory as it is
        }
        Result<std::vector<std::string>> ids =
            content ? parse_job_ids(content.value())
                    : Result<std::vector<std::string>>(content.error());
        if (!ids) {
            const std::string prefix = content ? name + ": " : std::string();
            snapshot.unknown.emplace_back(*device, prefix + ids.error().message);
            continue;
        }
        for (const std::string& id : ids.value()) {
            auto found = owners.try_emplace(id, read_owner(owner_fd.get(), id)).first;
            if (!found->second) {
                snapshot.unknown.emplace_back(*device, found->second.error().message);
                continue;
            }
            const OwnerInfo& owner = found->second.value();
            snapshot.entries.push_back(
                {*device, Allocation{owner.kind, id, owner.user, owner.account}});
        }
    }
    return snapshot;
}

} // namespace gua::alloc
