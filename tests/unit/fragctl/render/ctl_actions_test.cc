// SPDX-License-Identifier: Apache-2.0
// Tests of fragctl's side of acting (fragctl/render/ctl_format.h): requests, answers
// to compact/pool/action/reload, the text of every kind of outcome, and the
// polling of actions, driven by recorded answers and a fake clock.
#include "fragctl/render/ctl_format.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace {

// The outcome example of docs/control-protocol.md.
const char* const kCompactOutcome = R"({"id":7,"action":"compact","trigger":"manual","node":0,"reason":"fragctl compact",
 "result":"ok","detail":"","start_unix_ns":1763700000000000000,"duration_ns":1520000000,
 "score_before":93,"score_after":4,"blocks_before":12,"blocks_after":8804,
 "pages_migrated":392114,"size_kib":0,"target":0,"pool_before":0,"pool_after":0})";

const char* const kPoolOutcome = R"({"id":8,"action":"pool","trigger":"manual","node":-1,"reason":"fragctl pool set",
 "result":"ok","detail":"","start_unix_ns":1763700001000000000,"duration_ns":1610000000,
 "score_before":-1,"score_after":-1,"blocks_before":0,"blocks_after":0,
 "pages_migrated":0,"size_kib":2048,"target":3000,"pool_before":0,"pool_after":3000,
 "attempts":2,"compactions":1})";

fragd::ActionReport outcome(const char* text) {
  auto r = fragd::parse_outcome(json::parse(text));
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : fragd::ActionReport{};
}

json done_answer(const char* outcome_text) {
  return json{{"ok", true}, {"state", "done"}, {"outcome", json::parse(outcome_text)}};
}

// A fragd that answers {"cmd":"action","id":N} from a script per id (the last
// answer repeats), on a fake clock that only sleep_until moves.
struct FakeFragd {
  std::map<uint64_t, std::deque<json>> script;
  std::vector<uint64_t> asked;  // ids, in order
  int64_t now = 1000;
  std::vector<int64_t> sleeps;  // deadlines asked for
  int interrupt_after_sleeps = -1;

  fragd::ActionWaiter waiter(std::vector<fragd::FinishedAction>* done = nullptr) {
    fragd::ActionWaiter w;
    w.ask = [this](const json& req) -> fragd::Result<json> {
      EXPECT_EQ(req.at("cmd"), "action");
      const uint64_t id = req.at("id").get<uint64_t>();
      asked.push_back(id);
      auto it = script.find(id);
      if (it == script.end()) return json{{"ok", false}, {"error", "unknown action id " + std::to_string(id)}};
      json a = it->second.front();
      if (it->second.size() > 1) it->second.pop_front();
      return a;
    };
    w.now_ms = [this] { return now; };
    w.sleep_until = [this](int64_t deadline) {
      sleeps.push_back(deadline);
      if (interrupt_after_sleeps >= 0 && static_cast<int>(sleeps.size()) > interrupt_after_sleeps) return false;
      now = std::max(now, deadline);
      return true;
    };
    if (done) w.on_done = [done](const fragd::FinishedAction& f) { done->push_back(f); };
    w.interval_ms = 200;
    w.timeout_ms = 10000;
    return w;
  }
};

const json kQueued = json::parse(R"({"ok":true,"state":"queued"})");
const json kRunning = json::parse(R"({"ok":true,"state":"running"})");

}  // namespace

TEST(CtlActions, Requests) {
  EXPECT_EQ(fragd::compact_request(std::nullopt), json::parse(R"({"cmd":"compact"})"));
  EXPECT_EQ(fragd::compact_request(1), json::parse(R"({"cmd":"compact","node":1})"));
  EXPECT_EQ(fragd::pool_request(2048, 3000, std::nullopt),
            json::parse(R"({"cmd":"pool","size_kib":2048,"count":3000})"));
  EXPECT_EQ(fragd::pool_request(1048576, 2, 0), json::parse(R"({"cmd":"pool","size_kib":1048576,"count":2,"node":0})"));
  EXPECT_EQ(fragd::action_request(7), json::parse(R"({"cmd":"action","id":7})"));
}

