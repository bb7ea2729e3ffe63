// SPDX-License-Identifier: Apache-2.0
// How fragd's parsers of kernel text files (/proc/buddyinfo, zoneinfo,
// pagetypeinfo, vmstat, meminfo) lex lines and report bad ones: every skipped
// line is a warning naming file:line, and a file with nothing usable is one
// error naming the first bad line, what was expected and the fix.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/text.h"

namespace fragd {

// Commas separate tokens in every kernel file parsed here ("Node 0, zone DMA").
inline std::vector<std::string_view> lex(std::string_view s) { return tokenize(s, true); }

// "path:line".
std::string where(std::string_view path, size_t line);
void warn(std::vector<std::string>* warnings, std::string_view path, size_t line, const std::string& why);

// Bad lines of one file: each is warned about, and the first is kept for the
// error returned when nothing in the file parses.
struct BadLines {
  BadLines(std::vector<std::string>* w, std::string_view p) : warnings(w), path(p) {}

  std::vector<std::string>* warnings;
  std::string_view path;
  size_t first_line = 0;
  std::string first_why;

  void skip(size_t line, const std::string& why, std::string_view consequence = "line skipped");
};

// [A-Za-z_][A-Za-z0-9_]*, at most `max_len` chars.
bool is_identifier(std::string_view s, size_t max_len = 128);

// The error for a file none of whose lines parsed, and for an empty one.
Error unparsable(std::string_view path, size_t line, std::string_view expected, std::string_view detail);
Error empty_file(std::string_view path, std::string_view expected);

// A line that holds at least one token, with its tokens (lex).
struct LexedLine {
  size_t no;  // 1-based
  std::string_view text;
  std::vector<std::string_view> toks;
};
// The lines of `text` that hold a token: what every parser here walks (empty: an empty file).
std::vector<LexedLine> content_lines(std::string_view text);
// The same, lexing only the lines whose first token `keep` accepts (a long file of which a
// parser reads a few lines: zoneinfo's per-CPU lines are most of it); `first` is set to the
// number of the first line that holds a token (0: none, an empty file).
std::vector<LexedLine> content_lines(std::string_view text, bool (*keep)(std::string_view first_token), size_t& first);

}  // namespace fragd
