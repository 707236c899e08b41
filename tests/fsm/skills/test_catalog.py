"""Tests for fsm.skills.catalog: the spec's checks, one warning per skill skipped, where skills are found, trust."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsm.errors import ConfigError
from fsm.model.aliases import ALIASES
from fsm.skills import discover, parse_skill
from fsm.skills.catalog import split_tools


def write_skill(root: Path, folder: str, frontmatter: str, body: str = "Do it with $ARGUMENTS.\n") -> Path:
    path = root / ".claude" / "skills" / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{frontmatter}---\n{body}")
    return path


class TestParseSkill:
    def test_every_field(self, tmp_path: Path) -> None:
        """The spec's fields and Claude Code's extensions are read into the record."""
        path = write_skill(
            tmp_path,
            "pdf-tools",
            "name: pdf-tools\ndescription: Fills PDF forms.\nwhen_to_use: When a PDF is mentioned.\n"
            "allowed-tools: Bash(pdftk:*), Read\ndisable-model-invocation: true\nuser-invocable: false\n"
            "context: fork\nagent: reviewer\nmodel: haiku\nargument-hint: [file]\nlicense: MIT\n"
            "compatibility: needs pdftk\nmetadata: {author: me}\n",
        )
        skill = parse_skill(path.read_text(), path, kind="project", trusted=False)
        assert (skill.name, skill.description) == ("pdf-tools", "Fills PDF forms. When a PDF is mentioned.")
        assert skill.allowed_tools == ("Bash(pdftk:*)", "Read")
        assert (skill.model_invocable, skill.user_invocable, skill.fork, skill.trusted) == (False, False, True, False)
        assert (skill.agent, skill.model, skill.argument_hint) == ("reviewer", ALIASES["haiku"], "[file]")
        assert (skill.base, skill.body) == (path.parent, "Do it with $ARGUMENTS.\n")

    @pytest.mark.parametrize(("given", "model"), [("inherit", None), ("claude-x-1", "claude-x-1"), ("opus", "OPUS")])
    def test_the_model_is_the_id_sent(self, tmp_path: Path, given: str, model: str | None) -> None:
        """``model`` is kept as the id a request sends: an alias resolved as Claude Code resolves it, an id as it
        is, ``inherit`` none (the caller's model)."""
        path = write_skill(tmp_path, "m", f"name: m\ndescription: M.\nmodel: {given}\n")
        expected = ALIASES["opus"] if model == "OPUS" else model
        assert parse_skill(path.read_text(), path, kind="project", trusted=True).model == expected

    @pytest.mark.parametrize(
        ("folder", "frontmatter", "problem"),
        [
            ("Bad", "name: Bad\ndescription: d\n", "name must be 1-64 lowercase letters, digits and single hyphens"),
            ("a--b", "name: a--b\ndescription: d\n", "name must be 1-64 lowercase"),
            ("-a", "name: -a\ndescription: d\n", "name must be 1-64 lowercase"),
            ("x" * 65, f"name: {'x' * 65}\ndescription: d\n", "name must be 1-64 lowercase"),
            ("other", "name: mine\ndescription: d\n", "name 'mine' must match its directory's name 'other'"),
            ("a", "name: a\n", "description is missing"),
            ("a", f"name: a\ndescription: {'d' * 1025}\n", "description must be at most 1024 characters (got 1025)"),
            ("a", f"name: a\ndescription: d\ncompatibility: {'c' * 501}\n", "compatibility must be at most 500"),
            ("a", "name: a\ndescription: d\ncontext: thread\n", "context must be fork, or left out (got 'thread')"),
            ("a", "name: a\ndescription: d\nuser-invocable: maybe\n", "user-invocable must be true or false"),
            ("a", "name: a\ndescription: d\nallowed-tools: Bash(x\n", "allowed-tools: rule 'Bash(x' has no closing"),
            ("a", "name: a\ndescription: d\nmetadata: [1]\n", "metadata must be a mapping of strings"),
            ("a", "name: a\ndescription: d\ncolour: red\n", "unknown key 'colour'"),
            ("a", "name: [a\n", "the frontmatter is not valid YAML"),
        ],
    )
    def test_a_rule_broken_is_named(self, tmp_path: Path, folder: str, frontmatter: str, problem: str) -> None:
        """Each rule of the spec refuses the skill with a message naming the file and the rule."""
        path = write_skill(tmp_path, folder, frontmatter)
        with pytest.raises(ConfigError) as caught:
            parse_skill(path.read_text(), path, kind="project")
        assert str(caught.value).startswith(f"{path}: ") and problem in str(caught.value)

    def test_a_command_needs_no_frontmatter(self, tmp_path: Path) -> None:
        """A command file is named by its file; its description defaults to the body's first line."""
        path = tmp_path / "deploy.md"
        path.write_text("# Deploy the app\nDeploy to $ARGUMENTS.\n")
        skill = parse_skill(path.read_text(), path, kind="command")
        assert (skill.name, skill.description, skill.base) == ("deploy", "Deploy the app", tmp_path)

    def test_allowed_tools_split_outside_parentheses(self) -> None:
        """A string of rules splits at commas and spaces outside parentheses; a list is taken as it is."""
        assert split_tools("Bash(git add:*) Read, Edit(src/**)", "s") == ("Bash(git add:*)", "Read", "Edit(src/**)")
        assert split_tools(["Bash(npm run test)", "Glob"], "s") == ("Bash(npm run test)", "Glob")


class TestDiscover:
    def test_where_skills_are_found_and_who_wins(self, tmp_path: Path) -> None:
        """The user's skills, the project's, an --add-dir's and both commands folders are found; a name taken
        earlier shadows a later one with one warning; a bad skill is skipped with one warning."""
        home, ws, extra = tmp_path / "home", tmp_path / "ws", tmp_path / "extra"
        write_skill(home, "shared", "name: shared\ndescription: the user's\n")
        write_skill(ws, "shared", "name: shared\ndescription: the project's\n")
        write_skill(ws, "local", "name: local\ndescription: here\n")
        write_skill(ws, "broken", "name: Broken\ndescription: d\n")
        write_skill(extra, "beside", "name: beside\ndescription: from --add-dir\n")
        (ws / ".claude" / "commands").mkdir(parents=True)
        (ws / ".claude" / "commands" / "deploy.md").write_text("Deploy it.\n")
        catalog = discover(ws, home=home, add_dirs=[extra])
        assert list(catalog.skills) == ["shared", "local", "beside", "deploy"]
        assert catalog.skills["shared"].description == "the user's"
        assert [s.kind for s in catalog.skills.values()] == ["user", "project", "add-dir", "command"]
        broken, shadowed = catalog.warnings
        assert broken.startswith(f"skill skipped: {ws / '.claude/skills/broken/SKILL.md'}: name must be")
        assert shadowed == (
            f"skill skipped: {ws / '.claude/skills/shared/SKILL.md'}: the name 'shared' is taken by "
            f"{home / '.claude/skills/shared/SKILL.md'}"
        )

    def test_an_untrusted_folders_allowed_tools_are_not_trusted(self, tmp_path: Path) -> None:
        """In an untrusted workspace its skills load, marked untrusted, with a warning; the user's stay trusted."""
        home, ws = tmp_path / "home", tmp_path / "ws"
        write_skill(home, "mine", "name: mine\ndescription: d\nallowed-tools: Bash(ls:*)\n")
        write_skill(ws, "theirs", "name: theirs\ndescription: d\nallowed-tools: Bash(curl:*)\n")
        catalog = discover(ws, home=home, trusted=False)
        assert (catalog.skills["mine"].trusted, catalog.skills["theirs"].trusted) == (True, False)
        assert catalog.warnings == ("skill theirs: its allowed-tools are ignored (this folder is not trusted)",)
        assert discover(ws, home=home, trusted=True).skills["theirs"].trusted

    def test_a_link_out_of_its_folder_is_never_read(self, tmp_path: Path) -> None:
        """A SKILL.md or command that links outside the workspace is skipped unread; a link inside it is read."""
        ws, outside = tmp_path / "ws", tmp_path / "secret.md"
        outside.write_text("---\nname: leak\ndescription: SECRET\n---\nSECRET\n")
        leak = ws / ".claude" / "skills" / "leak" / "SKILL.md"
        leak.parent.mkdir(parents=True)
        leak.symlink_to(outside)
        (ws / ".claude" / "commands").mkdir()
        (ws / ".claude" / "commands" / "leak2.md").symlink_to(outside)
        inner = write_skill(ws, "real", "name: real\ndescription: d\n")
        (ws / ".claude" / "commands" / "again.md").symlink_to(inner)
        catalog = discover(ws, home=tmp_path / "home")
        assert list(catalog.skills) == ["real", "again"]
        assert catalog.warnings == (
            f"skill skipped: {leak}: it links outside {ws}",
            f"skill skipped: {ws / '.claude/commands/leak2.md'}: it links outside {ws}",
        )

    def test_a_file_too_big_is_skipped(self, tmp_path: Path) -> None:
        """A SKILL.md over the size cap is skipped, never read whole."""
        write_skill(tmp_path, "huge", "name: huge\ndescription: d\n", body="x" * 300_000)
        catalog = discover(tmp_path, home=tmp_path / "none")
        assert not catalog.skills and "is over 256 KB" in catalog.warnings[0]


def test_the_docs_example_is_a_valid_skill(tmp_path: Path) -> None:
    """docs/skills.md's SKILL.md example passes every check, its allowed-tools two rules."""
    doc = (Path(__file__).parents[3] / "docs" / "skills.md").read_text()
    example = doc.split("```markdown\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "release-notes" / "SKILL.md"
    path.parent.mkdir()
    skill = parse_skill(example, path, kind="project")
    assert (skill.name, skill.allowed_tools, skill.argument_hint) == (
        "release-notes",
        ("Bash(git log:*)", "Read"),
        "[version]",
    )
