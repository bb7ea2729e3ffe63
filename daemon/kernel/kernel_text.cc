// SPDX-License-Identifier: Apache-2.0
#include "kernel/kernel_text.h"

#include <cerrno>

namespace fragd {

std::string where(std::string_view path, size_t line) {
  return std::string(path) + ":" + std::to_string(line);
}

void warn(std::vector<std::string>* warnings, std::string_view path, size_t line,
          const std::string& why) {
  if (warnings) warnings->push_back(where(path, line) + ": " + why);
}


void BadLines::skip(size_t line, const std::string& why, std::string_view consequence) {
  if (first_line == 0) {
    first_line = line;
    first_why = why;
  }
  warn(warnings, path, line, why + "; " + std::string(consequence));
}

bool is_identifier(std::string_view s, size_t max_len) {
  if (s.empty() || s.size() > max_len) return false;
  const unsigned char c0 = static_cast<unsigned char>(s[0]);
  if (!((c0 >= 'A' && c0 <= 'Z') || (c0 >= 'a' && c0 <= 'z') || c0 == '_')) return false;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

namespace {

std::string fix_for(std::string_view path) {
  return "check that " + std::string(path) +
         " is the kernel's file (procfs mounted at the proc root fragd is given)";
}

}  // namespace

Error unparsable(std::string_view path, size_t line, std::string_view expected,
                 std::string_view detail) {
  std::string msg = where(path, line) + ": expected " + std::string(expected);
  if (!detail.empty()) msg += " (" + std::string(detail) + ")";
  msg += "; " + fix_for(path);
  return make_error(std::move(msg), EINVAL);
}

Error empty_file(std::string_view path, std::string_view expected) {
  return make_error(where(path, 1) + ": file is empty, expected " + std::string(expected) + "; " +
                        fix_for(path),
                    ENODATA);
}

std::vector<LexedLine> content_lines(std::string_view text) {
  std::vector<LexedLine> out;
  for (const Line& l : split_lines(text)) {
    auto toks = lex(l.text);
    if (!toks.empty()) out.push_back({l.no, l.text, std::move(toks)});
  }
  return out;
}

std::vector<LexedLine> content_lines(std::string_view text, bool (*keep)(std::string_view first_token), size_t& first) {
  std::vector<LexedLine> out;
  first = 0;
  for (const Line& l : split_lines(text)) {
    const std::string_view w = first_token(l.text, true);  // as lex splits it
    if (w.empty()) continue;
    if (first == 0) first = l.no;
    if (keep(w)) out.push_back({l.no, l.text, lex(l.text)});
  }
  return out;
}

}  // namespace fragd
