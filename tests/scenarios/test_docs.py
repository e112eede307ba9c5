"""Every command example of the README and of docs/ is run, and its output compared.

The convention (docs/development.md, "The examples in these pages are tests"): a fenced block

    ```sh
    $ vllm-logread sample_logs/seed_qwen3-8b_l4.log --prompt 512 --output 128
    ```

immediately followed by a ```text block is an example: the command runs from the
repository's root on the shipped sample logs and must print exactly that block
(stdout, then stderr, as a terminal shows them). Nothing is normalised: the
examples name files by their path from the root, so no output holds a path that
varies. Two things of the machine are set aside: a Hugging Face cache (the pages
show the shipped model table's answers) and ``$GITHUB_STEP_SUMMARY``. A command that exits non-zero says so the way a shell would: it ends in
``; echo "exit $?"`` and the block's last line is ``exit N``. ``cat FILE |
vllm-logread ...`` feeds FILE as standard input.

Other ```sh lines that call vllm-logread (a live server, a URL, a file of your
own) cannot run here; for them every option shown must still be one the command
has, so a renamed option cannot hide in the docs.

When an example fails, the message holds the new output as a block ready to
paste; the test never rewrites a page itself (an output that changed is for a
person to read before it is pasted).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from vllm_logread.cli.commands import main

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

_FENCE = re.compile(r"^```([\w-]*)\s*$")
_EXIT = re.compile(r';\s*echo\s+"exit \$\?"\s*$')
_CAT = re.compile(r"^cat\s+(\S+)\s*\|\s*")


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    lang: str
    text: str
    line: int  # 1-based line of the opening fence
    page: Path


@dataclass(frozen=True, slots=True, kw_only=True)
class Example:
    where: str  # page:line
    command: str  # as shown, without "$ "
    expected: str


def _blocks(page: Path) -> list[Block]:
    out: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        start, body = i, []
        i += 1
        while i < len(lines) and lines[i].rstrip("\n") != "```":
            body.append(lines[i])
            i += 1
        out.append(Block(lang=m.group(1), text="".join(body), line=start + 1, page=page))
        i += 1
    return out


def _commands(block: Block) -> list[str]:
    """The block's commands, continuation lines joined."""
    joined = block.text.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip()]


def _examples() -> tuple[list[Example], list[str]]:
    """The examples, and what breaks the convention (a test reports it)."""
    out: list[Example] = []
    wrong: list[str] = []
    for page in PAGES:
        blocks = _blocks(page)
        for b, nxt in zip(blocks, [*blocks[1:], None], strict=False):
            lines = _commands(b)
            if b.lang != "sh" or not lines or not all(x.startswith("$ ") for x in lines):
                continue
            where = f"{page.relative_to(ROOT)}:{b.line}"
            if len(lines) != 1:
                wrong.append(f"{where}: one $ command per block")
            elif nxt is None or nxt.lang != "text":
                wrong.append(f"{where}: no ```text block after it")
            elif not _CAT.sub("", lines[0][2:]).startswith("vllm-logread "):
                wrong.append(f"{where}: an example runs vllm-logread (or cat FILE | vllm-logread)")
            else:
                out.append(Example(where=where, command=lines[0][2:], expected=nxt.text))
    return out, wrong


EXAMPLES, MALFORMED = _examples()


def test_every_example_follows_the_convention() -> None:
    assert not MALFORMED, "\n".join(MALFORMED)


def _run(command: str) -> tuple[str, int]:
    """Output (stdout then stderr) and exit code of a documented command."""
    stdin: bytes | None = None
    m = _CAT.match(command)
    if m:
        stdin = (ROOT / m.group(1)).read_bytes()
        command = command[m.end() :]
    argv = shlex.split(command)
    assert argv[0] == "vllm-logread", f"not a vllm-logread command: {command}"
    result = CliRunner().invoke(main, argv[1:], input=stdin, prog_name="vllm-logread")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.output, result.exit_code


