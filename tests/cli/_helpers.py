"""What every CLI test checks of an output: strict JSON, or exactly one error line."""

import json


def strict_json(text):
    """``json.loads`` that refuses NaN and Infinity (RFC 8259 has neither)."""

    def reject(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=reject)


def one_error_line(capsys, command):
    """The one ``invariantdp <command>: error: ...`` line, with nothing on stdout."""
    captured = capsys.readouterr()
    err = captured.err
    assert err.startswith(f"invariantdp {command}: error: "), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert captured.out == ""  # arguments are validated before anything is printed
    return err
