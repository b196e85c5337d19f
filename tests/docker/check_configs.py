#!/usr/bin/python3
"""Checks docker/compose.yaml and docker/envoy.yaml: both parse as YAML, and they agree.

No Envoy or Docker Compose runs on the build machines, and no Envoy config validator comes
from Debian or npm, so this checks what the sharding depends on instead: the route hashes the
x-collide-scene header, the cluster is a RING_HASH over HTTP/2 whose endpoints are exactly
the compose shards (fixed addresses, the server's port), streams have no route or idle
timeout, each shard keeps its data in its own volume, the arena client talks to Envoy's
listener, and the images are built from stages of docker/Dockerfile (the server's from the
package-only runtime stage). Usage: check_configs.py <repository root>. Exit 0 when all hold; 1 with the list of
problems otherwise.
"""

import re
import sys
from pathlib import Path
from typing import Any

import yaml

SCENE_HEADER = "x-collide-scene"
SERVER_PORT = 50051
DATA_DIR = "/var/lib/collide"


def load(path: Path) -> Any:
    """Parses one YAML file (a yaml.YAMLError propagates with the position)."""
    with path.open(encoding="utf-8") as stream:
        return yaml.safe_load(stream)


def check_envoy(envoy: dict[str, Any], problems: list[str]) -> tuple[int, set[str]]:
    """Checks the listener, route and cluster; returns the listener port and endpoint IPs."""
    resources = envoy["static_resources"]
    (listener,) = resources["listeners"]
    port = listener["address"]["socket_address"]["port_value"]
    (chain,) = listener["filter_chains"]
    (hcm_filter,) = chain["filters"]
    hcm = hcm_filter["typed_config"]
    if not hcm["@type"].endswith("http_connection_manager.v3.HttpConnectionManager"):
        problems.append(f"envoy: unexpected network filter {hcm['@type']}")
    if hcm.get("stream_idle_timeout") != "0s":
        problems.append("envoy: stream_idle_timeout must be 0s (long-lived streams)")
    if hcm["http_filters"][-1]["name"] != "envoy.filters.http.router":
        problems.append("envoy: the last HTTP filter must be the router")
    clusters = {cluster["name"]: cluster for cluster in resources["clusters"]}
    for host in hcm["route_config"]["virtual_hosts"]:
        for route in host["routes"]:
            action = route["route"]
            if action["cluster"] not in clusters:
                problems.append(f"envoy: route to unknown cluster {action['cluster']}")
            if action.get("timeout") != "0s":
                problems.append("envoy: a route's timeout must be 0s (streams)")
            headers = [policy.get("header", {}).get("header_name")
                       for policy in action.get("hash_policy", [])]
            if headers != [SCENE_HEADER]:
                problems.append(f"envoy: hash_policy must hash {SCENE_HEADER} alone, got {headers}")

    (cluster,) = clusters.values()
    if cluster["lb_policy"] != "RING_HASH":
        problems.append("envoy: the cluster's lb_policy must be RING_HASH")
    if cluster["type"] != "STATIC":
        problems.append("envoy: the cluster must be STATIC (the ring is keyed by address)")
    options = cluster["typed_extension_protocol_options"][
        "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]
    if "http2_protocol_options" not in options.get("explicit_http_config", {}):
        problems.append("envoy: the upstream protocol must be HTTP/2 (gRPC)")
    threshold = cluster.get("common_lb_config", {}).get("healthy_panic_threshold", {})
    if cluster.get("health_checks") and threshold.get("value") != 100.0:
        problems.append("envoy: with health checks, healthy_panic_threshold must be 100 "
                        "(a failed check must not move scenes)")
    endpoints = set()
    for group in cluster["load_assignment"]["endpoints"]:
        for entry in group["lb_endpoints"]:
            address = entry["endpoint"]["address"]["socket_address"]
            if address["port_value"] != SERVER_PORT:
                problems.append(f"envoy: endpoint {address['address']} is not on {SERVER_PORT}")
            endpoints.add(address["address"])
    return port, endpoints


def check_compose(compose: dict[str, Any], envoy_port: int, endpoints: set[str],
                  stages: set[str], problems: list[str]) -> None:
    """Checks the shards, Envoy's service and the arena client against envoy.yaml, and the
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
        problems.append(f"compose shard addresses {sorted(addresses)} differ from envoy's "
                        f"endpoints {sorted(endpoints)}")
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

    envoy = services["envoy"]
    if "./envoy.yaml:/etc/envoy/envoy.yaml:ro" not in envoy.get("volumes", []):
        problems.append("compose: envoy must mount ./envoy.yaml at /etc/envoy/envoy.yaml")
    if not any(str(port).endswith(f":{envoy_port}") for port in envoy.get("ports", [])):
        problems.append(f"compose: envoy must publish its listener port {envoy_port}")

    arena = services["arena"]
    command = arena["command"]
    if command[0] != "collide-arena" or f"--address=envoy:{envoy_port}" not in command:
        problems.append(f"compose: the arena must run collide-arena against envoy:{envoy_port}")
    if not any(arg.startswith("--scene=") for arg in command):
        problems.append("compose: the arena needs --scene")


def main() -> int:
    """Runs the checks and reports."""
    root = Path(sys.argv[1])
    problems: list[str] = []
    try:
        envoy = load(root / "docker" / "envoy.yaml")
        compose = load(root / "docker" / "compose.yaml")
        port, endpoints = check_envoy(envoy, problems)
        stages = set(re.findall(r"^FROM \S+ AS (\S+)$",
                                (root / "docker" / "Dockerfile").read_text(encoding="utf-8"),
                                re.MULTILINE))
        check_compose(compose, port, endpoints, stages, problems)
    except (yaml.YAMLError, KeyError, ValueError, TypeError) as error:
        problems.append(f"{type(error).__name__}: {error}")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("docker/envoy.yaml and docker/compose.yaml parse and agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
