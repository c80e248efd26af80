"""The R files an analysis script sources, found by reading its source() calls (recursively).

A figure, claims or table rule depends on its script and on every file that script sources
(analysis/lib/*.R, a paper's figures/<paper>/common.R, ...), so an edit to any of them replans
the rule's outputs. The list is read from the code, never written by hand: a new source() line
is covered as soon as it is written.

    sources(script, root)   the files `script` sources, recursively, as paths relative to
                            root, sorted (the script itself not included)

What a source() call may name, as the analysis writes them:

    source("plot.R")                                        a path as written
    source(file.path(script_dir, "..", "lib", "load.R"))    file.path() of strings and of
                                                            `script_dir`, the running script's
                                                            directory
    for (f in c("a.R", "b.R")) source(f)                    a loop variable over c() of strings

A relative path is resolved against the working directory R would have there: the pipeline's
root for the script, the sourced file's directory inside a file sourced with chdir = TRUE.
Anything else (a computed path, a file that is not there) is a ValueError naming the file, the
line and the call, so a dependency can never be missed silently.
"""
from __future__ import annotations

import pathlib
import re

_CALL = re.compile(r"(?<![\w.])(?:sys\.)?source\s*\(")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')
_IDENT = re.compile(r"^[A-Za-z.][\w.]*$")
_CHDIR = re.compile(r"\bchdir\s*=\s*(TRUE|T)\b")


def _strip_comments(text: str) -> str:
    """The text with every comment blanked (a # outside a string up to the line's end); line
    numbers and string literals are kept."""
    out, i, quote = [], 0, None
    while i < len(text):
        c = text[i]
        if quote:
            out.append(c)
            if c == "\\" and i + 1 < len(text):
                out.append(text[i + 1])
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
            out.append(c)
        elif c == "#":
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _code_only(text: str) -> str:
    """The text with the inside of every string blanked (same length), so that a call written
    inside a string is not taken for one."""
    return _STRING.sub(lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1], text)


def _balanced(text: str, start: int) -> str:
    """The text from `start` (just after an opening parenthesis) to its matching closing one."""
    depth, i, quote = 1, start, None
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return text[start:i]
        i += 1
    raise ValueError("unbalanced parentheses")


def _split_args(args: str) -> list:
    """The top-level comma-separated arguments of a call, stripped."""
    parts, depth, quote, cur = [], 0, None, []
    for i, c in enumerate(args):
        if quote:
            if c == quote and args[i - 1] != "\\":
                quote = None
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(c)
    parts.append("".join(cur).strip())
    return [p for p in parts if p]


def _string(expr: str):
    m = _STRING.fullmatch(expr.strip())
    return None if m is None else (m.group(1) if m.group(1) is not None else m.group(2))


def _loop_values(text: str, var: str):
    """The strings a `for (var in c("...", ...))` loop of this file gives var, or None."""
    m = re.search(r"\bfor\s*\(\s*" + re.escape(var) + r"\s+in\s+c\s*\(", text)
    if m is None:
        return None
    values = [_string(a) for a in _split_args(_balanced(text, m.end()))]
    return None if any(v is None for v in values) else values


def _paths(expr: str, text: str, script_dir: pathlib.Path):
    """The path(s) an argument of source() names (relative strings unresolved), or None."""
    expr = expr.strip()
    if (s := _string(expr)) is not None:
        return [s]
    m = re.fullmatch(r"file\.path\s*\((.*)\)", expr, re.S)
    if m:
        parts = []
        for arg in _split_args(m.group(1)):
            if arg == "script_dir":
                parts.append(str(script_dir))
            elif (s := _string(arg)) is not None:
                parts.append(s)
            else:
                return None
        return [str(pathlib.Path(*parts))]
    if _IDENT.match(expr):
        return _loop_values(text, expr)
    return None


def _walk(path: pathlib.Path, cwd: pathlib.Path, script_dir: pathlib.Path, seen: set) -> None:
    raw = path.read_text()
    text = _strip_comments(raw)
    for m in _CALL.finditer(_code_only(text)):
        line = text.count("\n", 0, m.start()) + 1
        try:
            args = _split_args(_balanced(text, m.end()))
        except ValueError:
            args = []
        call = raw.splitlines()[line - 1].strip()
        named = _paths(args[0], text, script_dir) if args else None
        if named is None:
            raise ValueError(f"{path}:{line}: cannot tell which file `{call}` sources (write its path as a"
                             " string, file.path() of strings and script_dir, or a loop over c() of strings)")
        chdir = any(_CHDIR.search(a) for a in args[1:])
        for name in named:
            target = (cwd / name).resolve()
            if not target.is_file():
                raise ValueError(f"{path}:{line}: `{call}` sources {target}, which is not there")
            if target in seen:
                continue
            seen.add(target)
            _walk(target, target.parent if chdir else cwd, script_dir, seen)


def sources(script, root=".") -> list:
    """The files `script` sources, recursively, relative to root (the directory R runs the script
    from), sorted; the script itself is not listed. ValueError for a source() call whose file
    cannot be told or is not there."""
    root = pathlib.Path(root).resolve()
    path = (root / script).resolve()
    seen = set()
    _walk(path, root, path.parent, seen)
    seen.discard(path)
    return sorted(str(p.relative_to(root)) if p.is_relative_to(root) else str(p) for p in seen)
