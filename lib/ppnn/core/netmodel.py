"""Network time model: turns a ledger's rounds and bytes into a *projected* time.

Model (stated so it can be checked): parties are connected pairwise by full-duplex links with
one-way latency ``latency_s`` and each party's uplink has bandwidth ``bandwidth_Bps``. A round
costs one latency plus the time the busiest sender needs to push its bytes of that round:

    T = sum over rounds r of ( latency + max_party bytes_sent(r, party) / bandwidth )

Results are projections, never measurements, and are labelled so in every table.

**Latency is one way.** Papers quote a *ping* or *round-trip* time (Falcon §5.1: "ping time
is about 0.2ms" on LAN, "70ms ping time" on WAN; GALA §IV: "round-trip time around 13ms");
a ping is a round trip, so the presets use half of it as the one-way latency of a round
(LAN 0.1 ms, WAN 35 ms; GALA's 6.5 ms in :mod:`ppnn.protocols.gala.runtime`). Wire mode
(:mod:`ppnn.wire.timing`) measures what a round costs on a shaped link.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ledger import Ledger

__all__ = ["Network", "LAN", "WAN", "PRESETS", "Projection", "project"]


@dataclass(frozen=True)
class Network:
    """A network setting: one-way latency (seconds) and per-party bandwidth (bytes/second)."""

    name: str
    latency_s: float
    bandwidth_Bps: float
    source: str = ""

    def __post_init__(self) -> None:
        if self.latency_s < 0:
            raise ValueError(f"latency must be >= 0 s, got {self.latency_s}")
        if self.bandwidth_Bps <= 0:
            raise ValueError(f"bandwidth must be > 0 bytes/s, got {self.bandwidth_Bps}")

    @classmethod
    def from_units(cls, name: str, latency_ms: float, bandwidth_MBps: float,
                   source: str = "") -> Network:
        return cls(name, latency_ms / 1e3, bandwidth_MBps * 1e6, source)


# Falcon's settings (§5.1 of the Falcon paper): LAN 625 MBps / ping 0.2 ms, WAN 40 MBps /
# ping 70 ms; a ping is a round trip, the one-way latency half of it.
LAN = Network.from_units("LAN", 0.1, 625.0, "Falcon §5.1 LAN: 625 MBps, ping 0.2 ms")
WAN = Network.from_units("WAN", 35.0, 40.0, "Falcon §5.1 WAN: 40 MBps, ping 70 ms")
PRESETS = {
    "LAN": LAN,
    "WAN": WAN,
    # GALA / GAZELLE: LAN ~1 Gbps; Tabula/Delphi experiments: WAN-like 100 Mbps / 20 ms RTT
    "gbit-LAN": Network.from_units("gbit-LAN", 0.3, 125.0, "1 Gbps LAN"),
    "100M-WAN": Network.from_units("100M-WAN", 10.0, 12.5, "100 Mbps, 10 ms one-way"),
}


@dataclass(frozen=True)
class Projection:
    network: str
    rounds: int
    bytes: float
    latency_s: float
    transfer_s: float
    compute_s: float

    @property
    def total_s(self) -> float:
        return self.latency_s + self.transfer_s + self.compute_s

    kind: str = "projected"


def project(ledger: Ledger, network: Network, phase: str = "online",
            compute_s: float = 0.0) -> Projection:
    """Project the time of ``phase`` of ``ledger`` on ``network`` (plus measured compute)."""
    if compute_s < 0:
        raise ValueError(f"compute time must be >= 0, got {compute_s}")
    loads = ledger.round_loads(phase)
    lat = len(loads) * network.latency_s
    transfer = sum(max(d.values()) / 8 / network.bandwidth_Bps for d in loads if d)
    return Projection(network.name, len(loads), ledger.total_bytes(phase), lat, transfer,
                      float(compute_s))


def project_counts(rounds: int, max_bytes_per_round: float, network: Network,
                   compute_s: float = 0.0) -> Projection:
    """Projection from closed-form counts (rounds and the busiest sender's bytes in total)."""
    return Projection(network.name, int(rounds), float(max_bytes_per_round),
                      rounds * network.latency_s, max_bytes_per_round / network.bandwidth_Bps,
                      float(compute_s))
