#pragma once

#include <netinet/in.h>

namespace collide::testing {

/// A loopback TCP port for a server that must listen on a port known before it starts, or come
/// back on the same port after a restart (a NATS node named in its peers' routes, a shard named
/// in HAProxy's configuration).
///
/// The port lies outside the kernel's ephemeral range (ip_local_port_range), so no outgoing
/// connection on the machine can take it as its source port while its server is down; it is
/// held for the life of this process by an flock on a file in the temporary directory, so no
/// other test process running at the same time is given it; and it was free to bind when
/// chosen. A port that some unrelated program listens on later can still collide.
int ReservePort();

/// The IPv4 loopback address 127.0.0.1 with `port` (0: any free port, for bind).
sockaddr_in LoopbackAddress(int port = 0);

}  // namespace collide::testing
