#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Validates packaging/kubernetes/: every document of every manifest against the Kubernetes API
# models of Debian's python3-kubernetes (unknown fields, wrong types and missing required fields
# are errors), the Prometheus Operator resources against the fields of their CRDs that they use,
# and what gua relies on: the daemon's arguments are `gua daemon` options, ports, mounts,
# selectors and labels agree. Usage: kubernetes_manifests.py <manifest dir> <gua binary>.
# Prints one line per problem and exits 1, or prints a summary and exits 0.
import glob
import os
import re
import subprocess
import sys

import yaml

try:
    import kubernetes.client as k8s
except ImportError:
    print("SKIP: python3-kubernetes is not installed (scripts/install-deps.sh --test)")
    sys.exit(77)

problems = []


def problem(where, text):
    problems.append(f"{where}: {text}")


def build(data, type_name, where):
    """`data` as the python3-kubernetes model `type_name`; records what does not fit."""
    if type_name.startswith("list["):
        if not isinstance(data, list):
            problem(where, f"expected a list, got {type(data).__name__}")
            return []
        return [build(x, type_name[5:-1], f"{where}[{i}]") for i, x in enumerate(data)]
    if type_name.startswith("dict("):
        if not isinstance(data, dict):
            problem(where, f"expected a map, got {type(data).__name__}")
            return {}
        inner = type_name[type_name.index(",") + 1 : -1].strip()
        return {k: build(v, inner, f"{where}.{k}") for k, v in data.items()}
    scalars = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,)}
    if type_name in scalars:
        ok = isinstance(data, scalars[type_name]) and not (
            type_name == "int" and isinstance(data, bool)
        )
        if not ok:
            problem(where, f"expected {type_name}, got {data!r}")
        return data
    if type_name == "object":  # IntOrString, quantities, raw JSON
        return data
    model = getattr(k8s, type_name, None)
    if model is None:
        problem(where, f"no model {type_name}")
        return None
    if not isinstance(data, dict):
        problem(where, f"expected an object ({type_name}), got {data!r}")
        return None
    python_name = {json: py for py, json in model.attribute_map.items()}
    kwargs = {}
    for key, value in data.items():
        if key not in python_name:
            problem(where, f"unknown field '{key}' of {type_name}")
            continue
        py = python_name[key]
        kwargs[py] = build(value, model.openapi_types[py], f"{where}.{key}")
    try:
        return model(**kwargs)
    except (ValueError, TypeError) as e:  # required fields, enumerations
        problem(where, f"{type_name}: {e}")
        return None


RELABEL = {"sourceLabels", "separator", "targetLabel", "regex", "modulus", "replacement", "action"}
ACTIONS = {"replace", "keep", "drop", "hashmod", "labelmap", "labeldrop", "labelkeep",
           "lowercase", "uppercase", "keepequal", "dropequal"}
ENDPOINT = {"port", "targetPort", "path", "scheme", "params", "interval", "scrapeTimeout",
            "tlsConfig", "bearerTokenFile", "bearerTokenSecret", "authorization", "honorLabels",
            "honorTimestamps", "basicAuth", "oauth2", "metricRelabelings", "relabelings",
            "proxyUrl", "followRedirects", "enableHttp2", "filterRunning"}
MONITOR_SPEC = {"selector", "namespaceSelector", "jobLabel", "targetLabels", "podTargetLabels",
                "sampleLimit", "targetLimit", "labelLimit", "attachMetadata"}


