"""The record's notebook model, in-process: IOPub messages become nbformat outputs as nbclient makes
them, the text is valid nbformat 4.5 at every step, and the bounds trim the oldest outputs first."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import nbformat

from mcp_kernel.record.notebook import Notebook, summary
from mcp_kernel.record.writer import Writer


def parsed(nb: Notebook) -> nbformat.NotebookNode:
    node = nbformat.reads(nb.text(), as_version=4)
    nbformat.validate(node)
    return node


def test_outputs_fold_as_nbclient_folds_them() -> None:
    nb = Notebook("s")
    nb.begin("m1", "console.log(1); console.log(2)", 1, {"client": "cli"})
    assert parsed(nb).cells[0].outputs == []  # a running step: its source, no outputs yet
    nb.output("m1", "stream", {"name": "stdout", "text": "1\n"})
    nb.output("m1", "stream", {"name": "stdout", "text": "2\n"})
    nb.output("m1", "stream", {"name": "stderr", "text": "w\n"})
    nb.output("m1", "display_data", {"data": {"text/plain": "0%"}, "metadata": {}, "transient": {"display_id": "p"}})
    nb.output("m1", "update_display_data", {"data": {"text/plain": "100%"}, "metadata": {}, "transient": {"display_id": "p"}})
    nb.output("m1", "execute_result", {"execution_count": 1, "data": {"text/plain": "3"}, "metadata": {}})
    nb.end("m1", 1, {"status": "ok", "calls": []})
    nb.begin("m2", "api.clear()", 2, {"client": "jupyter"})
    nb.output("m2", "stream", {"name": "stdout", "text": "gone\n"})
    nb.output("m2", "clear_output", {"wait": True})
    assert [o.text for o in parsed(nb).cells[1].outputs] == ["gone\n"]  # wait: cleared by the next output
    nb.output("m2", "stream", {"name": "stdout", "text": "kept\n"})
    nb.output("unknown", "stream", {"name": "stdout", "text": "not a step of this record\n"})
    cells = parsed(nb).cells
    assert [(o.output_type, o.get("name"), o.get("text"), o.get("data")) for o in cells[0].outputs] == [
        ("stream", "stdout", "1\n2\n", None),
        ("stream", "stderr", "w\n", None),
        ("display_data", None, None, {"text/plain": "100%"}),
        ("execute_result", None, None, {"text/plain": "3"}),
    ]
    assert [o.text for o in cells[1].outputs] == ["kept\n"]
    assert cells[0].metadata.mcp2repl == {"client": "cli", "status": "ok", "calls": []}
    assert summary_of(nb) == {"session": "s", "steps": 2, "lastClient": "jupyter"}


def summary_of(nb: Notebook) -> dict:
    return json.loads(nb.text().splitlines()[0].removeprefix('{"metadata": ').removesuffix(","))["mcp2repl"]


def test_the_oldest_outputs_go_first_then_the_oldest_steps_and_the_notebook_says_so() -> None:
    nb = Notebook("s", max_bytes=6_000, max_cells=4)
    for n in range(1, 4):
        nb.begin(f"m{n}", f"step {n}", n, {"client": "cli"})
        nb.output(f"m{n}", "stream", {"name": "stdout", "text": "x" * 1500})
        nb.end(f"m{n}", n, {"status": "ok"})
    cells = parsed(nb).cells
    assert [len(c.outputs) for c in cells] == [1, 1, 1] and len(nb.text()) < 6_000
    nb.begin("m4", "step 4", 4, {"client": "cli"})
    nb.output("m4", "stream", {"name": "stdout", "text": "y" * 1500})
    cells = parsed(nb).cells
    assert cells[0].source == "*mcp2repl keeps a session's record under 0.006 MB and 4 steps: the outputs of the 1 oldest steps kept were trimmed.*"
    assert [(c.source, len(c.outputs)) for c in cells[1:]] == [("step 1", 0), ("step 2", 1), ("step 3", 1), ("step 4", 1)]
    assert cells[1].metadata.mcp2repl.outputsTrimmed is True
    nb.begin("m5", "step 5", 5, {"client": "cli"})
    cells = parsed(nb).cells
    assert cells[0].source == "*mcp2repl keeps a session's record under 0.006 MB and 4 steps: the 1 oldest steps were dropped.*"
    assert [c.source for c in cells[1:]] == ["step 2", "step 3", "step 4", "step 5"]
    assert summary_of(nb)["steps"] == 5 and len(nb.text()) < 6_500


def test_the_writer_keeps_the_file_valid_and_private_and_the_last_record_beside_it(tmp_path: Path) -> None:
    path = tmp_path / "s.ipynb"
    path.write_text("an older record")
    writer = Writer(path, Notebook("s"))
    assert (tmp_path / "s.prev.ipynb").read_text() == "an older record"
    assert nbformat.validate(nbformat.read(path, as_version=4)) is None and path.stat().st_mode & 0o777 == 0o600
    stop = threading.Event()
    seen: list[int] = []

    def read_while_writing() -> None:  # every read of the file, at any moment, is a whole notebook
        while not stop.is_set():
            node = nbformat.reads(path.read_text(), as_version=4)
            seen.append(len(node.cells))

    reader = threading.Thread(target=read_while_writing)
    reader.start()
    try:
        for n in range(1, 41):
            writer.begin(f"m{n}", f"step {n}", n, {"client": "step-api"})
            for _ in range(20):
                writer.output(f"m{n}", "stream", {"name": "stdout", "text": "line\n"})
            writer.end(f"m{n}", n, {"status": "ok"}).result(30)
    finally:
        stop.set()
        reader.join(30)
    writer.close()
    node = nbformat.read(path, as_version=4)
    nbformat.validate(node)
    assert [c.source for c in node.cells] == [f"step {n}" for n in range(1, 41)]
    assert {c.outputs[0].text for c in node.cells} == {"line\n" * 20}
    assert seen and seen == sorted(seen)
    assert summary(path) == {"session": "s", "steps": 40, "lastClient": "step-api"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.ipynb", "s.prev.ipynb"]


def test_export_of_a_record_with_an_unfinished_step_omitted_data_and_a_foreign_cell() -> None:
    from mcp_kernel.record.export import export

    nb = Notebook("s", max_bytes=2_000, max_cells=10)
    nb.begin("m1", "'old'", 1, {"client": "cli"})
    nb.output("m1", "stream", {"name": "stdout", "text": "x" * 1500})
    nb.end("m1", 1, {"status": "ok"})
    nb.begin("m2", "data.n", 2, {"client": "step-api", "dataOmitted": "70,000 characters of JSON, more than the record keeps (64,000)"})
    nb.end("m2", 2, {"status": "ok"})
    nb.begin("m3", "await sleep(1e9)", 3, {"client": "jupyter", "started": "2026-12-02T00:00:00.000+00:00"})
    record = json.loads(nb.text())
    record["cells"].append({"cell_type": "code", "id": "mine", "metadata": {}, "execution_count": None, "source": ["1 +", " 1"], "outputs": []})
    done = export(record)
    node = nbformat.from_dict(done.notebook)
    nbformat.validate(node)
    assert [(c.cell_type, c.source) for c in node.cells] == [
        ("markdown", "*mcp2repl keeps a session's record under 0.002 MB and 10 steps: the outputs of the 1 oldest steps kept were trimmed.*"),
        ("code", "'old'"),
        ("code", "// this step was given data too big to record (70,000 characters of JSON, more than the record keeps (64,000)): set globalThis.data first\ndata.n"),
        ("markdown", "**Step [3] had not finished** when the record was read (it was running, or the kernel ended during it); it is left out:\n\n```javascript\nawait sleep(1e9)\n```"),
        ("code", "1 + 1"),
    ]
    assert (done.steps, done.failed, done.unfinished) == (3, [], 1)
    assert node.metadata == {"kernelspec": {"name": "mcp2repl", "display_name": "JavaScript (mcp2repl)", "language": "javascript"},
                             "language_info": record["metadata"]["language_info"], "mcp2repl": {"exportedFrom": "s"}}
