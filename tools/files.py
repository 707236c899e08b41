"""The file tools: ``read_file``, ``write_file`` and ``edit_file``.

Paths are resolved by the :class:`~tools.workspace.Workspace` (symlinks followed, confined to the root
unless the user approved the call) and shown back to the model relative to the root. Reading streams the
file, so a huge file costs only what is shown; a NUL byte in the first 8 KB or anywhere in what would be
shown makes it a binary file, refused. Only regular files are read, written or edited: every file is opened
with ``O_NONBLOCK`` and judged by ``fstat`` on the opened descriptor, so a FIFO, a device or a socket is refused
at once, never waited on. ``edit_file`` reads the whole file, so it refuses one over :data:`MAX_EDIT_BYTES`
(judged before reading) and a binary one (a NUL byte). Writing and editing reach the parent directory with
:func:`open_parent` (one ``O_NOFOLLOW`` step at a time from the root's descriptor, so a directory swapped
for a symlink mid-call cannot send the write elsewhere) and go through :func:`atomic_write` relative to
that descriptor, so a failed call leaves the old file whole and no temporary file behind.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from tools.base import ToolOutput, tool
from tools.reads import UNCHANGED, Fingerprint
from tools.secrets import redact
from tools.workspace import Workspace, shown_path

__all__ = [
    "MAX_EDIT_BYTES",
    "MAX_READ_CHARS",
    "PathChangedError",
    "atomic_write",
    "edit_file",
    "open_parent",
    "read_file",
    "write_file",
]

MAX_READ_CHARS = 50_000
"""Characters of a file that ``read_file`` returns at most."""

MAX_EDIT_BYTES = 10 * 1024 * 1024
"""The largest file ``edit_file`` edits, in bytes (10 MiB): it holds the whole file in memory, twice."""

_SNIFF_BYTES = 8192
_WHOLE_BYTES = 4 * MAX_READ_CHARS + 4
"""Files up to this size are read into memory at once (UTF-8 takes at most 4 bytes a character): only they can be
shown whole."""
_READ_CHARS = 1 << 16


def _error(text: str) -> ToolOutput:
    return ToolOutput(f"Error: {text}", is_error=True)


def _os_error(action: str, shown: str, exc: OSError) -> ToolOutput:
    """``Error: cannot ACTION PATH: reason`` for an I/O failure we have no better words for."""
    return _error(f"cannot {action} {shown}: {exc.strerror or exc}")


@tool(
    name="read_file",
    description=(
        "Read a UTF-8 text file from the workspace and return its contents. Paths are relative to the "
        "workspace root. Use `limit` to read only the first N lines of a long file; the output then ends "
        "with '... (N more lines)'. At most 50000 characters are returned; to read the middle of a big "
        "file use bash (sed -n '100,200p' FILE). Binary files (NUL bytes) are refused; use glob or bash to "
        "list directories."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to read, relative to the workspace root."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Return only the first `limit` lines (default: the whole file).",
            },
        },
        "required": ["path"],
    },
    path_param="path",
)
def read_file(workspace: Workspace, *, path: str, limit: int | None = None) -> ToolOutput:
    """The text of the file at *path*: the first *limit* lines if given, at most :data:`MAX_READ_CHARS`."""
    target = workspace.resolve(path)
    shown = workspace.relative(target)
    try:
        if target.is_dir():
            return _error(f"{shown} is a directory; use glob or bash (ls) to list it")
        # Judged before opening (a device is never opened) and again on the descriptor (it may have been swapped).
        kind = _not_regular(os.stat(target).st_mode)
        if kind:
            return _error(f"{shown} is {kind}, not a regular file; read_file reads text files")
        with open(os.open(target, _READ_FLAGS), "rb") as raw:
            status = os.fstat(raw.fileno())
            kind = _not_regular(status.st_mode)
            if kind:
                return _error(f"{shown} is {kind}, not a regular file; read_file reads text files")
            head = raw.read(_WHOLE_BYTES + 1)  # a file this small may be shown whole: hold it, for its fingerprint
            if b"\0" in head[:_SNIFF_BYTES]:
                return _error(f"{shown} is a binary file (NUL bytes); read_file reads text")
            whole = len(head) <= _WHOLE_BYTES
            seen = Fingerprint(status.st_size, status.st_mtime_ns, hashlib.sha256(head).digest()) if whole else None
            if seen is not None and workspace.reads is not None and workspace.reads.unchanged(target, seen):
                return ToolOutput(UNCHANGED)
            raw.seek(0)
            # newline="": show line endings as they are, so edit_file can match what was read.
            source = io.BytesIO(head) if whole else raw
            with io.TextIOWrapper(source, encoding="utf-8", errors="replace", newline="") as text:
                excerpt = _excerpt(iter(lambda: text.read(_READ_CHARS), ""), limit)
    except FileNotFoundError:
        return _error(f"{shown} not found")
    except OSError as exc:
        return _os_error("read", shown, exc)
    if excerpt is None:
        return _error(f"{shown} is a binary file (NUL bytes); read_file reads text")
    body, complete = excerpt
    if complete and seen is not None and workspace.reads is not None and workspace.call_id is not None:
        shown_as = shown_path(redact(body))  # what run_tool hands on, and the model gets
        workspace.reads.remember(target, seen, call_id=workspace.call_id, text=shown_as)
    return ToolOutput(body)


def _excerpt(chunks: Iterator[str], limit: int | None) -> tuple[str, bool] | None:
    """The first *limit* lines of the text in *chunks*, capped at :data:`MAX_READ_CHARS`, with notes, and whether
    that is the whole text; None when the part that would be shown holds a NUL (a binary file).

    Streams: keeps only what is shown and counts the rest.
    """
    kept: list[str] = []
    kept_chars = selected_chars = 0
    lines_left = limit  # newlines still allowed in the selection; None = no limit
    more_lines = 0
    tail_open = False  # the text after the selection ends without a newline
    last_two = ""  # the selection's last two characters, to drop its final line break
    for chunk in chunks:
        selected = chunk
        if lines_left == 0:
            selected, rest = "", chunk
        elif lines_left is not None:
            end = _after_nth_newline(chunk, lines_left)
            lines_left -= chunk.count("\n", 0, end)
            selected, rest = chunk[:end], chunk[end:]
        else:
            rest = ""
        if selected:
            take = selected[: MAX_READ_CHARS + 2 - kept_chars]  # room for a final line break
            if "\0" in take:
                return None
            kept.append(take)
            kept_chars += len(take)
            selected_chars += len(selected)
            last_two = (last_two + selected[-2:])[-2:]
        if rest:
            more_lines += rest.count("\n")
            tail_open = not rest.endswith("\n")
    more_lines += tail_open
    final_break = 2 if last_two == "\r\n" else int(last_two.endswith("\n"))
    length = selected_chars - final_break  # the last line's line break is not shown
    body = "".join(kept)[: min(length, MAX_READ_CHARS)]
    notes = []
    if length > MAX_READ_CHARS:
        notes.append(
            f"... (truncated at {MAX_READ_CHARS} chars; {length - MAX_READ_CHARS} more chars; "
            "use limit or bash to read parts)"
        )
    if more_lines:
        notes.append(f"... ({more_lines} more lines)")
    if not body and not notes:
        return "(empty file)", True
    return ("\n".join([body, *notes]), False) if notes else (body, True)


def _after_nth_newline(text: str, n: int) -> int:
    """The index just after the *n*-th newline in *text*, or ``len(text)`` if it has fewer."""
    index = -1
    for _ in range(n):
        index = text.find("\n", index + 1)
        if index < 0:
            return len(text)
    return index + 1


@tool(
    name="write_file",
    description=(
        "Create a file, or replace a file's entire contents, with `content` (written as UTF-8). Parent "
        "directories are created as needed; an existing file keeps its permissions. To change part of an "
        "existing file prefer edit_file, which cannot lose the rest of the file."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to write, relative to the workspace root."},
            "content": {"type": "string", "description": "The complete new contents of the file."},
        },
        "required": ["path", "content"],
    },
    path_param="path",
)
def write_file(workspace: Workspace, *, path: str, content: str) -> ToolOutput:
    """Write *content* to *path*, atomically, creating parent directories."""
    target = workspace.resolve(path)
    shown = workspace.relative(target)
    if target.is_dir():
        return _error(f"{shown} is a directory")
    kind = _not_regular_at(target)
    if kind:
        return _error(f"{shown} is {kind}, not a regular file; write_file writes regular files only")
    data = content.encode("utf-8")
    blocker = next((p for p in target.parents if p.exists()), None)  # *target* has no symlinks left
    if blocker is not None and not blocker.is_dir():
        return _error(f"cannot write {shown}: {workspace.relative(blocker)} is not a directory")
    try:
        with open_parent(workspace, target, create=True) as (dir_fd, name):
            atomic_write(dir_fd, name, data)
    except PathChangedError as exc:
        return _error(f"cannot write {shown}: {exc.strerror} (it changed while writing); nothing was written")
    except OSError as exc:
        return _os_error("write", shown, exc)
    return ToolOutput(f"Wrote {len(data)} bytes to {shown}")


@tool(
    name="edit_file",
    description=(
        "Replace one exact piece of text in a file. `old_text` must occur exactly once in the file, "
        "matched character for character (whitespace, indentation and line breaks included); copy it "
        "from read_file output and include enough surrounding lines to make it unique. It is replaced by "
        "`new_text` (which may be empty to delete). To change several places, make several calls."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The file to edit, relative to the workspace root."},
            "old_text": {"type": "string", "description": "The exact text to replace; must occur once."},
            "new_text": {"type": "string", "description": "The text to put in its place."},
        },
        "required": ["path", "old_text", "new_text"],
    },
    path_param="path",
)
def edit_file(workspace: Workspace, *, path: str, old_text: str, new_text: str) -> ToolOutput:
    """Replace the one occurrence of *old_text* in *path* by *new_text*, atomically."""
    target = workspace.resolve(path)
    shown = workspace.relative(target)
    if not old_text:
        return _error("old_text must not be empty (to create or overwrite a file, use write_file)")
    if target.is_dir():
        return _error(f"{shown} is a directory")
    try:
        with open_parent(workspace, target) as (dir_fd, name):
            return _edit_in(dir_fd, name, shown, old_text, new_text)
    except FileNotFoundError:
        return _error(f"{shown} not found")
    except PathChangedError as exc:
        return _error(f"cannot edit {shown}: {exc.strerror} (it changed while editing); nothing was written")
    except OSError as exc:
        return _os_error("edit", shown, exc)


def _edit_in(dir_fd: int, name: str, shown: str, old_text: str, new_text: str) -> ToolOutput:
    """The edit itself, on file *name* of directory *dir_fd* (read without following a symlink)."""
    kind = _not_regular(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    if kind:  # judged before opening too: a device is never opened
        return _error(f"{shown} is {kind}, not a regular file; edit_file edits text files")
    fd = os.open(name, _READ_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as raw:
        info = os.fstat(fd)
        kind = _not_regular(info.st_mode)
        if kind:
            return _error(f"{shown} is {kind}, not a regular file; edit_file edits text files")
        if info.st_size > MAX_EDIT_BYTES:
            return _error(
                f"{shown} is {info.st_size} bytes, over edit_file's limit of {MAX_EDIT_BYTES} bytes; "
                "edit it with bash (sed -i, or a script)"
            )
        data = raw.read(MAX_EDIT_BYTES + 1)  # the file may have grown since fstat
    if len(data) > MAX_EDIT_BYTES:
        return _error(f"{shown} grew past edit_file's limit of {MAX_EDIT_BYTES} bytes while it was read")
    if b"\0" in data:
        return _error(f"{shown} is a binary file (NUL bytes); edit_file edits text")
    # surrogateescape: bytes that are not UTF-8 survive the edit unchanged.
    text = data.decode("utf-8", errors="surrogateescape")
    count = _occurrences(text, old_text)
    if count == 0:
        return _error(f"text not found in {shown}")
    if count > 1:
        return _error(f"old_text occurs {count} times in {shown}; include more context so it matches exactly once")
    edited = text.replace(old_text, new_text, 1)
    try:
        atomic_write(dir_fd, name, edited.encode("utf-8", errors="surrogateescape"))
    except OSError as exc:
        return _os_error("write", shown, exc)
    return ToolOutput(f"Edited {shown}")


_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
"""O_NONBLOCK: opening a FIFO with no writer returns at once (and is then refused) instead of waiting for ever."""

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link"),
)


def _not_regular(mode: int) -> str | None:
    """What a file of *mode* is (``a FIFO (named pipe)`` …) when it is not a regular file, else None."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def _not_regular_at(target: Path) -> str | None:
    """:func:`_not_regular` of the file at *target* (not followed if a link), None when there is none."""
    try:
        return _not_regular(os.lstat(target).st_mode)
    except OSError:
        return None


