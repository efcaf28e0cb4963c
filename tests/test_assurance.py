"""One ordered assurance level per voting protocol: each level implies those below it, the wire and the command line
carry it as one value, and stored reports (which spell it as the checks it implies) still read."""

import json
from pathlib import Path

import pytest

from mpdp.proto.v1 import common_pb2, dppp_pb2, hamm_pb2
from mpdp.protocols.dppp.parameters import DpppParameters
from mpdp.protocols.hamm.parameters import HammParameters
from mpdp.sessions.errors import ProtocolError
from mpdp.vote_proofs.assurance import OPTIONS, Assurance

RESULTS = Path(__file__).resolve().parent.parent / "docs/results"


def test_each_level_implies_every_level_below_it():
    checks = [(level.proven_votes, level.verifiable_noise, level.holders_check_bits) for level in Assurance]
    assert checks == [(False, False, False), (True, False, False), (True, True, False), (True, True, True)]
    assert sorted(Assurance) == list(Assurance)  # the enum's order is the levels' order


def test_the_wire_enum_and_the_options_name_the_same_levels():
    assert [level.value for level in Assurance] == [common_pb2.Assurance.Value(f"ASSURANCE_{level.name}")
                                                    for level in Assurance]
    assert OPTIONS == ("none", "proven-votes", "verifiable-noise", "holders-check-bits")
    assert [Assurance.parse(option) for option in OPTIONS] == list(Assurance)
    with pytest.raises(ProtocolError, match="assurance must be one of"):
        Assurance.parse("proven")
    with pytest.raises(ProtocolError, match="assurance must be one of"):
        Assurance.parse(7)  # a number no level has, as a newer peer might send


@pytest.mark.parametrize("level", list(Assurance))
def test_parameters_carry_one_field_both_ways(level):
    dppp = DpppParameters(1.0, 1e-5, 3, 2, 5, 1.0, True, bytes(32), 200, assurance=level)
    assert "assurance" in dppp_pb2.DpppParameters.DESCRIPTOR.fields_by_name
    assert not {"proven_votes", "verifiable_noise", "holders_check_bits"} & set(
        dppp_pb2.DpppParameters.DESCRIPTOR.fields_by_name.keys())
    assert DpppParameters.from_proto(dppp.to_proto()) == dppp and dppp.to_proto().assurance == level.value
    hamm = HammParameters("vote", 1.0, 1e-5, 0.01, 2, 5, 4, 3, True, False, 0.6, bytes(32), assurance=level)
    assert HammParameters.from_proto(hamm.to_proto()) == hamm and hamm.to_proto().assurance == level.value
    assert not {"proven_votes", "verifiable_noise", "holders_check_bits"} & set(
        hamm_pb2.HammParameters.DESCRIPTOR.fields_by_name.keys())


def test_what_a_level_needs_is_checked_once_by_the_parameters():
    with pytest.raises(ProtocolError, match="Binomial"):
        DpppParameters(1.0, 1e-5, 3, 2, 5, 1.0, True, bytes(32), 0, "skellam", 10,
                       assurance=Assurance.VERIFIABLE_NOISE)
    with pytest.raises(ProtocolError, match="noisy counts"):
        HammParameters("vote", 1.0, 1e-5, 0.01, 2, 5, 4, 3, False, False, 0.6, bytes(32),
                       assurance=Assurance.HOLDERS_CHECK_BITS)
    with pytest.raises(ProtocolError, match="packed"):
        DpppParameters(1.0, 1e-5, 3, 2, 5, 1.0, False, bytes(32), 200, assurance=Assurance.PROVEN_VOTES)


def test_stored_reports_read_as_the_level_they_ran_at():
    stored = [json.loads(path.read_text()) for path in sorted((RESULTS / "baselines").glob("*_dppp.json"))
              + sorted((RESULTS / "baselines").glob("*_hamm.json"))]
    assert stored and all(Assurance.of_report(report["parameters"]) is Assurance.NONE for report in stored)
    assert Assurance.of_report({"proven_votes": True, "verifiable_noise": True, "holders_check_bits": False}) \
        is Assurance.VERIFIABLE_NOISE
    assert Assurance.of_report({"proven_votes": True}) is Assurance.PROVEN_VOTES


def test_the_command_line_takes_one_option_per_protocol():
    from launcher.cli import build_parser

    for protocol in ("dppp", "hamm"):
        args = build_parser("run").parse_args(["run", protocol, "--assurance", "holders-check-bits"])
        assert Assurance.parse(args.assurance) is Assurance.HOLDERS_CHECK_BITS
        assert build_parser("run").parse_args(["run", protocol]).assurance == "none"
        for old in ("--proven-votes", "--verifiable-noise", "--holders-check-bits"):
            with pytest.raises(SystemExit):
                build_parser("run").parse_args(["run", protocol, old])
