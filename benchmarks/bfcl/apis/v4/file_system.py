"""GorillaFileSystem, v4: ``cd`` takes one folder level (a trailing "/" is dropped), ``echo`` no longer creates
files, ``find`` searches the directory ``path`` names, and several error texts are reworded."""
from __future__ import annotations

from typing import Optional

from ..file_system import Directory, File, _valid_name
from ..file_system import GorillaFileSystem as GorillaFileSystemV3


class GorillaFileSystem(GorillaFileSystemV3):
    _MV_PATH_ERROR = "mv: path not allowed in destination. Provide only a file or directory name."
    _CP_PATH_ERROR = "cp: path not allowed in destination. Provide only a file or directory name."
    _RMDIR_NOT_EMPTY = "rmdir: cannot remove '{}': Directory not empty"

    def cd(self, folder: str):
        folder = folder.rstrip("/") or "/"  # "../" is "..", and "/" stays the root
        if folder not in (".", "..", "/") and "/" in folder:
            return {"error": f"cd: {folder}: Unsupported path. Only one folder level at a time is supported."}
        if folder == "..":
            if self._current_dir.parent:
                self._current_dir = self._current_dir.parent
                return {}
            if self.root == self._current_dir:
                return {"error": "Current directory is already the root. Cannot go back."}
            return {"error": "cd: ..: No such directory"}
        target = self._resolve_dir(folder)
        if isinstance(target, dict):  # the resolver's own "cd: '<folder>': No such file or directory"
            return target
        self._current_dir = target
        return {"current_working_directory": target.name}

    def echo(self, content: str, file_name: Optional[str] = None):
        if file_name is None:
            return {"terminal_output": content}
        if not _valid_name(file_name):
            return {"error": f"echo: cannot write to '{file_name}': Invalid character"}
        if not file_name:
            return {"terminal_output": content}
        if file_name not in self._current_dir.contents:
            return {"error": f"echo: cannot write to '{file_name}': No such file"}
        # a directory has no _write: upstream fails with AttributeError, and so do we
        self._current_dir._get_item(file_name)._write(content)
        return None

    def cat(self, file_name: str):
        if not _valid_name(file_name):
            return {"error": f"cat: '{file_name}': Invalid character"}
        if file_name not in self._current_dir.contents:
            return {"error": f"cat: '{file_name}': No such file or directory"}
        item = self._current_dir._get_item(file_name)
        if isinstance(item, File):
            return {"file_content": item._read()}
        return {"error": f"cat: '{file_name}': Is a directory"}

    def find(self, path: str = ".", name: Optional[str] = None):
        start = self._resolve_dir(path)
        if isinstance(start, dict):  # the resolver speaks as cd; v4 renames the tool in its text
            text = start["error"]
            return {"error": "find:" + text[3:]} if text.startswith("cd:") else start
        found: list[str] = []

        def walk(directory: Directory, prefix: str) -> None:
            for child_name, child in directory.contents.items():
                child_path = f"{prefix}/{child_name}"
                if name is None or name in child_name:
                    found.append(child_path)
                if isinstance(child, Directory):
                    walk(child, child_path)

        walk(start, path.rstrip("/"))
        return {"matches": found}
