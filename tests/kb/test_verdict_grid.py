"""The shipped knowledge base's verdicts on a grid of GPUs x drivers are the ones a person reviewed.

tests/kb/verdict_grid.txt holds, for every build whose libraries were read from its wheels, what gpuvet.kb.compat
decides on nine GPUs (Pascal to Blackwell) with five driver branches. A change to the data or the model that moves any
cell fails here until ``python tools/verdict_grid.py`` rewrites the file: the diff in review is how a data change
shows its effect (a regeneration that silently dropped a library would turn cells to F or R here).
"""

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("verdict_grid", REPO / "tools" / "verdict_grid.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_grid_is_what_the_data_gives(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("GPUVET_KB_OVERLAY", str(tmp_path))
    assert _tool().main(["--check"]) == 0, "run python tools/verdict_grid.py and review the diff:\n" + capsys.readouterr().out


def test_a_cell_says_what_the_model_decides(monkeypatch, tmp_path):
    # the grid is not a copy of itself: one row recomputed by hand through the model must agree with its cells
    monkeypatch.setenv("GPUVET_KB_OVERLAY", str(tmp_path))
    tool = _tool()
    from gpuvet.kb import compat, load

    kb = load()
    rows = {line.split(" ", 1)[0]: line.split(" ")[1:] for line in (REPO / "tests/kb/verdict_grid.txt").read_text().splitlines()
            if not line.startswith("#")}
    framework, release, variant = next(tool.builds(kb))
    build = tool.model_build(tool._EMPTY, tool.Candidate(framework, release, variant), compat.Host(driver=None))
    cells = rows[f"{framework.name}=={release.version}+{variant.name}"]
    for (label, cc, segment), cell in zip(tool.GPUS, cells):
        for driver, letter in zip(tool.DRIVERS, cell):
            judgement = compat.judge(build, compat.Gpu(None, cc, segment), compat.Host(driver=driver), kb)
            assert tool.LETTER.get((judgement.status, judgement.reason), "?") == letter, (label, driver, judgement)
