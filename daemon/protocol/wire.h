// SPDX-License-Identifier: Apache-2.0
// What every message of the control protocol (docs/control-protocol.md) shares:
// the envelope ("ok", "error"), the readers the from_json functions of
// protocol/ check fields with, and the boundary that turns a malformed answer
// into an Error. from_json throws Malformed (nlohmann's convention for
// from_json); read_answer() and the other boundaries catch it, so callers
// only ever see a Result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace fragd {

// A field missing or of the wrong type; `what` names it.
struct Malformed {
  std::string what;
};
[[noreturn]] void malformed(std::string what);

// Checks the envelope of an answer to `cmd`: a JSON object with "ok": true.
// Errors: "fragd refused '<cmd>': <error>" for "ok": false, "malformed answer
// to '<cmd>' from fragd: ..." otherwise.
Result<void> check_answer(const nlohmann::json& answer, std::string_view cmd);

// {"ok":false,"error":message}: every refusal.
nlohmann::json error_answer(const std::string& message);

// The answer to `cmd` as a T (from_json), envelope checked; a malformed one is
// "malformed answer to '<cmd>' from fragd: <what>".
template <class T>
Result<T> read_answer(const nlohmann::json& answer, std::string_view cmd) {
  if (auto ok = check_answer(answer, cmd); !ok) return ok.error();
  const std::string where = "malformed answer to '" + std::string(cmd) + "' from fragd: ";
  try {
    T t;
    from_json(answer, t);
    return t;
  } catch (const Malformed& m) {
    return make_error(where + m.what);
  } catch (const nlohmann::json::exception& e) {
    return make_error(where + e.what());
  }
}

// Replaces control characters, so a string from fragd cannot move the cursor.
std::string printable(std::string s);

namespace wire {

using nlohmann::json;

bool is_u64(const json& j);
uint64_t to_u64(const json& j);

// Members of answers where most fields may be absent (status, hist, outcomes):
// "<where>: missing \"key\"", "<where>: \"key\" is not ...". Absent or null
// optional members are nullopt.
uint64_t req_u64(const json& obj, const char* key, const std::string& where);
std::optional<uint64_t> opt_u64(const json& obj, const char* key, const std::string& where);
std::optional<std::string> opt_str(const json& obj, const char* key, const std::string& where);
// The member if present and not null; Malformed when of another kind.
const json* opt_member(const json& obj, const char* key, json::value_t kind, const std::string& where);

// Members of answers where every field must be there (map): "<path>: missing
// \"key\"", "<path>.<key>: not ...".
// The reference returned is into `obj`, never `path`: gnu::no_dangling (GCC 14) keeps
// -Wdangling-reference from taking a temporary `path` ("answer") for what it refers to.
#if __has_cpp_attribute(gnu::no_dangling)
#define FRAGD_NO_DANGLING [[gnu::no_dangling]]
#else
#define FRAGD_NO_DANGLING
#endif
FRAGD_NO_DANGLING const json& member(const json& obj, const char* key, const std::string& path);
FRAGD_NO_DANGLING const json& array_member(const json& obj, const char* key, const std::string& path);
uint64_t as_u64(const json& j, const std::string& path);
uint64_t u64_member(const json& obj, const char* key, const std::string& path);
uint64_t bounded_member(const json& obj, const char* key, const std::string& path, uint64_t max);

// Sets obj[key] when v holds a value.
template <class T>
void put(json& obj, const char* key, const std::optional<T>& v) {
  if (v) obj[key] = *v;
}

}  // namespace wire
}  // namespace fragd
