// SPDX-License-Identifier: Apache-2.0
// Facts about this build that are only known when it is compiled: version and git commit.
#pragma once

#include "core/version.hpp"

namespace gua {

/// The git commit gua was built from: 12 hex digits, with "-dirty" when the tree had uncommitted
/// changes; "unknown" when built outside a git checkout (or -DGUA_GIT_COMMIT= when given).
const char* build_commit();

} // namespace gua
