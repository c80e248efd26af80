"""A lossless column-major text encoding of a tidy CSV, for the results archive.

xz compresses a tidy CSV about twice as well when its columns are stored one after
another and its numbers as differences from the previous row (sample times, cumulative
counters and slowly changing gauges then repeat the same few digits). This module
only changes the layout, never a value: decode(encode(text)) == text, byte for byte,
and encode() checks exactly that before it returns (ColumnarError otherwise, so a
caller can keep the file as it is).

Contract:

- encode(text, drop=(), rates=None) -> str: `text` is a CSV as the tidy writers write it (a
  header, comma-separated cells without quotes, the same line end "\\r\\n" or
  "\\n" after every line, the last one included);
  `drop` names columns to leave out (the result then decodes to the CSV without
  them, in the remaining columns' order); `rates` (optional) maps a rate column to the
  byte and seconds columns it is computed from, coded as its difference from that
  computation (smaller once compressed, still exact). Refuses (ColumnarError) a CSV with quoted
  cells, ragged rows, an unknown dropped column, or one whose encoding would not
  decode to exactly the expected text.
- decode(blob) -> str: the CSV text.
- without_columns(text, drop) -> str: the CSV text with those columns removed (the
  reference decode() must reproduce).

Format (text, "\\n" line ends): the line MAGIC, "crlf" or "lf" (the CSV's line
end), the header line, the row count, then for every column
a code line and one line per row: code "V" = the cells verbatim; "I" = integers as
differences from the previous non-empty cell of the column; "F<d>" = decimals with at
most d fractional digits, as differences of value * 10**d, written back as Python's
shortest repr of the float (how the tidy writers print round(x, d)); "R<d> <b> <s>"
= a rate in Mbit/s with d fractional digits, as differences of value * 10**d from
round(<b> * 8 / <s> / 1e6 * 10**d) of the same row's cells of the earlier columns <b>
(bytes) and <s> (seconds) (goodput_mbps is computed from the bin's exact length, of
which interval_s keeps 6 digits, so the differences are small but not zero). An empty
line is an empty cell (no value; the difference chain skips it).
"""
import re

MAGIC = "bbrlab-columnar 1"
_INT = re.compile(r"-?[0-9]+\Z")
_DEC = re.compile(r"-?[0-9]+\.[0-9]+\Z")


class ColumnarError(ValueError):
    """The CSV cannot be encoded losslessly by this codec; the message says why."""


def _eol(text: str) -> str:
    """The CSV's line end: "\r\n" (Python's csv writer) or "\n", the same on every line."""
    if text.endswith("\r\n") and text.count("\r\n") == text.count("\n") == text.count("\r"):
        return "\r\n"
    if text.endswith("\n") and "\r" not in text:
        return "\n"
    raise ColumnarError("not a plain tidy CSV (mixed line ends or no final newline)")


def _rows(text: str) -> list:
    eol = _eol(text)
    if '"' in text:
        raise ColumnarError("not a plain tidy CSV (quoted cells)")
    rows = [line.split(",") for line in text[:-len(eol)].split(eol)]
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise ColumnarError("ragged rows")
    return rows


def without_columns(text: str, drop=()) -> str:
    """The CSV with the columns named in `drop` removed."""
    rows = _rows(text)
    unknown = set(drop) - set(rows[0])
    if unknown:
        raise ColumnarError(f"no column(s) {sorted(unknown)} to drop")
    keep = [i for i, name in enumerate(rows[0]) if name not in drop]
    eol = _eol(text)
    return "".join(",".join(r[i] for i in keep) + eol for r in rows)


def _scaled(cell: str, digits: int) -> int:
    whole, _, frac = cell.partition(".")
    sign = -1 if whole.startswith("-") else 1
    return sign * int(whole.lstrip("-") + frac.ljust(digits, "0"))


def _encode_column(cells: list) -> list:
    values = [c for c in cells if c != ""]
    if all(_INT.match(c) for c in values):
        if any(str(int(c)) != c for c in values):
            return ["V"] + cells                     # "-0", "007": not printed as int
        code, nums = "I", [None if c == "" else int(c) for c in cells]
    elif all(_INT.match(c) or _DEC.match(c) for c in values):
        digits = max(len(c.partition(".")[2]) for c in values)
        nums = [None if c == "" else _scaled(c, digits) for c in cells]
        code = f"F{digits}"
        if any(c != "" and repr(n / 10 ** digits) != c for c, n in zip(cells, nums)):
            return ["V"] + cells                     # not printed as repr(round(x, d)): keep as is
    else:
        return ["V"] + cells
    out, prev = [code], 0
    for n in nums:
        if n is None:
            out.append("")
        else:
            out.append(str(n - prev))
            prev = n
    return out


