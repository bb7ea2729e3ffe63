// SPDX-License-Identifier: Apache-2.0
// Label values from outside fragd (a cgroup's directory name: any bytes but '/' and NUL; a
// task's comm) through FamilyBuilder (base/family.h) and both expositions of /metrics
// (fragd/exposition.h). Whatever the bytes:
//  - the text exposition and every label value of the protobuf one are UTF-8 (checked by
//    nlohmann-json's encoder, which refuses anything else: not fragd's own check);
//  - the text exposition parses (the 0.0.4 format's grammar, read here line by line: HELP,
//    TYPE, then samples `name{label="value",...} number`), each sample's label reads back as
//    the escaped name, and the protobuf messages read back with the same value;
//  - a value that was UTF-8 with no backslash and no control character already is unchanged;
//    the escaped name holds no control character (C0, DEL, C1) and reads back as the bytes it
//    came from (so two names never give one text); it is what the JSON answers (fragctl top)
//    carry, and it goes through nlohmann-json's dump() and back.
#include <google/protobuf/io/coded_stream.h>
#include <io/prometheus/client/metrics.pb.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/family.h"
#include "base/text.h"
#include "fragd/exposition.h"
#include "fuzz_check.h"
#include "protocol/top.h"
#include "protocol/wire.h"

namespace {

namespace pb = io::prometheus::client;
using nlohmann::json;

// UTF-8 by nlohmann-json's own decoder: dump() throws type_error 316 on anything else.
bool utf8_by_json(const std::string& s) {
  try {
    (void)json(s).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

struct Sample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
};

bool name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
}

// One sample line of the text format 0.0.4; false when it does not parse.
bool parse_sample(const std::string& line, Sample& s) {
  size_t i = 0;
  while (i < line.size() && name_char(line[i], i == 0)) i++;
  if (i == 0) return false;
  s.name = line.substr(0, i);
  if (i < line.size() && line[i] == '{') {
    i++;
    while (i < line.size() && line[i] != '}') {
      const size_t start = i;
      while (i < line.size() && name_char(line[i], i == start)) i++;
      if (i == start || i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') return false;
      std::string key = line.substr(start, i - start), value;
      for (i += 2;; i++) {
        if (i >= line.size()) return false;
        const char c = line[i];
        if (c == '"') break;
        if (c != '\\') {
          value += c;
          continue;
        }
        if (++i >= line.size()) return false;
        if (line[i] == 'n') value += '\n';
        else if (line[i] == '\\' || line[i] == '"') value += line[i];
        else return false;  // the format knows no other escape
      }
      i++;  // the closing quote
      s.labels.push_back({std::move(key), std::move(value)});
      if (i < line.size() && line[i] == ',') i++;
    }
    if (i >= line.size()) return false;
    i++;  // '}'
  }
  if (i >= line.size() || line[i] != ' ') return false;
  const std::string v = line.substr(i + 1);
  if (v == "+Inf" || v == "-Inf" || v == "Nan" || v == "NaN") return true;
  char* end = nullptr;
  (void)std::strtod(v.c_str(), &end);
  return !v.empty() && end == v.c_str() + v.size();
}

// Undoes utf8_escaped: \\ a backslash, \xnn a byte, \u00nn a C1 code point; nullopt when the
// text holds another escape (utf8_escaped never writes one).
std::optional<std::string> unescaped(const std::string& s) {
  std::string out;
  auto hex = [&](size_t at, size_t n) -> std::optional<unsigned> {
    if (at + n > s.size()) return std::nullopt;
    unsigned v = 0;
    for (size_t k = at; k < at + n; ++k) {
      const char c = s[k];
      if (c >= '0' && c <= '9') v = v * 16 + static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v = v * 16 + static_cast<unsigned>(c - 'a' + 10);
      else return std::nullopt;
    }
    return v;
  };
  for (size_t i = 0; i < s.size();) {
    if (s[i] != '\\') {
      out += s[i++];
      continue;
    }
    if (i + 1 < s.size() && s[i + 1] == '\\') {
      out += '\\';
      i += 2;
    } else if (i + 1 < s.size() && s[i + 1] == 'x') {
      auto v = hex(i + 2, 2);
      if (!v) return std::nullopt;
      out += static_cast<char>(*v);
      i += 4;
    } else if (i + 1 < s.size() && s[i + 1] == 'u') {
      auto v = hex(i + 2, 4);
      if (!v || *v < 0x80 || *v > 0x9f) return std::nullopt;
      out += static_cast<char>(0xc2);
      out += static_cast<char>(*v);
      i += 6;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

bool has_control(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x20 || b == 0x7f) return true;
    if (b == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) < 0xa0)
      return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string raw(reinterpret_cast<const char*>(data), size);
  const std::string want = fragd::utf8_escaped(raw);
  FUZZ_CHECK(utf8_by_json(want), "the escaped name is UTF-8");
  if (utf8_by_json(raw) && raw.find('\\') == std::string::npos && !has_control(raw))
    FUZZ_CHECK(want == raw, "a name that is UTF-8 with no backslash or control character is unchanged");
  FUZZ_CHECK(!has_control(want), "the escaped name holds no control character");
  FUZZ_CHECK(unescaped(want) == raw, "the escaped name reads back as the bytes it came from");

  fragd::Families fs;
  fragd::FamilyBuilder c("fragd_cgroup_stalls_total", "stalls by cgroup", fragd::MetricType::Counter);
  c.counter({{"cgroup", raw}}, 3);
  c.counter({{"cgroup", "other"}}, 1);
  fragd::FamilyBuilder g("fragd_thp_cgroup_anon_bytes", "anon by cgroup", fragd::MetricType::Gauge);
  g.gauge({{"cgroup", raw}, {"path", raw}}, 4096);
  fragd::FamilyBuilder h("fragd_stall_seconds", "stalls", fragd::MetricType::Histogram);
  fragd::LatencyHist lh;
  lh.add(300'000, 2);
  h.histogram({{"cgroup", raw}}, lh, fragd::BucketLayout::Coarse, fragd::HistogramUse::Quantiles);
  fragd::emit(fs, c, g, h);

  // Text: UTF-8 as a whole, every line HELP, TYPE or a sample that parses, labels as escaped.
  const std::string text = fragd::serialize(fs, fragd::ExpositionFormat::Text);
  FUZZ_CHECK(utf8_by_json(text), "the text exposition is UTF-8");
  size_t samples = 0, pos = 0;
  while (pos < text.size()) {
    const std::string line(fragd::next_line(text, pos));
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) continue;
    Sample s;
    FUZZ_CHECK(parse_sample(line, s), "every sample line of the text exposition parses");
    samples++;
    for (const auto& [k, v] : s.labels)
      if (k == "cgroup" || k == "path") FUZZ_CHECK(v == want || v == "other", "a label reads back as the escaped name");
  }
  const size_t buckets = fragd::classic_bucket_shifts(fragd::BucketLayout::Coarse, fragd::HistogramUse::Quantiles).size();
  FUZZ_CHECK(samples == 2 + 1 + (buckets + 1) + 2, "one line per sample: no name broke a line");

  // Protobuf: the same values, UTF-8 each.
  const std::string bytes = fragd::serialize(fs, fragd::ExpositionFormat::Protobuf);
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  uint32_t len = 0;
  size_t families = 0;
  while (in.ReadVarint32(&len)) {
    const auto limit = in.PushLimit(static_cast<int>(len));
    pb::MetricFamily f;
    FUZZ_CHECK(f.ParseFromCodedStream(&in), "every protobuf message parses");
    in.PopLimit(limit);
    families++;
    for (const auto& m : f.metric())
      for (const auto& l : m.label()) {
        FUZZ_CHECK(utf8_by_json(l.value()), "every protobuf label value is UTF-8");
        FUZZ_CHECK(l.value() == want || l.value() == "other", "and the escaped name");
      }
  }
  FUZZ_CHECK(families == 3, "every family in the protobuf exposition");

  // JSON: the top answer's cgroup row, dumped (strict: nlohmann throws on invalid UTF-8) and read back.
  fragd::TopReply top;
  top.cgroups.push_back({want, {3, 1000}});
  json j;
  try {
    j = json::parse(json(top).dump());
  } catch (const json::exception&) {
    FUZZ_CHECK(false, "the top answer with the name dumps and parses");
  }
  auto back = fragd::read_answer<fragd::TopReply>(j, "top");
  FUZZ_CHECK(back.ok() && back->cgroups.size() == 1 && back->cgroups[0].name == want, "and reads back as the name");
  return 0;
}
