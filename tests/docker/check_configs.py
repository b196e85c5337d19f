#!/usr/bin/python3
"""Checks docker/compose.yaml and docker/haproxy.cfg: the YAML parses, HAProxy accepts its
configuration (`haproxy -c`), and the two agree.

No Docker Compose runs on the build machines; HAProxy does (tests/integration/scale_out_test.cc
runs this configuration in front of real servers, its addresses replaced). This checks what the
sharding depends on: the frontend speaks HTTP/2 in clear text, the routing backend hashes the
x-collide-scene header with consistent hashing over HTTP/2 servers with fixed ids, nothing moves a
scene to another shard (no health check, track or hash-balance-factor in it, no redispatch), the
stream timeouts suit a game session, its servers are exactly the compose shards (fixed addresses,
the server's port), the health backend checks the same servers and routes nothing, each shard keeps
its data in its own volume, the arena client talks to HAProxy's frontend, the images are built
from stages of docker/Dockerfile (the server's from the package-only runtime stage), the NATS
JetStream cluster has three nodes, each naming all three as routes, with its own volume, and every
shard reaches all of them (--nats_url), advertises its own address and keeps HAProxy's map for its
own backend. Usage:
check_configs.py <repository root>. Exit 0 when all hold; 1 with the list of problems otherwise.
"""

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

SCENE_HEADER = "x-collide-scene"
SERVER_PORT = 50051
DATA_DIR = "/var/lib/collide"
ROUTING_BACKEND = "collide_shards"
HEALTH_BACKEND = "shards_health"
# The least inactivity timeout for streams that live a game session.
MIN_STREAM_TIMEOUT_S = 3600
HAPROXY_CFG_IN_IMAGE = "/usr/local/etc/haproxy/haproxy.cfg"
# The scene map the servers keep through HAProxy's runtime API (--router_map).
SCENE_MAP_IN_IMAGE = "/usr/local/etc/haproxy/scenes.map"
NATS_CLIENT_PORT = 4222
NATS_ROUTE_PORT = 6222
NATS_IMAGE = "nats:2.9.10"


def load(path: Path) -> Any:
    """Parses one YAML file (a yaml.YAMLError propagates with the position)."""
    with path.open(encoding="utf-8") as stream:
        return yaml.safe_load(stream)