TEST(CtlActions, IdsAnswer) {
  auto ids = fragd::parse_ids_answer(json::parse(R"({"ok":true,"ids":[7,8]})"), "compact");
  ASSERT_TRUE(ids.ok()) << ids.error().message;
  EXPECT_EQ(*ids, (std::vector<uint64_t>{7, 8}));

  auto refused = fragd::parse_ids_answer(
      json::parse(R"j({"ok":false,"error":"compact needs mode: act (fragd runs in mode observe)"})j"), "compact");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "fragd refused 'compact': compact needs mode: act (fragd runs in mode observe)");

  auto none = fragd::parse_ids_answer(json::parse(R"({"ok":true,"ids":[]})"), "compact");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("queued no action"), std::string::npos) << none.error().message;

  for (const char* bad : {R"({"ok":true})", R"({"ok":true,"ids":7})", R"({"ok":true,"ids":[-1]})",
                          R"({"ok":true,"ids":["7"]})", R"([1])", R"({"ids":[1]})"}) {
    fragd::Result<std::vector<uint64_t>> r = std::vector<uint64_t>{};
    EXPECT_NO_THROW(r = fragd::parse_ids_answer(json::parse(bad), "pool")) << bad;
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message.rfind("malformed answer to 'pool' from fragd", 0), 0u) << r.error().message;
  }
}

