"""A scratch home from which each agent CLI starts offline, straight into its composer.

Only what an ordinary user of the fake model would configure goes here: the model endpoint,
onboarding/trust answers and update checks off. Nothing CAFleet needs (allow rules, login
shell, sandbox network): the product must supply those itself, and the tests prove it does.
"""

from __future__ import annotations

import json
from pathlib import Path

from realagents.installed import PINNED

ANTHROPIC_KEY = "sk-ant-fake-key-0123456789"
OPENAI_KEY_VAR = "FAKE_OPENAI_KEY"  # codex's env_key for the fake provider


def seed_agent_home(root: Path, workdir: Path, model_url: str) -> dict[str, str]:
    """Write the scratch home under root; return the variables every agent process needs."""
    home = root / "home"
    xdg = {
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local/share",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_STATE_HOME": home / ".local/state",
    }
    # The default locations, set explicitly: a stray value from the caller cannot leak in.
    codex_home = home / ".codex"
    for path in (*xdg.values(), codex_home, workdir):
        path.mkdir(parents=True, exist_ok=True)
    project = str(workdir.resolve())
    _claude(home, project)
    _codex(codex_home, project, model_url)
    _opencode(xdg["XDG_CONFIG_HOME"], model_url)
    return {
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        **{name: str(path) for name, path in xdg.items()},
        "ANTHROPIC_BASE_URL": model_url,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        OPENAI_KEY_VAR: "fake-openai-key",
        # Without DISABLE_AUTOUPDATER claude runs a global `npm install` of itself.
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",  # else it tries models.dev at start
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "npm_config_update_notifier": "false",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "LANG": "C.UTF-8",
        "SHELL": "/bin/bash",
    }


def _claude(home: Path, project: str) -> None:
    # All three answers are needed: onboarding (else it dials api.anthropic.com and exits),
    # the custom key (else a "use this API key?" dialog) and the folder trust dialog.
    state = {
        "hasCompletedOnboarding": True,
        "lastOnboardingVersion": PINNED["claude"],
        "theme": "dark",
        "customApiKeyResponses": {"approved": [ANTHROPIC_KEY[-20:]], "rejected": []},
        "projects": {project: {"hasTrustDialogAccepted": True}},
    }
    (home / ".claude").mkdir(parents=True, exist_ok=True)  # as after any earlier claude run
    (home / ".claude.json").write_text(json.dumps(state, indent=2))


def _codex(codex_home: Path, project: str, model_url: str) -> None:
    config = f"""\
model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = {json.dumps(model_url + "/v1")}
env_key = "{OPENAI_KEY_VAR}"
wire_api = "responses"

[projects.{json.dumps(project)}]
trust_level = "trusted"
"""
    (codex_home / "config.toml").write_text(config)


def _opencode(config_home: Path, model_url: str) -> None:
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",  # bundled: nothing is installed
                "name": "Fake",
                "options": {"baseURL": f"{model_url}/v1", "apiKey": "fake-key"},
                "models": {"fake-model": {"name": "Fake model", "tool_call": True}},
            }
        },
        "model": "fake/fake-model",
        "small_model": "fake/fake-model",
        "autoupdate": False,
        "share": "disabled",
    }
    (config_home / "opencode").mkdir(parents=True, exist_ok=True)
    (config_home / "opencode/opencode.json").write_text(json.dumps(config, indent=2))
