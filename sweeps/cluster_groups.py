"""A cluster file's AWS security group, offline (issue 50): no inbound rule open beyond the
VPC's private ranges (10/8, 172.16/12, 192.168/16, fc00::/7) for anything but SSH (tcp 22),
and no group named by id (SecurityGroupIds, a network interface's Groups), whose rules the file
does not show. Other providers (the local one on premises) have no security group here: [].
"""

from __future__ import annotations

import ipaddress

from sweeps.cluster_rules import PRIVATE_RANGES, node_lines, place


def security_group_problems(config: dict, text: str) -> list[str]:
    """AWS: the file's security group opens nothing beyond the VPC's private ranges but SSH,
    and names no group whose rules it does not show."""
    provider = config.get("provider") or {}
    if provider.get("type") != "aws":
        return []
    lines = node_lines(text)
    group = provider.get("security_group") or {}
    problems = []
    for index, permission in enumerate(group.get("IpPermissions") or []):
        path = ("provider", "security_group", "IpPermissions", index)
        problems += _permission_problems(permission, place(path, lines))
    for name, node_type in (config.get("available_node_types") or {}).items():
        node_config = (node_type or {}).get("node_config") or {}
        interfaces = node_config.get("NetworkInterfaces") or []
        named = [("SecurityGroupIds",)] * bool(node_config.get("SecurityGroupIds")) + [
            ("NetworkInterfaces", index, "Groups")
            for index, interface in enumerate(interfaces)
            if isinstance(interface, dict) and interface.get("Groups")
        ]
        problems += [
            f"{place(('available_node_types', name, 'node_config', *key), lines)}: security "
            "groups named by id, whose rules this file does not show: allowed is Ray's own "
            "group (none named) or provider.security_group with its IpPermissions here"
            for key in named
        ]
    return problems


def _permission_problems(permission: dict, where: str) -> list[str]:
    """One inbound rule: ranges beyond the private ones for SSH (tcp 22) alone."""
    if not isinstance(permission, dict):
        return [f"{where}: not a mapping (IpProtocol, FromPort, ToPort, IpRanges, ...)"]
    ranges = [r.get("CidrIp") for r in permission.get("IpRanges") or [] if isinstance(r, dict)]
    ranges += [r.get("CidrIpv6") for r in permission.get("Ipv6Ranges") or [] if isinstance(r, dict)]
    ssh_only = str(permission.get("IpProtocol")).lower() in ("tcp", "6") and (
        permission.get("FromPort") == 22 == permission.get("ToPort")
    )
    ports = (
        f"tcp {permission.get('FromPort')}-{permission.get('ToPort')}"
        if str(permission.get("IpProtocol")).lower() in ("tcp", "6")
        else f"IpProtocol {permission.get('IpProtocol')}"
    )
    problems = []
    for cidr in ranges:
        try:
            network = ipaddress.ip_network(str(cidr), strict=False)
        except ValueError:
            problems.append(f"{where}: {cidr!r} is not a CIDR range")
            continue
        inside = any(network.version == p.version and network.subnet_of(p) for p in PRIVATE_RANGES)
        if not (inside or ssh_only):
            problems.append(
                f"{where}: opens {ports} to {cidr}: allowed beyond the private ranges "
                "(10/8, 172.16/12, 192.168/16, fc00::/7) is SSH alone (tcp 22)"
            )
    return problems