TEST(CtlActions, ReloadAnswer) {
  auto ok = fragd::parse_reload_answer(
      json::parse(R"({"ok":true,"message":"policy reloaded from /etc/fragd/fragd.yaml"})"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, "policy reloaded from /etc/fragd/fragd.yaml");
  auto bare = fragd::parse_reload_answer(json::parse(R"({"ok":true})"));
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(*bare, "policy reloaded");

  auto bad = fragd::parse_reload_answer(json::parse(
      R"j({"ok":false,"error":"fragd.yaml:12:9: key 'compaction.score.low': 50 is not below high 40 (the running policy is kept)"})j"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "fragd refused 'reload': fragd.yaml:12:9: key 'compaction.score.low': 50 is not below high 40 (the running "
            "policy is kept)");
  EXPECT_FALSE(fragd::parse_reload_answer(json::parse(R"({"ok":true,"message":5})")).ok());
  EXPECT_FALSE(fragd::parse_reload_answer(json::parse(R"("ok")")).ok());
  EXPECT_FALSE(fragd::parse_reload_answer(json::parse(R"({"ok":1})")).ok());
}

TEST(CtlActions, CompactOutcomeText) {
  fragd::ActionReport o = outcome(kCompactOutcome);
  EXPECT_EQ(o.id, 7u);
  EXPECT_EQ(o.node, 0);
  EXPECT_TRUE(o.succeeded());
  EXPECT_EQ(fragd::format_outcome(o),
            "compact node 0: ok, score 93 -> 4, 392114 pages migrated, 1.52 s (manual: fragctl compact)");

  // A reserve-triggered compaction also shows the free blocks it gained.
  json j = json::parse(kCompactOutcome);
  j["trigger"] = "reserve";
  j["reason"] = "12 free order-9 blocks < 500";
  EXPECT_EQ(fragd::format_outcome(outcome(j.dump().c_str())),
            "compact node 0: ok, score 93 -> 4, free blocks 12 -> 8804, 392114 pages migrated, 1.52 s "
            "(reserve: 12 free order-9 blocks < 500)");

  j = json::parse(kCompactOutcome);
  j["result"] = "no_gain";
  j["trigger"] = "score";
  j["reason"] = "score 45 > high 40";
  j["score_before"] = 45;
  j["score_after"] = 41;
  j["pages_migrated"] = 1;
  fragd::ActionReport ng = outcome(j.dump().c_str());
  EXPECT_TRUE(ng.succeeded());  // it ran as asked
  EXPECT_EQ(fragd::format_outcome(ng),
            "compact node 0: no_gain, score 45 -> 41, 1 page migrated, 1.52 s (score: score 45 > high 40)");
  EXPECT_EQ(fragd::outcome_failure(ng), "compact node 0: no_gain: the score fell too little (45 -> 41)");

  j = json::parse(kCompactOutcome);
  j["result"] = "error";
  j["detail"] = "write 1 to /sys/devices/system/node/node0/compact: Device or resource busy";
  j["score_after"] = -1;
  j["pages_migrated"] = 0;
  j["duration_ns"] = 3000000;
  fragd::ActionReport err = outcome(j.dump().c_str());
  EXPECT_EQ(fragd::format_outcome(err),
            "compact node 0: error, score 93 -> -, 0 pages migrated, 0.00 s (manual: fragctl compact); write 1 to "
            "/sys/devices/system/node/node0/compact: Device or resource busy");
  EXPECT_EQ(fragd::outcome_failure(err),
            "compact node 0: error: write 1 to /sys/devices/system/node/node0/compact: Device or resource busy");

  j = json::parse(kCompactOutcome);
  j["result"] = "dry_run";
  j["score_after"] = -1;
  j["pages_migrated"] = 0;
  j["duration_ns"] = 0;
  fragd::ActionReport dry = outcome(j.dump().c_str());
  EXPECT_TRUE(dry.succeeded());
  EXPECT_EQ(fragd::format_outcome(dry),
            "compact node 0: dry_run, score 93 -> -, 0 pages migrated, 0.00 s (manual: fragctl compact)");
  // As fragd sends it: nothing measured after a dry run, blocks_after 0.
  j["trigger"] = "reserve";
  j["reason"] = "12 free order-9 blocks < 500";
  j["blocks_after"] = 0;
  EXPECT_EQ(fragd::format_outcome(outcome(j.dump().c_str())),
            "compact node 0: dry_run, score 93 -> -, free blocks 12 -> -, 0 pages migrated, 0.00 s (reserve: 12 free "
            "order-9 blocks < 500)");

  j = json::parse(kCompactOutcome);
  j["result"] = "abandoned";
  j["node"] = 1;
  EXPECT_EQ(fragd::outcome_failure(outcome(j.dump().c_str())), "compact node 1: abandoned: fragd was exiting");
  j["result"] = "refused";
  EXPECT_EQ(fragd::outcome_failure(outcome(j.dump().c_str())), "compact node 1: refused: fragd refused it");
  j["node"] = -1;
  EXPECT_EQ(fragd::outcome_subject(outcome(j.dump().c_str())), "compact every node");
}

TEST(CtlActions, PoolOutcomeText) {
  fragd::ActionReport o = outcome(kPoolOutcome);
  EXPECT_TRUE(o.succeeded());
  EXPECT_EQ(fragd::format_outcome(o),
            "pool 2 MiB node all: ok, 0 -> 3000 (target 3000), 2 writes, 1 compaction, 1.61 s (manual: fragctl pool set)");

  json j = json::parse(kPoolOutcome);
  j["result"] = "short";
  j["node"] = 0;
  j["pool_after"] = 1700;
  j["attempts"] = 1;
  j["compactions"] = 0;
  j["detail"] = "two attempts in a row without progress at 1700 of 3000";
  fragd::ActionReport s = outcome(j.dump().c_str());
  EXPECT_FALSE(s.succeeded());
  EXPECT_EQ(fragd::format_outcome(s),
            "pool 2 MiB node 0: short, 0 -> 1700 (target 3000), 1 write, 0 compactions, 1.61 s (manual: fragctl pool "
            "set); two attempts in a row without progress at 1700 of 3000");
  EXPECT_EQ(fragd::outcome_failure(s),
            "pool 2 MiB node 0: short: two attempts in a row without progress at 1700 of 3000");
  j["detail"] = "";
  EXPECT_EQ(fragd::outcome_failure(outcome(j.dump().c_str())),
            "pool 2 MiB node 0: short: the pool stopped short of its target (1700 of 3000)");

  j["result"] = "guard";
  EXPECT_EQ(fragd::outcome_failure(outcome(j.dump().c_str())),
            "pool 2 MiB node 0: guard: stopped by the MemAvailable guard (1700 of 3000 pages)");

  // A 1 GiB pool, shrinking, from the policy; an answer without attempts and
  // compactions (not in every fragd) leaves them out.
  j = json::parse(kPoolOutcome);
  j["size_kib"] = 1048576;
  j["trigger"] = "pool";
  j["reason"] = "target 2 < 4";
  j["pool_before"] = 4;
  j["pool_after"] = 2;
  j["target"] = 2;
  j.erase("attempts");
  j.erase("compactions");
  EXPECT_EQ(fragd::format_outcome(outcome(j.dump().c_str())),
            "pool 1 GiB node all: ok, 4 -> 2 (target 2), 1.61 s (pool: target 2 < 4)");
}

TEST(CtlActions, ProactivenessOutcomeText) {
  json j = json::parse(R"({"id":11,"action":"proactiveness_raise","trigger":"demand","node":-1,
    "reason":"12.5 stalls/s > 10 over 10s","result":"ok","detail":"","start_unix_ns":1763700002000000000,
    "duration_ns":40000,"score_before":-1,"score_after":-1,"blocks_before":0,"blocks_after":0,
    "pages_migrated":0,"size_kib":0,"target":0,"pool_before":0,"pool_after":0})");
  EXPECT_EQ(fragd::format_outcome(outcome(j.dump().c_str())),
            "proactiveness_raise: ok, 0.00 s (demand: 12.5 stalls/s > 10 over 10s)");
  j["action"] = "proactiveness_restore";
  j["trigger"] = "hold";
  j["reason"] = "held 60 s";
  j["pages_migrated"] = 52000;
  EXPECT_EQ(fragd::format_outcome(outcome(j.dump().c_str())),
            "proactiveness_restore: ok, 52000 pages migrated, 0.00 s (hold: held 60 s)");
  j["result"] = "error";
  j["detail"] = "write 20 to /proc/sys/vm/compaction_proactiveness: Permission denied";
  EXPECT_EQ(fragd::outcome_failure(outcome(j.dump().c_str())),
            "proactiveness_restore: error: write 20 to /proc/sys/vm/compaction_proactiveness: Permission denied");

  // An action kind this fragctl does not know is still shown, escaped.
  j["action"] = "future\x1b[2J";
  j["node"] = 3;
  j["trigger"] = "";
  j["reason"] = "";
  j["detail"] = "";
  j["result"] = "ok";
  EXPECT_EQ(fragd::format_outcome(outcome(j.dump().c_str())), "future?[2J node 3: ok, 52000 pages migrated, 0.00 s");
}

TEST(CtlActions, OutcomeMinimalAndMalformed) {
  // Only the required keys: the figures are left out, not shown as zeros.
  auto min = fragd::parse_outcome(json::parse(R"({"id":1,"action":"compact","node":2,"result":"ok"})"));
  ASSERT_TRUE(min.ok()) << min.error().message;
  EXPECT_EQ(fragd::format_outcome(*min), "compact node 2: ok");

  const char* bad[] = {
      R"([])",
      R"({"action":"compact","node":0,"result":"ok"})",
      R"({"id":-1,"action":"compact","node":0,"result":"ok"})",
      R"({"id":1,"node":0,"result":"ok"})",
      R"({"id":1,"action":5,"node":0,"result":"ok"})",
      R"({"id":1,"action":"compact","result":"ok"})",
      R"({"id":1,"action":"compact","node":"0","result":"ok"})",
      R"({"id":1,"action":"compact","node":0.5,"result":"ok"})",
      R"({"id":1,"action":"compact","node":0})",
      R"({"id":1,"action":"compact","node":0,"result":"ok","duration_ns":-3})",
      R"({"id":1,"action":"compact","node":0,"result":"ok","score_before":"93"})",
      R"({"id":1,"action":"compact","node":0,"result":"ok","reason":[]})",
      R"({"id":1,"action":"compact","node":0,"result":"ok","pages_migrated":1.5})",
      R"({"id":1,"action":"pool","node":0,"result":"ok","attempts":true})",
  };
  for (const char* text : bad) {
    fragd::Result<fragd::ActionReport> r = fragd::ActionReport{};
    EXPECT_NO_THROW(r = fragd::parse_outcome(json::parse(text))) << text;
    EXPECT_FALSE(r.ok()) << text;
  }
  auto missing = fragd::parse_outcome(json::parse(bad[8]));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "outcome: missing \"result\"");
}