def _rate(byte_cell: str, seconds_cell: str, digits: int) -> int:
    """The Mbit/s of bytes over seconds, times 10**digits, rounded: what a rate column is coded against."""
    return round(int(byte_cell) * 8 / float(seconds_cell) / 1e6 * 10 ** digits)


def _encode_rate(cells: list, byte_cells: list, seconds_cells: list, names: tuple):
    """A rate column as its differences from _rate() of its byte and seconds columns; None when
    a cell does not allow it (then the column is coded as any other)."""
    code = _encode_column(cells)
    if not code[0].startswith("F") or any(" " in n for n in names):
        return None
    digits = int(code[0][1:])
    out = [f"R{digits} {names[0]} {names[1]}"]
    for c, b, t in zip(cells, byte_cells, seconds_cells):
        if c == "":
            out.append("")
            continue
        if not _INT.match(b) or not (_INT.match(t) or _DEC.match(t)) or float(t) <= 0:
            return None
        out.append(str(_scaled(c, digits) - _rate(b, t, digits)))
    return out


def _decode_column(code: str, lines: list, decoded: dict = None) -> list:
    if code == "V":
        return lines
    if code.startswith("R"):
        digits, byte_name, seconds_name = code[1:].split(" ")
        digits = int(digits)
        if byte_name not in (decoded or {}) or seconds_name not in decoded:
            raise ColumnarError(f"rate column coded against {byte_name}, {seconds_name}: not decoded before it")
        return ["" if line == "" else repr((int(line) + _rate(b, t, digits)) / 10 ** digits)
                for line, b, t in zip(lines, decoded[byte_name], decoded[seconds_name])]
    digits = int(code[1:]) if code.startswith("F") else None
    if code != "I" and digits is None:
        raise ColumnarError(f"unknown column code {code!r}")
    out, prev = [], 0
    for line in lines:
        if line == "":
            out.append("")
            continue
        prev += int(line)
        out.append(str(prev) if digits is None else repr(prev / 10 ** digits))
    return out


def encode(text: str, drop=(), rates=None) -> str:
    """The column-major encoding of a tidy CSV without the columns in `drop` (see module doc);
    `rates` maps a rate column (Mbit/s) to the (bytes, seconds) columns before it that it is
    computed from, e.g. {"goodput_mbps": ("bytes", "interval_s")}."""
    expected = without_columns(text, drop)
    rows = _rows(expected)
    header, body = rows[0], rows[1:]
    parts = [MAGIC, "crlf" if _eol(expected) == "\r\n" else "lf", ",".join(header), str(len(body))]
    for i, name in enumerate(header):
        cells = [r[i] for r in body]
        coded = None
        refs = (rates or {}).get(name)
        if refs and all(ref in header[:i] for ref in refs):
            coded = _encode_rate(cells, *([r[header.index(ref)] for r in body] for ref in refs), tuple(refs))
        parts += coded or _encode_column(cells)
    blob = "\n".join(parts) + "\n"
    if decode(blob) != expected:
        raise ColumnarError("the encoding does not decode to the CSV (a cell the codec cannot keep exactly)")
    return blob


def decode(blob: str) -> str:
    """The CSV text of an encode() result."""
    lines = blob.split("\n")
    if lines[0] != MAGIC or lines[-1] != "":
        raise ColumnarError(f"not a {MAGIC!r} encoding")
    if lines[1] not in ("crlf", "lf"):
        raise ColumnarError(f"unknown line end {lines[1]!r}")
    eol = "\r\n" if lines[1] == "crlf" else "\n"
    header, n = lines[2].split(","), int(lines[3])
    columns, at = {}, 4
    for name in header:
        columns[name] = _decode_column(lines[at], lines[at + 1:at + 1 + n], columns)
        at += 1 + n
    if at != len(lines) - 1:
        raise ColumnarError("encoding length does not match its header")
    if len(columns) != len(header):
        raise ColumnarError("a column name repeats in the header")
    cols = [columns[name] for name in header]
    out = [",".join(header)] + [",".join(col[k] for col in cols) for k in range(n)]
    return eol.join(out) + eol