def check_monitor(doc, where):
    """A ServiceMonitor or PodMonitor (monitoring.coreos.com/v1) in the fields of its CRD used."""
    endpoints_key = "endpoints" if doc["kind"] == "ServiceMonitor" else "podMetricsEndpoints"
    spec = doc.get("spec", {})
    for key in spec:
        if key not in MONITOR_SPEC | {endpoints_key}:
            problem(where, f"unknown field 'spec.{key}' of {doc['kind']}")
    build(doc.get("metadata", {}), "V1ObjectMeta", f"{where}.metadata")
    if "selector" not in spec:
        problem(where, "spec.selector is required")
    build(spec.get("selector", {}), "V1LabelSelector", f"{where}.spec.selector")
    for key in spec.get("namespaceSelector", {}):
        if key not in {"any", "matchNames"}:
            problem(where, f"unknown field 'spec.namespaceSelector.{key}'")
    if not spec.get(endpoints_key):
        problem(where, f"spec.{endpoints_key} is required")
    for i, e in enumerate(spec.get(endpoints_key, [])):
        for key in e:
            if key not in ENDPOINT:
                problem(where, f"unknown field '{endpoints_key}[{i}].{key}'")
        for r in e.get("relabelings", []) + e.get("metricRelabelings", []):
            if set(r) - RELABEL or r.get("action", "replace").lower() not in ACTIONS:
                problem(where, f"bad relabeling {r}")


