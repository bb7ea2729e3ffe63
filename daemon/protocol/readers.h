// SPDX-License-Identifier: Apache-2.0
// Who reads an answer, and what each reader may see (docs/control-protocol.md "Readers
// other than root"). The control server knows each client's uid from SO_PEERCRED. Root sees
// every field. Any other reader (a member of socket_group) sees what the kernel shows every
// user, and nothing the kernel keeps for root:
//  - map: each zone's span, block counts by class, free pages, huge pages and compaction
//    cost (sums over a zone, as /proc/zoneinfo and fragd's /metrics show them); not the
//    class and pages in use of each block, whose place in the answer is a physical address
//    (the kernel gives page frames to root only: /proc/kpageflags, and /proc/PID/pagemap
//    since Linux 4.2), nor the polluted blocks (physical block, pid, comm, cgroup) and the
//    polluters (comm, cgroup);
//  - status: everything but the polluters;
//  - hist, top, trace, action: whole. top names kernel functions, as /proc/kallsyms does to
//    every user, and never shows an address (a frame without a symbol is counted, not shown);
//    trace names the stalling task (pid, comm, cgroup id), as /proc shows every task to every
//    user on a host without hidepid.
// What is left out is said in the answer's "withheld"; an answer to root has none.
#pragma once

#include "protocol/map.h"
#include "protocol/status.h"

namespace fragd {

enum class Reader { Root, Other };

// The reader a client's uid makes: root for uid 0, any other uid and an unknown one (-1) not.
Reader reader_of(long uid);

// Takes out of an answer what `reader` may not see, and says what in its "withheld".
void restrict_map(MapView& v, Reader reader);
void restrict_status(StatusReply& s, Reader reader);

}  // namespace fragd
