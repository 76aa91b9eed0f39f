"""GorillaFileSystem: an in-memory directory tree (upstream gorilla_file_system.py).

Everything lives in Python objects: no path ever reaches the host file system. Names are only looked up in a
directory's ``contents`` dict, so "..", "/etc" or odd names can at most fail to match.

Upstream quirks kept because they decide results or state: ``pwd`` walks up to the top (the root's own name is
part of the path); ``mv`` of a directory keeps the moved children's parent links pointing at the old directory;
``cp`` of a directory shares (does not copy) the child objects; copying into a directory that already holds the
name raises (reported as "Error during execution: ...").
"""
from __future__ import annotations

from typing import Any, Optional

from .base import ApiSuite, Extensions

_BAD_NAME_CHARS = '|/\\?%*:"><'


class File:
    def __init__(self, name: str, content: str = "") -> None:
        self.name = name
        self.content = content

    def __repr__(self) -> str:
        return f"<<File: {self.name}, Content: {self.content}>>"

    def __eq__(self, other: object) -> bool:  # modification times are not part of the state
        return isinstance(other, File) and (self.name, self.content) == (other.name, other.content)

    def _write(self, text: str) -> None:
        self.content = text

    def _read(self) -> str:
        return self.content


class Directory:
    def __init__(self, name: str, parent: Optional["Directory"] = None) -> None:
        self.name = name
        self.parent = parent
        self.contents: dict[str, Any] = {}

    def __repr__(self) -> str:
        parent = self.parent.name if self.parent else None
        return f"<Directory: {self.name}, Parent: {parent}, Contents: {self.contents}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Directory) and (self.name, self.contents) == (other.name, other.contents)

    def _add_file(self, name: str, content: str = "") -> None:
        if name in self.contents:
            raise ValueError(f"File '{name}' already exists in directory '{self.name}'.")
        self.contents[name] = File(name, content)

    def _add_directory(self, name: str) -> None:
        if name in self.contents:
            raise ValueError(f"Directory '{name}' already exists in directory '{self.name}'.")
        self.contents[name] = Directory(name, self)

    def _get_item(self, name: str) -> Any:
        return self if name == "." else self.contents.get(name)


def _valid_name(name: str) -> bool:
    return not any(c in name for c in _BAD_NAME_CHARS)


