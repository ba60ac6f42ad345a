// SPDX-License-Identifier: Apache-2.0
// Names of telemetry enums.
#include "telemetry/model.hpp"

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

} // namespace gua::telemetry
