"""Where config files are found: the working folder, $TVRL_BENCH_PATH, then the checkout's own components/."""

from __future__ import annotations

import codecs
import io
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


def shipped_preset(origin: str) -> bool:
    """True for a binding's origin (`path:line`) in a preset this checkout ships (its components/): named on the
    command line by a sweep, it is a preset like an included one."""
    path = Path(origin.rsplit(":", 1)[0]).resolve()
    return (PROJECT_ROOT / "components") in path.parents


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


def read_config_text(path: str | os.PathLike[str]) -> str:
    """A config or study file's text: UTF-8, with an optional byte-order mark (Windows editors write one).

    Any other encoding (a Latin-1 byte in a comment, a binary file given as the config) is a ConfigError naming
    the file, the line and the column of the first byte that is not UTF-8.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file ({exc.strerror or exc}); check the path and its "
                          "permissions") from None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    if b"\x00" in data:
        line = data.count(b"\n", 0, data.index(b"\x00")) + 1
        raise ConfigError(f"{path}:{line}: a NUL byte: this is a binary file, not a gin config; pass the config file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            f"{path}:{line}:{column}: byte 0x{data[exc.start]:02x} is not UTF-8 (a config file must be UTF-8 "
            f"text); save it as UTF-8 (for example `iconv -f latin1 -t utf-8 {path} > fixed.gin`) or, if it is not "
            "a config file, pass the right file"
        ) from None
    return text


class _ConfigFile(io.StringIO):
    """What gin reads an (included) config file through: `read_config_text`, so encodings are checked alike."""

    def __init__(self, path: str):
        super().__init__(read_config_text(path))
        self.name = path


def install_search_paths() -> None:
    # gin's "Python package resource" reader crashes (TypeError) on a folder that is a namespace package, such
    # as components/ when the checkout is on sys.path; plain files are all tvrl-bench reads, so drop it. Its
    # plain `open` reader is replaced by one that reads UTF-8 with an optional BOM and names a bad byte's place.
    gin.config._FILE_READERS[:] = [(_ConfigFile, os.path.isfile)]
    for prefix in search_paths():
        if str(prefix) not in gin.config._LOCATION_PREFIXES:
            gin.add_config_file_search_path(str(prefix))
