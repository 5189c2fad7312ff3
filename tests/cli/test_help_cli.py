"""Every option of every sub-command says what it is for (issue 12)."""

import argparse

import pytest

from invariantdp.cli import build_parser, main


def _subparsers(parser):
    """``(name, sub-parser, help)`` of the direct sub-commands of ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, sub, helps.get(name)


def _walk(parser, path=()):
    yield path, parser
    for name, sub, _ in _subparsers(parser):
        yield from _walk(sub, (*path, name))


PARSERS = list(_walk(build_parser()))


def test_every_subcommand_is_walked():
    names = {" ".join(path) for path, _ in PARSERS}
    for expected in ("release", "binomial-test", "fit poisson", "fit loglinear", "demo",
                     "odds-ratio-test", "swap", "account zcdp"):  # fmt: skip
        assert expected in names


@pytest.mark.parametrize("path, parser", PARSERS, ids=[" ".join(p) or "top" for p, _ in PARSERS])
def test_every_option_has_help(path, parser):
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        name = "/".join(action.option_strings) or action.dest
        assert action.help and action.help.strip(), f"{' '.join(path)}: {name} has no help"


@pytest.mark.parametrize("path, parser", PARSERS, ids=[" ".join(p) or "top" for p, _ in PARSERS])
def test_every_subcommand_has_a_one_line_description(path, parser):
    for name, _, text in _subparsers(parser):
        assert text and "\n" not in text, f"{' '.join((*path, name))} has no one-line help"


def test_top_level_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for name, _, summary in _subparsers(build_parser()):
        assert name in text
        assert " ".join(summary.split()[:3]) in " ".join(text.split())
