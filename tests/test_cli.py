"""The command line (mininet/bbrlab/cli.py): one handler per command, and the exit status of each
kind of error, as main()'s docstring lists them."""
import pytest

from bbrlab import cli
from conftest import write_spec


def test_every_command_has_its_handler():
    parser = cli.build_parser()
    (sub,) = [a for a in parser._actions if a.dest == "command"]          # argparse's subparsers action
    assert set(sub.choices) == set(cli.COMMANDS)
    (arc,) = [a for a in sub.choices["archive"]._actions if a.dest == "archive_command"]
    assert set(arc.choices) == set(cli.ARCHIVE_COMMANDS)


def test_an_invalid_spec_exits_2_naming_the_field(tmp_path, capsys):
    path = write_spec(tmp_path / "bad.yaml", "name: bad\nduration_s: 10\nbottleneck: {rate_mbps: 10}\n"
                                             "flows: [{cc: nosuch, rtt_ms: 10}]\n")
    assert cli.main(["validate", str(path)]) == 2
    assert "invalid spec" in capsys.readouterr().err


def test_a_backend_option_for_another_backend_exits_3_before_running(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli.signal, "signal", lambda *_: None)        # keep pytest's own SIGTERM handling
    path = write_spec(tmp_path / "ok.yaml", "name: ok\nduration_s: 10\nbottleneck: {rate_mbps: 10, buffer_bytes: 100000}\n"
                                            "flows: [{cc: bbr, rtt_ms: 10}]\n")
    assert cli.main(["run", str(path), "--out", str(tmp_path / "out"), "--ns3-rules", "linux"]) == 3
    assert "--ns3-rules is for --backend ns3" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_malformed_archive_entry_exits_5(tmp_path, capsys):
    assert cli.main(["archive", "move", str(tmp_path / "a"), "only/two", "--to", str(tmp_path / "b")]) == 5
    assert "an entry is EXPERIMENT/POINT/repK" in capsys.readouterr().err


def test_bad_arguments_exit_2():
    with pytest.raises(SystemExit) as exc:
        cli.main(["run"])
    assert exc.value.code == 2
