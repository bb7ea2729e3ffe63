// SPDX-License-Identifier: Apache-2.0
#include "protocol/request.h"

#include <cctype>
#include <cstring>

#include <nlohmann/json.hpp>

#include "protocol/wire.h"

namespace fragd {
namespace {

const CommandSpec& spec_of(Command c) { return kCommands[static_cast<size_t>(c)]; }

std::optional<int64_t> int_field(const nlohmann::json& req, const char* key, int64_t lo, int64_t hi) {
  const auto it = req.find(key);
  if (it == req.end()) return std::nullopt;
  if (!it->is_number_integer())
    malformed(std::string("\"") + key + "\" must be an integer " + std::to_string(lo) + ".." + std::to_string(hi));
  int64_t v;
  if (it->is_number_unsigned()) {
    const uint64_t u = it->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX))
      malformed(std::string("\"") + key + "\" is out of range " + std::to_string(lo) + ".." + std::to_string(hi));
    v = static_cast<int64_t>(u);
  } else {
    v = it->get<int64_t>();
  }
  if (v < lo || v > hi)
    malformed(std::string("\"") + key + "\" is " + std::to_string(v) + ", out of range " + std::to_string(lo) +
              ".." + std::to_string(hi));
  return v;
}

// A client's string, shortened and escaped, for an error message.
std::string shown_string(const std::string& s) {
  const std::string shown = s.size() > 32 ? s.substr(0, 32) + "..." : s;
  return nlohmann::json(shown).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string_view command_name(Command c) { return spec_of(c).name; }

std::string known_commands() {
  std::string s;
  for (const auto& c : kCommands) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

ControlRequest ControlRequest::of(Command cmd) {
  ControlRequest r;
  r.cmd = cmd;
  r.access = spec_of(cmd).access;
  return r;
}

ControlRequest ControlRequest::map(int64_t max_age_ns, std::optional<uint64_t> max_blocks, std::optional<int> node) {
  ControlRequest r = of(Command::Map);
  r.max_age_ns = max_age_ns;
  r.max_blocks = max_blocks;
  r.node = node;
  return r;
}

ControlRequest ControlRequest::action(uint64_t id) {
  ControlRequest r = of(Command::Action);
  r.id = id;
  return r;
}

ControlRequest ControlRequest::compact(std::optional<int> node, std::optional<uint64_t> timeout_ms) {
  ControlRequest r = of(Command::Compact);
  r.node = node;
  r.timeout_ms = timeout_ms;
  return r;
}

ControlRequest ControlRequest::pool(uint64_t size_kib, uint64_t count, std::optional<int> node,
                                    std::optional<uint64_t> timeout_ms) {
  ControlRequest r = of(Command::Pool);
  r.size_kib = size_kib;
  r.count = count;
  r.node = node;
  r.timeout_ms = timeout_ms;
  return r;
}

ControlRequest ControlRequest::preflight(std::optional<uint64_t> size_kib, std::optional<unsigned> order,
                                         uint64_t count, std::optional<int> node) {
  ControlRequest r = of(Command::Preflight);
  r.size_kib = size_kib;
  r.order = order;
  r.count = count;
  r.node = node;
  return r;
}

ControlRequest ControlRequest::ensure(std::optional<uint64_t> size_kib, std::optional<unsigned> order, uint64_t count,
                                      std::optional<int> node, std::string consumer, std::optional<uint64_t> within_ms,
                                      std::optional<uint64_t> hold_ms) {
  ControlRequest r = of(Command::Ensure);
  r.size_kib = size_kib;
  r.order = order;
  r.count = count;
  r.node = node;
  r.consumer = std::move(consumer);
  r.timeout_ms = within_ms;
  r.hold_ms = hold_ms;
  return r;
}

ControlRequest ControlRequest::release(std::optional<std::string> consumer, std::optional<uint64_t> lease) {
  ControlRequest r = of(Command::Release);
  r.consumer = std::move(consumer);
  r.lease = lease;
  return r;
}

bool valid_consumer(std::string_view s) {
  if (s.empty() || s.size() > kMaxConsumerBytes) return false;
  for (unsigned char c : s)
    if (!std::isalnum(c) && !std::strchr("._:@/+=-", c)) return false;
  return true;
}

void to_json(nlohmann::json& j, const ControlRequest& r) {
  j = nlohmann::json{{"cmd", command_name(r.cmd)}};
  wire::put(j, "node", r.node);
  wire::put(j, "size_kib", r.size_kib);
  wire::put(j, "count", r.count);
  wire::put(j, "id", r.id);
  wire::put(j, "max_age_ns", r.max_age_ns);
  wire::put(j, "timeout_ms", r.timeout_ms);
  wire::put(j, "max_blocks", r.max_blocks);
  wire::put(j, "order", r.order);
  wire::put(j, "hold_ms", r.hold_ms);
  wire::put(j, "for", r.consumer);
  wire::put(j, "lease", r.lease);
}

void from_json(const nlohmann::json& req, ControlRequest& out) {
  if (!req.is_object()) malformed("a request is a JSON object with a string \"cmd\"");
  const auto c = req.find("cmd");
  if (c == req.end() || !c->is_string()) malformed("a request is a JSON object with a string \"cmd\"");
  out = ControlRequest{};
  const std::string name = c->get<std::string>();
  const CommandSpec* spec = nullptr;
  for (const auto& s : kCommands)
    if (name == s.name) spec = &s;
  if (!spec) malformed("unknown command " + shown_string(name) + " (known: " + known_commands() + ")");
  out.cmd = spec->cmd;
  out.access = spec->access;
  for (const auto& [key, value] : req.items()) {
    if (key == "cmd") continue;
    bool takes = false;
    for (const char* f : spec->fields)
      if (f && key == f) takes = true;
    if (!takes) malformed("'" + name + "' takes no field " + shown_string(key));
  }
  if (auto node = int_field(req, "node", 0, 4095)) out.node = static_cast<int>(*node);
  if (auto size = int_field(req, "size_kib", 4, int64_t{1} << 40)) out.size_kib = static_cast<uint64_t>(*size);
  if (auto count = int_field(req, "count", 0, int64_t{1} << 40)) out.count = static_cast<uint64_t>(*count);
  if (auto id = int_field(req, "id", 0, INT64_MAX)) out.id = static_cast<uint64_t>(*id);
  out.max_age_ns = int_field(req, "max_age_ns", 0, INT64_MAX);
  if (auto t = int_field(req, "timeout_ms", 100, int64_t{604800000})) out.timeout_ms = static_cast<uint64_t>(*t);
  if (auto n = int_field(req, "max_blocks", 1, static_cast<int64_t>(kMaxMapBlocks))) out.max_blocks = static_cast<uint64_t>(*n);
  if (auto o = int_field(req, "order", 1, 63)) out.order = static_cast<unsigned>(*o);
  if (auto h = int_field(req, "hold_ms", 1000, static_cast<int64_t>(kMaxHoldMs))) out.hold_ms = static_cast<uint64_t>(*h);
  if (auto l = int_field(req, "lease", 1, INT64_MAX)) out.lease = static_cast<uint64_t>(*l);
  if (const auto f = req.find("for"); f != req.end()) {
    if (!f->is_string() || !valid_consumer(f->get<std::string>()))
      malformed("\"for\" names who the pages are for: 1.." + std::to_string(kMaxConsumerBytes) +
                " letters, digits and . _ : @ / + = - (as libvirt:vm1, slurm:4242, k8s:ns/pod)");
    out.consumer = f->get<std::string>();
  }
  if (out.cmd == Command::Preflight || out.cmd == Command::Ensure) {
    if (out.size_kib.has_value() == out.order.has_value())
      malformed("\"" + name + "\" needs one of \"size_kib\" (a hugetlb page size) and \"order\" (free blocks)");
    if (out.count == 0u) malformed("\"count\" of \"" + name + "\" is 0: ask for 1 page or more");
  }
  if (out.cmd == Command::Release && out.consumer.has_value() == out.lease.has_value())
    malformed("\"release\" needs one of \"for\" (every lease of a consumer) and \"lease\" (one lease's id)");
  std::string needed;
  for (const char* f : spec->required)
    if (f) needed += std::string(needed.empty() ? "" : " and ") + "\"" + f + "\"";
  for (const char* f : spec->required)
    if (f && !req.contains(f)) malformed("\"" + name + "\" needs " + needed);
}

Result<ControlRequest> parse_request(std::string_view line) {
  if (line.size() > kMaxRequestBytes)
    return make_error("request of " + std::to_string(line.size()) + " bytes is longer than the limit of " +
                      std::to_string(kMaxRequestBytes));
  nlohmann::json req;
  try {
    req = nlohmann::json::parse(line.begin(), line.end());
  } catch (const nlohmann::json::exception& e) {
    return make_error(std::string("not JSON (") + e.what() + ")");
  }
  try {
    ControlRequest out;
    from_json(req, out);
    return out;
  } catch (const Malformed& m) {
    return make_error(m.what);
  }
}

}  // namespace fragd
