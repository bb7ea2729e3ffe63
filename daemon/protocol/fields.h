// SPDX-License-Identifier: Apache-2.0
// Each field of a protocol message declared once: a struct's Fields<T> specialisation lists
// its members with their JSON keys (FRAGD_FIELDS), and write_object/read_object derive both
// directions from that list, for every member type the protocol uses:
//   - std::optional<V>: absent (or null) when empty; a key declared with `null_when_empty`
//     is written as null instead, for a field whose absence and emptiness differ;
//   - std::optional<std::optional<V>>: absent, null, or a value, each kept apart;
//   - V: required, "missing" when absent; or, declared with `field_or_default`, written always
//     (an empty vector left out) and left at the struct's default when absent or null;
//   - uint64_t, int64_t, int, double, bool, std::string, std::vector<V>, std::map<std::string, V>,
//     and any struct with Fields<> (an object), nested as deep as the message goes;
//   - a struct with Fields<> declared with `field_inline`: its keys written into, and read from,
//     the object that holds it (the top answer's counts beside each row's name);
//   - a key "a.b": member b of an object a that holds it (the hist answer's "phase_ns"), made
//     when written; read as absent when a is absent or null;
//   - a type whose JSON is not an object of fields (the map's classes as one string, an
//     interval as [lo, hi]): a Codec<V> specialisation writes and reads it.
// A numeric field declared `.within(lo, hi)` is read only inside that range ("top.nodes[0].score
// is out of range 0..100"); what depends on other fields is checked after read_object.
// A malformed value is named by its path from the message's root ("nodes[0].zones[1].score is
// not a non-negative integer") and thrown as Malformed (protocol/wire.h).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/wire.h"

namespace fragd::wire {

template <class T, class M>
struct Field {
  const char* key;
  M T::*member;
  bool null_when_empty = false;
  bool defaulted = false;
  bool flattened = false;
  bool bounded = false;
  int64_t lo = 0;
  uint64_t hi = 0;
  // Read only inside [l, h]: a number out of it is malformed, named with the range.
  constexpr Field within(int64_t l, uint64_t h) const {
    Field f = *this;
    f.bounded = true;
    f.lo = l;
    f.hi = h;
    return f;
  }
};
template <class T, class M>
constexpr Field<T, M> field(const char* key, M T::*member) {
  return {key, member, false, false, false};
}
// Written as null when empty (the status answer's "pollution", "scan", a node's "floor").
template <class T, class M>
constexpr Field<T, M> field_or_null(const char* key, M T::*member) {
  return {key, member, true, false, false};
}
// Not required: absent from an older fragd, read as the struct's default.
template <class T, class M>
constexpr Field<T, M> field_or_default(const char* key, M T::*member) {
  return {key, member, false, true, false};
}
// Its keys in the object that holds it, not an object of its own (a struct with Fields<>).
template <class T, class M>
constexpr Field<T, M> field_inline(M T::*member) {
  return {"", member, false, false, true};
}

// Specialised for each message struct: static auto list() returns a tuple of field(...). A
// specialisation lives in the header of its message when the table says all there is to say
// (its to_json and from_json then inline there, protocol/top.h), else in the message's .cc;
// another message that holds one reaches it through its to_json and read_json, never through
// Fields<T> of a .cc.
template <class T>
struct Fields;

// Specialised for a value whose JSON is not an object of fields: static nlohmann::json
// write(const V&) and static void read(const nlohmann::json&, V&, const std::string& path),
// which names `path` in its complaint.
template <class V>
struct Codec;
template <class V, class = void>
struct has_codec : std::false_type {};
template <class V>
struct has_codec<V, std::void_t<decltype(Codec<V>::write(std::declval<const V&>()))>> : std::true_type {};

template <class T, class = void>
struct described : std::false_type {};
template <class T>
struct described<T, std::void_t<decltype(Fields<T>::list())>> : std::true_type {};

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};
template <class T>
struct is_map : std::false_type {};
template <class T>
struct is_map<std::map<std::string, T>> : std::true_type {};

