// Control-socket requests (docs/control-protocol.md): one JSON object per line,
// parsed and checked here, before anything acts on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace fragd {

// Longest request line fragd reads; a longer one is refused and the connection closed.
constexpr size_t kMaxRequestBytes = 16 * 1024;

// Read requests only look; act requests change the host or the daemon.
enum class Access { Read, Act };

struct ControlRequest {
  std::string cmd;  // hist, status, trace, map, action (read); compact, pool, reload (act)
  Access access = Access::Read;
  std::optional<int> node;            // compact, pool: 0..4095
  std::optional<uint64_t> size_kib;   // pool: 4 KiB .. 1 TiB (also 2^40 KiB)
  std::optional<uint64_t> count;      // pool: 0 .. 2^40
  std::optional<uint64_t> id;         // action
  std::optional<int64_t> max_age_ns;  // map: >= 0
};

// Parses one request line (without its newline). Errors say what is wrong in
// terms of the protocol: not JSON, not an object, no "cmd", an unknown command,
// a field the command does not take, a field of the wrong type or range, or a
// required field missing.
Result<ControlRequest> parse_request(std::string_view line);

}  // namespace fragd