TEST(CtlActions, ActionAnswer) {
  auto q = fragd::parse_action_answer(kQueued, 7);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->state, fragd::ActionState::Queued);
  auto r = fragd::parse_action_answer(kRunning, 7);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state, fragd::ActionState::Running);
  auto d = fragd::parse_action_answer(done_answer(kCompactOutcome), 7);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->state, fragd::ActionState::Done);
  EXPECT_EQ(d->outcome.pages_migrated, 392114u);
  EXPECT_EQ(json(d->outcome), json::parse(kCompactOutcome));  // read and written back unchanged

  auto unknown = fragd::parse_action_answer(json::parse(R"({"ok":false,"error":"unknown action id 7"})"), 7);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "cannot follow action 7: fragd refused 'action': unknown action id 7");

  auto other = fragd::parse_action_answer(done_answer(kCompactOutcome), 9);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("the outcome is that of action 7"), std::string::npos);

  const char* bad[] = {
      R"({"ok":true})",
      R"({"ok":true,"state":3})",
      R"({"ok":true,"state":"paused"})",
      R"({"ok":true,"state":"done"})",
      R"({"ok":true,"state":"done","outcome":"ok"})",
      R"({"ok":true,"state":"done","outcome":{"id":7,"action":"compact","node":0}})",
      R"({"state":"done"})",
  };
  for (const char* text : bad) {
    fragd::Result<fragd::ActionAnswer> a = fragd::ActionAnswer{};
    EXPECT_NO_THROW(a = fragd::parse_action_answer(json::parse(text), 7)) << text;
    ASSERT_FALSE(a.ok()) << text;
    EXPECT_NE(a.error().message.find("malformed answer to 'action'"), std::string::npos) << a.error().message;
  }
}