// A message with a reader of its own that names its fields from `path`: read_json(j, t, path).
template <class T, class = void>
struct has_read_json : std::false_type {};
template <class T>
struct has_read_json<T, std::void_t<decltype(read_json(std::declval<const nlohmann::json&>(), std::declval<T&>(),
                                                         std::declval<const std::string&>()))>> : std::true_type {};

template <class T>
nlohmann::json write_object(const T& t);

template <class V>
nlohmann::json write_value(const V& v) {
  if constexpr (has_codec<V>::value) {
    return Codec<V>::write(v);
  } else if constexpr (described<V>::value) {
    return write_object(v);
  } else if constexpr (std::is_same_v<V, std::string> || std::is_arithmetic_v<V>) {
    return nlohmann::json(v);
  } else if constexpr (is_optional<V>::value) {
    return v ? write_value(*v) : nlohmann::json(nullptr);
  } else if constexpr (is_vector<V>::value) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& e : v) a.push_back(write_value(e));
    return a;
  } else if constexpr (is_map<V>::value) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& [k, e] : v) o[k] = write_value(e);
    return o;
  } else {  // a message with its own to_json
    return nlohmann::json(v);
  }
}

// The place of `key` in j: "a.b" is member b of object a, made when missing.
inline nlohmann::json& slot(nlohmann::json& j, std::string_view key) {
  nlohmann::json* o = &j;
  for (size_t dot; (dot = key.find('.')) != std::string_view::npos; key.remove_prefix(dot + 1))
    o = &(*o)[std::string(key.substr(0, dot))];
  return (*o)[std::string(key)];
}

// The value at `key` in j, or nullptr when it, or an object on its way, is absent (one on its
// way that is null counts as absent; one that is not an object is malformed).
inline const nlohmann::json* lookup(const nlohmann::json& j, std::string_view key, const std::string& path) {
  const nlohmann::json* o = &j;
  std::string at = path;
  for (size_t dot; (dot = key.find('.')) != std::string_view::npos; key.remove_prefix(dot + 1)) {
    const std::string seg(key.substr(0, dot));
    at = at.empty() ? seg : at + "." + seg;
    auto it = o->find(seg);
    if (it == o->end() || it->is_null()) return nullptr;
    if (!it->is_object()) malformed(at + " is not an object");
    o = &*it;
  }
  auto it = o->find(std::string(key));
  return it == o->end() ? nullptr : &*it;
}

template <class T, class M>
void write_field(nlohmann::json& j, const T& t, const Field<T, M>& f) {
  const M& v = t.*(f.member);
  if constexpr (described<M>::value) {
    if (f.flattened) {
      j.update(write_object(v));
      return;
    }
  }
  if constexpr (is_optional<M>::value) {
    if (v) slot(j, f.key) = write_value(*v);
    else if (f.null_when_empty) slot(j, f.key) = nullptr;
  } else if constexpr (is_vector<M>::value) {
    if (!f.defaulted || !v.empty()) slot(j, f.key) = write_value(v);
  } else {
    slot(j, f.key) = write_value(v);
  }
}

template <class T>
nlohmann::json write_object(const T& t) {
  nlohmann::json j = nlohmann::json::object();
  std::apply([&](const auto&... f) { (write_field(j, t, f), ...); }, Fields<T>::list());
  return j;
}

template <class T>
void read_object(const nlohmann::json& j, T& t, const std::string& path);