def load(directory):
    docs = []
    for path in sorted(glob.glob(os.path.join(directory, "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            for n, doc in enumerate(yaml.safe_load_all(f)):
                if doc is not None:
                    docs.append((f"{os.path.basename(path)}#{n}", doc))
    return docs


def subset(small, big):
    return all(big.get(k) == v for k, v in (small or {}).items())


def main(directory, gua):
    docs = load(directory)
    by_kind = {}
    for where, doc in docs:
        kind, api = doc.get("kind"), doc.get("apiVersion", "")
        if kind == "Kustomization":
            for resource in doc.get("resources", []):
                if not os.path.exists(os.path.join(directory, resource)):
                    problem(where, f"resource {resource} does not exist")
            continue
        if api == "monitoring.coreos.com/v1" and kind in ("ServiceMonitor", "PodMonitor"):
            check_monitor(doc, where)
        elif api in ("v1", "apps/v1"):
            build(doc, "V1" + kind, where)
        else:
            problem(where, f"unexpected {api} {kind}")
            continue
        by_kind.setdefault(kind, []).append((where, doc))

    def one(kind):
        found = by_kind.get(kind, [])
        if len(found) != 1:
            problem(kind, f"expected one {kind}, found {len(found)}")
            return "?", {}
        return found[0]

    _, namespace = one("Namespace")
    ns = namespace.get("metadata", {}).get("name")
    for kind, found in by_kind.items():
        for where, doc in found:
            if kind != "Namespace" and doc.get("metadata", {}).get("namespace") != ns:
                problem(where, f"not in namespace {ns}")

    where, ds = one("DaemonSet")
    spec = ds.get("spec", {})
    pod = spec.get("template", {}).get("spec", {})
    pod_labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
    if not subset(spec.get("selector", {}).get("matchLabels"), pod_labels):
        problem(where, "the selector does not select the pod template")
    if pod.get("hostPID") is not True:
        problem(where, "hostPID must be true: NVML reports host pids")
    psc = pod.get("securityContext", {})
    if psc.get("runAsNonRoot") is not True:
        problem(where, "the pod should run as non-root")
    containers = {c.get("name"): c for c in pod.get("containers", [])}
    gua_c = containers.get("gua", {})
    volumes = {v.get("name"): v for v in pod.get("volumes", [])}
    mounts = {m.get("mountPath"): m for m in gua_c.get("volumeMounts", [])}
    ports = {p.get("name"): p.get("containerPort") for p in gua_c.get("ports", [])}

    def host_path_of(mount):
        return volumes.get(mount.get("name"), {}).get("hostPath", {}).get("path")

    args = gua_c.get("args", [])
    if not args or args[0] != "daemon":
        problem(where, "the gua container must run `gua daemon`")
    help_text = subprocess.run([gua, "daemon", "--help"], capture_output=True, text=True,
                               check=False).stdout
    options = set(re.findall(r"(--[a-z][a-z-]*)", help_text))
    values = {}
    for i, arg in enumerate(args[1:], 1):
        if arg.startswith("--"):
            name = arg.split("=", 1)[0]
            if name not in options:
                problem(where, f"{name} is not a `gua daemon` option")
            values[name] = arg.split("=", 1)[1] if "=" in arg else (
                args[i + 1] if i + 1 < len(args) else "")
    listen = values.get("--listen", "")
    if not re.fullmatch(r"0\.0\.0\.0:\d+|\[::\]:\d+", listen):
        problem(where, f"--listen {listen!r} must bind every interface of the pod")
    elif int(listen.rsplit(":", 1)[1]) != ports.get("metrics"):
        problem(where, f"--listen {listen} is not the container port 'metrics' {ports}")
    db_dir = os.path.dirname(values.get("--db", ""))
    if db_dir not in mounts or not host_path_of(mounts[db_dir]):
        problem(where, f"the database directory {db_dir!r} is not a hostPath mount")
    env = {e.get("name"): e.get("value") for e in gua_c.get("env", [])}
    for variable, default in (("GUA_POD_LOGS_DIR", "/var/log/pods"),
                              ("GUA_CONTAINER_LOGS_DIR", "/var/log/containers")):
        path = env.get(variable, default)
        m = mounts.get(path)
        if not m or host_path_of(m) != default or m.get("readOnly") is not True:
            problem(where, f"{path} must be the node's {default}, mounted read-only")
    if pod.get("runtimeClassName") != "nvidia" and env.get("NVIDIA_VISIBLE_DEVICES") != "all":
        problem(where, "no NVIDIA runtime class or NVIDIA_VISIBLE_DEVICES=all: no GPU to see")
    sc = gua_c.get("securityContext", {})
    if (sc.get("allowPrivilegeEscalation") is not False
            or sc.get("readOnlyRootFilesystem") is not True
            or sc.get("capabilities", {}).get("drop") != ["ALL"]
            or sc.get("capabilities", {}).get("add")):
        problem(where, "the gua container must drop every capability, read-only root")
    res = gua_c.get("resources", {})
    if not {"cpu", "memory"} <= set(res.get("requests", {})) or "memory" not in res.get(
            "limits", {}):
        problem(where, "requests (cpu, memory) and a memory limit are expected")
    for init in pod.get("initContainers", []):
        if init.get("image") != gua_c.get("image"):
            problem(where, f"init container {init.get('name')} runs another image")
    owner = f"{psc.get('runAsUser')}:{psc.get('runAsGroup')}"
    if not any(owner in i.get("command", []) for i in pod.get("initContainers", [])):
        problem(where, f"no init container hands the database directory to {owner}")

    where, svc = one("Service")
    svc_ports = {p.get("name"): p for p in svc.get("spec", {}).get("ports", [])}
    if not subset(svc.get("spec", {}).get("selector"), pod_labels):
        problem(where, "the selector does not select the daemon's pods")
    if svc_ports.get("metrics", {}).get("targetPort") not in ("metrics", ports.get("metrics")):
        problem(where, "port 'metrics' does not target the daemon's metrics port")

    for kind, selected_labels, port_names in (
            ("ServiceMonitor", svc.get("metadata", {}).get("labels", {}), set(svc_ports)),
            ("PodMonitor", pod_labels, set(ports))):
        where, mon = one(kind)
        mspec = mon.get("spec", {})
        if not subset(mspec.get("selector", {}).get("matchLabels"), selected_labels):
            problem(where, "the selector does not select gua")
        if ns not in mspec.get("namespaceSelector", {}).get("matchNames", []):
            problem(where, f"does not look in namespace {ns}")
        for e in mspec.get("endpoints", []) + mspec.get("podMetricsEndpoints", []):
            if e.get("port") not in port_names or e.get("path", "/metrics") != "/metrics":
                problem(where, f"endpoint {e.get('port')} {e.get('path')} is not gua's /metrics")
            drops = [r.get("regex", "") for r in e.get("relabelings", [])
                     if r.get("action") == "labeldrop"]
            for label in ("namespace", "pod", "container"):
                if not any(re.fullmatch(d, label) for d in drops):
                    problem(where, f"the target label '{label}' would replace gua's own")
            if e.get("honorLabels") is not True:
                problem(where, "honorLabels must be true (gua's namespace, pod, container)")

    for line in problems:
        print(line)
    if problems:
        return 1
    print(f"{len(docs)} documents valid")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
