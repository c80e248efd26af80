"""What the benchmarks share for their output."""
import pathlib


def write_text_atomic(path: pathlib.Path, text: str) -> None:
    """Write a report whole or not at all: to a temporary name beside it, then renamed."""
    path = pathlib.Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.rename(path)
