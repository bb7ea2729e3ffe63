// SPDX-License-Identifier: Apache-2.0
#include "protocol/wire.h"

#include "base/text.h"

namespace fragd {

void malformed(std::string what) { throw Malformed{std::move(what)}; }

Result<void> check_answer(const nlohmann::json& answer, std::string_view cmd) {
  const std::string c(cmd);
  if (!answer.is_object())
    return make_error("malformed answer to '" + c + "' from fragd: expected a JSON object, got " +
                      answer.type_name());
  auto ok = answer.find("ok");
  if (ok == answer.end() || !ok->is_boolean())
    return make_error("malformed answer to '" + c + "' from fragd: no boolean \"ok\"");
  if (!ok->get<bool>()) {
    auto err = answer.find("error");
    std::string why = (err != answer.end() && err->is_string()) ? err->get<std::string>()
                                                                : std::string("no reason given");
    return make_error("fragd refused '" + c + "': " + why);
  }
  return {};
}

nlohmann::json error_answer(const std::string& message) { return {{"ok", false}, {"error", message}}; }

std::string printable(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s;
}

namespace wire {

bool is_u64(const json& j) { return j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() >= 0); }

uint64_t to_u64(const json& j) {
  return j.is_number_unsigned() ? j.get<uint64_t>() : static_cast<uint64_t>(j.get<int64_t>());
}

uint64_t req_u64(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) malformed(where + ": missing \"" + key + "\"");
  if (!is_u64(*it)) malformed(where + ": \"" + key + "\" is not a non-negative integer");
  return to_u64(*it);
}

std::optional<uint64_t> opt_u64(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!is_u64(*it)) malformed(where + ": \"" + key + "\" is not a non-negative integer");
  return to_u64(*it);
}

const json* opt_member(const json& obj, const char* key, json::value_t kind, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  if (it->type() != kind)
    malformed(where + ": \"" + key + "\" is not " +
              (kind == json::value_t::array    ? "an array"
               : kind == json::value_t::object ? "an object"
                                               : "a string"));
  return &*it;
}

std::optional<std::string> opt_str(const json& obj, const char* key, const std::string& where) {
  const json* s = opt_member(obj, key, json::value_t::string, where);
  return s ? std::optional<std::string>(s->get<std::string>()) : std::nullopt;
}

const json& member(const json& obj, const char* key, const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end()) malformed(path + ": missing \"" + key + "\"");
  return *it;
}

const json& array_member(const json& obj, const char* key, const std::string& path) {
  const json& j = member(obj, key, path);
  if (!j.is_array()) malformed(path + "." + key + ": not an array");
  return j;
}

uint64_t as_u64(const json& j, const std::string& path) {
  if (!is_u64(j)) malformed(path + ": not a non-negative integer");
  return to_u64(j);
}

uint64_t u64_member(const json& obj, const char* key, const std::string& path) {
  return as_u64(member(obj, key, path), path + "." + key);
}

uint64_t bounded_member(const json& obj, const char* key, const std::string& path, uint64_t max) {
  uint64_t v = u64_member(obj, key, path);
  if (v > max)
    malformed(strf("%s.%s: %llu is out of range (at most %llu)", path.c_str(), key,
                   static_cast<unsigned long long>(v), static_cast<unsigned long long>(max)));
  return v;
}

}  // namespace wire
}  // namespace fragd
