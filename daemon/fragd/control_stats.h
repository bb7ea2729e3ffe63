// SPDX-License-Identifier: Apache-2.0
// What the control server counts about its connections, by reason; exported
// as fragd_control_clients_dropped_total{reason} and
// fragd_control_clients_refused_total{reason}, every reason from the start.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>

namespace fragd {

// Why fragd closed a connection.
enum class DropReason {
  BadRequest,    // not a request, or a line over kMaxRequestBytes: answered with the reason
  LineDeadline,  // a started request line did not end within the line deadline: answered with the reason
  Idle,          // asked nothing for the idle limit (trace subscribers excepted)
  OutputFull,    // its queued output would pass the output cap
  WriteTimeout,  // its queued output did not drain within the write timeout
  Count
};
inline constexpr const char* kDropReasonNames[] = {"bad_request", "line_deadline", "idle", "output_full",
                                                   "write_timeout"};

// Why fragd refused a connection (answered with the reason, then closed).
enum class RefuseReason {
  ServerFull,  // every slot taken, or every slot open to users other than root
  UidLimit,    // that user (not root) holds its share of connections already
  Count
};
inline constexpr const char* kRefuseReasonNames[] = {"server_full", "uid_limit"};

static_assert(std::size(kDropReasonNames) == static_cast<size_t>(DropReason::Count));
static_assert(std::size(kRefuseReasonNames) == static_cast<size_t>(RefuseReason::Count));

struct ControlStats {
  std::array<uint64_t, static_cast<size_t>(DropReason::Count)> dropped{};
  std::array<uint64_t, static_cast<size_t>(RefuseReason::Count)> refused{};
};

}  // namespace fragd
