// SPDX-License-Identifier: Apache-2.0
// Control-socket requests (docs/control-protocol.md): one JSON object per line,
// parsed and checked here, before anything acts on it. fragd reads them with
// from_json (through parse_request), fragctl writes them with to_json.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"

namespace fragd {

// Longest request line fragd reads; a longer one is refused and the connection closed.
constexpr size_t kMaxRequestBytes = 16 * 1024;

// Ledger blocks one map answer lists by default, and at most ("max_blocks"): 32768 of
// about 190 bytes each keep the answer within a client's 8 MiB output queue.
constexpr uint64_t kDefaultMapBlocks = 256;
constexpr uint64_t kMaxMapBlocks = 32768;

// Read requests only look; act requests change the host or the daemon.
enum class Access { Read, Act };

// Every request there is, and below, once, its name on the wire, who may send it and the
// fields it takes (each field's type and range: request.cc). A command is added here, with
// its answer (protocol/<answer>.h), the concern that answers it (concerns/<concern>/concern.cc)
// and fragctl's subcommand (fragctl/commands/<command>.cc, with fragctl/render/<answer>).
enum class Command { Hist, Status, Trace, Top, Map, Action, Compact, Pool, Reload, Preflight, Ensure, Release };

struct CommandSpec {
  Command cmd;
  const char* name;
  Access access;
  std::array<const char*, 8> fields;    // the fields it takes (nullptr-terminated)
  std::array<const char*, 2> required;  // of those, the ones it needs
};

// In the order of enum Command.
inline constexpr CommandSpec kCommands[] = {
    {Command::Hist, "hist", Access::Read, {nullptr}, {nullptr}},
    {Command::Status, "status", Access::Read, {nullptr}, {nullptr}},
    {Command::Trace, "trace", Access::Read, {nullptr}, {nullptr}},
    {Command::Top, "top", Access::Read, {nullptr}, {nullptr}},
    {Command::Map, "map", Access::Read, {"max_age_ns", "max_blocks", nullptr}, {nullptr}},
    {Command::Action, "action", Access::Read, {"id", nullptr}, {"id", nullptr}},
    {Command::Compact, "compact", Access::Act, {"node", "timeout_ms", nullptr}, {nullptr}},
    {Command::Pool, "pool", Access::Act, {"size_kib", "count", "node", "timeout_ms"}, {"size_kib", "count"}},
    {Command::Reload, "reload", Access::Act, {nullptr}, {nullptr}},
    {Command::Preflight, "preflight", Access::Read, {"size_kib", "order", "count", "node", nullptr}, {"count", nullptr}},
    {Command::Ensure, "ensure", Access::Act,
     {"size_kib", "order", "count", "node", "timeout_ms", "hold_ms", "for", nullptr}, {"count", "for"}},
    {Command::Release, "release", Access::Act, {"for", "lease", nullptr}, {nullptr}},
};

// A lease's consumer ("for"): 1..kMaxConsumerBytes of letters, digits and . _ : @ / + = -
// (a libvirt domain, a Slurm job, a pod: "libvirt:vm1", "slurm:4242", "k8s:ns/pod").
constexpr size_t kMaxConsumerBytes = 128;
// The longest lease hold (hold_ms): 7 days.
constexpr uint64_t kMaxHoldMs = 604800000;

constexpr bool in_enum_order() {
  for (size_t i = 0; i < std::size(kCommands); ++i)
    if (static_cast<size_t>(kCommands[i].cmd) != i) return false;
  return true;
}
static_assert(in_enum_order(), "kCommands lists the Commands in the enum's order");

// "hist", "status", ...: the "cmd" of the request on the wire.
std::string_view command_name(Command c);
// Every command's name, as "hist, status, ...", for messages.
std::string known_commands();

struct ControlRequest {
  Command cmd = Command::Status;
  Access access = Access::Read;
  std::optional<int> node;            // compact, pool: 0..4095
  std::optional<uint64_t> size_kib;   // pool: 4 KiB .. 1 TiB (also 2^40 KiB)
  std::optional<uint64_t> count;      // pool: 0 .. 2^40
  std::optional<uint64_t> id;         // action
  std::optional<int64_t> max_age_ns;  // map: >= 0
  // compact, pool: how long each action it queues may compact, in ms (100 .. 7 days);
  // absent: compaction.cpu_budget. fragctl sends its --timeout.
  std::optional<uint64_t> timeout_ms;
  std::optional<uint64_t> max_blocks; // map: 1 .. kMaxMapBlocks (absent: kDefaultMapBlocks)
  std::optional<unsigned> order;      // preflight, ensure: free blocks of this order, 1..63 (instead of size_kib)
  std::optional<uint64_t> hold_ms;    // ensure: how long the lease holds the pages, 1 s .. kMaxHoldMs
  std::optional<std::string> consumer;  // ensure, release: "for", who the pages are for
  std::optional<uint64_t> lease;      // release: a lease's id

  // The requests fragctl sends. node: nullopt = every node of the policy's
  // scope (compact) or the global pool (pool).
  static ControlRequest of(Command cmd);  // a request without fields: hist, status, trace, top, reload
  // node: only that node's zones in the answer (a large host's whole map can pass the output cap).
  static ControlRequest map(int64_t max_age_ns, std::optional<uint64_t> max_blocks = std::nullopt,
                            std::optional<int> node = std::nullopt);
  static ControlRequest action(uint64_t id);
  static ControlRequest compact(std::optional<int> node, std::optional<uint64_t> timeout_ms = std::nullopt);
  static ControlRequest pool(uint64_t size_kib, uint64_t count, std::optional<int> node,
                             std::optional<uint64_t> timeout_ms = std::nullopt);
  // preflight, ensure: size_kib or order (the other nullopt).
  static ControlRequest preflight(std::optional<uint64_t> size_kib, std::optional<unsigned> order, uint64_t count,
                                  std::optional<int> node);
  static ControlRequest ensure(std::optional<uint64_t> size_kib, std::optional<unsigned> order, uint64_t count,
                               std::optional<int> node, std::string consumer, std::optional<uint64_t> within_ms,
                               std::optional<uint64_t> hold_ms);
  static ControlRequest release(std::optional<std::string> consumer, std::optional<uint64_t> lease);
};

// Whether `s` may name a lease's consumer (kMaxConsumerBytes, the characters above).
bool valid_consumer(std::string_view s);

// {"cmd":..., and the fields set}.
void to_json(nlohmann::json& j, const ControlRequest& r);
// Checks what parse_request() says below; throws Malformed (protocol/wire.h).
void from_json(const nlohmann::json& j, ControlRequest& r);

// Parses one request line (without its newline). Errors say what is wrong in
// terms of the protocol: not JSON, not an object, no "cmd", an unknown command,
// a field the command does not take, a field of the wrong type or range, or a
// required field missing.
Result<ControlRequest> parse_request(std::string_view line);

}  // namespace fragd
