"""Configuration: layered settings.json files, environment and flags -> one `Config`.

Precedence, lowest to highest (DESIGN.md section 4): user settings, project
`.claude/settings.json`, local `.claude/settings.local.json`, command-line
flags, managed settings (always wins). Permission rules are not merged here:
the layers are kept so `permissions/policy.py` can let deny win and keep
managed rules unbreakable.

Two safety decisions live in this package, so no other module ever sees what they
remove (DESIGN.md sections 7 and 8): an untrusted folder's project and local files
are cut to an allow-list (`untrusted.py`), and a managed file that cannot be used
denies every tool (`managed.py`). The settings of the memory layers and of /rewind's
file checkpoints are validated here and nowhere else (`memory_settings.py`,
`checkpoint_settings.py`).

The package, lowest first: `models` (model ids), `json_text` (JSON parsed without
raising, values in messages), `layers` (the files and how they merge), `untrusted`,
`managed`, `validate` (one key at a time, each bad value named), `memory_settings`,
`checkpoint_settings`, `loader` (the typed `Config`, `load_config`) and `edit`
(changing a settings file on disk).
"""

from claude_mini.config.loader import Config, load_config

__all__ = ["Config", "load_config"]
