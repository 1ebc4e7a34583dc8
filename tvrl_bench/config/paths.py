"""Where config files are found: the working folder, $TVRL_BENCH_PATH, then the checkout's own components/."""

from __future__ import annotations

import os
from pathlib import Path

import importlib.util  # noqa: F401  (gin 0.5 needs it imported before an include path can fail)

import gin

from tvrl_bench.config.errors import ConfigError

# The folder that holds components/ and sweeps/ in a checkout (the package is installed editable from it).
PROJECT_ROOT = Path(__file__).resolve().parents[2]
PATH_ENV = "TVRL_BENCH_PATH"


def search_paths() -> list[Path]:
    """Where relative config paths (and `include` statements) are looked up, in order."""
    paths = [Path.cwd()]
    for entry in os.environ.get(PATH_ENV, "").split(os.pathsep):
        if entry:
            paths.append(Path(entry).resolve())
    if (PROJECT_ROOT / "components").is_dir():
        paths.append(PROJECT_ROOT)
    return paths


def resolve(path: str | os.PathLike[str]) -> Path:
    """The config file `path` names, searched like gin includes; a missing one is a ConfigError."""
    path = Path(path)
    if path.is_absolute():
        if path.is_file():
            return path
        raise ConfigError(f"config file not found: {path}")
    for prefix in search_paths():
        if (prefix / path).is_file():
            return (prefix / path).resolve()
    listed = ", ".join(str(p) for p in search_paths())
    raise ConfigError(
        f"config file not found: {path} (searched {listed}). Give a path relative to one of these folders, "
        f"or add its folder to ${PATH_ENV}."
    )


def install_search_paths() -> None:
    # gin's "Python package resource" reader crashes (TypeError) on a folder that is a namespace package, such
    # as components/ when the checkout is on sys.path; plain files are all tvrl-bench reads, so drop it.
    gin.config._FILE_READERS[:] = [(r, exists) for r, exists in gin.config._FILE_READERS if r is open]
    for prefix in search_paths():
        if str(prefix) not in gin.config._LOCATION_PREFIXES:
            gin.add_config_file_search_path(str(prefix))
