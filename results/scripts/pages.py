"""Helpers the results scripts share: herdsim's JSON output, and a page's
generated tables pasted between its markers."""

import json
import subprocess


def herdsim(binary, args):
    """`binary ARGS`, which must succeed, its standard output read as JSON."""
    done = subprocess.run([binary, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def paste(path, tables):
    """Writes `tables` between the markers of the page at `path`, the rest
    of the page as it is: regenerating changes the figures, not the prose."""
    with open(path) as f:
        page = f.read()
    start, end = "<!-- generated: tables -->\n", "<!-- /generated -->"
    head, rest = page.split(start)
    _, tail = rest.split(end)
    with open(path, "w") as f:
        f.write(head + start + tables + end + tail)
