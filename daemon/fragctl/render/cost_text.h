// SPDX-License-Identifier: Apache-2.0
// `fragctl cost`: the measurement of fragctl/cost.h as text.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"

namespace fragd {

// `fragctl cost`: one line per program (runs, runs/s, ns per run, ns per page
// fault over the window) and a total, from measure_cost's answer (fragctl/cost.h).
// Error naming the field when the answer is malformed.
Result<std::string> format_cost(const nlohmann::json& cost);

}  // namespace fragd
