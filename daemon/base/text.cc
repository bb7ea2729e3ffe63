// SPDX-License-Identifier: Apache-2.0
#include "base/text.h"

#include <algorithm>
#include <charconv>
#include <cstdarg>
#include <cstdio>

namespace fragd {

std::string strf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, ap2);
  va_end(ap2);
  return out;
}

uint64_t now_ns(clockid_t clk) {
  timespec ts;
  clock_gettime(clk, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace fragd

namespace fragd {

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  size_t no = 1;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      lines.push_back({no, text});
      break;
    }
    lines.push_back({no, text.substr(0, nl)});
    text.remove_prefix(nl + 1);
    ++no;
  }
  return lines;
}

std::string_view next_line(std::string_view text, size_t& pos) {
  size_t nl = text.find('\n', pos);
  if (nl == std::string_view::npos) nl = text.size();
  const std::string_view line = text.substr(pos, nl - pos);
  pos = nl + 1;
  return line;
}

std::vector<std::string_view> tokenize(std::string_view s, bool commas) {
  const auto sep = [commas](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || (commas && c == ',');
  };
  std::vector<std::string_view> toks;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && sep(s[i])) ++i;
    const size_t start = i;
    while (i < s.size() && !sep(s[i])) ++i;
    if (i > start) toks.push_back(s.substr(start, i - start));
  }
  return toks;
}

bool parse_u64(std::string_view tok, uint64_t& out, int base) {
  if (tok.empty()) return false;
  const char* last = tok.data() + tok.size();
  auto [ptr, ec] = std::from_chars(tok.data(), last, out, base);
  return ec == std::errc() && ptr == last;
}

std::string quote(std::string_view tok) {
  std::string q = "'";
  const size_t n = std::min<size_t>(tok.size(), 40);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(tok[i]);
    q += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  if (tok.size() > n) q += "...";
  q += "'";
  return q;
}

}  // namespace fragd
