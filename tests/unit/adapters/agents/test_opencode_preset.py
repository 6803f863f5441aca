"""The opencode agent preset: written once where opencode looks for it, never overwritten."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cafleet.adapters.agents.opencode import ensure_opencode_preset, preset_text
from cafleet.domain.agents.homes import AgentHomes
from cafleet.domain.errors import ErrorKind, Invalid


def preset_path(home: Path) -> Path:
    return home / ".config" / "opencode" / "agents" / "cafleet.md"


def frontmatter(text: str) -> dict[str, object]:
    opening, document, body = text.split("---\n", 2)
    assert opening == ""
    loaded = json.loads(document)
    assert isinstance(loaded, dict)
    assert body.strip()
    return loaded


def refused(path: Path) -> str:
    return (
        f"cannot materialize CAFleet opencode agent preset: {path} exists but is not a regular"
        " file; refusing to overwrite"
    )


class TestContent:
    def test_json_frontmatter_between_dashes(self) -> None:
        text = preset_text()
        assert text.startswith("---\n{\n")
        document = text.split("---\n")[1]
        assert document == json.dumps(json.loads(document), indent=2) + "\n"

    def test_description_and_mode(self) -> None:
        meta = frontmatter(preset_text())
        assert meta["description"] == (
            "CAFleet-spawned member with workspace-scoped permission floor;"
            " matches Claude Code dontAsk safety posture."
        )
        assert meta["mode"] == "primary"

    def test_bash_allows_everything_but_the_risky_commands(self) -> None:
        permission = frontmatter(preset_text())["permission"]
        assert isinstance(permission, dict)
        bash = permission["bash"]
        assert next(iter(bash.items())) == ("*", "allow")  # last match wins: catch-all first
        denied = [pattern for pattern, action in bash.items() if action == "deny"]
        assert denied == [
            "bash -c*",
            "sh -c*",
            "zsh -c*",
            "python -c*",
            "python3 -c*",
            "perl -e*",
            "node -e*",
            "node --eval*",
            "ruby -e*",
            "eval*",
            "exec*",
            "rm -rf*",
            "sudo*",
            "git push*",
            "git reset --hard*",
            "chmod*",
            "chown*",
            "curl*",
            "wget*",
            "nc*",
            "ssh*",
            "scp*",
            "rsync*",
            "osascript*",
        ]
        assert len(bash) == len(denied) + 1

    @pytest.mark.parametrize("tool", ["read", "edit"])
    def test_files_allowed_except_env_files(self, tool: str) -> None:
        permission = frontmatter(preset_text())["permission"]
        assert isinstance(permission, dict)
        assert list(permission[tool].items()) == [
            ("*", "allow"),
            ("**/.env", "deny"),
            ("**/.env.*", "deny"),
        ]

    def test_tools_denied(self) -> None:
        permission = frontmatter(preset_text())["permission"]
        assert isinstance(permission, dict)
        for tool in (
            "external_directory",
            "webfetch",
            "websearch",
            "repo_clone",
            "question",
            "plan_enter",
            "plan_exit",
        ):
            assert permission[tool] == "deny"
        assert set(permission) == {
            "bash",
            "read",
            "edit",
            "external_directory",
            "webfetch",
            "websearch",
            "repo_clone",
            "question",
            "plan_enter",
            "plan_exit",
        }

    def test_body_heading(self) -> None:
        body = preset_text().split("---\n", 2)[2]
        assert "# CAFleet member agent\n" in body
        assert "dontAsk" in body
        assert "spawn prompt" in body


class TestEnsure:
    def test_writes_when_absent(self, tmp_path: Path) -> None:
        path = ensure_opencode_preset(preset_path(tmp_path))
        assert path == preset_path(tmp_path)
        assert path.read_text(encoding="utf-8") == preset_text()

    def test_leaves_no_temporary_files(self, tmp_path: Path) -> None:
        ensure_opencode_preset(preset_path(tmp_path))
        assert os.listdir(preset_path(tmp_path).parent) == ["cafleet.md"]

    def test_never_overwrites(self, tmp_path: Path) -> None:
        path = preset_path(tmp_path)
        path.parent.mkdir(parents=True)
        path.write_text("my own preset\n", encoding="utf-8")
        assert ensure_opencode_preset(preset_path(tmp_path)) == path
        assert path.read_text(encoding="utf-8") == "my own preset\n"

    def test_second_call_keeps_the_file(self, tmp_path: Path) -> None:
        path = ensure_opencode_preset(preset_path(tmp_path))
        path.write_text("edited\n", encoding="utf-8")
        ensure_opencode_preset(preset_path(tmp_path))
        assert path.read_text(encoding="utf-8") == "edited\n"

    def test_symlink_to_a_regular_file_is_accepted(self, tmp_path: Path) -> None:
        target = tmp_path / "elsewhere.md"
        target.write_text("linked\n", encoding="utf-8")
        path = preset_path(tmp_path)
        path.parent.mkdir(parents=True)
        path.symlink_to(target)
        assert ensure_opencode_preset(preset_path(tmp_path)) == path
        assert target.read_text(encoding="utf-8") == "linked\n"

    def test_directory_is_refused(self, tmp_path: Path) -> None:
        path = preset_path(tmp_path)
        path.mkdir(parents=True)
        with pytest.raises(Invalid) as excinfo:
            ensure_opencode_preset(preset_path(tmp_path))
        assert excinfo.value.kind is ErrorKind.INVALID
        assert excinfo.value.message == refused(path)

    def test_symlink_to_a_directory_is_refused(self, tmp_path: Path) -> None:
        path = preset_path(tmp_path)
        path.parent.mkdir(parents=True)
        path.symlink_to(tmp_path)
        with pytest.raises(Invalid) as excinfo:
            ensure_opencode_preset(preset_path(tmp_path))
        assert excinfo.value.message == refused(path)

    def test_dangling_symlink_is_refused_and_not_followed(self, tmp_path: Path) -> None:
        path = preset_path(tmp_path)
        path.parent.mkdir(parents=True)
        missing = tmp_path / "missing.md"
        path.symlink_to(missing)
        with pytest.raises(Invalid) as excinfo:
            ensure_opencode_preset(preset_path(tmp_path))
        assert excinfo.value.message == refused(path)
        assert not missing.exists()

    def test_fifo_is_refused(self, tmp_path: Path) -> None:
        path = preset_path(tmp_path)
        path.parent.mkdir(parents=True)
        os.mkfifo(path)
        with pytest.raises(Invalid) as excinfo:
            ensure_opencode_preset(preset_path(tmp_path))
        assert excinfo.value.message == refused(path)

    def test_unwritable_location_is_reported(self, tmp_path: Path) -> None:
        (tmp_path / ".config").write_text("not a directory", encoding="utf-8")
        with pytest.raises(Invalid) as excinfo:
            ensure_opencode_preset(preset_path(tmp_path))
        assert excinfo.value.message.startswith(
            "cannot materialize CAFleet opencode agent preset: "
        )

    def test_a_file_that_appears_concurrently_is_kept(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = preset_path(tmp_path)
        real_link = os.link

        def racing_link(source: str, destination: Path) -> None:
            destination.write_text("written by another process\n", encoding="utf-8")
            real_link(source, destination)

        monkeypatch.setattr(os, "link", racing_link)
        assert ensure_opencode_preset(preset_path(tmp_path)) == path
        assert path.read_text(encoding="utf-8") == "written by another process\n"
        assert os.listdir(path.parent) == ["cafleet.md"]


class TestWhereOpencodeLooks:
    def test_default_is_under_home_dot_config(self, tmp_path: Path) -> None:
        homes = AgentHomes.from_environ({}, tmp_path)
        path = ensure_opencode_preset(homes.opencode_preset)
        assert path == tmp_path / ".config" / "opencode" / "agents" / "cafleet.md"
        assert path.read_text(encoding="utf-8") == preset_text()

    def test_follows_xdg_config_home(self, tmp_path: Path) -> None:
        home, config = tmp_path / "home", tmp_path / "y"
        homes = AgentHomes.from_environ({"XDG_CONFIG_HOME": str(config)}, home)
        path = ensure_opencode_preset(homes.opencode_preset)
        assert path == config / "opencode" / "agents" / "cafleet.md"
        assert path.read_text(encoding="utf-8") == preset_text()
        assert not home.exists()