class GorillaFileSystem(ApiSuite):
    # error texts that v4 rewords (apis/v4/file_system.py)
    _MV_PATH_ERROR = ("mv: no path allowed in destination. Only file name and folder name is supported "
                      "for this operation.")
    _CP_PATH_ERROR = ("cp: don't allow path in destination. Only file name and folder name is supported "
                      "for this operation.")
    _RMDIR_NOT_EMPTY = "rmdir: failed to remove '{}': Directory not empty"

    def __init__(self) -> None:
        self.root = Directory("/", None)
        self._current_dir = self.root
        self.long_context = False

    def _setup(self, scenario, long_context: bool, extensions: Extensions) -> None:
        self.long_context = long_context
        self._tail_exempt = set(extensions.view("FILES_TAIL_USED")) if long_context else set()
        self._filler = extensions.view("FILE_CONTENT_EXTENSION") if long_context else ""
        self._populate = list(extensions.view("POPULATE_FILE_EXTENSION")) if long_context else []
        self.root = Directory("/", None)
        if "root" in scenario:
            top_name = next(iter(scenario["root"]))
            self.root = self._build(scenario["root"][top_name]["contents"], Directory(top_name, None))
        self._current_dir = self.root

    def _build(self, spec: dict, into: Directory) -> Directory:
        leaf = True
        for name, node in spec.items():
            if node["type"] == "directory":
                leaf = False
                into.contents[name] = self._build(node["contents"], Directory(name, into))
            elif node["type"] == "file":
                text = node["content"]
                if self.long_context and name not in self._tail_exempt:
                    text += self._filler
                into.contents[name] = File(name, text)
        if leaf and self.long_context:  # long context: the deepest folders get many filler files
            for name in self._populate:
                into._add_file(name)
        return into

    def _resolve_dir(self, path: Optional[str]) -> Any:
        """A directory reached by walking names from the current directory (or the root for '/...')."""
        if path is None or path == ".":
            return self._current_dir
        if path == "/":
            return self.root
        parts = path.strip("/").split("/")  # this order decides the error text for a non-string path
        node = self.root if path.startswith("/") else self._current_dir
        for part in parts:
            nxt = node._get_item(part)
            if not isinstance(nxt, Directory):
                return {"error": f"cd: '{path}': No such file or directory"}
            node = nxt
        return node

    def _file(self, name: str) -> Optional[File]:
        item = self._current_dir.contents.get(name) if name in self._current_dir.contents else None
        return item if isinstance(item, File) else None

    def pwd(self):
        names = []
        node: Optional[Directory] = self._current_dir
        while node is not None:  # upstream's stop test never matches, so it climbs past the root
            names.append(node.name)
            node = node.parent
        return {"current_working_directory": "/" + "/".join(reversed(names))}

    def ls(self, a: bool = False):
        names = list(self._current_dir.contents)
        if not a:
            names = [n for n in names if not n.startswith(".")]
        return {"current_directory_content": names}

    def cd(self, folder: str):
        if folder == "..":
            if self._current_dir.parent:
                self._current_dir = self._current_dir.parent
                return {}
            if self.root == self._current_dir:
                return {"error": "Cuurent directory is already the root. Cannot go back."}
            return {"error": "cd: ..: No such directory"}
        target = self._resolve_dir(folder)
        if isinstance(target, dict):
            return {"error": f"cd: {folder}: No such directory. You cannot use path to change directory."}
        self._current_dir = target
        return {"current_working_directory": target.name}

    def mkdir(self, dir_name: str):
        if not _valid_name(dir_name):
            return {"error": f"mkdir: cannot create directory '{dir_name}': Invalid character"}
        if dir_name in self._current_dir.contents:
            return {"error": f"mkdir: cannot create directory '{dir_name}': File exists"}
        self._current_dir._add_directory(dir_name)
        return None

    def touch(self, file_name: str):
        if not _valid_name(file_name):
            return {"error": f"touch: cannot touch '{file_name}': Invalid character"}
        if file_name in self._current_dir.contents:
            return {"error": f"touch: cannot touch '{file_name}': File exists"}
        self._current_dir._add_file(file_name)
        return None

    def echo(self, content: str, file_name: Optional[str] = None):
        if file_name is None:
            return {"terminal_output": content}
        if not _valid_name(file_name):
            return {"error": f"echo: cannot touch '{file_name}': Invalid character"}
        if not file_name:
            return {"terminal_output": content}
        if file_name in self._current_dir.contents:
            # a directory has no _write: upstream fails with AttributeError, and so do we
            self._current_dir._get_item(file_name)._write(content)
        else:
            self._current_dir._add_file(file_name, content)
        return None

    def cat(self, file_name: str):
        if not _valid_name(file_name):
            return {"error": f"cat: '{file_name}': Invalid character"}
        if file_name not in self._current_dir.contents:
            return {"error": f"cat: {file_name}: No such file or directory"}
        item = self._current_dir._get_item(file_name)
        if isinstance(item, File):
            return {"file_content": item._read()}
        return {"error": f"cat: {file_name}: Is a directory"}

    def find(self, path: str = ".", name: Optional[str] = None):
        found: list[str] = []

        def walk(directory: Directory, prefix: str) -> None:
            for child_name, child in directory.contents.items():
                child_path = f"{prefix}/{child_name}"
                if name is None or name in child_name:
                    found.append(child_path)
                if isinstance(child, Directory):
                    walk(child, child_path)

        # upstream searches the current directory whatever ``path`` says; ``path`` only prefixes the results
        walk(self._current_dir, path.rstrip("/"))
        return {"matches": found}

    def wc(self, file_name: str, mode: str = "l"):
        if mode not in ["l", "w", "c"]:
            return {"error": f"wc: invalid mode '{mode}'"}
        f = self._file(file_name)
        if f is not None:
            text = f._read()
            if mode == "l":
                return {"count": len(text.splitlines()), "type": "lines"}
            if mode == "w":
                return {"count": len(text.split()), "type": "words"}
            return {"count": len(text), "type": "characters"}
        return {"error": f"wc: {file_name}: No such file or directory"}

    def sort(self, file_name: str):
        f = self._file(file_name)
        if f is not None:
            return {"sorted_content": "\n".join(sorted(f._read().splitlines()))}
        return {"error": f"sort: {file_name}: No such file or directory"}

    def grep(self, file_name: str, pattern: str):
        f = self._file(file_name)
        if f is not None:
            return {"matching_lines": [line for line in f._read().splitlines() if pattern in line]}
        return {"error": f"grep: {file_name}: No such file or directory"}

    def du(self, human_readable: bool = False):
        def size(node: Any) -> int:
            if isinstance(node, File):
                return len(node._read().encode("utf-8"))
            if isinstance(node, Directory):
                return sum(size(child) for child in node.contents.values())
            return 0

        total: float = size(self._current_dir)
        if not human_readable:
            return {"disk_usage": f"{total} bytes"}
        for unit in ["B", "KB", "MB", "GB", "TB"]:
            if total < 1024:
                return {"disk_usage": f"{total:.2f} {unit}"}
            total /= 1024
        return {"disk_usage": f"{total:.2f} PB"}

    def tail(self, file_name: str, lines: int = 10):
        f = self._file(file_name)
        if f is not None:
            all_lines = f._read().splitlines()
            if lines > len(all_lines):
                lines = len(all_lines)
            return {"last_lines": "\n".join(all_lines[-lines:])}
        return {"error": f"tail: {file_name}: No such file or directory"}

    def diff(self, file_name1: str, file_name2: str):
        if file_name1 in self._current_dir.contents and file_name2 in self._current_dir.contents:
            a, b = self._current_dir._get_item(file_name1), self._current_dir._get_item(file_name2)
            if isinstance(a, File) and isinstance(b, File):
                pairs = zip(a._read().splitlines(), b._read().splitlines())
                return {"diff_lines": "\n".join(f"- {x}\n+ {y}" for x, y in pairs if x != y)}
        return {"error": f"diff: {file_name1} or {file_name2}: No such file or directory"}

    def _place(self, target: Directory, name: str, item: Any, share_children: bool) -> None:
        if isinstance(item, File):
            target._add_file(name, item.content)
        else:
            target._add_directory(name)
            target.contents[name].contents = item.contents.copy() if share_children else item.contents

    def mv(self, source: str, destination: str):
        here = self._current_dir
        if source not in here.contents:
            return {"error": f"mv: cannot move '{source}': No such file or directory"}
        item = here._get_item(source)
        if not isinstance(item, (File, Directory)):
            return {"error": f"mv: cannot move '{source}': Not a file or directory"}
        if "/" in destination:
            return {"error": self._MV_PATH_ERROR}
        if destination not in here.contents:
            here.contents.pop(source)
            self._place(here, destination, item, share_children=False)
            return {"result": f"'{source}' moved to '{destination}'"}
        target = here._get_item(destination)
        if not isinstance(target, Directory):
            return {"error": f"mv: cannot move '{source}' to '{destination}': Not a directory"}
        if source in target.contents:
            return {"error": f"mv: cannot move '{source}' to '{destination}/{source}': File exists"}
        here.contents.pop(source)
        self._place(target, source, item, share_children=False)
        return {"result": f"'{source}' moved to '{destination}/{source}'"}

    def rm(self, file_name: str):
        if file_name not in self._current_dir.contents:
            return {"error": f"rm: cannot remove '{file_name}': No such file or directory"}
        item = self._current_dir._get_item(file_name)
        if not isinstance(item, (File, Directory)):
            return {"error": f"rm: cannot remove '{file_name}': Not a file or directory"}
        self._current_dir.contents.pop(file_name)
        return {"result": f"'{file_name}' removed"}

    def rmdir(self, dir_name: str):
        if dir_name not in self._current_dir.contents:
            return {"error": f"rmdir: cannot remove '{dir_name}': No such file or directory"}
        item = self._current_dir._get_item(dir_name)
        if not isinstance(item, Directory):
            return {"error": f"rmdir: cannot remove '{dir_name}': Not a directory"}
        if item.contents:
            return {"error": self._RMDIR_NOT_EMPTY.format(dir_name)}
        self._current_dir.contents.pop(dir_name)
        return {"result": f"'{dir_name}' removed"}

    def cp(self, source: str, destination: str):
        here = self._current_dir
        if source not in here.contents:
            return {"error": f"cp: cannot copy '{source}': No such file or directory"}
        item = here._get_item(source)
        if not isinstance(item, (File, Directory)):
            return {"error": f"cp: cannot copy '{source}': Not a file or directory"}
        if "/" in destination:
            return {"error": self._CP_PATH_ERROR}
        if destination not in here.contents:
            self._place(here, destination, item, share_children=True)
            return {"result": f"'{source}' copied to '{destination}'"}
        target = here._get_item(destination)
        if not isinstance(target, Directory):
            return {"error": f"cp: cannot copy '{source}' to '{destination}': Not a directory"}
        # upstream's "File exists" test looks for "dest/source" (never a key), so a clash raises in _add_*
        self._place(target, source, item, share_children=True)
        return {"result": f"'{source}' copied to '{destination}/{source}'"}
