"""Network profiles, the link relay's arithmetic and byte stream, and `mpdp predict`'s model, in one process."""

from __future__ import annotations

import asyncio

import pytest

from launcher.commands.predict import predict
from mpdp.wire.profiles import PROFILES, NetworkProfile, parse_bandwidth, parse_latency, parse_loss, resolve
from mpdp.wire.relay import Direction, Link, Relays


def test_named_profiles_and_explicit_figures():
    assert PROFILES["wan"].rtt_s == pytest.approx(0.040) and PROFILES["wan"].bandwidth_mbit == 100
    assert PROFILES["mobile"].loss > 0 and not PROFILES["loopback"].emulated
    assert parse_latency("20ms") == 20 and parse_latency("0.5 s") == 500 and parse_bandwidth("1gbit") == 1000
    assert parse_loss("1%") == pytest.approx(0.01) and parse_loss("0.02") == pytest.approx(0.02)
    mixed = resolve("wan", loss="1%")
    assert (mixed.latency_ms, mixed.bandwidth_mbit, mixed.loss) == (20, 100, pytest.approx(0.01))
    assert resolve(None, latency="5ms").latency_ms == 5
    for bad in (lambda: resolve("moon"), lambda: parse_latency("fast"), lambda: resolve(None, loss="100%")):
        with pytest.raises(ValueError):
            bad()


def test_a_direction_delays_by_latency_and_queues_behind_the_link():
    direction = Direction(NetworkProfile("p", latency_ms=10, bandwidth_mbit=8), b"a>b")  # 1 byte per µs
    first = direction.release_time(0.0, 1000)  # 1 ms on the wire, then 10 ms
    assert first == pytest.approx(0.011)
    second = direction.release_time(0.0, 1000)  # waits for the first to leave the link
    assert second == pytest.approx(0.012)
    late = direction.release_time(1.0, 1000)
    assert late == pytest.approx(1.011)


def test_loss_is_a_retransmission_delay_and_never_reorders():
    profile = NetworkProfile("lossy", latency_ms=5, loss=0.5)
    direction = Direction(profile, b"seed")
    times = [direction.release_time(i * 0.001, 100) for i in range(200)]
    assert times == sorted(times)
    late = [t for i, t in enumerate(times) if t - i * 0.001 >= profile.latency_s + profile.retransmission_timeout_s - 1e-9]
    assert 0 < len(late) < len(times)
    again = Direction(profile, b"seed")  # the same link draws the same losses
    assert [again.release_time(i * 0.001, 100) for i in range(200)] == times
    assert profile.expected_loss_s(1) == pytest.approx(0.5 * profile.retransmission_timeout_s)


def test_the_relay_passes_the_byte_stream_unchanged_both_ways():
    async def scenario() -> tuple[bytes, int]:
        async def echo(reader, writer):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
            writer.close()

        server = await asyncio.start_server(echo, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        connections = []

        async def resolve(target: str):
            connections.append(target)
            return "127.0.0.1", port

        relays = Relays(NetworkProfile("p", latency_ms=1, bandwidth_mbit=50), [Link("a", "b", ("127.0.0.1", 0))],
                        resolve)
        await relays.start()
        relay_port = relays._servers[0].sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", relay_port)
        payload = bytes(range(256)) * 1000
        writer.write(payload)
        await writer.drain()
        received = await reader.readexactly(len(payload))
        writer.close()
        await relays.close()
        server.close()
        return received, len(connections)

    received, connections = asyncio.run(scenario())
    assert connections == 1
    assert received == bytes(range(256)) * 1000


def _row(sender, receiver, rpc, start, end, request=100, response=10):
    return {"from": sender, "to": receiver, "from_role": sender.split("/")[0], "to_role": receiver.split("/")[0],
            "rpc": rpc, "request_bytes": request, "response_bytes": response, "status": "OK", "call_id": rpc + sender,
            "observed_by": "server", "started_ns": int(start * 1e9), "finished_ns": int(end * 1e9)}


def _report():
    """The client opens at the aggregator, which asks two parties one after the other (each computes 0.1 s),
    then answers: four sequential crossings below the client's own two."""
    rows = [_row("client/0", "aggregator/0", "AwaitResult/x/open", 0.0, 0.31),
            _row("aggregator/0", "party/1", "Step/x/ask", 0.05, 0.15),
            _row("aggregator/0", "party/2", "Step/x/ask", 0.2, 0.3)]
    return {"protocol": "x", "traffic_detail": rows, "timing": {"client_round_trip": 0.32}}


def test_predict_rebuilds_the_measured_run_and_adds_each_crossing_once():
    report = _report()
    same = predict(report, NetworkProfile("loopback"))
    assert same.predicted_wall_s == pytest.approx(0.32)
    delayed = predict(report, NetworkProfile("d", latency_ms=10))
    # 6 sequential one-way trips, and the client's fresh channel's opening: TLS 1.3, then the server's SETTINGS
    assert delayed.sequential_trips == 6
    assert delayed.predicted_wall_s == pytest.approx(0.32 + 6 * 0.010 + 2 * 0.020)
    assert {step["rpc"] for step in delayed.critical_path} >= {"Step/x/ask", "AwaitResult/x/open"}
    narrow = predict(report, NetworkProfile("n", bandwidth_mbit=0.008))  # 1 byte per ms
    assert narrow.predicted_wall_s == pytest.approx(0.32 + 3 * 0.1 + 3 * 0.01)


def test_predict_refuses_a_transcript_without_end_times():
    report = _report()
    for row in report["traffic_detail"]:
        row["finished_ns"] = 0
    with pytest.raises(ValueError, match="finished_ns"):
        predict(report, PROFILES["wan"])
