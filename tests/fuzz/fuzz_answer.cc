// SPDX-License-Identifier: Apache-2.0
// fragctl's readers of fragd's answers: the input is parsed as JSON (what is
// not JSON stops there, as in fragctl) and read as every message of the
// protocol (protocol/: the typed from_json) and, when one accepts it, written
// back (to_json), read again and rendered (fragctl/render/). Malformed answers
// must give an Error, never an exception; what was read once must read again
// to the same message.
#include <ctime>

#include <nlohmann/json.hpp>

#include "fragctl/render/ctl_format.h"
#include "fragctl/render/map_view.h"
#include "fuzz_check.h"
#include "protocol/action.h"
#include "protocol/hist.h"
#include "protocol/map.h"
#include "protocol/status.h"
#include "protocol/top.h"
#include "fragctl/render/top.h"
#include "protocol/wire.h"

namespace {

using nlohmann::json;

// Read as T; if accepted, its JSON reads again to the same JSON.
template <class T>
void typed(const json& j, const char* cmd) {
  auto r = fragd::read_answer<T>(j, cmd);
  if (!r) {
    FUZZ_CHECK(!r.error().message.empty(), "an error says what is wrong");
    return;
  }
  const json once = *r;
  auto again = fragd::read_answer<T>(once, cmd);
  FUZZ_CHECK(again.ok(), "what fragctl read, written back, reads again");
  FUZZ_CHECK(json(*again) == once, "and reads to the same message");
}

void hist(const json& j) {
  auto s = fragd::parse_hist_answer(j);
  if (!s) return;
  for (size_t i = 0; i < s->orders.size(); ++i) {
    FUZZ_CHECK(s->orders[i].order < FRAGD_NR_ORDERS, "orders are below FRAGD_NR_ORDERS");
    if (i > 0) FUZZ_CHECK(s->orders[i - 1].order < s->orders[i].order, "orders ascending and unique");
  }
  fragd::HistViewOptions all, nine;
  nine.order = 9;
  nine.page_kib = 64;
  (void)fragd::format_hist_text(*s, all);
  (void)fragd::format_hist_text(*s, nine);
  (void)fragd::hist_report_json(*s, all).dump();
  const fragd::HistSnapshot d = fragd::hist_interval(*s, *s);
  for (const auto& o : d.orders) FUZZ_CHECK(o.allocations() == 0, "an answer minus itself has no allocation");
  (void)fragd::format_hist_text(fragd::hist_interval(*s, fragd::HistSnapshot{}), all);
}

void map(const json& j) {
  auto v = fragd::parse_map_answer(j);
  if (!v) return;
  for (const auto& z : v->zones) {
    uint64_t sum = 0;
    for (uint64_t c : z.counts) sum += c;
    if (v->withheld) {
      FUZZ_CHECK(z.classes.empty() && z.used.empty(), "an answer that withheld the blocks has none");
    } else {
      FUZZ_CHECK(sum == z.classes.size(), "class counts add up to the blocks");
      FUZZ_CHECK(z.used.size() == z.classes.size(), "one used count per block");
    }
    FUZZ_CHECK(z.start_pfn < z.end_pfn, "a zone is not empty");
  }
  if (v->withheld && v->pollution)
    FUZZ_CHECK(!v->pollution->blocks && v->pollution->top.empty(), "nor polluted blocks or polluters");
  fragd::MapTextOptions opt;
  (void)fragd::format_map_text(*v, opt);
  opt.rows = false;
  opt.utc_times = true;
  opt.page_kib = 64;
  (void)fragd::format_map_text(*v, opt);
  (void)fragd::map_class_totals(*v);
  fragd::MapFilter f;
  f.node = 0;
  f.zone = "normal";
  fragd::MapView copy = *v;
  (void)fragd::filter_map(copy, f);
  json raw = j;
  (void)fragd::filter_map_answer(raw, f);
}

void actions(const json& j) {
  (void)fragd::parse_ids_answer(j, "compact");
  (void)fragd::parse_reload_answer(j);
  if (auto a = fragd::parse_action_answer(j, 7); a && a->state == fragd::ActionState::Done) {
    (void)fragd::format_outcome(a->outcome);
    (void)fragd::outcome_failure(a->outcome);
    (void)nlohmann::json(a->outcome).dump();
  }
  if (auto o = fragd::parse_outcome(j)) {
    (void)fragd::format_outcome(*o);
    (void)fragd::outcome_subject(*o);
    (void)fragd::outcome_failure(*o);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const json j = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  (void)fragd::check_answer(j, "status");
  typed<fragd::HistSnapshot>(j, "hist");
  typed<fragd::StatusReply>(j, "status");
  typed<fragd::MapView>(j, "map");
  typed<fragd::ActionStateReply>(j, "action");
  typed<fragd::IdsReply>(j, "compact");
  typed<fragd::ReloadReply>(j, "reload");
  typed<fragd::TraceAck>(j, "trace");
  typed<fragd::TopReply>(j, "top");
  if (auto t = fragd::read_answer<fragd::TopReply>(j, "top")) {
    fragd::TopViewOptions o;
    o.stacks = true;
    o.interval_s = 1;
    (void)fragd::format_top_text(fragd::top_interval(*t, *t), o);
  }
  hist(j);
  (void)fragd::format_status(j, 4, true);
  (void)fragd::format_status(j, 64, false);
  map(j);
  actions(j);
  std::tm tm{};
  tm.tm_hour = 12;
  (void)fragd::format_trace_line(j, tm);
  return 0;
}
