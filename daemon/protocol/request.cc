#include "protocol/request.h"

#include <nlohmann/json.hpp>

#include <array>

namespace fragd {
namespace {

struct CommandSpec {
  const char* name;
  Access access;
  std::array<const char*, 3> fields;  // the fields it takes (nullptr-terminated)
};

constexpr CommandSpec kCommands[] = {
    {"hist", Access::Read, {nullptr}},
    {"status", Access::Read, {nullptr}},
    {"trace", Access::Read, {nullptr}},
    {"map", Access::Read, {"max_age_ns", nullptr}},
    {"action", Access::Read, {"id", nullptr}},
    {"compact", Access::Act, {"node", nullptr}},
    {"pool", Access::Act, {"size_kib", "count", "node"}},
    {"reload", Access::Act, {nullptr}},
};

constexpr const char* kKnown = "hist, status, trace, map, action, compact, pool, reload";

Result<std::optional<int64_t>> int_field(const nlohmann::json& req, const char* key, int64_t lo, int64_t hi) {
  const auto it = req.find(key);
  if (it == req.end()) return std::optional<int64_t>{};
  if (!it->is_number_integer())
    return make_error(std::string("\"") + key + "\" must be an integer " + std::to_string(lo) + ".." +
                      std::to_string(hi));
  int64_t v;
  if (it->is_number_unsigned()) {
    const uint64_t u = it->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX))
      return make_error(std::string("\"") + key + "\" is out of range " + std::to_string(lo) + ".." +
                        std::to_string(hi));
    v = static_cast<int64_t>(u);
  } else {
    v = it->get<int64_t>();
  }
  if (v < lo || v > hi)
    return make_error(std::string("\"") + key + "\" is " + std::to_string(v) + ", out of range " +
                      std::to_string(lo) + ".." + std::to_string(hi));
  return std::optional<int64_t>{v};
}

// A client's string, shortened and escaped, for an error message.
std::string shown_string(const std::string& s) {
  const std::string shown = s.size() > 32 ? s.substr(0, 32) + "..." : s;
  return nlohmann::json(shown).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

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
  if (!req.is_object()) return make_error("a request is a JSON object with a string \"cmd\"");
  const auto c = req.find("cmd");
  if (c == req.end() || !c->is_string()) return make_error("a request is a JSON object with a string \"cmd\"");
  ControlRequest out;
  out.cmd = c->get<std::string>();
  const CommandSpec* spec = nullptr;
  for (const auto& s : kCommands)
    if (out.cmd == s.name) spec = &s;
  if (!spec) {
    std::string shown = out.cmd.size() > 32 ? out.cmd.substr(0, 32) + "..." : out.cmd;
    return make_error("unknown command " + shown_string(out.cmd) + " (known: " + kKnown + ")");
  }
  out.access = spec->access;
  for (const auto& [key, value] : req.items()) {
    if (key == "cmd") continue;
    bool takes = false;
    for (const char* f : spec->fields)
      if (f && key == f) takes = true;
    if (!takes) {
      return make_error("'" + out.cmd + "' takes no field " + shown_string(key));
    }
  }
  auto node = int_field(req, "node", 0, 4095);
  if (!node) return node.error();
  if (*node) out.node = static_cast<int>(**node);
  auto size = int_field(req, "size_kib", 4, int64_t{1} << 40);
  if (!size) return size.error();
  if (*size) out.size_kib = static_cast<uint64_t>(**size);
  auto count = int_field(req, "count", 0, int64_t{1} << 40);
  if (!count) return count.error();
  if (*count) out.count = static_cast<uint64_t>(**count);
  auto id = int_field(req, "id", 0, INT64_MAX);
  if (!id) return id.error();
  if (*id) out.id = static_cast<uint64_t>(**id);
  auto age = int_field(req, "max_age_ns", 0, INT64_MAX);
  if (!age) return age.error();
  if (*age) out.max_age_ns = **age;
  if (out.cmd == "pool" && (!out.size_kib || !out.count))
    return make_error("\"pool\" needs \"size_kib\" and \"count\"");
  if (out.cmd == "action" && !out.id) return make_error("\"action\" needs \"id\"");
  return out;
}

}  // namespace fragd
