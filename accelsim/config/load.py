"""Config file reading: re-exports the one YAML reader from :mod:`accelsim.files`."""

from accelsim.files import builtin_names, config_dir, project_root, read_yaml, resolve_path

__all__ = ["builtin_names", "config_dir", "project_root", "read_yaml", "resolve_path"]
