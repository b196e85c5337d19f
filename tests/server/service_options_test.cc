// ServerOptions::Validate (every rule, each message naming its option), Describe (every option
// and limit once, as its flag spells it) and the enum options' flag forms.

#include "server/service_options.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bvh/simd_level.h"
#include "gtest/gtest.h"

namespace collide {
namespace {

// Validate's refusal of `options`: its code and the message's start.
void ExpectRefused(const ServerOptions& options, absl::StatusCode code, const std::string& start) {
  const absl::Status status = options.Validate();
  EXPECT_EQ(status.code(), code) << start << ": " << status;
  EXPECT_TRUE(absl::StartsWith(status.message(), start)) << status;
}

TEST(ServerOptions, TheDefaultsAreValid) {
  EXPECT_TRUE(ServerOptions{}.Validate().ok()) << ServerOptions{}.Validate();
  EXPECT_TRUE(DefaultServerOptions().Validate().ok());
  EXPECT_GE(DefaultServerOptions().query_threads, 1u);
  EXPECT_EQ(DefaultServerOptions().query_threads, UsableCpus());
}

TEST(ServerOptions, EveryRangeIsCheckedAtBothEndsWithTheOptionsName) {
  struct Case {
    std::string name;
    std::function<void(ServerOptions&)> set;
  };
  const std::vector<Case> refused = {
      {"sync_interval_ms: -1 is not from 0", [](ServerOptions& o) { o.sync_interval_ms = -1; }},
      {"drain_timeout_ms: -5 is not from 0", [](ServerOptions& o) { o.drain_timeout_ms = -5; }},
      {"max_message_bytes: 0 is not from 1", [](ServerOptions& o) { o.max_message_bytes = 0; }},
      {"max_metadata_bytes: -1 is not", [](ServerOptions& o) { o.max_metadata_bytes = -1; }},
      {"max_streams_per_connection: 0 is",
       [](ServerOptions& o) { o.max_streams_per_connection = 0; }},
      {"watch_threads: 0 is not from 1 to 64", [](ServerOptions& o) { o.watch_threads = 0; }},
      {"watch_threads: 65 is not from 1 to 64", [](ServerOptions& o) { o.watch_threads = 65; }},
      {"query_threads: 0 is not from 1 to 1024", [](ServerOptions& o) { o.query_threads = 0; }},
      {"query_threads: 1025 is not from 1 to 1024",
       [](ServerOptions& o) { o.query_threads = 1025; }},
      {"viewer_max_streams: 0 is not from 1 to 64",
       [](ServerOptions& o) { o.viewer_max_streams = 0; }},
      {"viewer_max_streams: 65 is not from 1 to 64",
       [](ServerOptions& o) { o.viewer_max_streams = 65; }},
      {"slow_query_ms: -1 is not from 0 to 86400000",
       [](ServerOptions& o) { o.slow_query_ms = -1; }},
      {"slow_query_ms: nan is not", [](ServerOptions& o) { o.slow_query_ms = std::nan(""); }},
      {"slow_query_ms: inf is not", [](ServerOptions& o) { o.slow_query_ms = INFINITY; }},
      {"slow_query_ms: 86400000.5 is not", [](ServerOptions& o) { o.slow_query_ms = 86400000.5; }},
      {"slow_update_ms: -1 is not from 0 to 86400000",
       [](ServerOptions& o) { o.slow_update_ms = -1; }},
      {"slow_update_ms: nan is not", [](ServerOptions& o) { o.slow_update_ms = std::nan(""); }},
      {"slow_update_ms: inf is not", [](ServerOptions& o) { o.slow_update_ms = INFINITY; }},
      {"slow_update_ms: 86400000.5 is not",
       [](ServerOptions& o) { o.slow_update_ms = 86400000.5; }},
      {"slow_update_ms: 1.84467440737096e+19 is not",
       [](ServerOptions& o) { o.slow_update_ms = 18446744073709551615.0; }},
      {"max_answer_bytes: 4351 is not from 4352 to 2147483647",
       [](ServerOptions& o) { o.limits.max_answer_bytes = 4351; }},
      {"max_answer_bytes: 2147483648 is not",
       [](ServerOptions& o) { o.limits.max_answer_bytes = 2147483648u; }},
      {"max_scenes: 0 is not from 1", [](ServerOptions& o) { o.limits.max_scenes = 0; }},
      {"max_bodies_per_scene: 0 is", [](ServerOptions& o) { o.limits.max_bodies_per_scene = 0; }},
      {"max_inflight_per_stream: 0 is",
       [](ServerOptions& o) { o.limits.max_inflight_per_stream = 0; }},
      {"max_streams: 0 is", [](ServerOptions& o) { o.limits.max_streams = 0; }},
      {"max_watch_queued_events: 0 is",
       [](ServerOptions& o) { o.limits.max_watch_queued_events = 0; }},
  };
  for (const Case& c : refused) {
    ServerOptions options;
    c.set(options);
    ExpectRefused(options, absl::StatusCode::kInvalidArgument, c.name);
  }
  // The ends themselves are accepted.
  const std::vector<std::function<void(ServerOptions&)>> accepted = {
      [](ServerOptions& o) { o.sync_interval_ms = 0; },
      [](ServerOptions& o) { o.watch_threads = 64; },
      [](ServerOptions& o) { o.query_threads = 1024; },
      [](ServerOptions& o) { o.viewer_max_streams = 64; },
      [](ServerOptions& o) { o.slow_query_ms = 86400000; },
      [](ServerOptions& o) { o.slow_query_ms = 0.000001; },
      [](ServerOptions& o) { o.slow_update_ms = 86400000; },
      [](ServerOptions& o) { o.slow_update_ms = 0.000001; },
      [](ServerOptions& o) { o.limits.max_answer_bytes = 4352; },
      [](ServerOptions& o) { o.limits.max_answer_bytes = 2147483647; },
      [](ServerOptions& o) { o.limits.max_watch_queued_bytes = UINT64_MAX; },
      [](ServerOptions& o) { o.limits.max_batch_ops = 0; },
      [](ServerOptions& o) { o.limits.max_fences_per_watch = 0; },
  };
  for (size_t i = 0; i < accepted.size(); ++i) {
    ServerOptions options;
    accepted[i](options);
    EXPECT_TRUE(options.Validate().ok()) << i << ": " << options.Validate();
  }
}

TEST(ServerOptions, AddressesFollowTheLoopbackRuleAndTheirForms) {
  ServerOptions remote;
  remote.address = "0.0.0.0:50051";
  ExpectRefused(remote, absl::StatusCode::kFailedPrecondition,
                "address: refusing to serve 0.0.0.0:50051 (not a loopback address)");
  remote.allow_insecure_remote = true;
  EXPECT_TRUE(remote.Validate().ok());
  remote.allow_insecure_remote = false;
  remote.token_file = "tokens";
  EXPECT_TRUE(remote.Validate().ok());

  for (const char* flag : {"metrics", "viewer"}) {
    ServerOptions options;
    std::string& address =
        std::string(flag) == "metrics" ? options.metrics_address : options.viewer_address;
    std::string& port_file =
        std::string(flag) == "metrics" ? options.metrics_port_file : options.viewer_port_file;
    address = "0.0.0.0:0";
    ExpectRefused(options, absl::StatusCode::kFailedPrecondition,
                  absl::StrCat(flag, "_address: refusing to serve 0.0.0.0:0"));
    options.allow_insecure_remote = true;
    EXPECT_TRUE(options.Validate().ok()) << flag;
    address = "garbage";
    ExpectRefused(options, absl::StatusCode::kInvalidArgument,
                  absl::StrCat(flag, "_address: \"garbage\" is not host:port"));
    address = "";
    port_file = "port";
    ExpectRefused(options, absl::StatusCode::kInvalidArgument,
                  absl::StrCat(flag, "_port_file: needs --", flag, "_address"));
    address = "127.0.0.1:0";
    EXPECT_TRUE(options.Validate().ok()) << flag;
  }
  ServerOptions empty;
  empty.address = "";
  ExpectRefused(empty, absl::StatusCode::kInvalidArgument, "address: empty");
  ServerOptions no_dir;
  no_dir.data_dir = "";
  ExpectRefused(no_dir, absl::StatusCode::kInvalidArgument, "data_dir: empty");
}

TEST(ServerOptions, TlsFilesComeTogether) {
  ServerOptions options;
  options.tls_cert = "cert.pem";
  ExpectRefused(options, absl::StatusCode::kInvalidArgument, "tls_key: needed with --tls_cert");
  options = {};
  options.tls_key = "key.pem";
  ExpectRefused(options, absl::StatusCode::kInvalidArgument, "tls_cert: needed with --tls_key");
  options = {};
  options.tls_ca = "ca.pem";
  ExpectRefused(options, absl::StatusCode::kInvalidArgument, "tls_ca: needs --tls_cert");
  options.tls_cert = "cert.pem";
  options.tls_key = "key.pem";
  EXPECT_TRUE(options.Validate().ok());
}

TEST(ServerOptions, TheDurabilityIsAServersPolicyAndTheSimdLevelOneThisCpuHas) {
  ServerOptions options;
  options.durability = DurabilityPolicy::kDefault;
  ExpectRefused(options, absl::StatusCode::kInvalidArgument, "durability: must be none");
  options.durability = static_cast<DurabilityPolicy>(9);
  ExpectRefused(options, absl::StatusCode::kInvalidArgument, "durability: must be none");
  for (SimdChoice choice :
       {SimdChoice::kAuto, SimdChoice::kSse, SimdChoice::kAvx2, SimdChoice::kAvx512}) {
    ServerOptions simd;
    simd.simd = choice;
    if (choice == SimdChoice::kAuto || SimdLevelSupported(ChosenSimdLevel(choice))) {
      EXPECT_TRUE(simd.Validate().ok()) << AbslUnparseFlag(choice);
    } else {
      ExpectRefused(simd, absl::StatusCode::kInvalidArgument, "simd: this CPU lacks");
    }
  }
  EXPECT_EQ(ChosenSimdLevel(SimdChoice::kAuto), BestSimdLevel());
}

TEST(ServerOptions, ReplicationAndRouterFlagsAreCheckedWithTheirNames) {
  struct Case {
    std::string start;
    std::function<void(ServerOptions&)> set;
  };
  const std::string max64 = "18446744073709551615";
  const std::vector<Case> refused = {
      {"durability: replicated needs --nats_url",
       [](ServerOptions& o) { o.durability = DurabilityPolicy::kReplicated; }},
      {"nats_url: \"127.0.0.1:4222\" is not nats://host:port",
       [](ServerOptions& o) { o.nats_url = "127.0.0.1:4222"; }},
      {"nats_url: \"http://x:1\" is not", [](ServerOptions& o) { o.nats_url = "http://x:1"; }},
      {"nats_url: holds credentials",
       [](ServerOptions& o) { o.nats_url = "nats://user:secret@127.0.0.1:4222"; }},
      {"nats_url: has 1 to 256 characters, got 0",
       [](ServerOptions& o) { o.nats_url = "nats://a:1,,nats://b:1"; }},
      {"nats_url: has 1 to 256 characters, got 0", [](ServerOptions& o) { o.nats_url = ","; }},
      {"nats_url: \"nats://a:1\" is named twice",
       [](ServerOptions& o) { o.nats_url = "nats://a:1,nats://a:1"; }},
      {"nats_url: character 7 is a space", [](ServerOptions& o) { o.nats_url = "nats://\x01:1"; }},
      {"nats_url: character 7 is a space", [](ServerOptions& o) { o.nats_url = "nats:// a:1"; }},
      {"nats_url: has 1 to 256 characters, got 300",
       [](ServerOptions& o) { o.nats_url = "nats://" + std::string(293, 'a'); }},
      {"nats_url: more than 64",
       [](ServerOptions& o) {
         for (int i = 0; i < 65; ++i) {
           o.nats_url += absl::StrCat(i == 0 ? "" : ",", "nats://h", i, ":1");
         }
       }},
      {"advertise_address: needed with --nats_url",
       [](ServerOptions& o) {
         o.nats_url = "nats://127.0.0.1:4222";
         o.address = "0.0.0.0:50051";
         o.allow_insecure_remote = true;
       }},
      {"advertise_address: \"nohost\" is not host:port",
       [](ServerOptions& o) { o.advertise_address = "nohost"; }},
      {"advertise_address: character 4 is a space",
       [](ServerOptions& o) { o.advertise_address = "host :1"; }},
      {"advertise_address: character 0 is a space",
       [](ServerOptions& o) { o.advertise_address = "\xff:1"; }},
      {"replication_lease_ms: 0 is not from 200 to 600000",
       [](ServerOptions& o) { o.replication_lease_ms = 0; }},
      {"replication_lease_ms: 199 is not", [](ServerOptions& o) { o.replication_lease_ms = 199; }},
      {"replication_lease_ms: 600001 is not",
       [](ServerOptions& o) { o.replication_lease_ms = 600001; }},
      {"replication_lease_ms: 4294967295 is not",
       [](ServerOptions& o) { o.replication_lease_ms = UINT32_MAX; }},
      {"replication_replicas: 0 is not from 1 to 5",
       [](ServerOptions& o) { o.replication_replicas = 0; }},
      {"replication_replicas: 6 is not", [](ServerOptions& o) { o.replication_replicas = 6; }},
      {"replication_publish_timeout_ms: 99 is not from 100 to 600000",
       [](ServerOptions& o) { o.replication_publish_timeout_ms = 99; }},
      {"replication_publish_timeout_ms: 4294967295 is not",
       [](ServerOptions& o) { o.replication_publish_timeout_ms = UINT32_MAX; }},
      {"router_sync_ms: 99 is not from 100 to 3600000",
       [](ServerOptions& o) { o.router_sync_ms = 99; }},
      {"router_sync_ms: 3600001 is not", [](ServerOptions& o) { o.router_sync_ms = 3600001; }},
      {"router_map: --router_admin, --router_map and --router_backend go together",
       [](ServerOptions& o) {
         o.router_admin = "127.0.0.1:9999";
         o.router_backend = "shard_1";
       }},
      {"router_admin: --router_admin",
       [](ServerOptions& o) {
         o.router_map = "/etc/haproxy/scenes.map";
         o.router_backend = "shard_1";
       }},
      {"router_backend: --router_admin",
       [](ServerOptions& o) {
         o.router_admin = "127.0.0.1:9999";
         o.router_map = "scenes.map";
       }},
      {"router_admin: \"127.0.0.1\" is not host:port",
       [](ServerOptions& o) {
         o.router_admin = "127.0.0.1";
         o.router_map = "m";
         o.router_backend = "b";
       }},
      {"router_admin: \"h:0\" is not host:port",
       [](ServerOptions& o) {
         o.router_admin = "h:0";
         o.router_map = "m";
         o.router_backend = "b";
       }},
      {"router_admin: \"h:65536\" is not host:port",
       [](ServerOptions& o) {
         o.router_admin = "h:65536";
         o.router_map = "m";
         o.router_backend = "b";
       }},
      {"router_admin: \"h:" + max64 + "\" is not host:port",
       [max64](ServerOptions& o) {
         o.router_admin = "h:" + max64;
         o.router_map = "m";
         o.router_backend = "b";
       }},
      {"router_admin: \"h:1\" is named twice",
       [](ServerOptions& o) {
         o.router_admin = "h:1,h:1";
         o.router_map = "m";
         o.router_backend = "b";
       }},
      {"router_map: character 3 is a space",
       [](ServerOptions& o) {
         o.router_admin = "h:1";
         o.router_map = "map file";
         o.router_backend = "b";
       }},
      {"router_backend: \"shard 1\" holds a character other than",
       [](ServerOptions& o) {
         o.router_admin = "h:1";
         o.router_map = "m";
         o.router_backend = "shard 1";
       }},
      {"router_backend: \"shard;1\" holds a character other than",
       [](ServerOptions& o) {
         o.router_admin = "h:1";
         o.router_map = "m";
         o.router_backend = "shard;1";
       }},
      {"router_backend: longer than 128 characters",
       [](ServerOptions& o) {
         o.router_admin = "h:1";
         o.router_map = "m";
         o.router_backend = std::string(129, 'b');
       }},
  };
  for (const Case& c : refused) {
    ServerOptions options;
    c.set(options);
    ExpectRefused(options, absl::StatusCode::kInvalidArgument, c.start);
  }
  const std::vector<std::function<void(ServerOptions&)>> accepted = {
      [](ServerOptions& o) {
        o.nats_url = "nats://127.0.0.1:4222,nats://127.0.0.1:4223,tls://nats.example:4222";
        o.durability = DurabilityPolicy::kReplicated;
      },
      [](ServerOptions& o) {
        o.nats_url = "nats://127.0.0.1:4222";
        o.address = "0.0.0.0:50051";
        o.allow_insecure_remote = true;
        o.advertise_address = "shard-1.internal:50051";
      },
      [](ServerOptions& o) {
        o.replication_lease_ms = 200;
        o.replication_replicas = 1;
        o.replication_publish_timeout_ms = 100;
        o.router_sync_ms = 100;
      },
      [](ServerOptions& o) {
        o.replication_lease_ms = 600000;
        o.replication_replicas = 5;
        o.replication_publish_timeout_ms = 600000;
        o.router_sync_ms = 3600000;
      },
      [](ServerOptions& o) {
        o.router_admin = "127.0.0.1:9999,haproxy-2:9999";
        o.router_map = "/usr/local/etc/haproxy/scenes.map";
        o.router_backend = std::string(128, 'b');
      },
  };
  for (size_t i = 0; i < accepted.size(); ++i) {
    ServerOptions options;
    accepted[i](options);
    EXPECT_TRUE(options.Validate().ok()) << i << ": " << options.Validate();
  }
}

TEST(ServerOptions, DescribeNamesEveryOptionAndLimitOnceAsItsFlagSpellsIt) {
  ServerOptions options;
  options.token_file = "/etc/collide/tokens";
  options.durability = DurabilityPolicy::kPeriodic;
  options.slow_query_ms = 0.5;
  options.limits.max_watch_queued_bytes = UINT64_MAX;
  const auto described = options.Describe();
  std::set<std::string> names;
  std::map<std::string, std::string> values;
  for (const auto& [name, value] : described) {
    EXPECT_TRUE(names.insert(name).second) << name << " twice";
    values[name] = value;
  }
  // Each field of both lists, by its own count.
  size_t fields = 0;
#define COLLIDE_COUNT(type, name, default_value, range, help) ++fields;
  COLLIDE_SERVER_OPTIONS(COLLIDE_COUNT)
  COLLIDE_SERVICE_LIMITS(COLLIDE_COUNT)
#undef COLLIDE_COUNT
  EXPECT_EQ(described.size(), fields);
  EXPECT_EQ(values["address"], "127.0.0.1:50051");
  EXPECT_EQ(values["port_file"], "\"\"");
  EXPECT_EQ(values["durability"], "periodic");
  EXPECT_EQ(values["recovery"], "strict");
  EXPECT_EQ(values["log_level"], "info");
  EXPECT_EQ(values["simd"], "auto");
  EXPECT_EQ(values["allow_insecure_remote"], "false");
  EXPECT_EQ(values["slow_query_ms"], "0.5");
  EXPECT_EQ(values["token_file"], "/etc/collide/tokens");
  EXPECT_EQ(values["max_answer_bytes"], "16777216");
  EXPECT_EQ(values["max_fences_per_watch"], "100000");
  EXPECT_EQ(values["max_watch_queued_events"], "1048576");
  EXPECT_EQ(values["max_watch_queued_bytes"], "18446744073709551615");
}

TEST(ServerOptions, EnumFlagsParseTheirNamesOnlyAndListThemWhenRefused) {
  std::string error;
  DurabilityPolicy policy = DurabilityPolicy::kDefault;
  for (DurabilityPolicy p : {DurabilityPolicy::kNone, DurabilityPolicy::kPeriodic,
                             DurabilityPolicy::kAlways, DurabilityPolicy::kReplicated}) {
    EXPECT_TRUE(AbslParseFlag(AbslUnparseFlag(p), &policy, &error));
    EXPECT_EQ(policy, p);
  }
  for (const char* bad :
       {"default", "", "Always", " always", "always ", "-1", "3", "4", "replicate"}) {
    EXPECT_FALSE(AbslParseFlag(bad, &policy, &error)) << bad;
    EXPECT_EQ(error, "must be none, periodic, always or replicated");
  }
  RecoveryMode mode = RecoveryMode::kStrict;
  EXPECT_TRUE(AbslParseFlag("skip", &mode, &error));
  EXPECT_EQ(mode, RecoveryMode::kSkip);
  EXPECT_FALSE(AbslParseFlag("lenient", &mode, &error));
  EXPECT_EQ(error, "must be strict or skip");
  LogLevel level = LogLevel::kInfo;
  for (LogLevel l : {LogLevel::kTrace, LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn,
                     LogLevel::kError, LogLevel::kOff}) {
    EXPECT_TRUE(AbslParseFlag(AbslUnparseFlag(l), &level, &error));
    EXPECT_EQ(level, l);
  }
  EXPECT_FALSE(AbslParseFlag("loud", &level, &error));
  EXPECT_EQ(error, "must be trace, debug, info, warn, error or off");
  SimdChoice choice = SimdChoice::kAuto;
  EXPECT_TRUE(AbslParseFlag("avx2", &choice, &error));
  EXPECT_EQ(choice, SimdChoice::kAvx2);
  EXPECT_FALSE(AbslParseFlag("sse2", &choice, &error));
  EXPECT_EQ(error, "must be auto, sse, avx2 or avx512");
}

}  // namespace
}  // namespace collide