def test_there_are_examples_in_the_readme_and_on_the_command_pages() -> None:
    pages = {e.where.split(":")[0] for e in EXAMPLES}
    for page in ("README.md", "docs/read.md", "docs/kv.md", "docs/diff.md", "docs/simulate.md"):
        assert page in pages, f"{page} has no example that is run"


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.where for e in EXAMPLES])
def test_the_example_prints_what_the_page_shows(
    example: Example, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(ROOT)
    # The pages show the shipped model table's answers: a Hugging Face cache on this
    # machine (which the tool reads first) must not change them, and the GitHub
    # example must not write into a real job summary.
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-hub"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    want_exit = _EXIT.search(example.command)
    command = _EXIT.sub("", example.command)
    output, code = _run(command)
    if want_exit:
        output += f"exit {code}\n"
    else:
        assert code == 0, f"{example.where}: exit {code}; end the command in '; echo \"exit $?\"'"
    if output != example.expected:
        # pytrace=False: the block is printed as it is, ready to paste (no "E " margins).
        pytest.fail(
            f"{example.where}: `{example.command}` now prints what follows. If the change "
            f"is intended, paste it over the ```text block under the command:\n"
            f"```text\n{output}```",
            pytrace=False,
        )


# -- commands that cannot run here: their options must exist ----------------------------


def _options(command: click.Command) -> set[str]:
    opts = {"--help", "-h"}
    for p in command.params:
        opts.update(p.opts)
        opts.update(p.secondary_opts)
    return opts


def _shown_calls() -> list[tuple[str, list[str]]]:
    """(where, argv after vllm-logread) of every vllm-logread call in a ```sh block."""
    calls = []
    for page in PAGES:
        for b in _blocks(page):
            if b.lang not in ("sh", "bash"):
                continue
            for line in _commands(b):
                line = line.removeprefix("$ ")
                lexer = shlex.shlex(line, posix=True, punctuation_chars="|&;<>")
                lexer.whitespace_split = True
                lexer.commenters = "#"
                words = list(lexer)
                for i, w in enumerate(words):
                    if w.endswith("vllm-logread"):
                        argv = []
                        for x in words[i + 1 :]:
                            if x and set(x) <= set("|&;<>"):
                                break
                            argv.append(x)
                        calls.append((f"{page.relative_to(ROOT)}:{b.line}", argv))
    return calls


def test_every_option_shown_is_an_option_of_its_command() -> None:
    assert isinstance(main, click.Group)
    wrong = []
    calls = _shown_calls()
    assert len(calls) > len(EXAMPLES)  # the shown calls include every example's
    for where, argv in calls:
        sub = argv[0] if argv and argv[0] in main.commands else "read"
        command = main.commands[sub]
        known = _options(command) | _options(main)
        for word in argv:
            if (
                word.startswith("-")
                and word not in ("-",)
                and not re.fullmatch(r"-?\d[\d.]*", word)
            ):
                name = word.split("=", 1)[0]
                if name not in known:
                    wrong.append(f"{where}: {sub} has no option {name}")
    assert not wrong, "\n".join(wrong)


def test_the_readme_links_only_to_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    assert targets, "the README links to its docs pages"
    missing = [t for t in targets if "://" not in t and not (ROOT / t).exists()]
    assert not missing, missing


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    # ./run test builds it too; here it is also built from the sdist (test_package.py),
    # so the sdist's docs and mkdocs.yml are proved whole.
    pytest.importorskip("mkdocs")
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "index.html").is_file()


def test_every_option_of_every_command_is_in_the_docs() -> None:
    # A new option is documented where its command is (docs/<command>.md or the page
    # of its job), not only in --help.
    assert isinstance(main, click.Group)
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    missing = [
        f"{name} {opt}"
        for name, command in main.commands.items()
        for param in command.params
        for opt in (*param.opts, *param.secondary_opts)
        if opt.startswith("--")
        and not re.search(r"(?<![\w-])" + re.escape(opt) + r"(?![\w-])", text)
    ]
    assert not missing, "options no page of docs/ names: " + ", ".join(missing)
