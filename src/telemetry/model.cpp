// SPDX-License-Identifier: Apache-2.0
// Names of telemetry enums; the uuids of stand-ins for cards that did not open.
#include "telemetry/model.hpp"

#include <string_view>

namespace gua::telemetry {

const char* to_string(ProcessType type) {
    switch (type) {
    case ProcessType::compute:
        return "compute";
    case ProcessType::graphics:
        return "graphics";
    case ProcessType::mps:
        return "mps";
    }
    return "compute";
}

namespace {
constexpr std::string_view k_stand_in_prefix = "unopened-";
}

std::string stand_in_uuid(int index) {
    return std::string(k_stand_in_prefix) + std::to_string(index);
}

bool is_stand_in(const std::string& uuid) {
    return uuid.starts_with(k_stand_in_prefix);
}

} // namespace gua::telemetry
