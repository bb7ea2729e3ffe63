// SPDX-License-Identifier: Apache-2.0
// Text helpers every room uses: printf into a std::string, the one tokenizer of
// kernel text files (lines, whitespace- or comma-separated tokens, whole-token
// numbers, a token quoted for a message), clock readings in nanoseconds, and
// names made valid UTF-8.
#pragma once

#include <time.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fragd {

// printf-style formatting into a std::string.
std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// The clock's time in nanoseconds (CLOCK_MONOTONIC unless told).
uint64_t now_ns(clockid_t clk = CLOCK_MONOTONIC);

// One line of a text file.
struct Line {
  size_t no;              // 1-based
  std::string_view text;  // without the '\n'
};
std::vector<Line> split_lines(std::string_view text);

// The line of `text` starting at `pos` (without its '\n'); moves pos past it.
std::string_view next_line(std::string_view text, size_t& pos);

// Whitespace-separated tokens; with commas = true commas separate too, so
// "Node 0, zone DMA, type Movable" lexes as Node|0|zone|DMA|type|Movable.
std::vector<std::string_view> tokenize(std::string_view s, bool commas = false);
// tokenize's first token alone, without the rest ("" when there is none).
std::string_view first_token(std::string_view s, bool commas = false);

// A whole token as an unsigned number; nothing left over.
bool parse_u64(std::string_view tok, uint64_t& out, int base = 10);

// A token quoted for a message: printable ASCII only, at most 40 chars.
std::string quote(std::string_view tok);

// Whether `s` is well-formed UTF-8 (RFC 3629: no overlong form, no surrogate, nothing past
// U+10FFFF, no sequence cut short), as Prometheus and JSON require of every string.
bool is_utf8(std::string_view s);
// `s` unchanged when it is UTF-8 with no backslash and no control character; otherwise, so
// that two different names never give one text: a backslash written as two, each byte that
// starts no well-formed sequence and each C0 control or DEL as the four characters \xnn (its
// value in lower-case hex), each C1 control (U+0080..U+009F) as \u00nn, the rest kept. Names
// that come from outside fragd (a cgroup's directory, a task's comm) pass through this before
// they become a label value or a JSON string: one such byte makes Prometheus refuse the whole
// scrape, and nlohmann-json's dump() throw.
std::string utf8_escaped(std::string s);

}  // namespace fragd
