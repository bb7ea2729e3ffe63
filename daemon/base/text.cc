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

namespace {
bool is_sep(char c, bool commas) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || (commas && c == ',');
}
}  // namespace

std::string_view first_token(std::string_view s, bool commas) {
  size_t i = 0;
  while (i < s.size() && is_sep(s[i], commas)) ++i;
  size_t j = i;
  while (j < s.size() && !is_sep(s[j], commas)) ++j;
  return s.substr(i, j - i);
}

std::vector<std::string_view> tokenize(std::string_view s, bool commas) {
  const auto sep = [commas](char c) { return is_sep(c, commas); };
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

namespace {

// The length of the well-formed UTF-8 sequence at s[i], 0 when none starts there (RFC 3629,
// table 3-7 of the Unicode standard: the second byte's range depends on the first).
size_t utf8_sequence(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = at(i);
  if (b < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
  if (b >= 0xc2 && b <= 0xdf) n = 2;
  else if (b == 0xe0) n = 3, lo = 0xa0;                 // no overlong form
  else if (b >= 0xe1 && b <= 0xec) n = 3;
  else if (b == 0xed) n = 3, hi = 0x9f;                 // no surrogate
  else if (b >= 0xee && b <= 0xef) n = 3;
  else if (b == 0xf0) n = 4, lo = 0x90;                 // no overlong form
  else if (b >= 0xf1 && b <= 0xf3) n = 4;
  else if (b == 0xf4) n = 4, hi = 0x8f;                 // nothing past U+10FFFF
  else return 0;                                        // 0x80..0xc1, 0xf5..0xff
  if (i + n > s.size()) return 0;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (at(i + k) < 0x80 || at(i + k) > 0xbf) return 0;
  return n;
}

}  // namespace

bool is_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string utf8_escaped(std::string s) {
  // C1 controls (U+0080..U+009F) are well-formed UTF-8 but steer a terminal like C0 ones.
  const auto c1 = [&](size_t i, size_t n) {
    return n == 2 && static_cast<unsigned char>(s[i]) == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0;
  };
  const auto plain = [&] {
    for (size_t i = 0; i < s.size();) {
      const auto b = static_cast<unsigned char>(s[i]);
      const size_t n = utf8_sequence(s, i);
      if (b == '\\' || b < 0x20 || b == 0x7f || n == 0 || c1(i, n)) return false;
      i += n;
    }
    return true;
  };
  if (plain()) return s;
  std::string out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_sequence(s, i);
    if (b == '\\') {
      out += "\\\\";
      ++i;
    } else if (n == 0 || b < 0x20 || b == 0x7f) {
      out += strf("\\x%02x", b);
      ++i;
    } else if (c1(i, n)) {
      out += strf("\\u%04x", static_cast<unsigned char>(s[i + 1]));
      i += 2;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace fragd