// A message with a reader of its own (read_json, declared in its header) is read through it
// wherever it is held, before any Fields table: its table may live in its .cc, and a file that
// sees that table (the same .cc, or a unity build's batch) must read it as every other file does,
// its checks included. Otherwise read_value<V> would differ from one file to another, and the
// linker would keep one of them for all.
template <class V>
void read_value(const nlohmann::json& j, V& out, const std::string& path) {
  if constexpr (has_codec<V>::value) {
    Codec<V>::read(j, out, path);
  } else if constexpr (has_read_json<V>::value) {
    read_json(j, out, path);
  } else if constexpr (described<V>::value) {
    read_object(j, out, path);
  } else if constexpr (std::is_same_v<V, bool>) {
    if (!j.is_boolean()) malformed(path + " is not a boolean");
    out = j.get<bool>();
  } else if constexpr (std::is_same_v<V, std::string>) {
    if (!j.is_string()) malformed(path + " is not a string");
    out = j.get<std::string>();
  } else if constexpr (std::is_same_v<V, double>) {
    if (!j.is_number()) malformed(path + " is not a number");
    out = j.get<double>();
  } else if constexpr (std::is_same_v<V, uint64_t>) {
    if (!is_u64(j)) malformed(path + " is not a non-negative integer");
    out = to_u64(j);
  } else if constexpr (std::is_integral_v<V> && std::is_unsigned_v<V>) {  // unsigned, uint32_t
    if (!is_u64(j)) malformed(path + " is not a non-negative integer");
    const uint64_t x = to_u64(j);
    if (x > std::numeric_limits<V>::max()) malformed(path + " is out of range");
    out = static_cast<V>(x);
  } else if constexpr (std::is_integral_v<V>) {  // int64_t, int
    if (!j.is_number_integer() || (j.is_number_unsigned() && j.get<uint64_t>() > INT64_MAX))
      malformed(path + " is not an integer");
    const auto x = j.get<int64_t>();
    if (x < static_cast<int64_t>(std::numeric_limits<V>::min()) || x > static_cast<int64_t>(std::numeric_limits<V>::max()))
      malformed(path + " is out of range");
    out = static_cast<V>(x);
  } else if constexpr (is_vector<V>::value) {
    if (!j.is_array()) malformed(path + " is not an array");
    out.clear();
    out.resize(j.size());
    for (size_t i = 0; i < j.size(); i++) read_value(j[i], out[i], path + "[" + std::to_string(i) + "]");
  } else if constexpr (is_map<V>::value) {
    if (!j.is_object()) malformed(path + " is not an object");
    out.clear();
    for (auto it = j.begin(); it != j.end(); ++it) read_value(it.value(), out[it.key()], path + "." + it.key());
  } else {  // a message with its own from_json: its complaint, prefixed with where it is
    try {
      from_json(j, out);
    } catch (const Malformed& m) {
      if (m.what.rfind(path, 0) == 0) throw;  // it names its path already
      malformed(path + ": " + m.what);
    }
  }
}

template <class T, class M>
void read_field(const nlohmann::json& j, T& t, const Field<T, M>& f, const std::string& path) {
  M& v = t.*(f.member);
  if constexpr (described<M>::value) {
    if (f.flattened) {
      read_object(j, v, path);
      return;
    }
  }
  const std::string at = path.empty() ? std::string(f.key) : path + "." + f.key;
  const nlohmann::json* it = lookup(j, f.key, path);
  if constexpr (is_optional<M>::value) {
    using Inner = typename M::value_type;
    if (!it) {
      v.reset();
    } else if constexpr (is_optional<Inner>::value) {  // absent, null or a value
      v.emplace();
      if (!it->is_null()) {
        (*v).emplace();
        read_value(*it, **v, at);
      }
    } else if (it->is_null()) {
      v.reset();
    } else {
      v.emplace();
      read_value(*it, *v, at);
    }
  } else if (f.defaulted && (!it || it->is_null())) {
    return;  // the struct's default
  } else {
    if (!it) malformed((path.empty() ? std::string("the answer") : path) + ": missing \"" + f.key + "\"");
    read_value(*it, v, at);
  }
  if constexpr (std::is_integral_v<M> && !std::is_same_v<M, bool>) {
    bool out = false;
    if constexpr (std::is_signed_v<M>)
      out = static_cast<int64_t>(v) < f.lo || (v >= 0 && static_cast<uint64_t>(v) > f.hi);
    else
      out = (f.lo > 0 && v < static_cast<uint64_t>(f.lo)) || static_cast<uint64_t>(v) > f.hi;
    if (f.bounded && out) malformed(at + " is out of range " + std::to_string(f.lo) + ".." + std::to_string(f.hi));
  }
}

template <class T>
void read_object(const nlohmann::json& j, T& t, const std::string& path) {
  if (!j.is_object()) malformed((path.empty() ? std::string("the answer") : path) + " is not an object");
  std::apply([&](const auto&... f) { (read_field(j, t, f, path), ...); }, Fields<T>::list());
}

}  // namespace fragd::wire

