"""``agentfsm batch``'s flags: every agent flag given reaches each task's agent as it was given."""

from __future__ import annotations

import pytest

from fsm.cli.batch import agent_args
from fsm.cli.parser import parse_args


def test_agent_flags_are_forwarded() -> None:
    """Given agent flags are passed on; defaults, --cwd and the batch's own flags are not."""
    args = parse_args(
        [
            "batch",
            "t.jsonl",
            "-o",
            "out",
            "-w",
            "3",
            "--max-turns",
            "5",
            "--allowedTools",
            "Read",
            "Bash(ls:*)",
            "--sandbox",
            "--model",
            "haiku",
            "--max-budget-usd",
            "0.5",
            "--permission-mode",
            "acceptEdits",
            "--backend",
            "ray",
            "--ray-address",
            "auto",
            "--num-cpus",
            "0.5",
        ]
    )
    assert (args.workers, args.backend, args.ray_address, args.num_cpus) == (3, "ray", "auto", 0.5)
    assert agent_args(args) == (
        "--max-turns",
        "5",
        "--max-budget-usd",
        "0.5",
        "--model",
        "haiku",
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        "Read",
        "Bash(ls:*)",
        "--sandbox",
    )


def test_nothing_given_forwards_nothing() -> None:
    """Without agent flags the tasks get none (the driver then adds dontAsk)."""
    assert agent_args(parse_args(["batch", "t.jsonl", "-o", "out"])) == ()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-w", "0"], "--workers must be 1..256 (got 0)"),
        (["--max-total-usd", "-1"], "--max-total-usd must be a number of dollars > 0 (got '-1')"),
        (
            ["--backend", "slurm"],
            "error: option '--backend' argument 'slurm' is invalid. Allowed choices are process, ray.",
        ),
    ],
)
def test_bad_flags(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad batch flag is one usage line."""
    with pytest.raises(SystemExit):
        parse_args(["batch", "t.jsonl", "-o", "out", *argv])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_ui_refuses_a_directory_that_is_no_batch(tmp_path) -> None:
    """agentfsm ui OUT needs a batch's output directory: anything else is one ConfigError line."""
    pytest.importorskip("starlette")
    from fsm.cli.ui import command
    from fsm.errors import ConfigError

    args = parse_args(["ui", str(tmp_path), "--port", "0"])
    with pytest.raises(ConfigError, match=r"is not a batch's output directory \(no results.jsonl\)"):
        command(args)


def test_cwd_is_refused(tmp_path) -> None:
    """--cwd does not apply: each task's workspace says where it works (one ConfigError, nothing run)."""
    from fsm.cli.batch import command
    from fsm.errors import ConfigError

    args = parse_args(["batch", str(tmp_path / "t.jsonl"), "-o", str(tmp_path / "out"), "--cwd", str(tmp_path)])
    with pytest.raises(ConfigError, match=r"^--cwd does not apply to 'batch': each task's 'workspace'"):
        command(args)
    assert not (tmp_path / "out").exists()
