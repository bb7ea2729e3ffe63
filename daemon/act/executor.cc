#include "act/executor.h"

#include "act/pool.h"

#include <cerrno>

namespace fragd {

ActionOutcome ActionExecutor::run(const ActionRequest& r, const Policy& p) {
  ActionOutcome o;
  o.req = r;
  const bool dry = p.dry_run;
  auto fail = [&o](const Error& e) {
    o.result = "error";
    o.detail = e.message;
  };
  switch (r.kind) {
    case ActionKind::Compact: {
      const unsigned order = p.compaction.reserve.order;
      if (auto s = act_.node_score(r.node)) o.score_before = static_cast<int>(*s);
      if (auto b = act_.free_blocks(r.node, order)) o.blocks_before = *b;
      if (dry) {
        o.result = "dry_run";
        break;
      }
      const uint64_t m0 = migrated();
      auto w = act_.compact_node(r.node);
      o.pages_migrated = migrated() - m0;
      if (auto s = act_.node_score(r.node)) o.score_after = static_cast<int>(*s);
      if (auto b = act_.free_blocks(r.node, order)) o.blocks_after = *b;
      if (!w && w.error().err == ECANCELED) {  // fragd is exiting: the write's process was killed
        o.result = "abandoned";
        o.detail = w.error().message;
      } else if (!w) {
        fail(w.error());
      } else {
        o.result = compaction_helped(o, p.compaction) ? "ok" : "no_gain";
      }
      break;
    }
    case ActionKind::RaiseProactiveness: {
      if (dry) {
        o.result = "dry_run";
        break;
      }
      if (!saved_) {
        auto cur = act_.read_proactiveness();
        if (!cur) {
          fail(cur.error());
          break;
        }
        if (hooks_.remember)
          if (auto k = hooks_.remember(*cur); !k) {
            fail(k.error());
            break;
          }
        saved_ = *cur;
      }
      if (auto w = act_.write_proactiveness(r.proactiveness); !w) fail(w.error());
      else o.result = "ok";
      break;
    }
    case ActionKind::RestoreProactiveness: {
      if (dry && !saved_) {
        o.result = "dry_run";
        break;
      }
      if (auto w = restore(); !w) fail(w.error());
      else o.result = "ok";
      break;
    }
    case ActionKind::Pool: {
      if (auto b = act_.read_pool(r.node, r.size_kib)) o.pool_before = o.pool_after = *b;
      if (dry) {
        o.result = "dry_run";
        break;
      }
      PoolRequest pr;
      pr.node = r.node;
      pr.size_kib = r.size_kib;
      pr.target = r.target;
      pr.compact_nodes = r.compact_nodes;
      pr.guard_kib = p.hugepages.guard_kib;
      pr.drop_caches = p.hugepages.drop_caches;
      const uint64_t m0 = migrated();
      const PoolOutcome po = resize_pool(act_, pr);
      o.pages_migrated = migrated() - m0;
      o.result = po.result;
      o.detail = po.detail;
      o.pool_before = po.before;
      o.pool_after = po.after;
      o.attempts = po.attempts;
      o.compactions = po.compactions;
      if (po.dropped_caches) o.detail += std::string(o.detail.empty() ? "" : "; ") + "clean page cache dropped";
      break;
    }
  }
  return o;
}

Result<void> ActionExecutor::restore() {
  if (!saved_) return {};
  if (auto w = act_.write_proactiveness(*saved_); !w) return w;
  saved_.reset();
  if (hooks_.forget) hooks_.forget();
  return {};
}

}  // namespace fragd