def _occurrences(text: str, sub: str) -> int:
    """How many times *sub* occurs in *text*, overlapping ones included ('aa' is twice in 'aaa')."""
    count, index = 0, text.find(sub)
    while index >= 0:
        count += 1
        index = text.find(sub, index + 1)
    return count


class PathChangedError(OSError):
    """A directory on the way to the file was replaced (by a symlink or a file) while we walked to it."""


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


@contextlib.contextmanager
def open_parent(workspace: Workspace, target: Path, *, create: bool = False) -> Iterator[tuple[int, str]]:
    """Open *target*'s parent directory without following any symlink, from the workspace root down.

    Yields ``(dir_fd, name)``: a descriptor of the parent and the file's name in it. Each directory is
    opened relative to the one before it with ``O_NOFOLLOW | O_DIRECTORY`` (outside the root, for a
    user-approved path, the walk starts at ``/``), so a directory swapped for a symlink while we walk
    makes the walk fail instead of leading it elsewhere. *target* is a resolved path (no symlinks).

    Args:
        create: make missing directories on the way (mode ``0o777 & ~umask``).

    Raises:
        PathChangedError: a directory on the path is now a symlink or not a directory.
    """
    inside = target == workspace.root or workspace.root in target.parents
    base = workspace.root if inside else Path(target.anchor)
    parts = target.relative_to(base).parts
    fd = os.open(base, _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            try:
                step = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                step = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise PathChangedError(exc.errno, f"{part} on the path is no longer a directory") from exc
                raise
            os.close(fd)
            fd = step
        yield fd, parts[-1]
    finally:
        os.close(fd)


def atomic_write(dir_fd: int, name: str, data: bytes) -> None:
    """Replace file *name* in directory *dir_fd* with *data* in one step: a reader sees old or new, never half.

    Writes a temporary file in the same directory (opened with ``O_EXCL | O_NOFOLLOW`` relative to
    *dir_fd*), syncs it and renames it over *name* relative to *dir_fd*, so neither can land anywhere
    else. An existing file's permission bits are kept; a new file gets the usual ``0o666 & ~umask``. On
    any failure the temporary file is removed and the exception re-raised; *name* is untouched.
    """
    try:
        mode: int | None = stat.S_IMODE(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        mode = None
    fd, temp = _create_temp(dir_fd, name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
            if mode is not None:
                os.fchmod(out.fileno(), mode)
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise


def _create_temp(dir_fd: int, name: str) -> tuple[int, str]:
    """Create and open a new hidden file beside *name* in *dir_fd*.

    Not ``tempfile.mkstemp``: that creates mode 0o600, and a new file should get the umask's mode, which
    only the kernel applies without a process-wide ``os.umask`` dance.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        temp = f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(temp, flags, 0o666, dir_fd=dir_fd), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name next to {name}")
