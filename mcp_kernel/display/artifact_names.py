"""Artifact names: untrusted (they come from JS code, and so from models and tool results), so checked.

Every ``/``-separated segment is checked, names are kept portable (no Windows device names or
reserved characters) so a notebook's artifacts folder can be copied to any machine, and a name's
extension says its format. Where a checked name may lead on disk is the store's business
(artifacts.py: the resolved path must stay inside the folder).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

FORMATS = {"json": ".json", "text": ".txt", "ndjson": ".ndjson", "bytes": ".bin"}
# Extensions that already say the format, so "report.csv" saved as text is not renamed "report.csv.txt".
_TEXT_SUFFIXES = (".txt", ".md", ".csv", ".tsv", ".log", ".html", ".xml", ".yaml", ".yml", ".svg", ".js", ".ts", ".py", ".sql")
_SUFFIX_FORMAT = {".json": "json", ".ndjson": "ndjson", ".jsonl": "ndjson", ".bin": "bytes", **dict.fromkeys(_TEXT_SUFFIXES, "text")}
_DEVICES = {"CON", "PRN", "AUX", "NUL"} | {f"{p}{n}" for p in ("COM", "LPT") for n in [*"123456789", "¹", "²", "³"]}
_FORBIDDEN = '<>:"|?*'
_CONTROL = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # controls, invisible format chars (bidi overrides), surrogates, line separators
MAX_NAME = 200
_MAX_SEGMENT_BYTES = 240  # filesystems cap a segment at 255 bytes; leave room for an extension and a "-N" counter


class ArtifactError(ValueError):
    """A refused name, unknown format, missing artifact or failed write; the message is shown to the user as-is."""


def infer_format(name: str) -> str:
    """Format from the extension; unknown extensions are opaque bytes."""
    return _SUFFIX_FORMAT.get(Path(name).suffix.lower(), "bytes")


def with_extension(name: str, format: str) -> str:
    """Append the format's extension unless the name's own extension already implies that format."""
    if format not in FORMATS:
        raise ArtifactError(f"unknown artifact format {format!r}; use one of {', '.join(FORMATS)}")
    if Path(name).suffix and infer_format(name) == format:
        return name
    full = name + FORMATS[format]
    if len(full) > MAX_NAME:  # saved, it could never be read back by name
        raise ArtifactError(f"artifact name is {len(full)} characters long with its extension {FORMATS[format]!r}; the limit is {MAX_NAME}")
    return full


def check_name(name: object) -> str:
    """Return the NFC-normalised name, or raise ArtifactError saying exactly what is wrong with it."""
    if not isinstance(name, str):
        raise ArtifactError(f"artifact name must be a string, got {type(name).__name__}")
    if not name.strip():
        raise ArtifactError("artifact name is empty")
    if len(name) > MAX_NAME:
        raise ArtifactError(f"artifact name is {len(name)} characters long; the limit is {MAX_NAME}")
    for ch in name:
        if unicodedata.category(ch) in _CONTROL:
            raise ArtifactError(f"artifact name {name!r} contains the control or invisible character U+{ord(ch):04X}")
    if "\\" in name:
        raise ArtifactError(f"artifact name {name!r} contains a backslash; use '/' for folders")
    if name.startswith("/"):
        raise ArtifactError(f"artifact name {name!r} is an absolute path; give a name relative to the artifact folder")
    name = unicodedata.normalize("NFC", name)  # one spelling of "é" on every OS, for save and read alike
    for seg in name.split("/"):
        _check_segment(name, seg)
    return name


def _check_segment(name: str, seg: str) -> None:
    if not seg:
        raise ArtifactError(f"artifact name {name!r} has an empty folder segment ('//' or a trailing '/')")
    if seg in (".", ".."):
        raise ArtifactError(f"artifact name {name!r} contains a {seg!r} segment; names cannot leave or re-enter folders")
    if seg.startswith("."):
        raise ArtifactError(f"artifact name {name!r}: {seg!r} starts with '.'; hidden names are reserved for temp files")
    if seg != seg.strip() or seg.endswith("."):
        raise ArtifactError(f"artifact name {name!r}: {seg!r} starts or ends with a space, or ends with '.'")
    bad = [c for c in _FORBIDDEN if c in seg]
    if bad:
        raise ArtifactError(f"artifact name {name!r} contains {bad[0]!r}; the characters {_FORBIDDEN} are not allowed")
    if seg.split(".")[0].rstrip(" ").upper() in _DEVICES:
        raise ArtifactError(f"artifact name {name!r}: {seg!r} is a reserved device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9)")
    if len(seg.encode("utf-8")) > _MAX_SEGMENT_BYTES:
        raise ArtifactError(f"artifact name {name!r}: a segment is longer than {_MAX_SEGMENT_BYTES} bytes in UTF-8")