TEST(CtlActions, WaitPollsUntilDone) {
  FakeFragd f;
  json second = json::parse(kCompactOutcome);
  second["id"] = 8;
  second["node"] = 1;
  f.script[7] = {kRunning, kRunning, done_answer(kCompactOutcome)};
  f.script[8] = {kQueued, kQueued, kQueued, kRunning, done_answer(second.dump().c_str())};
  std::vector<fragd::FinishedAction> seen;
  auto r = fragd::wait_for_actions({7, 8}, f.waiter(&seen));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].view.id, 7u);
  EXPECT_EQ((*r)[1].view.id, 8u);
  EXPECT_EQ((*r)[1].view.node, 1);
  // Reported as each finished; a done action is not asked again.
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].view.id, 7u);
  EXPECT_EQ(f.asked, (std::vector<uint64_t>{7, 8, 7, 8, 7, 8, 8, 8}));
  // Every 200 ms, four pauses between five rounds.
  EXPECT_EQ(f.sleeps, (std::vector<int64_t>{1200, 1400, 1600, 1800}));
}

TEST(CtlActions, WaitDoneAtOnceNeverSleeps) {
  FakeFragd f;
  f.script[7] = {done_answer(kCompactOutcome)};
  auto r = fragd::wait_for_actions({7}, f.waiter());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(f.sleeps.empty());
  EXPECT_EQ(r->at(0).view.pages_migrated, 392114u);
}

TEST(CtlActions, WaitTimesOut) {
  FakeFragd f;
  f.script[7] = {done_answer(kCompactOutcome)};
  f.script[8] = {kRunning};
  f.script[9] = {kQueued};
  std::vector<fragd::FinishedAction> seen;
  fragd::ActionWaiter w = f.waiter(&seen);
  w.timeout_ms = 1000;
  auto r = fragd::wait_for_actions({7, 8, 9}, w);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().err, ETIMEDOUT);
  EXPECT_EQ(r.error().message,
            "gave up after 1 s waiting for action 8 (running), action 9 (queued); fragd carries on regardless: see "
            "'fragctl status' for the outcome, or pass a longer --timeout");
  ASSERT_EQ(seen.size(), 1u);  // the finished one was still reported
  EXPECT_EQ(f.now, 2000);      // never slept past the deadline
  EXPECT_EQ(f.sleeps.back(), 2000);
}

TEST(CtlActions, WaitInterrupted) {
  FakeFragd f;
  f.script[7] = {kRunning};
  f.interrupt_after_sleeps = 2;
  auto r = fragd::wait_for_actions({7}, f.waiter());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().err, EINTR);
  EXPECT_NE(r.error().message.find("fragd carries on with action 7 (running)"), std::string::npos) << r.error().message;
  EXPECT_EQ(f.asked.size(), 3u);

  // A read cut short by a signal counts the same.
  FakeFragd g;
  fragd::ActionWaiter w = g.waiter();
  w.ask = [](const json&) -> fragd::Result<json> { return fragd::make_error("interrupted", EINTR); };
  auto s = fragd::wait_for_actions({5}, w);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().err, EINTR);
}

TEST(CtlActions, WaitStopsOnBadAnswers) {
  FakeFragd f;  // id 7 unknown to fragd
  auto r = fragd::wait_for_actions({7}, f.waiter());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot follow action 7: fragd refused 'action': unknown action id 7");

  FakeFragd g;
  g.script[7] = {kRunning, json::parse(R"({"ok":true,"state":"done","outcome":{"id":7}})")};
  auto m = fragd::wait_for_actions({7}, g.waiter());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message.rfind("malformed answer to 'action' (action 7) from fragd", 0), 0u)
      << m.error().message;

  // fragd went away: the transport error comes through unchanged.
  FakeFragd h;
  fragd::ActionWaiter w = h.waiter();
  w.ask = [](const json&) -> fragd::Result<json> {
    return fragd::make_error("fragd closed the connection on /run/fragd/fragd.sock without answering 'action'");
  };
  auto gone = fragd::wait_for_actions({7}, w);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().message, "fragd closed the connection on /run/fragd/fragd.sock without answering 'action'");
}