def parse_haproxy(text: str) -> dict[str, list[list[str]]]:
    """The sections of an HAProxy configuration ("global", "defaults", "frontend NAME",
    "backend NAME") and their lines, split into words, comments dropped."""
    sections: dict[str, list[list[str]]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if not raw[0].isspace():
            current = " ".join(words[:2])
            sections[current] = []
        elif current is None:
            raise ValueError(f"haproxy.cfg: a setting outside any section: {line}")
        else:
            sections[current].append(words)
    return sections


def seconds(value: str) -> float:
    """An HAProxy time ("24h", "30s", "500ms", "10m", a bare number of milliseconds)."""
    match = re.fullmatch(r"(\d+)(us|ms|s|m|h|d)?", value)
    if not match:
        raise ValueError(f"haproxy.cfg: not a time: {value}")
    scale = {"us": 1e-6, "ms": 1e-3, None: 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400}
    return int(match.group(1)) * scale[match.group(2)]


def servers_of(lines: list[list[str]]) -> list[list[str]]:
    """The `server NAME ADDRESS options...` lines of a section."""
    return [words for words in lines if words[0] == "server"]


def option_value(words: list[str], name: str) -> str | None:
    """The value after the keyword `name` on a server line, or None."""
    return words[words.index(name) + 1] if name in words[:-1] else None


def check_haproxy(cfg: dict[str, list[list[str]]], problems: list[str]) -> tuple[int, set[str]]:
    """Checks the frontend, the routing and health backends and the timeouts; returns the gRPC
    frontend's port and the routing backend's server IPs."""
    defaults = cfg.get("defaults", [])
    timeouts = {words[1]: words[2] for words in defaults if words[0] == "timeout"}
    if [words for words in defaults if words[:2] == ["mode", "http"]] == []:
        problems.append("haproxy: defaults must be mode http (gRPC is HTTP/2)")
    for name in ("client", "server", "tunnel"):
        if name not in timeouts or seconds(timeouts[name]) < MIN_STREAM_TIMEOUT_S:
            problems.append(f"haproxy: timeout {name} must be at least {MIN_STREAM_TIMEOUT_S} s "
                            f"(streams live a game session), got {timeouts.get(name)}")

    frontends = {name: lines for name, lines in cfg.items() if name.startswith("frontend ")}
    routing = [name for name, lines in frontends.items()
               if ["default_backend", ROUTING_BACKEND] in lines]
    if len(routing) != 1:
        problems.append(f"haproxy: exactly one frontend must route to {ROUTING_BACKEND}")
        return 0, set()
    (binds,) = [[words for words in frontends[routing[0]] if words[0] == "bind"]]
    port = 0
    if len(binds) != 1 or binds[0][-2:] != ["proto", "h2"]:
        problems.append("haproxy: the gRPC frontend needs one bind ... proto h2 (clear-text HTTP/2)")
    else:
        port = int(binds[0][1].rsplit(":", 1)[1])
    for name, lines in cfg.items():
        for words in lines:
            if words[0] in ("use_backend", "default_backend") and words[1] == HEALTH_BACKEND:
                problems.append(f"haproxy: {name} routes to {HEALTH_BACKEND}, which only reports")

    backend = cfg.get(f"backend {ROUTING_BACKEND}", [])
    if ["balance", f"hdr({SCENE_HEADER})"] not in backend:
        problems.append(f"haproxy: {ROUTING_BACKEND} must balance hdr({SCENE_HEADER})")
    if ["hash-type", "consistent"] not in backend:
        problems.append(f"haproxy: {ROUTING_BACKEND} must use hash-type consistent")
    if ["no", "option", "redispatch"] not in backend:
        problems.append(f"haproxy: {ROUTING_BACKEND} needs `no option redispatch` (a down shard's "
                        "calls must fail, not reach another shard)")
    if (any(words[0] == "hash-balance-factor" for words in backend)
            or ["option", "redispatch"] in backend):
        problems.append(f"haproxy: {ROUTING_BACKEND} must not set hash-balance-factor or "
                        "option redispatch (both move scenes' calls to other shards)")
    endpoints = set()
    ids = []
    for words in servers_of(backend):
        if "check" in words or "track" in words:
            problems.append(f"haproxy: server {words[1]} of {ROUTING_BACKEND} must not be health "
                            "checked (a server marked down leaves the ring: its scenes move)")
        if option_value(words, "proto") != "h2":
            problems.append(f"haproxy: server {words[1]} needs proto h2 (gRPC)")
        if option_value(words, "id") is None:
            problems.append(f"haproxy: server {words[1]} needs a fixed id (its place on the ring)")
        ids.append(option_value(words, "id"))
        address, server_port = words[2].rsplit(":", 1)
        if int(server_port) != SERVER_PORT:
            problems.append(f"haproxy: server {words[1]} is not on port {SERVER_PORT}")
        endpoints.add(address)
    if len(set(ids)) != len(ids):
        problems.append(f"haproxy: the servers' ids must differ, got {ids}")
    # The scene map's backends: one per shard, each its one routing server (same name and
    # address), never health checked, never redispatching.
    by_name = {words[1]: words[2] for words in servers_of(backend)}
    per_shard = {name: lines for name, lines in cfg.items() if name.startswith("backend shard_")}
    if len(per_shard) != len(by_name):
        problems.append(f"haproxy: one `backend shard_<n>` per routing server ({len(by_name)}) "
                        f"is needed for the scene map, got {sorted(per_shard)}")
    for name, lines in per_shard.items():
        servers = servers_of(lines)
        if (len(servers) != 1 or by_name.get(servers[0][1]) != servers[0][2]
                or "check" in servers[0] or option_value(servers[0], "proto") != "h2"
                or ["no", "option", "redispatch"] not in lines):
            problems.append(f"haproxy: {name} must hold one routing server (same name and "
                            "address, proto h2, no check) and `no option redispatch`")
    health = {words[2].rsplit(":", 1)[0] for words in servers_of(
        cfg.get(f"backend {HEALTH_BACKEND}", [])) if "check" in words}
    if health != endpoints:
        problems.append(f"haproxy: {HEALTH_BACKEND} must check exactly the shards {sorted(endpoints)}"
                        f", got {sorted(health)}")
    return port, endpoints


def validate_with_haproxy(path: Path, problems: list[str]) -> None:
    """Runs `haproxy -c -f path` (scripts/lib/setup.sh installs Debian's haproxy)."""
    binary = shutil.which("haproxy") or (
        "/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
    if binary is None:
        problems.append("haproxy not found: install Debian's haproxy (scripts/lib/setup.sh does)")
        return
    # The configuration reads its scene map where the image has it: checked here with the
    # repository's docker/scenes.map in its place.
    text = path.read_text(encoding="utf-8")
    if SCENE_MAP_IN_IMAGE not in text:
        problems.append(f"haproxy: {path} does not read the scene map {SCENE_MAP_IN_IMAGE}")
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "haproxy.cfg"
        copy.write_text(text.replace(SCENE_MAP_IN_IMAGE, str(path.parent / "scenes.map")),
                        encoding="utf-8")
        result = subprocess.run([binary, "-c", "-f", str(copy)], capture_output=True, text=True,
                                check=False)
    if result.returncode != 0:
        problems.append(f"haproxy -c rejects {path}: {result.stdout}{result.stderr}")


def check_compose(compose: dict[str, Any], router_port: int, endpoints: set[str],
                  stages: set[str], problems: list[str]) -> None:
    """Checks the shards, HAProxy's service and the arena client against haproxy.cfg, and the
    images' build targets against the Dockerfile's stages."""
    services = compose["services"]
    shards = {name: service for name, service in services.items()
              if name.startswith("shard-")}
    if len(shards) != 3:
        problems.append(f"compose: expected 3 shards, got {sorted(shards)}")
    addresses = set()
    volumes = set()
    for name, shard in shards.items():
        if shard.get("image") != "collide:local":
            problems.append(f"compose: {name} does not run the collide image")
        addresses.add(shard["networks"]["collide"]["ipv4_address"])
        mounts = [volume for volume in shard.get("volumes", [])
                  if volume.endswith(":" + DATA_DIR)]
        if len(mounts) != 1:
            problems.append(f"compose: {name} needs one volume at {DATA_DIR}")
        else:
            volumes.add(mounts[0].split(":")[0])
    if addresses != endpoints:
        problems.append(f"compose shard addresses {sorted(addresses)} differ from haproxy's "
                        f"servers {sorted(endpoints)}")
    if len(volumes) != len(shards) or not volumes <= set(compose.get("volumes", {})):
        problems.append(f"compose: each shard needs its own declared volume, got {volumes}")
    builders = [name for name, service in services.items() if "build" in service]
    for name in builders:
        if services[name]["build"].get("dockerfile") != "docker/Dockerfile":
            problems.append(f"compose: {name} is not built from docker/Dockerfile")
        target = services[name]["build"].get("target")
        if target not in stages:
            problems.append(f"compose: {name} builds target {target}, no stage of the Dockerfile "
                            f"(stages: {sorted(stages)})")
    # The server's image is the package's (the runtime stage); the arena's adds the example.
    built = {services[name].get("image"): services[name]["build"].get("target")
             for name in builders}
    if built.get("collide:local") != "runtime":
        problems.append(f"compose: collide:local must be built from the runtime stage, got {built}")
    if built.get(services["arena"].get("image")) != "arena":
        problems.append("compose: the arena's image must be built from the arena stage")

    router = services["haproxy"]
    if router.get("image") != "haproxy:2.6":
        problems.append("compose: haproxy must run haproxy:2.6 (Debian 12's version, which the "
                        "scale-out test runs)")
    if f"./haproxy.cfg:{HAPROXY_CFG_IN_IMAGE}:ro" not in router.get("volumes", []):
        problems.append(f"compose: haproxy must mount ./haproxy.cfg at {HAPROXY_CFG_IN_IMAGE}")
    if f"./scenes.map:{SCENE_MAP_IN_IMAGE}:ro" not in router.get("volumes", []):
        problems.append(f"compose: haproxy must mount ./scenes.map at {SCENE_MAP_IN_IMAGE}")
    if not any(str(port).endswith(f":{router_port}") for port in router.get("ports", [])):
        problems.append(f"compose: haproxy must publish its frontend port {router_port}")

    arena = services["arena"]
    command = arena["command"]
    if command[0] != "collide-arena" or f"--address=haproxy:{router_port}" not in command:
        problems.append(f"compose: the arena must run collide-arena against haproxy:{router_port}")
    if not any(arg.startswith("--scene=") for arg in command):
        problems.append("compose: the arena needs --scene")


def flags_of(command: list[str]) -> dict[str, str]:
    """The `--name=value` (or bare `--name`: "") arguments of a command."""
    flags = {}
    for argument in command:
        name, _, value = argument.partition("=")
        flags[name] = value
    return flags


def check_nats(compose: dict[str, Any], stats_socket: str, problems: list[str]) -> None:
    """Checks the NATS JetStream cluster and the shards' replication and router settings."""
    services = compose["services"]
    nodes = {name: service for name, service in services.items() if name.startswith("nats-")}
    if len(nodes) != 3:
        problems.append(f"compose: expected 3 NATS nodes (a quorum survives one), got {sorted(nodes)}")
    routes = {f"nats://{name}:{NATS_ROUTE_PORT}" for name in nodes}
    volumes = set()
    for name, node in nodes.items():
        if node.get("image") != NATS_IMAGE:
            problems.append(f"compose: {name} must run {NATS_IMAGE} (Debian 12's nats-server)")
        flags = flags_of(node.get("command", []))
        if "--jetstream" not in flags or flags.get("--name") != name:
            problems.append(f"compose: {name} needs --jetstream and --name={name}")
        if flags.get("--cluster_name") != "collide" or not flags.get("--cluster", "").endswith(
                f":{NATS_ROUTE_PORT}"):
            problems.append(f"compose: {name} needs --cluster_name=collide and a route listener "
                            f"on port {NATS_ROUTE_PORT}")
        if set(flags.get("--routes", "").split(",")) != routes:
            problems.append(f"compose: {name} must route to every node {sorted(routes)}")
        store = flags.get("--store_dir")
        mounts = [volume for volume in node.get("volumes", []) if volume.endswith(f":{store}")]
        if store is None or len(mounts) != 1:
            problems.append(f"compose: {name} needs one volume at its --store_dir")
        else:
            volumes.add(mounts[0].split(":")[0])
        if node.get("ports"):
            problems.append(f"compose: {name} must not publish a port (NATS is unauthenticated)")
    if len(volumes) != len(nodes) or not volumes <= set(compose.get("volumes", {})):
        problems.append(f"compose: each NATS node needs its own declared volume, got {volumes}")
    urls = {f"nats://{name}:{NATS_CLIENT_PORT}" for name in nodes}
    router_ip = services["haproxy"]["networks"]["collide"]["ipv4_address"]
    for name, shard in services.items():
        if not name.startswith("shard-"):
            continue
        env = shard.get("environment", {})
        if set(env.get("COLLIDE_NATS_URL", "").split(",")) != urls:
            problems.append(f"compose: {name}'s COLLIDE_NATS_URL must name every node {sorted(urls)}")
        address = shard["networks"]["collide"]["ipv4_address"]
        if env.get("COLLIDE_ADVERTISE_ADDRESS") != f"{address}:{SERVER_PORT}":
            problems.append(f"compose: {name} must advertise {address}:{SERVER_PORT}")
        if env.get("COLLIDE_ROUTER_ADMIN") != f"{router_ip}:{stats_socket.rsplit(':', 1)[1]}":
            problems.append(f"compose: {name}'s COLLIDE_ROUTER_ADMIN must be HAProxy's stats "
                            f"socket ({router_ip}, port of {stats_socket})")
        if env.get("COLLIDE_ROUTER_MAP") != SCENE_MAP_IN_IMAGE:
            problems.append(f"compose: {name}'s COLLIDE_ROUTER_MAP must be {SCENE_MAP_IN_IMAGE}")
        if env.get("COLLIDE_ROUTER_BACKEND") != "shard_" + name.split("-", 1)[1]:
            problems.append(f"compose: {name}'s COLLIDE_ROUTER_BACKEND must be its own backend")


def main() -> int:
    """Runs the checks and reports."""
    root = Path(sys.argv[1])
    problems: list[str] = []
    try:
        cfg_path = root / "docker" / "haproxy.cfg"
        validate_with_haproxy(cfg_path, problems)
        compose = load(root / "docker" / "compose.yaml")
        port, endpoints = check_haproxy(parse_haproxy(cfg_path.read_text(encoding="utf-8")),
                                        problems)
        stages = set(re.findall(r"^FROM \S+ AS (\S+)$",
                                (root / "docker" / "Dockerfile").read_text(encoding="utf-8"),
                                re.MULTILINE))
        check_compose(compose, port, endpoints, stages, problems)
        cfg = parse_haproxy(cfg_path.read_text(encoding="utf-8"))
        sockets = [words[2] for words in cfg.get("global", [])
                   if words[:2] == ["stats", "socket"] and "admin" in words]
        if len(sockets) != 1:
            problems.append("haproxy: one `stats socket ... level admin` is needed (the map)")
        else:
            check_nats(compose, sockets[0], problems)
    except (yaml.YAMLError, KeyError, ValueError, TypeError) as error:
        problems.append(f"{type(error).__name__}: {error}")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("docker/haproxy.cfg and docker/compose.yaml (NATS cluster included) are valid and agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
