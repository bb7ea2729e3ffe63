// SPDX-License-Identifier: Apache-2.0
// The key tables of docs/configuration.md, printed from the declarations (policy/keys.h).
#include <string>

#include "policy/keys.h"

namespace fragd {

namespace {

std::string_view table_name(KeyTable t) { return t == KeyTable::Config ? "config" : "policy"; }
std::string begin_marker(KeyTable t) {
  return "<!-- keys:" + std::string(table_name(t)) + " begin: generated from daemon/policy/keys.cc (" +
         kRegenerateKeyTables + ") -->\n";
}
std::string end_marker(KeyTable t) { return "<!-- keys:" + std::string(table_name(t)) + " end -->\n"; }

std::string default_cell(const Key& k) {
  if (k.required) return "required";
  const std::string def = default_text(k);
  if (def.empty()) return "none";
  std::string s = "`" + def + "`";
  if (!k.unit.empty()) s += " " + std::string(k.unit);
  return s;
}

}  // namespace

std::string key_table(KeyTable table) {
  std::string s = "| key | default | meaning |\n|---|---|---|\n";
  for (const Key& k : config_keys())
    if (k.table == table && k.type != KeyType::Section)
      s += "| `" + std::string(k.path) + "` | " + default_cell(k) + " | " + std::string(k.doc) +
           (k.reload == Reload::Restart ? ". Read at start: a reload names it and keeps the running value" : "") +
           " |\n";
  return s;
}

Result<std::string> with_key_tables(const std::string& doc) {
  std::string out = doc;
  for (KeyTable t : {KeyTable::Config, KeyTable::Policy}) {
    const std::string begin = begin_marker(t), end = end_marker(t);
    const size_t b = out.find(begin);
    const size_t e = b == std::string::npos ? b : out.find(end, b);
    if (b == std::string::npos || e == std::string::npos) {
      const std::string& missing = b == std::string::npos ? begin : end;
      return make_error("no line " + missing.substr(0, missing.size() - 1) + "; the " +
                            std::string(table_name(t)) + " key table goes between that line and " +
                            end.substr(0, end.size() - 1),
                        EINVAL);
    }
    out.replace(b + begin.size(), e - b - begin.size(), key_table(t));
  }
  return out;
}

}  // namespace fragd
